"""``LogNormal(loc, scale)`` (``torch.distributions.LogNormal``): ``exp(X)`` for ``X ~
Normal(loc, scale)``."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.normal import Normal


class LogNormal(Distribution):
    """A positive variable whose logarithm is ``Normal(loc, scale)``.

    torch builds it as a TransformedDistribution of Normal with ExpTransform; lucid computes
    it directly (the same values and ``rsample``).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(self.base_dist.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: LogNormal | None = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        new.base_dist = self.base_dist.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self) -> Tensor:
        """The mean of the logarithm."""
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        """The standard deviation of the logarithm."""
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value: Tensor) -> Tensor:
        return self.base_dist.icdf(value).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
