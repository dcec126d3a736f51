"""``Bernoulli(probs=... | logits=...)`` (``torch.distributions.Bernoulli``)."""

from __future__ import annotations

import math
from functools import cached_property
from numbers import Number
from typing import Any

from lucid._creation import arange
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import (
    binary_cross_entropy_with_logits,
    broadcast_all,
    logits_to_probs,
    probs_to_logits,
)
from lucid.ops.elementwise import where
from lucid.ops.sampling import bernoulli


def one_parameter(probs: Any, logits: Any) -> None:
    """Categorical-like distributions take ``probs`` or ``logits``, exactly one of them."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Bernoulli(ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

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
        self._param = param
        shape = () if isinstance(given, Number) else param.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Bernoulli | None = None) -> Bernoulli:
        new = self._expanded(Bernoulli, batch_shape, {"probs": (), "logits": ()}, _instance)
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
        return self.probs

    @property
    def mode(self) -> Tensor:
        p = self.probs
        out: Tensor = where(p == 0.5, math.nan, (p > 0.5).to(p.dtype))
        return out

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value)

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The values of the support, 0 and 1, along a new first dimension."""
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        out: Tensor = values.expand((2,) + self._batch_shape) if expand else values
        return out
