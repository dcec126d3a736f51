"""ReLU's gradient for the NumPy backend (``kernels.RELU_GRAD``).

``g * (out > 0)`` is two passes in NumPy (a boolean mask, then a multiply reading it back),
each on one core below ``_parallel.PARALLEL_ELEMENTS``. With ``lucid-core[numba]`` it is one
compiled pass (``_relu_jit``) over the arrays' memory, in blocks on every core from
``_parallel.COMPILED_PARALLEL_ELEMENTS`` (ResNet-18's layer 3 and 4 gradients, 2M and 1M
elements, included): the same bits. Arrays that do not share one dense memory
layout, other dtypes and small arrays take NumPy's expression.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _parallel
from lucid.kernels.reference import relu_grad

_JIT = "_relu_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BLOCK_ELEMENTS = 1 << 18
# Smaller arrays: NumPy's two ufunc calls are as fast as a compiled call.
_SMALL_ELEMENTS = 1 << 14


def memory_order(arr: Any) -> Any:
    """``arr`` as a 1-D view in its memory order, or None if its elements are not one dense
    block (a channels-last array's memory order is not its index order)."""
    order = sorted(range(arr.ndim), key=lambda ax: -abs(arr.strides[ax]))
    dense = np.transpose(arr, order)
    if not dense.flags.c_contiguous:
        return None
    return np.reshape(dense, -1)


def _fused(g: Any, out: Any) -> Any:
    """``g * (out > 0)`` by the compiled pass, or None where it does not apply."""
    if (
        g.size < _SMALL_ELEMENTS
        or g.dtype not in _FLOATS
        or out.dtype != g.dtype
        or g.shape != out.shape
        or g.strides != out.strides
        or _compiled.load(_JIT) is None
    ):
        return None
    res = np.empty_like(g)
    if g.flags.c_contiguous and res.flags.c_contiguous:  # (out has g's strides)
        gf, of, rf = g.reshape(-1), out.reshape(-1), res.reshape(-1)
    else:
        gf = memory_order(g)
        if gf is None:
            return None
        # out has g's strides and res takes them (NumPy's multiply keeps g's memory order):
        # both are dense in the same order.
        of, rf = memory_order(out), memory_order(res)
    zero = g.dtype.type(0)
    failed: list[bool] = []

    def work(r: tuple[int, int]) -> None:
        s, e = r
        if not failed and not _compiled.run(_JIT, "masked", gf[s:e], of[s:e], rf[s:e], zero):
            failed.append(True)

    n = gf.shape[0]
    _parallel.map_blocks(work, _parallel.blocks(n, _BLOCK_ELEMENTS), n,
                         _parallel.COMPILED_PARALLEL_ELEMENTS)  # fmt: skip
    return None if failed else res


class CpuReluGrad:
    """``kernels.RELU_GRAD`` for NumPy: one compiled pass where it applies, else the reference
    expression."""

    @staticmethod
    def forward(backend: Any, g: Any, out: Any) -> Any:
        res = _fused(g, out)
        return relu_grad(backend.xp, g, out) if res is None else res
