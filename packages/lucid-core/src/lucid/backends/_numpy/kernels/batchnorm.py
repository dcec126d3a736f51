"""Training-mode batch norm for the NumPy backend (``kernels.BATCH_NORM``).

The arithmetic of lucid.nn's reference Function in fewer passes over memory. Forward: one read
of x gives the per-channel statistics, one more read writes y. Backward: one read of dy and x
gives the two per-channel sums (of dy and of dy * x_hat), one more writes dx. x is taken in its
memory order, never copied (``_Layout``): a channels-last array (a convolution's output) as a
matrix of pixels by channels, a contiguous ``(N, C, ...)`` one as ``(N, C, L)`` planes; other
layouts, dtypes other than float32/float64 and small inputs run the reference. Outputs keep
x's memory order.

Each pass works on cache-sized blocks of rows, on every core for big arrays (``_parallel``).
A block's statistics are its mean and centred sum of squares, two passes over the block while it
is in cache (so float32 loses nothing to the cancellation of ``E[x^2] - E[x]^2``); blocks are
merged in float64 (Chan, Golub and LeVeque's pairwise update).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _parallel
from lucid.kernels import channels_first, channels_last

# Elements per block: a float32 block and its temporary fit in a core's L2 cache; smaller
# blocks pay Python per block, larger ones gain nothing (docs/performance.md, "Kernel constants").
_BLOCK_ELEMENTS = 1 << 17
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below these sizes the reference's few whole-array ops are as fast or faster: the blocked passes
# cost Python per block. Measured (fwd + bwd, CPU): channels-last / (N, C) inputs 0.88x at 8K
# elements, 1.5x at 32K (the reference reduces them slowly); contiguous (N, C, L) ones 0.78x at
# 64K, 1.0x at 512K, 2.1x at 8M.
SMALL_ELEMENTS = 1 << 15
SMALL_PLANES_ELEMENTS = 1 << 19
# The compiled elementwise passes (normalize, input_grad) make no temporaries, so they take
# blocks this long: a ResNet layer-1 batch norm (8M elements) is 16 blocks a pass instead of
# 64, less Python per block on the GIL (docs/performance.md, "The ResNet step's serial part").
# The statistics and gradient sums keep ``_BLOCK_ELEMENTS`` (their bits depend on the blocks).
# False: every pass in ``_BLOCK_ELEMENTS`` blocks, as before.
BIG_ELEMENTWISE_BLOCKS = True
_ELEMENTWISE_BLOCK = 1 << 19
# OpenBLAS runs GEMVs of up to about this many elements on one thread by itself.
_GEMV_ONE_THREAD = 9216
# A channels-last row holds channel runs up to this long (see ``_Layout``).
_ROW_ELEMENTS = 1024


class _Layout:
    """x as a matrix ``mat`` cut into row blocks along axis 0, never copied.

    Channels-last x (a convolution's output; an ``(N, C)`` batch): ``mat`` is ``(M / k, k * C)``,
    ``k`` pixels per row, so that a per-channel vector tiled ``k`` times broadcasts along long
    rows (NumPy's loops over 64-element rows run at a third of the speed). Contiguous
    ``(N, C, ...)`` x: ``mat`` is ``(N, C, L)``. Per-channel sums are GEMVs with a ones vector,
    several times faster than NumPy's reductions across rows.
    """

    def __init__(self, x: Any, channels_last_order: bool) -> None:
        self.shape, self.c = x.shape, x.shape[1]
        c = self.c
        if channels_last_order:
            m = x.size // c
            k = 1
            while 2 * k * c <= _ROW_ELEMENTS and m % (2 * k) == 0:
                k *= 2
            self.k = k
            self.mat = np.reshape(channels_last(x, np), (m // k, k * c))
        else:
            self.k = 0
            self.mat = np.reshape(x, (x.shape[0], c, -1))
        row = self.mat.size // self.mat.shape[0]
        self.ranges = _parallel.blocks(self.mat.shape[0], _BLOCK_ELEMENTS // row)
        rows = self.ranges[0][1] if self.k else self.mat.shape[2]
        self.ones = np.ones(rows, dtype=x.dtype)

    def sums(self, blk: Any) -> Any:
        """Per-channel sums of a block of ``mat``."""
        if self.k:
            return np.reshape(self.ones[: blk.shape[0]] @ blk, (self.k, self.c)).sum(axis=0)
        return np.sum(blk @ self.ones, axis=0)

    def expand(self, v: Any) -> Any:
        """A per-channel vector in x's dtype, broadcasting against blocks."""
        v = v.astype(self.mat.dtype)
        return np.tile(v, self.k) if self.k else v.reshape(self.c, 1)

    def like(self, arr: Any) -> Any:
        """``arr`` (shaped as ``mat``) as an array of x's shape, in x's memory order."""
        if self.k:
            n, c = self.shape[0], self.shape[1]
            return channels_first(arr.reshape(n, *self.shape[2:], c), np)
        return arr.reshape(self.shape)

    def view(self, arr: Any) -> Any:
        """``arr`` (x's shape) shaped as ``mat``; copied only when its memory order differs."""
        if self.k:
            return np.reshape(channels_last(arr, np), self.mat.shape)
        return np.reshape(arr, self.mat.shape)

    def run(self, work: Any, elementwise: bool = False) -> list[Any]:
        """``[work(r) for r in self.ranges]`` on every core for big x, one BLAS thread each;
        ``elementwise`` passes (no per-block sums: any blocks give the same bits) in the
        longer blocks of ``elementwise_ranges``."""
        ranges = self.elementwise_ranges() if elementwise else self.ranges
        if self.mat.size <= _GEMV_ONE_THREAD:
            return [work(r) for r in ranges]
        threshold = _parallel.COMPILED_PARALLEL_ELEMENTS if _jit(self) is not None else None
        with _parallel.blas_threads.single_blas_thread():
            return _parallel.map_blocks(work, ranges, self.mat.size, threshold)

    def elementwise_ranges(self) -> list[tuple[int, int]]:
        """Row blocks for a compiled elementwise pass: ``_ELEMENTWISE_BLOCK`` elements
        (``BIG_ELEMENTWISE_BLOCKS``), at least two per worker; else ``ranges``."""
        if not BIG_ELEMENTWISE_BLOCKS or _jit(self) is None:
            return self.ranges
        rows = self.mat.shape[0]
        row = self.mat.size // rows
        per = min(_ELEMENTWISE_BLOCK // row, -(-rows // (2 * _parallel.workers())))
        return _parallel.blocks(rows, max(per, self.ranges[0][1] - self.ranges[0][0]))


_JIT = "_batchnorm_jit"  # the compiled passes (lucid-core[numba]), for channels-last layouts


def _jit(lay: _Layout) -> Any:
    return _compiled.load(_JIT) if lay.k else None


def _layout(x: Any) -> _Layout | None:
    if x.dtype not in _FLOATS or x.size < SMALL_ELEMENTS:
        return None
    if channels_last(x, np).flags.c_contiguous:
        return _Layout(x, True)
    if x.flags.c_contiguous and x.size >= SMALL_PLANES_ELEMENTS:
        return _Layout(x, False)
    return None


def _block_stats(lay: _Layout, r: tuple[int, int]) -> tuple[int, Any, Any]:
    """(count, mean, centred sum of squares) per channel of rows ``r``."""
    blk = lay.mat[r[0] : r[1]]
    count = blk.size // lay.c
    mean = lay.sums(blk) / count
    d = np.subtract(blk, lay.expand(mean))
    np.multiply(d, d, out=d)
    return count, mean, lay.sums(d)


def _compiled_block_stats(lay: _Layout, r: tuple[int, int]) -> tuple[int, Any, Any]:
    """``_block_stats`` in one compiled pass (float64 sums); NumPy's where numba fails."""
    blk = lay.mat[r[0] : r[1]]
    mean, m2 = np.empty(lay.c), np.empty(lay.c)
    if not _compiled.run(_JIT, "block_stats", blk, lay.c, mean, m2):
        return _block_stats(lay, r)
    return blk.size // lay.c, mean, m2


def batch_stats(lay: _Layout) -> tuple[Any, Any]:
    """Per-channel mean and biased variance of x, in float64."""
    block = _compiled_block_stats if _jit(lay) is not None else _block_stats
    parts = lay.run(lambda r: block(lay, r))
    counts = np.array([p[0] for p in parts], dtype=np.float64)[:, None]
    means = np.array([p[1] for p in parts], dtype=np.float64)
    total = counts.sum()
    mean = (counts * means).sum(axis=0) / total
    m2 = np.array([p[2] for p in parts], dtype=np.float64).sum(axis=0)
    m2 += (counts * (means - mean) ** 2).sum(axis=0)
    return mean, m2 / total


def _channels(lay: _Layout, *vectors: Any) -> list[Any]:
    return [lay.expand(v) for v in vectors]


def normalize(lay: _Layout, scale: Any, shift: Any) -> Any:
    """``x * scale + shift`` per channel (PyTorch's form), in x's layout."""
    out = np.empty_like(lay.mat)
    scale_c, shift_c = _channels(lay, scale, shift)
    jit = _jit(lay) is not None

    def work(r: tuple[int, int]) -> None:
        o, blk = out[r[0] : r[1]], lay.mat[r[0] : r[1]]
        if jit and _compiled.run(_JIT, "normalize", blk, scale_c, shift_c, o):
            return
        np.multiply(blk, scale_c, out=o)
        np.add(o, shift_c, out=o)

    lay.run(work, elementwise=True)
    return lay.like(out)


def grad_sums(lay: _Layout, dy: Any, mean: Any) -> tuple[Any, Any]:
    """Per-channel ``sum(dy)`` and ``sum(dy * (x - mean))`` in float64, one pass over both."""
    (mean_c,) = _channels(lay, mean)

    jit = _jit(lay) is not None

    def work(r: tuple[int, int]) -> tuple[Any, Any]:
        g = dy[r[0] : r[1]]
        if jit:
            gb, gc = np.empty(lay.c), np.empty(lay.c)
            if _compiled.run(_JIT, "grad_sums", lay.mat[r[0] : r[1]], g, mean_c, lay.c, gb, gc):
                return gb, gc
        t = lay.mat[r[0] : r[1]] - mean_c
        np.multiply(t, g, out=t)
        return lay.sums(g), lay.sums(t)

    parts = lay.run(work)
    gb = np.array([p[0] for p in parts], dtype=np.float64).sum(axis=0)
    gc = np.array([p[1] for p in parts], dtype=np.float64).sum(axis=0)
    return gb, gc


def input_grad(lay: _Layout, dy: Any, a: Any, b: Any, c: Any) -> Any:
    """``(x * b + c + dy) * a`` per channel, in x's layout."""
    out = np.empty_like(lay.mat)
    a_c, b_c, c_c = _channels(lay, a, b, c)
    jit = _jit(lay) is not None

    def work(r: tuple[int, int]) -> None:
        o, blk, g = out[r[0] : r[1]], lay.mat[r[0] : r[1]], dy[r[0] : r[1]]
        if jit and _compiled.run(_JIT, "input_grad", blk, g, a_c, b_c, c_c, o):
            return
        np.multiply(blk, b_c, out=o)
        np.add(o, c_c, out=o)
        np.add(o, g, out=o)
        np.multiply(o, a_c, out=o)

    lay.run(work, elementwise=True)
    return lay.like(out)


class CpuBatchNorm:
    """``kernels.BATCH_NORM`` for NumPy: blocked one-read statistics and gradient sums; None
    (the reference runs) for other layouts, dtypes and small inputs."""

    @staticmethod
    def forward(
        backend: Any, x: Any, weight: Any, bias: Any, eps: float
    ) -> tuple[Any, Any, Any, Any] | None:
        lay = _layout(x)
        if lay is None:
            return None
        mean, var = batch_stats(lay)
        invstd = 1.0 / np.sqrt(var + eps)
        scale = invstd if weight is None else invstd * weight
        shift = -mean * scale if bias is None else bias - mean * scale
        y = normalize(lay, scale, shift)
        return y, mean.astype(x.dtype), var.astype(x.dtype), (mean, invstd, weight)

    @staticmethod
    def backward(
        backend: Any, x: Any, g: Any, stats: Any, needs: tuple[bool, ...]
    ) -> tuple[Any, Any, Any]:
        """The gradients of x, weight and bias (those in ``needs``) from x and the statistics."""
        lay = _layout(x)
        assert lay is not None  # the forward took this layout
        dy = lay.view(g)
        mean, invstd, w = stats
        gb, gc = grad_sums(lay, dy, mean)
        gw = gc * invstd  # sum(dy * x_hat)
        dt = lay.mat.dtype
        gx = None
        if needs[0]:
            # dx = w * invstd * (dy - gb / m - x_hat * gw / m), per channel: (x * b + c + dy) * a
            m = lay.mat.size // lay.c
            b = -invstd * gw / m
            a = invstd if w is None else invstd * w
            gx = input_grad(lay, dy, a, b, -gb / m - mean * b)
        return gx, (gw.astype(dt) if needs[1] else None), (gb.astype(dt) if needs[2] else None)
