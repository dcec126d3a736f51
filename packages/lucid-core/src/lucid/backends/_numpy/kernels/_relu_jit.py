"""ReLU's gradient as one compiled pass (``lucid-core[numba]``).

Optional: ``relu`` uses it where numba is installed and enabled (``lucid.backends.cpu``). NumPy's
``g * (out > 0)`` is two passes (a boolean mask, then a multiply that reads it back) and a
temporary; this is one pass without the GIL, so ``_parallel`` hands its blocks to every core.
It multiplies by 1.0 or 0.0 as NumPy's multiply by the boolean mask does: the same bits, NaN and
infinite gradients included.
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import U, jit


@jit
def masked(g: Any, out: Any, res: Any, zero: Any) -> None:
    """``res = g * (out > 0)`` over 1-D arrays of one length, ``zero`` a 0 of their float type:
    ``g`` where ``out > 0`` (``g * 1`` is ``g``), else ``g * 0`` (+-0, or NaN for NaN and
    infinite ``g``, as NumPy's multiply by the mask gives it). A select in the arrays' float
    type: LLVM vectorises it (a multiply by a float64 ``1.0``/``0.0`` converted every element
    both ways: 35.5 -> 29.6 us for (64, 6, 24, 24) float32)."""
    for i in range(g.shape[0]):
        v = g[U(i)]
        res[U(i)] = v if out[U(i)] > zero else v * zero
