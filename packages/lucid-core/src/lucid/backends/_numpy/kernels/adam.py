"""Adam/AdamW's step for the NumPy backend (``kernels.ADAM_STEP``): with ``lucid-core[numba]``
one compiled pass over a parameter (``_adam_jit``, the ufunc update's bits; big parameters split
over numba's threads, ``_adam_jit.SPLIT_ELEMENTS``); without it, or for other dtypes and
layouts, it declines and lucid-optim's ufunc update runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled

__all__ = ["CpuAdamStep"]

_JIT = "_adam_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class CpuAdamStep:
    """``kernels.ADAM_STEP`` for NumPy: float32/float64, C-contiguous arrays of one shape."""

    @staticmethod
    def forward(backend: Any, p: Any, g: Any, m: Any, v: Any, hyper: tuple[Any, ...]) -> bool:
        dtype = p.dtype
        if dtype not in _FLOATS or _compiled.load(_JIT) is None:
            return False
        for a in (p, g, m, v):
            if a.dtype != dtype or a.shape != p.shape or not a.flags.c_contiguous:
                return False
        for a in (p, m, v):
            if not a.flags.writeable:
                return False
        lr, beta1, beta2, eps, wd, decoupled, maximize, bc2, value = hyper
        mode = 0 if wd == 0 else (2 if decoupled else 1)
        # the Python numbers as NumPy's weak scalars meet the arrays: rounded to their dtype
        consts = np.array([1 - lr * wd, wd, 1 - beta1, beta2, 1 - beta2, bc2, eps, value],
                          dtype=dtype)  # fmt: skip
        flat = [np.reshape(a, (-1,)) for a in (p, g, m, v)]
        return _compiled.run(_JIT, "step", *flat, consts, mode, bool(maximize), wd == 1,
                             1 - beta2 == 1, value == 1)  # fmt: skip
