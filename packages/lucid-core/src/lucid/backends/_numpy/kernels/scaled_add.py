"""``a += b * alpha`` in place for the NumPy backend (``kernels.SCALED_ADD``): with
``lucid-core[numba]`` one compiled pass (``_axpy_jit``, the ufuncs' bits; big arrays split over
numba's threads); without it, or for other dtypes and layouts, it declines and the ufuncs run."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled

__all__ = ["CpuScaledAdd"]

_JIT = "_axpy_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# The largest finite value of each: a Python float within it converts without overflow.
_MAX = {d: float(np.finfo(d).max) for d in _FLOATS}
# Below this many elements the ufuncs' two calls cost less than the compiled call's dispatch.
_MIN_ELEMENTS = 1 << 12


class CpuScaledAdd:
    """``kernels.SCALED_ADD`` for NumPy: float32/float64 C-contiguous arrays of one shape."""

    @staticmethod
    def forward(backend: Any, a: Any, b: Any, alpha: float, subtract: bool) -> bool:
        dtype = a.dtype
        if dtype not in _FLOATS or a.size < _MIN_ELEMENTS or _compiled.load(_JIT) is None:
            return False
        if b.dtype != dtype or b.shape != a.shape or not (a.flags.c_contiguous
                                                          and b.flags.c_contiguous):  # fmt: skip
            return False
        if not a.flags.writeable:
            return False
        # the Python number as NumPy's weak scalar meets the array: rounded to its dtype
        top = _MAX.get(dtype)
        if type(alpha) is float and top is not None and -top <= alpha <= top:
            scalar = dtype.type(alpha)  # (within range: no overflow to quiet, no errstate's
            # ~1 us a call: an SGD step's add_ per parameter, docs/performance.md)
        else:
            try:
                with np.errstate(over="ignore"):
                    scalar = dtype.type(alpha)
            except OverflowError:  # an int past float's range: the ufuncs' own handling
                return False
        return _compiled.run(_JIT, "update", a.reshape(-1), b.reshape(-1), scalar, subtract)
