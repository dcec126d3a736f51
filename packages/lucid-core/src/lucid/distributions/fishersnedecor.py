"""``FisherSnedecor(df1, df2)`` (``torch.distributions.FisherSnedecor``): the F distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.gamma import Gamma
from lucid.distributions.utils import broadcast_all, finfo, where
from lucid.ops.gamma import lgamma

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The ratio of two scaled chi-squared variables, ``(X1 / df1) / (X2 / df2)``; ``rsample``
    through two Gamma draws, as torch's."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(
        self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(() if numbers else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._expanded(FisherSnedecor, batch_shape, {"df1": (), "df2": ()}, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return where(self.df2 > 2, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return where(df2 > 4, var, math.nan)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = finfo(x2.dtype, "tiny")
        out: Tensor = (x1 / x2.clamp(min=tiny)).clamp(min=tiny)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        out: Tensor = t1 + t2 - t3
        return out
