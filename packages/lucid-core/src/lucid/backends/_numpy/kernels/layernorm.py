"""Layer norm for the NumPy backend (``kernels.LAYER_NORM``): with ``lucid-core[numba]``, one
compiled pass over the rows forward and one backward (``_layernorm_jit``); without it, or for
other dtypes and layouts, it declines and lucid-nn's reference code runs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled

__all__ = ["CpuLayerNorm"]

_JIT = "_layernorm_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _none(dtype: Any) -> Any:
    return np.empty(0, dtype=dtype)


class CpuLayerNorm:
    """``kernels.LAYER_NORM`` for NumPy: compiled rows, or None (the reference runs)."""

    @staticmethod
    def forward(backend: Any, x: Any, weight: Any, bias: Any, nd: int, eps: float) -> Any:
        dtype = x.dtype
        if dtype not in _FLOATS or x.size == 0 or _compiled.load(_JIT) is None:
            return None
        # (the tests written out, no generator: generation's 9 layer norms a token, issue 30)
        if (weight is not None and weight.dtype != dtype) or (
            bias is not None and bias.dtype != dtype
        ):
            return None
        shape = x.shape
        d = math.prod(shape[len(shape) - nd :])
        # x itself where it is C-contiguous (the Function saves x for backward, whose version
        # check refuses a backward after x changed in place, as torch's): no copy of the input
        x2 = np.ascontiguousarray(x).reshape(-1, d)
        w = _none(dtype) if weight is None else np.ascontiguousarray(weight).reshape(-1)
        b = _none(dtype) if bias is None else np.ascontiguousarray(bias).reshape(-1)
        y = np.empty_like(x2)
        rows = x2.shape[0]
        mean = np.empty(rows)
        rstd = np.empty(rows)
        if not _compiled.run(_JIT, "forward", x2, w, b, float(eps), y, mean, rstd):
            return None
        shapes = (None if weight is None else weight.shape, None if bias is None else bias.shape)
        residuals = (x2, w, mean, rstd, shape, shapes)
        return y.reshape(shape), residuals

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Any) -> tuple[Any, Any, Any]:
        x2, w, mean, rstd, shape, (w_shape, b_shape) = residuals
        g2 = np.ascontiguousarray(g, dtype=x2.dtype).reshape(x2.shape)
        d = x2.shape[1]
        dx = np.empty_like(x2) if needs[0] else np.empty((0, d), dtype=x2.dtype)
        dw = np.zeros(d)
        db = np.zeros(d)
        args = (x2, g2, w, mean, rstd, dx, dw, db, bool(needs[0]))
        if not _compiled.run(_JIT, "backward", *args):
            _backward_numpy(*args)
        return (
            dx.reshape(shape) if needs[0] else None,
            dw.astype(x2.dtype).reshape(w_shape) if needs[1] and w_shape is not None else None,
            db.astype(x2.dtype).reshape(b_shape) if needs[2] and b_shape is not None else None,
        )


def _backward_numpy(x2: Any, g2: Any, w: Any, mean: Any, rstd: Any, dx: Any, dw: Any, db: Any,
                    want_dx: bool) -> None:  # fmt: skip
    """``_layernorm_jit.backward`` in NumPy (where the compiled call failed)."""
    xh = ((x2 - mean[:, None]) * rstd[:, None]).astype(x2.dtype)
    dw += np.sum(g2 * xh, axis=0)
    db += np.sum(g2, axis=0)
    if want_dx:
        gx = g2 * w if w.size else g2
        m1 = np.mean(gx, axis=1, keepdims=True)
        m2 = np.mean(gx * xh, axis=1, keepdims=True)
        dx[...] = rstd[:, None] * (gx - m1 - xh * m2)
