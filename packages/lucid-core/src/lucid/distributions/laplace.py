"""``Laplace(loc, scale)`` (``torch.distributions.Laplace``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, finfo


class Laplace(Distribution):
    """Density ``exp(-|x - loc| / scale) / (2 scale)``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(() if numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Laplace | None = None) -> Laplace:
        return self._expanded(Laplace, batch_shape, {"loc": (), "scale": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    mode = mean

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype, "eps")
        u = rand(*shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        out: Tensor = self.loc - self.scale * u.sign() * (-u.abs()).log1p()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = -(2 * self.scale).log() - (value - self.loc).abs() / self.scale
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        out: Tensor = 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()
        return out

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        out: Tensor = self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()
        return out

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
