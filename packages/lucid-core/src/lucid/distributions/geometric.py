"""``Geometric(probs=... | logits=...)`` (``torch.distributions.Geometric``)."""

from __future__ import annotations

from functools import cached_property
from numbers import Number
from typing import Any

from lucid._creation import rand, zeros_like
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import (
    binary_cross_entropy_with_logits,
    broadcast_all,
    finfo,
    logits_to_probs,
    probs_to_logits,
)
from lucid.ops.elementwise import where


class Geometric(Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials:
    mass ``(1 - p)^k p`` for ``k = 0, 1, ...``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(
        self,
        probs: Tensor | float | None = None,
        logits: Tensor | float | None = None,
        validate_args: bool | None = None,
    ) -> None:
        one_parameter(probs, logits)
        given = probs if probs is not None else logits
        assert given is not None  # one_parameter checked
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        shape = () if isinstance(given, Number) else param.shape
        super().__init__(shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # a success probability of 0 never succeeds: torch refuses it the same way
            valid = self.probs > 0
            if not bool(valid.all().item()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs.detach()[~valid]}"
                )

    def expand(self, batch_shape: Any, _instance: Geometric | None = None) -> Geometric:
        return self._expanded(Geometric, batch_shape, {"probs": (), "logits": ()}, _instance)

    @cached_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @cached_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        p = self.probs
        with no_grad():
            u = rand(*shape, dtype=p.dtype, device=p.device).clamp(min=finfo(p.dtype, "tiny"))
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        out: Tensor = value * (-probs).log1p() + self.probs.log()
        return out

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs) / self.probs
