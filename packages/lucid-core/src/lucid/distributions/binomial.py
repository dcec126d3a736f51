"""``Binomial(total_count=1, probs=... | logits=...)`` (``torch.distributions.Binomial``)."""

from __future__ import annotations

from functools import cached_property
from numbers import Number
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import (
    broadcast_all,
    logits_to_probs,
    numpy_draws,
    probs_to_logits,
)
from lucid.ops.elementwise import where
from lucid.ops.gamma import lgamma


def _clamp_by_zero(x: Tensor) -> Tensor:
    # max(x, 0) with the gradient 1/2 at 0, as torch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(
        self,
        total_count: Tensor | int = 1,
        probs: Tensor | float | None = None,
        logits: Tensor | float | None = None,
        validate_args: bool | None = None,
    ) -> None:
        one_parameter(probs, logits)
        given = probs if probs is not None else logits
        assert given is not None  # one_parameter checked
        self.total_count, param = broadcast_all(total_count, given)
        self.total_count = self.total_count.to(param.dtype)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        shape = () if isinstance(given, Number) and isinstance(total_count, Number) else param.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Binomial | None = None) -> Binomial:
        params: dict[str, tuple[int, ...]] = {"total_count": (), "probs": (), "logits": ()}
        new = self._expanded(Binomial, batch_shape, params, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)  # type: ignore[arg-type]

    @cached_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @cached_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameter (``probs`` or ``logits``)."""
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        out: Tensor = ((self.total_count + 1) * self.probs).floor()
        capped: Tensor = where(out > self.total_count, self.total_count, out)
        return capped

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n, p = self.total_count.expand(shape), self.probs.expand(shape)
        with no_grad():
            return numpy_draws(lambda rng, n, p: rng.binomial(n.astype("int64"), p), p, n, p)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, k = self.total_count, value
        normalize = (
            n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p() - lgamma(n + 1)
        )
        return k * self.logits - lgamma(k + 1) - lgamma(n - k + 1) - normalize
