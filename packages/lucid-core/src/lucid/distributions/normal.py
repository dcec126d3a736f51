"""``Normal(loc, scale)`` (``torch.distributions.Normal``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import randn
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import broadcast_all

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class Normal(ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> lucid.distributions.Normal(0.0, 1.0).log_prob(lucid.tensor(0.0))
    tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(() if numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Normal | None = None) -> Normal:
        return self._expanded(Normal, batch_shape, {"loc": (), "scale": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc

    mode = mean

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        out: Tensor = self.loc + eps * self.scale
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale.pow(2)
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _HALF_LOG_2PI

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + _HALF_LOG_2PI + self.scale.log()
