"""``Uniform(low, high)`` on ``[low, high)`` (``torch.distributions.Uniform``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all
from lucid.ops.elementwise import where


class Uniform(Distribution):
    """Uniformly distributed samples on the half-open interval ``[low, high)``."""

    has_rsample = True

    def __init__(
        self, low: Tensor | float, high: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.low, self.high = broadcast_all(low, high)
        numbers = isinstance(low, Number) and isinstance(high, Number)
        super().__init__(() if numbers else self.low.shape, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    def expand(self, batch_shape: Any, _instance: Uniform | None = None) -> Uniform:
        return self._expanded(Uniform, batch_shape, {"low": (), "high": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.low.dtype, device=self.low.device)
        out: Tensor = self.low + u * (self.high - self.low)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        out: Tensor = where(inside, -(self.high - self.low).log(), -math.inf)
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
