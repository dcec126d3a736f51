"""``GeneralizedPareto(loc, scale, concentration)`` (``torch.distributions.GeneralizedPareto``)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from lucid._creation import ones_like, rand, zeros_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, where

__all__ = ["GeneralizedPareto"]


def _is_zero(c: Tensor) -> Tensor:
    """torch's ``isclose(c, 0)``: ``|c| <= 1e-8``."""
    out: Tensor = c.abs() <= 1e-8
    return out


class GeneralizedPareto(Distribution):
    """Survival ``(1 + xi z)^(-1/xi)`` of ``z = (x - loc) / scale`` (``exp(-z)`` at ``xi = 0``)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(() if numbers else self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expanded(GeneralizedPareto, batch_shape,
                              {"loc": (), "scale": (), "concentration": ()}, _instance)  # fmt: skip

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(*shape, dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x: Tensor) -> Tensor:
        out: Tensor = (x - self.loc) / self.scale
        return out

    def _safe(self) -> tuple[Tensor, Tensor]:
        zero = _is_zero(self.concentration)
        return zero, where(zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._safe()
        y = 1 / safe + ones_like(z)
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        out: Tensor = -self.scale.log() - where(zero, z, nonzero)
        return out

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log P(X > value)``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._safe()
        return where(zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log P(X <= value)``."""
        out: Tensor = (-self.log_survival_function(value).exp()).log1p()
        return out

    def cdf(self, value: Tensor) -> Tensor:
        out: Tensor = self.log_cdf(value).exp()
        return out

    def icdf(self, value: Tensor) -> Tensor:
        zero, safe = self._safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return where(zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Tensor:
        out: Tensor = (self.scale.log() + self.concentration + 1).expand(self._batch_shape)
        return out

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)  # fmt: skip
        return constraints.interval(self.loc, upper + zeros_like(self.loc))
