"""``Weibull(scale, concentration)`` (``torch.distributions.Weibull``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all
from lucid.ops.gamma import lgamma

_EULER = 0.57721566490153286060


class Weibull(Distribution):
    """``CDF = 1 - exp(-(x / scale)^concentration)`` for ``x > 0``.

    torch builds it as a TransformedDistribution of Exponential(1); lucid computes it
    directly (the same values and ``rsample``).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(
        self,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        numbers = isinstance(scale, Number) and isinstance(concentration, Number)
        super().__init__(() if numbers else self.scale.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Weibull | None = None) -> Weibull:
        params: dict[str, tuple[int, ...]] = {"scale": (), "concentration": ()}
        return self._expanded(Weibull, batch_shape, params, _instance)

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration.reciprocal()).exp()

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c).pow(c.reciprocal())

    @property
    def variance(self) -> Tensor:
        inv = self.concentration.reciprocal()
        return self.scale.pow(2) * (lgamma(1 + 2 * inv).exp() - (2 * lgamma(1 + inv)).exp())

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.scale.dtype, device=self.scale.device)
        return self.scale * (-(-u).log1p()).pow(self.concentration.reciprocal())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, z = self.concentration, value / self.scale
        out: Tensor = (c / self.scale).log() + (c - 1) * z.log() - z.pow(c)
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-(value / self.scale).pow(self.concentration)).exp()

    def icdf(self, value: Tensor) -> Tensor:
        return self.scale * (-(-value).log1p()).pow(self.concentration.reciprocal())

    def entropy(self) -> Tensor:
        c = self.concentration
        return _EULER * (1 - c.reciprocal()) + (self.scale / c).log() + 1
