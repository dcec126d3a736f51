"""Attention's scores made ready for ``exp`` for the NumPy backend (``kernels.ATTENTION_SHIFT``).

lucid-nn's attention keeps its scores transposed, ``(..., S, L)``, and before ``exp`` adds the
causal mask and subtracts each column's maximum: three ufunc passes, and NumPy's maximum down
the columns of a (64, 64) matrix makes one inner-loop call per row (9 of the 72 us of a
generated token's attention on (1, 4, 64, 32)). With ``lucid-core[numba]`` the three are one
compiled loop over each matrix, in cache: 5.5 against 18 us there, 29 against 91 us on a GPT
training step's (24, 64, 64) half (docs/performance.md, issue 30). The same adds, maximum and
subtractions, so the same values; without numba, or for other dtypes and layouts, it declines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled

__all__ = ["CpuAttentionShift"]

_JIT = "_attention_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NO_BIAS = {dt: np.empty((0, 0), dtype=dt) for dt in _FLOATS}
# False: always decline (the ufuncs' passes), for A/B timing.
COMPILED_SHIFT = True


class CpuAttentionShift:
    """``kernels.ATTENTION_SHIFT`` for NumPy: C-contiguous float32/float64 scores."""

    @staticmethod
    def forward(backend: Any, pt: Any, bias: Any) -> bool:
        dtype = pt.dtype
        if (
            not COMPILED_SHIFT
            or type(pt) is not np.ndarray
            or dtype not in _FLOATS
            or pt.ndim < 2
            or not pt.flags.c_contiguous
            or not pt.flags.writeable
            or pt.size == 0
            or _compiled.load(_JIT) is None
        ):
            return False
        rows, cols = pt.shape[-2], pt.shape[-1]
        if bias is None:
            bias = _NO_BIAS[dtype]
        elif (
            type(bias) is not np.ndarray
            or bias.dtype != dtype
            or bias.shape != (rows, cols)
            or not bias.flags.c_contiguous
        ):
            return False
        scratch = np.empty(cols, dtype=dtype)
        flat = pt.reshape(-1, rows, cols)
        return _compiled.run(_JIT, "column_shift", flat, bias, bias.size > 0, scratch)
