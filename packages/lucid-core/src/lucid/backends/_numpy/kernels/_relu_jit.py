"""ReLU's gradient as one compiled pass (``lucid-core[numba]``).

Optional: ``relu`` uses it where numba is installed and enabled (``lucid.backends.cpu``). NumPy's
``g * (out > 0)`` is two passes (a boolean mask, then a multiply that reads it back) and a
temporary; this is one pass without the GIL, so ``_parallel`` hands its blocks to every core.
It multiplies by 1.0 or 0.0 as NumPy's multiply by the boolean mask does: the same bits, NaN and
infinite gradients included.
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import jit


@jit
def masked(g: Any, out: Any, res: Any) -> None:
    """``res = g * (out > 0)`` over 1-D arrays of one length."""
    for i in range(g.shape[0]):
        res[i] = g[i] * (1.0 if out[i] > 0 else 0.0)
