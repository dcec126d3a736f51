"""``lucid.special`` (``torch.special``): error functions, the normal CDF and its inverse, GELU."""

from __future__ import annotations

import math

from lucid._tensor import Tensor
from lucid.ops.special import erf, erfc, erfinv, gelu

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2 = math.sqrt(2.0)


def ndtr(x: Tensor) -> Tensor:
    """The standard normal CDF ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``."""
    return 0.5 * erfc(-x * _SQRT_HALF)


def ndtri(p: Tensor) -> Tensor:
    """The inverse of :func:`ndtr` (the standard normal quantile function)."""
    return _SQRT_2 * erfinv(2 * p - 1)


def expit(x: Tensor) -> Tensor:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    out: Tensor = x.sigmoid()
    return out


__all__ = ["erf", "erfc", "erfinv", "expit", "gelu", "ndtr", "ndtri"]
