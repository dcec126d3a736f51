"""``Cauchy(loc, scale)`` (``torch.distributions.Cauchy``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import full, rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all


class Cauchy(Distribution):
    """Density ``1 / (pi scale (1 + ((x - loc) / scale)^2))``; its mean and variance are
    undefined (NaN and inf, as in torch)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(() if numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Cauchy | None = None) -> Cauchy:
        return self._expanded(Cauchy, batch_shape, {"loc": (), "scale": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.loc.dtype, device=self.loc.device)
        out: Tensor = self.loc + self.scale * (math.pi * (u - 0.5)).tan()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        out: Tensor = -math.log(math.pi) - self.scale.log() - z.pow(2).log1p()
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = ((value - self.loc) / self.scale).atan() / math.pi + 0.5
        return out

    def icdf(self, value: Tensor) -> Tensor:
        out: Tensor = (math.pi * (value - 0.5)).tan() * self.scale + self.loc
        return out

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
