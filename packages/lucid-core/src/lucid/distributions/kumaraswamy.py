"""``Kumaraswamy(concentration1, concentration0)`` (``torch.distributions.Kumaraswamy``)."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import full_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import AffineTransform, PowerTransform
from lucid.distributions.uniform import Uniform
from lucid.distributions.utils import broadcast_all, where
from lucid.ops.gamma import digamma, lgamma

__all__ = ["Kumaraswamy"]

_EULER = 0.57721566490153286060


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1 + n / a
    out: Tensor = b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()
    return out


class Kumaraswamy(TransformedDistribution):
    """CDF ``1 - (1 - x^a)^b`` on ``[0, 1]``: Uniform(0, 1) through ``u^(1/b)``, ``1 - .``,
    ``.^(1/a)``, as torch builds it."""

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        concentration1: Tensor | float,
        concentration0: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)  # fmt: skip
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        out = super().expand(batch_shape, _instance=new)
        assert isinstance(out, Kumaraswamy)
        return out

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return where((b < 1) | (a < 1), math.nan, log_mode.exp())

    @property
    def variance(self) -> Tensor:
        out: Tensor = _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)
        return out

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + _EULER
        out: Tensor = t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
        return out
