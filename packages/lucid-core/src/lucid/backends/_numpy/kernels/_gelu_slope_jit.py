"""The exact GELU and its slope in one compiled pass, with numba (``lucid-core[numba]``), for
``lucid.compile``'s ``GeluSlope``: a training forward keeps ``gelu'(x)`` so that its backward
is one multiply.

``gelu_slope(x, out, d)``: ``out = x * Phi(x)`` and ``d = Phi(x) + x phi(x)`` for float32, with
``_special_jit``'s ``_phi32`` and ``exp32_nonpositive`` (``phi(x) = exp(-x^2 / 2) / sqrt(2 pi)``):
``out`` is ``gelu_rational``'s and ``g * d`` is ``gelu_grad_rational``'s, bit for bit (the same
float32 operations in the same order). ``gelu_slope_split``: the same pass split over numba's
threads from ``SPLIT_ELEMENTS`` (elementwise: the same bits).
"""

from __future__ import annotations

from typing import Any

import numba

from lucid.backends._numpy._numba import U, jit_math, run
from lucid.backends._numpy.kernels._special_jit import (
    _INV_SQRT_2PI32,
    _make_split_binary,
    _phi32,
    exp32_nonpositive,
)


@jit_math
def gelu_slope(x: Any, out: Any, d: Any) -> None:
    """``out = x Phi(x)``, ``d = Phi(x) + x phi(x)`` over 1-D float32 arrays."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        p = _phi32(v)
        out[U(i)] = v * p
        e = exp32_nonpositive(numba.float32(-0.5) * v * v)
        d[U(i)] = p + v * _INV_SQRT_2PI32 * e


# Passes over this many elements and more split over numba's threads (``_numba.run``), as
# ``_special_jit``'s GELU passes do.
SPLIT_ELEMENTS = 1 << 17


def gelu_slope_split(x: Any, out: Any, d: Any) -> None:
    """``gelu_slope``, split over numba's threads from ``SPLIT_ELEMENTS``."""
    if x.shape[0] < SPLIT_ELEMENTS:
        gelu_slope(x, out, d)
    else:
        # three 1-D arrays cut alike: _special_jit's split of its binary passes fits
        run("gelu_slope", gelu_slope, _make_split_binary, (x, out, d), x.shape[0])
