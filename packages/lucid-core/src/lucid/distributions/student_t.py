"""``StudentT(df, loc=0.0, scale=1.0)`` (``torch.distributions.StudentT``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import randn
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.chi2 import Chi2
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all
from lucid.ops.elementwise import where
from lucid.ops.gamma import digamma, lgamma


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by ``scale``.

    ``rsample`` draws ``X / sqrt(Z / df)`` (``X`` normal, ``Z`` chi-squared), reparameterised
    in all three parameters.
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        df: Tensor | float,
        loc: Tensor | float = 0.0,
        scale: Tensor | float = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df, validate_args=False)
        numbers = all(isinstance(v, Number) for v in (df, loc, scale))
        super().__init__(() if numbers else self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: StudentT | None = None) -> StudentT:
        params: dict[str, tuple[int, ...]] = {"df": (), "loc": (), "scale": ()}
        new = self._expanded(StudentT, batch_shape, params, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        out: Tensor = where(self.df <= 1, math.nan, self.loc)
        return out

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        out: Tensor = where(df > 2, finite, where(df > 1, math.inf, math.nan))
        return out

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = randn(*shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + lgamma(0.5 * df)
            - lgamma(0.5 * (df + 1.0))
        )
        out: Tensor = -0.5 * (df + 1.0) * (y.pow(2) / df).log1p() - z
        return out

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (
            self.scale.log()
            + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
            + 0.5 * df.log()
            + lbeta
        )
