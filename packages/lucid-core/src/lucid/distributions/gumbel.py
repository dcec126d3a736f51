"""``Gumbel(loc, scale)`` (``torch.distributions.Gumbel``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, finfo

_EULER = 0.57721566490153286060


class Gumbel(Distribution):
    """The type-I extreme value distribution: ``CDF = exp(-exp(-(x - loc) / scale))``.

    torch builds it as a TransformedDistribution of Uniform; lucid computes it directly (the
    same values, ``rsample``, ``cdf`` and ``icdf``).
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

    def expand(self, batch_shape: Any, _instance: Gumbel | None = None) -> Gumbel:
        return self._expanded(Gumbel, batch_shape, {"loc": (), "scale": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        dt = self.loc.dtype
        u = rand(*shape, dtype=dt, device=self.loc.device)
        u = u.clamp(min=finfo(dt, "tiny"), max=1 - finfo(dt, "eps"))
        out: Tensor = self.loc - self.scale * (-u.log()).log()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        out: Tensor = -(self.scale.log() + z + (-z).exp())
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = (-(-(value - self.loc) / self.scale).exp()).exp()
        return out

    def icdf(self, value: Tensor) -> Tensor:
        out: Tensor = self.loc - self.scale * (-value.log()).log()
        return out

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER)
