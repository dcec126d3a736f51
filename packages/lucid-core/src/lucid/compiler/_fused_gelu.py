"""``GeluSlope``: the exact GELU as ``lucid.compile`` runs it where its input needs a gradient.

The forward computes ``gelu(x)`` and keeps its slope ``gelu'(x) = Phi(x) + x phi(x)`` in the
same pass (``kernels._gelu_slope_jit``), so the backward is one multiply, ``g * slope``,
instead of the compiled pass that recomputes ``Phi`` and ``phi`` in eager code's backward
(docs/performance.md). The same values as eager code's, bit for bit (the same float32
operations). ``_arrays._fuse_gelu`` puts it where the capture has ``gelu(x)`` on a float32
NumPy array that needs a gradient and numba's kernels load; where they stop loading, the
slope comes from eager code's kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.backends._numpy import _compiled, _parallel
from lucid.backends._numpy.kernels import special

_JIT = "_gelu_slope_jit"
# Elements per block on the pool (as ``special._compiled_gelu_grad``'s blocks).
_BLOCK = 1 << 16


def fusable(shape: tuple[int, ...], dtype: Any) -> bool:
    """Whether ``GeluSlope`` runs for a float32 input of this shape: numba's kernels load,
    and eager code would take its compiled passes too (the same bits; smaller inputs take
    ufunc code)."""
    size = 1
    for s in shape:
        size *= s
    big = size >= special._SMALL_ELEMENTS
    return np.dtype(dtype) == np.float32 and big and _compiled.load(_JIT) is not None


def _gelu_and_slope(x: Any) -> tuple[Any, Any]:
    """``gelu(x)`` and ``gelu'(x)`` (float32): one compiled pass on the threads eager code's
    GELU would take (split over numba's where they ran the last parallel work, else blocks on
    the pool's: ``special.pool_blocks``), else eager code's kernels (the slope as the gradient
    of ones)."""
    xf = np.ascontiguousarray(x).reshape(-1)
    out, d = np.empty_like(xf), np.empty_like(xf)
    if _compiled.load(_JIT) is not None:
        n = xf.shape[0]
        if not special.pool_blocks():  # numba's threads lead: their split
            if _compiled.run(_JIT, "gelu_slope_split", xf, out, d):
                return out.reshape(x.shape), d.reshape(x.shape)
        else:  # blocks on the pool's threads from SPLIT_BLOCKS_ELEMENTS

            def block(r: tuple[int, int]) -> bool:
                s, e = r
                return _compiled.run(_JIT, "gelu_slope", xf[s:e], out[s:e], d[s:e])

            blocks = _parallel.blocks(n, _BLOCK)
            if all(_parallel.map_blocks(block, blocks, n, special.SPLIT_BLOCKS_ELEMENTS)):
                return out.reshape(x.shape), d.reshape(x.shape)
    y = special.CpuGelu.forward(None, x, "none")
    slope = special.CpuGeluGrad.forward(None, np.ones_like(x), x, "none")
    return y, slope


class GeluSlope(Function):
    """``gelu(x)`` (exact) keeping its slope for the backward (the module's docstring)."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        out, ctx.slope = _gelu_and_slope(x)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        dx = np.multiply(g._data, ctx.slope)
        if dx.dtype != ctx.slope.dtype:
            dx = dx.astype(ctx.slope.dtype)
        return Tensor.from_backend_array(dx, g.backend)
