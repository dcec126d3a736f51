"""The log-gamma function and its derivatives: lgamma, digamma (and trigamma, digamma's gradient).

NumPy has none of them, so the forwards are ``xp`` arithmetic and run on every backend:
Lanczos' series for lgamma (g = 7, 9 terms: about 1e-15 relative in float64); for digamma and
trigamma the recurrence up to x >= 10, then the asymptotic series. Inputs below 1/2 go through
the reflection formulas. At the poles (0, -1, -2, ...) lgamma is inf, digamma -inf at 0 and nan
at the negative integers, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from lucid._tensor import Tensor
from lucid.autograd.function import DoubleBackwardError, Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import OfInput, to_float
from lucid.ops.special import bfloat16_in_float32

OPS = OpTable(
    op("lgamma", sample((3, 4), domain="pos", gg=True),
       sample((5,), domain="unit", tag="reflected")),
    op("digamma", sample((3, 4), domain="pos"), sample((5,), domain="unit", tag="reflected")),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names

_LANCZOS_G = 7.0
_LANCZOS = (
    0.99999999999980993,
    676.5203681218851,
    -1259.1392167224028,
    771.32342877765313,
    -176.61502916214059,
    12.507343278686905,
    -0.13857109526572012,
    9.9843695780195716e-6,
    1.5056327351493116e-7,
)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SHIFT = 10  # the recurrences move x up to here, where the asymptotic series is accurate


def _reflected(xp: Any, x: Any) -> tuple[Any, Any, Any]:
    """(x < 1/2, the argument the series take: 1 - x there, the poles 0, -1, -2, ...)."""
    reflect = x < 0.5
    pole = xp.logical_and(reflect, x == xp.floor(x))
    return reflect, xp.where(reflect, 1 - x, x), pole


def _sin_pi(xp: Any, x: Any, pole: Any) -> Any:
    """``sin(pi x)``, 1 at the poles (their results are set apart, without 1/0 warnings)."""
    return xp.where(pole, 1.0, xp.sin(math.pi * x))


@bfloat16_in_float32
def lgamma_array(xp: Any, x: Any) -> Any:
    """``log|Gamma(x)|``."""
    reflect, y, pole = _reflected(xp, x)
    z = y - 1
    s = z * 0 + _LANCZOS[0]
    for k, c in enumerate(_LANCZOS[1:], 1):
        s = s + c / (z + k)
    t = z + (_LANCZOS_G + 0.5)
    lg = _HALF_LOG_2PI + (z + 0.5) * xp.log(t) - t + xp.log(s)
    # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    out = xp.where(reflect, math.log(math.pi) - xp.log(xp.abs(_sin_pi(xp, x, pole))) - lg, lg)
    return xp.where(pole, xp.full_like(x, math.inf), out)


def _shift_up(xp: Any, y: Any, term: Any) -> tuple[Any, Any]:
    """``y`` moved up to ``_SHIFT`` by steps of 1, and the sum of ``term(y)`` over the steps."""
    acc = y * 0
    for _ in range(_SHIFT):
        small = y < _SHIFT
        acc = acc + xp.where(small, term(y), 0.0)
        y = xp.where(small, y + 1, y)
    return y, acc


@bfloat16_in_float32
def digamma_array(xp: Any, x: Any) -> Any:
    """``psi(x) = d/dx log Gamma(x)``."""
    reflect, y, pole = _reflected(xp, x)
    y, acc = _shift_up(xp, y, lambda u: 1 / u)  # psi(u) = psi(u + 1) - 1 / u
    inv2 = 1 / (y * y)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    psi = xp.log(y) - 0.5 / y - series - acc
    cot = xp.cos(math.pi * x) / _sin_pi(xp, x, pole)
    out = xp.where(reflect, psi - math.pi * cot, psi)  # psi(x) = psi(1 - x) - pi cot(pi x)
    edge = xp.where(x == 0, xp.full_like(x, -math.inf), xp.full_like(x, math.nan))
    return xp.where(pole, edge, out)


@bfloat16_in_float32
def trigamma_array(xp: Any, x: Any) -> Any:
    """``psi'(x)``, the derivative of digamma (``polygamma(1, x)``)."""
    reflect, y, pole = _reflected(xp, x)
    y, acc = _shift_up(xp, y, lambda u: 1 / (u * u))  # psi'(u) = psi'(u + 1) + 1 / u^2
    inv = 1 / y
    inv2 = inv * inv
    tail = inv2 * (1 / 30 - inv2 * (1 / 42 - inv2 * (1 / 30 - inv2 * (5 / 66))))
    psi1 = inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - tail) + acc
    csc = math.pi / _sin_pi(xp, x, pole)
    out = xp.where(reflect, csc * csc - psi1, psi1)  # psi'(x) + psi'(1 - x) = pi^2 / sin^2
    return xp.where(pole, xp.full_like(x, math.inf), out)


class Trigamma(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return trigamma_array(ctx.xp, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise DoubleBackwardError(
            "the gradient of digamma's gradient (polygamma(2, x)) is not implemented"
        )


class Digamma(OfInput):
    values = staticmethod(digamma_array)
    derivative = staticmethod(Trigamma.apply)


def digamma(input: Tensor) -> Tensor:  # noqa: A002
    """``psi(x)``, the logarithmic derivative of the gamma function (``torch.digamma``)."""
    return Digamma.apply(to_float(input))


class Lgamma(OfInput):
    values = staticmethod(lgamma_array)
    derivative = staticmethod(digamma)


def lgamma(input: Tensor) -> Tensor:  # noqa: A002
    """``log|Gamma(x)|`` (``torch.lgamma``); its gradient is :func:`digamma`."""
    return Lgamma.apply(to_float(input))
