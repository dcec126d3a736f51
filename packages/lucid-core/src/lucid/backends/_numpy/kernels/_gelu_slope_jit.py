"""The exact GELU and its slope in one compiled pass, with numba (``lucid-core[numba]``), for
``lucid.compile``'s ``GeluSlope``: a training forward keeps ``gelu'(x)`` so that its backward
is one multiply.

``gelu_slope(x, e, out, d)``: ``out = x * Phi(x)`` and ``d = Phi(x) + x phi(x)`` for float32,
given ``e = exp(-x^2 / 2)`` (NumPy's SIMD exp), with ``_special_jit``'s ``_phi32``: ``out``
is ``gelu_rational``'s and ``g * d`` is ``gelu_grad_rational``'s, bit for bit (the same
float32 operations in the same order). ``gelu_slope_split``: the same pass split over numba's
threads from ``SPLIT_ELEMENTS`` (elementwise: the same bits).
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import U, jit_math, run
from lucid.backends._numpy.kernels._special_jit import _INV_SQRT_2PI32, _make_split_ternary, _phi32


@jit_math
def gelu_slope(x: Any, e: Any, out: Any, d: Any) -> None:
    """``out = x Phi(x)``, ``d = Phi(x) + x phi(x)`` over 1-D float32 arrays."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        p = _phi32(v)
        out[U(i)] = v * p
        d[U(i)] = p + v * _INV_SQRT_2PI32 * e[U(i)]


# Passes over this many elements and more split over numba's threads (``_numba.run``), as
# ``_special_jit``'s GELU passes do.
SPLIT_ELEMENTS = 1 << 17


def gelu_slope_split(x: Any, e: Any, out: Any, d: Any) -> None:
    """``gelu_slope``, split over numba's threads from ``SPLIT_ELEMENTS``."""
    if x.shape[0] < SPLIT_ELEMENTS:
        gelu_slope(x, e, out, d)
    else:
        # four 1-D arrays cut alike: _special_jit's split of its ternary passes fits
        run("gelu_slope", gelu_slope, _make_split_ternary, (x, e, out, d), x.shape[0])
