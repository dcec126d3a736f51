"""``InverseGamma(concentration, rate)`` (``torch.distributions.InverseGamma``): ``1 / X``
for ``X ~ Gamma(concentration, rate)``."""

from __future__ import annotations

import math
from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.gamma import Gamma
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import PowerTransform
from lucid.ops.elementwise import where
from lucid.ops.gamma import digamma, lgamma


class InverseGamma(TransformedDistribution):
    """A TransformedDistribution of Gamma through ``PowerTransform(-1)``, as in torch."""

    arg_constraints = {  # noqa: RUF012  (the class-level table torch has)
        "concentration": constraints.positive,
        "rate": constraints.positive,
    }
    support = constraints.positive
    has_rsample = True

    def __init__(
        self,
        concentration: Tensor | float,
        rate: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        out = super().expand(batch_shape, _instance=new)
        assert isinstance(out, InverseGamma)
        return out

    @property
    def concentration(self) -> Tensor:
        """The shape parameter of the underlying Gamma."""
        base = self.base_dist
        assert isinstance(base, Gamma)
        return base.concentration

    @property
    def rate(self) -> Tensor:
        """The rate of the underlying Gamma (the scale of this one)."""
        base = self.base_dist
        assert isinstance(base, Gamma)
        return base.rate

    @property
    def mean(self) -> Tensor:
        result: Tensor = self.rate / (self.concentration - 1)
        out: Tensor = where(self.concentration > 1, result, math.inf)
        return out

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        result = self.rate.pow(2) / ((c - 1).pow(2) * (c - 2))
        out: Tensor = where(c > 2, result, math.inf)
        return out

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)
