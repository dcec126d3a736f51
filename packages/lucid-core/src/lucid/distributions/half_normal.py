"""``HalfNormal(scale)`` (``torch.distributions.HalfNormal``): ``|X|`` for ``X ~ Normal(0,
scale)``."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import zeros_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.normal import Normal
from lucid.ops.elementwise import where


class HalfNormal(Distribution):
    """The absolute value of a centred normal; ``log_prob`` is ``-inf`` below 0."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.base_dist = Normal(0.0, scale, validate_args=False)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: HalfNormal | None = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def scale(self) -> Tensor:
        """The scale of the underlying normal."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape).abs()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        out: Tensor = where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
