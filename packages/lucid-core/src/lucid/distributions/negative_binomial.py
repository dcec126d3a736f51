"""``NegativeBinomial(total_count, probs=... | logits=...)``
(``torch.distributions.NegativeBinomial``)."""

from __future__ import annotations

from functools import cached_property
from numbers import Number
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.distribution import Distribution
from lucid.distributions.gamma import Gamma
from lucid.distributions.utils import (
    broadcast_all,
    logits_to_probs,
    numpy_draws,
    probs_to_logits,
    softplus,
)
from lucid.ops.elementwise import where
from lucid.ops.gamma import lgamma


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures of Bernoulli(``probs``)
    trials; sampled as a Gamma-Poisson mixture, as torch does."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(
        self,
        total_count: Tensor | float,
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
        numbers = isinstance(given, Number) and isinstance(total_count, Number)
        super().__init__(() if numbers else param.shape, validate_args=validate_args)

    def expand(
        self, batch_shape: Any, _instance: NegativeBinomial | None = None
    ) -> NegativeBinomial:
        params: dict[str, tuple[int, ...]] = {"total_count": (), "probs": (), "logits": ()}
        new = self._expanded(NegativeBinomial, batch_shape, params, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

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
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            rate = Gamma(self.total_count, (-self.logits).exp(), validate_args=False)
            lam = rate.sample(sample_shape)
            return numpy_draws(lambda rng, r: rng.poisson(r), lam, lam)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_unnormalized = -n * softplus(logits) - value * softplus(-logits)
        log_norm = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        log_norm = where(n + value == 0, 0.0, log_norm)
        out: Tensor = log_unnormalized - log_norm
        return out
