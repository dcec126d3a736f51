"""softmax and log_softmax over the last dim in row blocks for the NumPy backend
(``kernels.SOFTMAX``, ``kernels.LOG_SOFTMAX`` and their gradients ``SOFTMAX_GRAD``,
``LOG_SOFTMAX_GRAD``).

The op's code makes ~5 passes over the whole array each way (max, subtract, exp, sum, log...):
over a language model's logits (700 x 10,000 float32, 28 MB) each pass goes to memory. Here the
same ufuncs run on blocks of rows that stay in L2 (``_BLOCK_ELEMENTS``), written into the
output: the same bits, about twice as fast (docs/performance.md). With numba in use, float32
rows run compiled passes instead (``COMPILED_ROWS``, ``_softmax_jit``: three reads from cache and
one write a row, within float32 rounding of the ufuncs' values). Small float arrays (any dim
and layout) run the op's own passes as bare ufunc calls; other big layouts and dims decline
(None): the op's code runs.
"""

from __future__ import annotations

import mmap
import os
import sys
import weakref
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled
from lucid.backends._numpy._errstate import QUIET
from lucid.backends._numpy._parallel import PARALLEL_ELEMENTS, in_worker, map_blocks, workers
from lucid.backends._numpy.kernels.special import pool_blocks

__all__ = ["CpuLogSoftmax", "CpuLogSoftmaxGrad", "CpuOneHotRows", "CpuSoftmax", "CpuSoftmaxGrad"]

_F32 = np.dtype(np.float32)
_FLOATS = (_F32, np.dtype(np.float64))
# Rows per block: about this many elements (256 KB of float32), so a block's passes hit L2.
_BLOCK_ELEMENTS = 1 << 16
# Smaller arrays fit in cache whole: the op's own passes.
_SMALL_ELEMENTS = 1 << 18
# ``CpuOneHotRows`` maps arrays of this many bytes and more straight from the kernel.
_MAPPED_BYTES = 1 << 22
# ``CpuOneHotRows`` keeps its last mapping and reuses it once no array views it: the last
# values cleared and the new ones written, without the ~M page faults of fresh pages (~1.1 ms
# of the main thread a (700, 10,000) step; the same zeros and values, docs/performance.md,
# issue 30). False: fresh pages every call, as before.
REUSE_ONE_HOT_PAGES = True
# The one-hot gradient's rows as ``exp(y) * (-s)`` where every row's sum ``s`` is negative (the
# subtraction from 0 folded into the factor's sign: one pass fewer, the same bits). False: as
# before.
FOLD_ONE_HOT_SIGN = True
# Float32 rows run as compiled passes where numba is in use (``_softmax_jit``: a row read three
# times from cache and written once, ``exp`` not stored; a word-level LSTM's (700, 10,000)
# logits 8.6 -> ~4 ms forward at one thread, issue 30, docs/performance.md). Their values are
# within float32 rounding of the ufuncs', not the same bits. False: the ufuncs' row blocks.
COMPILED_ROWS = True
# Small float32 arrays' log_softmax over their last dim (or one contiguous row) takes the
# compiled rows too, as one serial call over all their rows, instead of the ufuncs' six calls: a
# batch-1 classifier's (1, 18) log_softmax 3.9 -> 2.1 us, nanoGPT's (768, 65) loss 107 -> 82 us
# (issue 30). Within float32 rounding of the ufuncs' values, as the big arrays' compiled rows.
# softmax keeps the ufuncs there: ``lucid.compile``'s fused attention softmax
# (``compiler._arrays.ScaledMaskedSoftmax``) gives their bits. False: the ufuncs for both.
COMPILED_SMALL_ROWS = True
_JIT = "_softmax_jit"


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
    if x.size and x.shape[dim] == x.size and x.flags.c_contiguous:
        # one row (a batch-1 classifier's (1, C) logits, a generated token's probabilities):
        # the same reductions over the same contiguous elements as 1-D calls, without the
        # axis and keepdims (~0.9 us a call, the same bits; issue 30)
        s = np.subtract(x, np.maximum.reduce(x.reshape(-1)))
        if log:
            return np.subtract(s, np.log(np.add.reduce(np.exp(s).reshape(-1))))
        e = np.exp(s)
        return np.divide(e, np.add.reduce(e.reshape(-1)))
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


def _blocks(n_rows: int, n_cols: int) -> list[tuple[int, int]]:
    k = _step(n_cols)
    return [(r, min(n_rows, r + k)) for r in range(0, n_rows, k)]


def _each_block(work: Any, a: Any) -> None:
    """``work((start, stop))`` for every block of rows of the 2-D ``a``. Big arrays share the
    blocks out over the thread budget (a language model's (700, 10,000) logits; the ufuncs
    release the GIL, docs/performance.md) in a few groups of blocks, each run with NumPy's
    floating-point warnings off as the op's own thread has them (a worker thread starts with
    NumPy's defaults)."""
    blocks = _blocks(*a.shape)
    k = workers()
    if a.size < PARALLEL_ELEMENTS or k == 1 or in_worker():
        for r in blocks:
            work(r)
        return
    per = -(-len(blocks) // (4 * k))  # 4 groups a thread: a late thread delays less

    def group(g: tuple[int, int]) -> None:
        state, value = QUIET
        token = state.set(value)
        try:
            for r in blocks[g[0] : g[1]]:
                work(r)
        finally:
            state.reset(token)

    map_blocks(group, [(i, min(len(blocks), i + per)) for i in range(0, len(blocks), per)],
               a.size)  # fmt: skip


def _compiled_rows(a: Any) -> bool:
    """Whether the rows of ``a`` (2-D, C-contiguous) take ``_softmax_jit``'s passes."""
    return COMPILED_ROWS and a.dtype == np.float32 and _compiled.load(_JIT) is not None


def _run_rows(name: str, arrays: tuple[Any, ...], numpy_block: Any, like: Any) -> bool:
    """``_softmax_jit``'s pass ``name`` over every row of ``like``: in the pool's blocks where
    the pool leads (``special.pool_blocks``; a block the compiled pass fails on runs
    ``numpy_block``), else split over numba's threads. False (nothing written) where that
    split fails: the caller runs its ufunc blocks."""
    if not pool_blocks():
        return _compiled.run(_JIT, "rows", name, *arrays, 0, like.shape[0])

    def block(r: tuple[int, int]) -> None:
        if not _compiled.run(_JIT, name, *arrays, r[0], r[1]):
            numpy_block(r)

    _each_block(block, like)
    return True


def _small_compiled(x: Any, dim: int) -> Any:
    """A small ``x``'s log_softmax through the compiled rows in one call
    (``COMPILED_SMALL_ROWS``), or None where it does not take them: float32, C-contiguous,
    over the last dim or one row."""
    shape = x.shape
    n = shape[dim]
    if n != x.size and dim != -1 and dim != len(shape) - 1:
        return None
    if x.dtype != _F32 or not x.size or not x.flags.c_contiguous or not COMPILED_ROWS:
        return None
    mod = _compiled.load(_JIT)
    if mod is None:
        return None
    # (rows, n) as it is where it is 2-D over its last dim (a batch-1 classifier's logits):
    # no reshape either way; ``np.empty`` of a C-contiguous array is ``empty_like``'s array
    # (~0.3 us less a call, per-call cost, docs/performance.md)
    x2 = x if len(shape) == 2 and shape[1] == n else x.reshape(-1, n)
    rows = x2.shape[0]
    out = np.empty((rows, n), dtype=_F32)
    if not _compiled.run(_JIT, "log_softmax_rows", x2, out, 0, rows):
        return None
    return out if x2 is x else out.reshape(shape)


def _forward(x: Any, dim: int, log: bool) -> Any:
    if log and COMPILED_SMALL_ROWS and type(x) is np.ndarray and x.dtype is _F32:
        # ``_small``'s test for one float32 array, then the compiled rows (a batch-1
        # classifier's log_softmax per step)
        if x.ndim and x.size < _SMALL_ELEMENTS:
            out = _small_compiled(x, dim)
            return out if out is not None else _small_forward(x, dim, log)
    if _small(x):
        out = _small_compiled(x, dim) if log and COMPILED_SMALL_ROWS else None
        return out if out is not None else _small_forward(x, dim, log)
    rows = _rows(x, dim=dim)
    if rows is None:
        return None
    (x2,) = rows
    out = np.empty_like(x2)
    mx, add, sub, exp = np.maximum.reduce, np.add.reduce, np.subtract, np.exp

    def block(r: tuple[int, int]) -> None:
        xb, ob = x2[r[0] : r[1]], out[r[0] : r[1]]
        sub(xb, mx(xb, axis=1, keepdims=True), out=ob)  # as _shifted
        if log:
            tb = exp(ob)
            sub(ob, np.log(add(tb, axis=1, keepdims=True)), out=ob)
        else:
            exp(ob, out=ob)
            np.divide(ob, add(ob, axis=1, keepdims=True), out=ob)

    name = "log_softmax_rows" if log else "softmax_rows"
    if not (_compiled_rows(x2) and _run_rows(name, (x2, out), block, x2)):
        _each_block(block, x2)
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


class _OneHot:
    """The last array ``CpuOneHotRows`` made (weakly held) and its nonzeros, one a row, as one
    ``(ref, cols, values)`` tuple: set and read in one step, so a thread never pairs one array
    with another's nonzeros."""

    __slots__ = ("entry",)

    def __init__(self) -> None:
        self.entry: tuple[Any, Any, Any] | None = None


_one_hot = _OneHot()


class _Spare:
    """``CpuOneHotRows``'s last mapping as ``[(mmap, shape, dtype, columns written)]``
    (a list: ``pop`` takes it in one step, so two threads never share it)."""

    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot: list[tuple[Any, tuple[int, int], Any, Any]] = []


_spare = _Spare()
if hasattr(os, "register_at_fork"):
    # The mapping is shared (``mmap``'s default): across a fork neither process may rewrite it,
    # since an array over it may live on in the other.
    os.register_at_fork(before=_spare.slot.clear)


def _mapped_one_hot(shape: tuple[int, int], cols: Any, values: Any) -> Any:
    """The one-hot array on mapped pages: the last call's mapping where nothing views it any
    more (its ``mmap`` referenced by the spare entry alone), else fresh pages."""
    dtype = values.dtype
    rows = np.arange(shape[0])
    out = None
    if REUSE_ONE_HOT_PAGES and _spare.slot:
        try:
            entry = _spare.slot.pop()
        except IndexError:  # another thread took it
            entry = None
        # 2: the entry's reference and getrefcount's argument; an array or view of the last
        # one-hot gradient alive holds one more (its base chain ends at the mmap).
        if entry is not None and sys.getrefcount(entry[0]) == 2:
            if entry[1] == shape and entry[2] == dtype:
                out = np.frombuffer(entry[0], dtype=dtype).reshape(shape)
                out[rows, entry[3]] = 0
        del entry
    if out is None:
        out = np.frombuffer(mmap.mmap(-1, shape[0] * shape[1] * dtype.itemsize), dtype=dtype)
        out = out.reshape(shape)
    out[rows, cols] = values
    if REUSE_ONE_HOT_PAGES:
        base = out.base
        while isinstance(base, np.ndarray):
            base = base.base
        _spare.slot[:] = [(base, shape, dtype, np.array(cols))]
    return out


class CpuOneHotRows:
    """``kernels.ONE_HOT_ROWS``: nll_loss's gradient as a read-only zero array with one value a
    row, remembered with its nonzeros, so that ``CpuLogSoftmaxGrad`` given it (the
    word_language_model's ``nll_loss(log_softmax(x))``) reads those instead of the whole array
    (read-only: nothing can change it after; docs/performance.md, issue 30)."""

    @staticmethod
    def forward(backend: Any, shape: tuple[int, int], cols: Any, values: Any) -> Any:
        size = shape[0] * shape[1] * values.dtype.itemsize
        if size >= _MAPPED_BYTES:
            # Mapped pages: only the ~M pages written are touched (np.zeros clears reused heap
            # memory: ~1.5 ms a (700, 10,000) step, docs/performance.md).
            out = _mapped_one_hot(shape, cols, values)
        else:
            out = np.zeros(shape, dtype=values.dtype)
            out[np.arange(shape[0]), cols] = values
        out.flags.writeable = False
        _one_hot.entry = (weakref.ref(out), cols, values)
        return out


def _one_hot_log_softmax_grad(g: Any, y: Any, dim: int) -> Any:
    """``g - exp(y) * sum(g)`` for ``g`` made by ``CpuOneHotRows`` (else None): the row sum is
    the row's one value ``v`` (``v + 0``, as the sum over its zeros gives it: ``-0`` becomes
    ``0``), the row ``0 - exp(y) * s`` but at the value's column, ``v - exp(y) * s`` there. The
    same ufuncs on the same values as the dense formula: the same bits, without reading ``g``
    (a (700, 10,000) gradient: 28 MB not read, one pass fewer)."""
    entry = _one_hot.entry
    if entry is None or entry[0]() is not g or g.ndim != 2 or dim not in (-1, 1):
        return None
    if g.shape[1] < 2 or y.shape != g.shape or y.dtype != g.dtype or not y.flags.c_contiguous:
        return None
    _, cols, values = entry
    zero = g.dtype.type(0)
    sums = np.add(values, zero)
    out = np.empty_like(y)
    if y.size >= _SMALL_ELEMENTS and _compiled_rows(y):  # as the dense formula's rows
        n = y.shape[1]
        cols64 = np.ascontiguousarray(cols, dtype=np.int64)
        if cols64.shape == (y.shape[0],) and (not cols64.size or (
                int(cols64.min()) >= -n and int(cols64.max()) < n)):  # fmt: skip
            args = (y, cols64, np.ascontiguousarray(values), sums, out)
            fell_back: list[bool] = []

            def numpy_rows(r: tuple[int, int]) -> None:
                fell_back.append(True)
                ob = out[r[0] : r[1]]
                np.exp(y[r[0] : r[1]], out=ob)
                np.multiply(ob, sums[r[0] : r[1], None], out=ob)
                np.subtract(zero, ob, out=ob)

            if _run_rows("one_hot_grad_rows", args, numpy_rows, y):
                if fell_back:  # the ufuncs' rows: their value's column as below
                    rows = np.arange(g.shape[0])
                    out[rows, cols] = np.subtract(values, np.multiply(np.exp(y[rows, cols]), sums))
                return out
    col = sums[:, None]
    if FOLD_ONE_HOT_SIGN and bool(np.all(np.less(sums, zero))):
        # Every row's sum negative (nll_loss's values, -w/N): ``0 - e s`` is ``e (-s)`` bit for
        # bit (rounding is sign-symmetric; ``e = 0`` gives ``+0`` both ways, ``e = inf`` gives
        # ``inf``, a NaN stays that NaN): one pass a block fewer.
        col = np.negative(col)

        def block(r: tuple[int, int]) -> None:
            ob = out[r[0] : r[1]]
            np.exp(y[r[0] : r[1]], out=ob)
            np.multiply(ob, col[r[0] : r[1]], out=ob)

    else:

        def block(r: tuple[int, int]) -> None:
            ob = out[r[0] : r[1]]
            np.exp(y[r[0] : r[1]], out=ob)
            np.multiply(ob, col[r[0] : r[1]], out=ob)
            np.subtract(zero, ob, out=ob)

    _each_block(block, out)
    rows = np.arange(g.shape[0])
    out[rows, cols] = np.subtract(values, np.multiply(np.exp(y[rows, cols]), sums))
    return out


class CpuLogSoftmaxGrad:
    """``kernels.LOG_SOFTMAX_GRAD``: ``g - exp(y) * sum(g)`` in row blocks, else None."""

    @staticmethod
    def forward(backend: Any, g: Any, y: Any, dim: int) -> Any:
        if _small(g, y):  # the op's formula, ufunc calls only
            # (first: for a small one-hot ``g`` its ~15 calls and a block hand-off cost more
            # than the 4 passes they save; the same bits: ``_one_hot_log_softmax_grad``)
            total = np.add.reduce(g, axis=dim, keepdims=True)
            return np.subtract(g, np.multiply(np.exp(y), total))
        sparse = _one_hot_log_softmax_grad(g, y, dim)
        if sparse is not None:
            return sparse
        rows = _rows(g, y, dim=dim)
        if rows is None:
            return None
        g2, y2 = rows
        out = np.empty_like(g2)

        def block(r: tuple[int, int]) -> None:
            gb, ob = g2[r[0] : r[1]], out[r[0] : r[1]]
            total = np.add.reduce(gb, axis=1, keepdims=True)
            np.exp(y2[r[0] : r[1]], out=ob)
            np.multiply(ob, total, out=ob)
            np.subtract(gb, ob, out=ob)

        if not (_compiled_rows(g2) and _run_rows("log_softmax_grad_rows", (g2, y2, out), block,
                                                 g2)):  # fmt: skip
            _each_block(block, g2)
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

        def block(r: tuple[int, int]) -> None:
            yb, ob = y2[r[0] : r[1]], out[r[0] : r[1]]
            np.multiply(g2[r[0] : r[1]], yb, out=ob)  # gy
            np.subtract(ob, np.multiply(yb, np.add.reduce(ob, axis=1, keepdims=True)), out=ob)

        _each_block(block, g2)
        return out.reshape(g.shape)
