"""softmax and log_softmax over the last dim in row blocks for the NumPy backend
(``kernels.SOFTMAX``, ``kernels.LOG_SOFTMAX`` and their gradients ``SOFTMAX_GRAD``,
``LOG_SOFTMAX_GRAD``).

The op's code makes ~5 passes over the whole array each way (max, subtract, exp, sum, log...):
over a language model's logits (700 x 10,000 float32, 28 MB) each pass goes to memory. Here the
same ufuncs run on blocks of rows that stay in L2 (``_BLOCK_ELEMENTS``), written into the
output: the same bits, about twice as fast (docs/performance.md). Small float arrays (any dim
and layout) run the op's own passes as bare ufunc calls; other big layouts and dims decline
(None): the op's code runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CpuLogSoftmax", "CpuLogSoftmaxGrad", "CpuSoftmax", "CpuSoftmaxGrad"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Rows per block: about this many elements (256 KB of float32), so a block's passes hit L2.
_BLOCK_ELEMENTS = 1 << 16
# Smaller arrays fit in cache whole: the op's own passes.
_SMALL_ELEMENTS = 1 << 18


def _small(*arrays: Any) -> bool:
    """Whether the arrays take the small path: the op's own passes, as ufunc calls without
    NumPy's Python wrappers (``np.max``/``np.sum`` cost ~4 us a call on top of the reduction;
    the same reductions, so the same bits; docs/performance.md, issue 30)."""
    a = arrays[0]
    if type(a) is not np.ndarray or a.ndim == 0 or a.size >= _SMALL_ELEMENTS:
        return False
    dtype = a.dtype
    for b in arrays:  # (a loop, not all() over a generator: ~0.3 us a call)
        if type(b) is not np.ndarray or b.dtype != dtype:
            return False
    return dtype in _FLOATS


def _small_forward(x: Any, dim: int, log: bool) -> Any:
    s = np.subtract(x, np.maximum.reduce(x, axis=dim, keepdims=True))  # as _shifted
    if log:
        return np.subtract(s, np.log(np.add.reduce(np.exp(s), axis=dim, keepdims=True)))
    e = np.exp(s)
    return np.divide(e, np.add.reduce(e, axis=dim, keepdims=True))


def _rows(*arrays: Any, dim: int) -> tuple[Any, ...] | None:
    """The arrays as C-contiguous ``(rows, last)`` views, or None where the kernel declines."""
    a = arrays[0]
    if a.ndim == 0 or dim not in (-1, a.ndim - 1) or a.size < _SMALL_ELEMENTS:
        return None
    if any(b.dtype not in _FLOATS or b.dtype != a.dtype or b.shape != a.shape
           or not b.flags.c_contiguous for b in arrays):  # fmt: skip
        return None
    return tuple(b.reshape(-1, a.shape[-1]) for b in arrays)


def _step(n_cols: int) -> int:
    """Rows per block."""
    return max(1, _BLOCK_ELEMENTS // max(n_cols, 1))


def _blocks(n_rows: int, n_cols: int) -> range:
    return range(0, n_rows, _step(n_cols))


def _forward(x: Any, dim: int, log: bool) -> Any:
    if _small(x):
        return _small_forward(x, dim, log)
    rows = _rows(x, dim=dim)
    if rows is None:
        return None
    (x2,) = rows
    out = np.empty_like(x2)
    k = _step(x2.shape[1])
    tmp = np.empty((k, x2.shape[1]), dtype=x2.dtype)
    for r in _blocks(*x2.shape):
        xb, ob = x2[r : r + k], out[r : r + k]
        tb = tmp[: xb.shape[0]]
        np.subtract(xb, np.max(xb, axis=1, keepdims=True), out=ob)  # as _shifted
        if log:
            np.exp(ob, out=tb)
            np.subtract(ob, np.log(np.sum(tb, axis=1, keepdims=True)), out=ob)
        else:
            np.exp(ob, out=ob)
            np.divide(ob, np.sum(ob, axis=1, keepdims=True), out=ob)
    return out.reshape(x.shape)


class CpuSoftmax:
    """``kernels.SOFTMAX`` for NumPy: row blocks over the last dim, else None."""

    @staticmethod
    def forward(backend: Any, x: Any, dim: int) -> Any:
        return _forward(x, dim, False)


class CpuLogSoftmax:
    """``kernels.LOG_SOFTMAX`` for NumPy: row blocks over the last dim, else None."""

    @staticmethod
    def forward(backend: Any, x: Any, dim: int) -> Any:
        return _forward(x, dim, True)


class CpuLogSoftmaxGrad:
    """``kernels.LOG_SOFTMAX_GRAD``: ``g - exp(y) * sum(g)`` in row blocks, else None."""

    @staticmethod
    def forward(backend: Any, g: Any, y: Any, dim: int) -> Any:
        if _small(g, y):  # the op's formula, ufunc calls only
            total = np.add.reduce(g, axis=dim, keepdims=True)
            return np.subtract(g, np.multiply(np.exp(y), total))
        rows = _rows(g, y, dim=dim)
        if rows is None:
            return None
        g2, y2 = rows
        out = np.empty_like(g2)
        k = _step(g2.shape[1])
        for r in _blocks(*g2.shape):
            gb, ob = g2[r : r + k], out[r : r + k]
            s = np.sum(gb, axis=1, keepdims=True)
            np.exp(y2[r : r + k], out=ob)
            np.multiply(ob, s, out=ob)
            np.subtract(gb, ob, out=ob)
        return out.reshape(g.shape)


class CpuSoftmaxGrad:
    """``kernels.SOFTMAX_GRAD``: ``g y - y * sum(g y)`` in row blocks, else None."""

    @staticmethod
    def forward(backend: Any, g: Any, y: Any, dim: int) -> Any:
        if _small(g, y):  # the op's formula, ufunc calls only
            gy = np.multiply(g, y)
            return np.subtract(gy, np.multiply(y, np.add.reduce(gy, axis=dim, keepdims=True)))
        rows = _rows(g, y, dim=dim)
        if rows is None:
            return None
        g2, y2 = rows
        out = np.empty_like(g2)
        k = _step(g2.shape[1])
        tmp = np.empty((k, g2.shape[1]), dtype=g2.dtype)
        for r in _blocks(*g2.shape):
            yb, ob = y2[r : r + k], out[r : r + k]
            np.multiply(g2[r : r + k], yb, out=ob)  # gy
            tb = tmp[: yb.shape[0]]
            np.multiply(yb, np.sum(ob, axis=1, keepdims=True), out=tb)
            np.subtract(ob, tb, out=ob)
        return out.reshape(g.shape)
