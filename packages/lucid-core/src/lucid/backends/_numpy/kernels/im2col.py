"""The NumPy backend's convolution arithmetic: im2col + GEMM in cache-sized chunks on threads.

The same arithmetic as lucid.nn's reference convolution (``lucid/nn/functional/_im2col.py``),
organised for the CPU. Activations are handled channels-last, ``(N, *spatial, C)``: a kernel
tap then reads runs of ``C`` contiguous values, and the GEMM result ``(rows, C_out)`` is already
channels-last, so the ``(N, C_out, *spatial)`` array handed back is a free transposed view of it
(elementwise ops keep that memory order, and the next convolution reads it as is).

The batch is processed in chunks sized so that one chunk's column matrix stays in cache: the
copy into the column matrix, the GEMM and the per-tap adds of the backward then hit cache
instead of memory, which is where a whole-batch im2col loses its time. Big ops run their chunks
on a thread per core, each with one-thread BLAS (``_parallel.run_chunks``), so the copies are
parallel too. Small forward column matrices are kept for the weight gradient. With
``lucid-core[numba]``, 2-D convolutions of one group build the column matrix and add the column
gradient back in compiled loops (``_im2col_jit``) instead of one strided copy per kernel tap.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _gemm, _parallel
from lucid.kernels import (
    ConvGeometry,
    channels_first,
    channels_last,
    im2col,
    pad_spatial,
)

# Bytes of column matrix per chunk: a few MB keeps the copy and its GEMM in L2/L3.
_CHUNK_BYTES = 4 << 20
# Column matrices up to this size (all chunks) are kept from the forward for the weight
# gradient instead of being copied again (small layers, where the copy is a large share).
_KEEP_COLS_BYTES = 32 << 20
# Weights up to this many elements (one group) get their gradient as ``col^T dy`` (transposed
# after: few result rows split badly over threads), bigger ones as ``dy^T col`` (its result is
# already in the weight's order, a copy saved; docs/performance.md, "Kernel constants").
_SMALL_WEIGHT = 64 * 64
# Below this many input channels (one group), col2im works channels-first (longer runs).
_NARROW_CHANNELS = 32


_JIT = "_im2col_jit"  # im2col/col2im as compiled loops (lucid-core[numba]), 2-D, one group
_BLOCKS = "_convblock_jit"  # the convolution by column blocks (lucid-core[numba])
# A float32 2-D convolution of one group whose whole column matrix is one the forward would keep
# (up to ``_KEEP_COLS_BYTES``) runs by column blocks of a few samples (``_convblock_jit``):
# forward, input gradient and weight gradient each build their columns (or column gradient) a
# block at a time in cache, where the whole matrix went to memory and back, and the weight
# gradient read a kept matrix that had left the caches by the backward (LeNet-5's conv2 weight
# gradient 0.47-0.95 ms in the step, ~0.3 with the blocks; the step 0.83-0.92x; docs/
# performance.md, session 17). False: whole column matrices, kept for the weight gradient.
COLUMN_BLOCKS = True
# Column bytes per block of samples (each thread's block stays in its L2).
_BLOCK_BYTES = 256 << 10


def _jit(x: Any, c: int, g: ConvGeometry) -> Any:
    """The compiled im2col/col2im module for this convolution (``c`` input channels), or None.

    One input channel stays with NumPy's tap-by-tap copies, which then move whole rows (the
    compiled loops would move runs of ``KW`` values: slower, measured)."""
    if g.nd != 2 or g.groups != 1 or c < 2 or x.dtype.char not in "fd":  # float32/64
        return None
    return _compiled.load(_JIT)


def col_matrix(backend: Any, xl: Any, g: ConvGeometry) -> Any:
    """``im2col(backend, xl, g)``: compiled where it can be (the same matrix, bit for bit)."""
    if _jit(xl, xl.shape[-1], g) is not None:
        xp = backend.xp
        xpad = xp.ascontiguousarray(pad_spatial(xl, g, xp))
        (oh, ow), c = g.out_size, xl.shape[-1]
        col = xp.empty((xl.shape[0] * oh * ow, g.taps * c), dtype=xl.dtype)
        geo = (*g.stride, *g.dilation, oh, ow)
        flat = xp.reshape(xpad, (xpad.shape[0], xpad.shape[1], -1))
        if _compiled.run(_JIT, "im2col", *g.kernel, flat, *geo, col):
            return xp.reshape(col, (col.shape[0], 1, col.shape[1]))
    return im2col(backend, xl, g)


def _one_channel(x: Any, g: ConvGeometry) -> bool:
    """Whether the compiled one-input-channel convolution runs (2-D, stride and dilation 1)."""
    return (
        g.nd == 2
        and g.groups == 1
        and g.stride == (1, 1)
        and g.dilation == (1, 1)
        and x.dtype.char in "fd"
        and _compiled.load(_JIT) is not None
    )


def _conv_one_channel(backend: Any, xl: Any, w: Any, bias: Any, g: ConvGeometry) -> Any:
    """A first layer on images (one input channel) without a column matrix: 0.7 ms for
    LeNet-5's conv1 forward against ~2 ms for its im2col + GEMM (N = 6 columns, 20 GFLOP/s).
    None where numba fails. Its weight gradient builds the column matrix (not kept)."""
    xp = backend.xp
    n, cout = xl.shape[0], w.shape[0]
    (oh, ow), (hp, wp) = g.out_size, g.padded
    xpad = xp.ascontiguousarray(pad_spatial(xl, g, xp))
    xflat = xp.reshape(xpad, (n, hp * wp))
    wm = xp.ascontiguousarray(xp.reshape(w, (cout, g.taps)))
    b = xp.zeros(cout, dtype=xl.dtype) if bias is None else xp.ascontiguousarray(bias)
    planes = xp.empty((n, cout, (oh - 1) * wp + ow), dtype=xl.dtype)
    out = xp.empty((n, oh, ow, cout), dtype=xl.dtype)
    if not _compiled.run(_JIT, "conv_one_channel", *g.kernel, xflat, wp, wm, b, planes, out):
        return None
    return channels_first(out, xp)


def _weight_one_channel(backend: Any, xl: Any, dyl: Any, g: ConvGeometry) -> Any:
    """The weight gradient of ``_conv_one_channel``'s convolution without a column matrix: one
    dot product over the padded width per sample, output channel and tap (LeNet-5's conv1:
    ~1.1 ms with im2col + GEMM, ~0.6 ms on one core, ~0.35 ms on two). None where numba fails."""
    xp = backend.xp
    xflat = xp.reshape(xp.ascontiguousarray(pad_spatial(xl, g, xp)), (xl.shape[0], -1))
    dyc = xp.ascontiguousarray(dyl)
    dw = xp.empty((dyc.shape[-1], g.taps))  # float64 sums
    if not _compiled.run(_JIT, "weight_one_channel", *g.kernel, xflat, g.padded[1], dyc, dw):
        return None
    return xp.reshape(dw.astype(dyc.dtype), (dyc.shape[-1], 1, *g.kernel))


def _blocks(x: Any, c: int, cout: int, g: ConvGeometry) -> Any:
    """The compiled convolution by column blocks (``COLUMN_BLOCKS``) for this float32
    convolution of ``c`` to ``cout`` channels, where its whole column matrix is one the forward
    would keep and its weight is small (``_SMALL_WEIGHT``: a block's product packs the whole
    weight again, which for ResNet-18's 256-512 channel layers cost more than the blocks
    saved, the step 1.61 -> 1.81 s); else None."""
    if not COLUMN_BLOCKS or x.dtype != np.float32 or _jit(x, c, g) is None:
        return None
    if not 0 < c * g.taps * cout <= _SMALL_WEIGHT or 0 in g.out_size:
        return None
    if x.shape[0] * math.prod(g.out_size) * c * g.taps * 4 > _KEEP_COLS_BYTES:
        return None
    return _compiled.load(_BLOCKS)


def _forward_by_blocks(backend: Any, xl: Any, w: Any, bias: Any, g: ConvGeometry) -> Any:
    """``conv_forward`` from columns built a block of samples at a time (``_convblock_jit``,
    the bits of the whole batch's im2col and GEMM); None where numba fails."""
    xp = backend.xp
    n, c = xl.shape[0], xl.shape[-1]
    (oh, ow), kk, cout = g.out_size, g.taps * c, w.shape[0]
    xpad = xp.ascontiguousarray(pad_spatial(xl, g, xp))
    grid = xp.reshape(xpad, (n, xpad.shape[1], -1))
    wrows = xp.ascontiguousarray(_weight_rows(w, 1)[0])  # (C_out, K)
    out = xp.empty((n, oh, ow, cout), dtype=np.float32)
    block = max(1, min(n, _BLOCK_BYTES // (oh * ow * kk * 4)))
    geo = (*g.stride, *g.dilation, oh, ow)
    flat = xp.reshape(out, (n * oh * ow, cout))
    with _parallel.blas_threads.single_blas_thread():  # one BLAS thread per block's product
        if not _compiled.run(_BLOCKS, "forward", *g.kernel, grid, *geo, wrows, block, flat):
            return None
    if bias is not None:
        flat += bias
    return channels_first(out, xp)


def _input_by_blocks(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    """``conv_input_grad`` a block of samples at a time: each block's column gradient made and
    added back (col2im) while in cache (``_convblock_jit``, the bits of the whole batch's GEMM
    and col2im); None where numba fails."""
    xp = backend.xp
    n, c, cout = dy.shape[0], w.shape[1], dy.shape[1]
    (oh, ow), kk = g.out_size, g.taps * c
    dy2 = xp.ascontiguousarray(xp.reshape(channels_last(dy, xp), (n * oh * ow, cout)))
    wrows = xp.ascontiguousarray(_weight_rows(w, 1)[0])  # (C_out, K)
    dpad = xp.zeros((n, *g.padded, c), dtype=np.float32)
    grid = xp.reshape(dpad, (n, dpad.shape[1], -1))
    block = max(1, min(n, _BLOCK_BYTES // (oh * ow * kk * 4)))
    geo = (*g.stride, *g.dilation, oh, ow)
    with _parallel.blas_threads.single_blas_thread():  # one BLAS thread per block's product
        if not _compiled.run(_BLOCKS, "input_grad", *g.kernel, grid, *geo, dy2, wrows, block):
            return None
    crop = (slice(None), *g.crop(), slice(None))
    return channels_first(dpad[crop], xp)


def _weight_by_blocks(backend: Any, xl: Any, dyl: Any, g: ConvGeometry) -> Any:
    """The weight gradient ``col^T @ dy`` from columns built a block of samples at a time
    (``_convblock_jit``), in ``_weight_from_rows``' order; None where numba fails."""
    xp = backend.xp
    n, c = xl.shape[0], xl.shape[-1]
    (oh, ow), kk, cout = g.out_size, g.taps * c, dyl.shape[-1]
    xpad = xp.ascontiguousarray(pad_spatial(xl, g, xp))
    grid = xp.reshape(xpad, (n, xpad.shape[1], -1))
    dy2 = xp.ascontiguousarray(xp.reshape(dyl, (n * oh * ow, cout)))
    block = max(1, min(n, _BLOCK_BYTES // (oh * ow * kk * 4)))
    acc = xp.empty((kk, cout), dtype=np.float32)
    geo = (*g.stride, *g.dilation, oh, ow)
    with _parallel.blas_threads.single_blas_thread():  # one BLAS thread per block's product
        if not _compiled.run(_BLOCKS, "weight_grad", *g.kernel, grid, *geo, dy2, block, acc):
            return None
    return _weight_from_rows(xp.transpose(acc)[None], g.kernel)


def chunks(n: int, sample_bytes: int) -> list[tuple[int, int]]:
    """Batch ranges whose column matrices hold about ``_CHUNK_BYTES`` each (``batch_chunks``)."""
    return _parallel.batch_chunks(n, _CHUNK_BYTES // max(1, sample_bytes))


# A big convolution whose whole column matrix fits one chunk (ResNet-18-CIFAR's 1x1
# downsampling layers at b128) runs as one chunk per worker on the pool, instead of one chunk
# on the calling thread (its column copy and col2im on one core, the product's runtime switched
# to OpenBLAS's threads and back: docs/performance.md, "The ResNet step's serial part"). Its
# rows are independent, so the forward and input gradient give the same bits; the weight
# gradient keeps its one chunk (its sum's order). Also: the input gradient's chunks write into
# one array instead of being concatenated on the caller. False: both as before.
SPLIT_SINGLE_CHUNK = True


def _spread(ranges: list[tuple[int, int]], n: int, flops: float) -> list[tuple[int, int]]:
    """``ranges``, or one range per worker where a big op got a single chunk."""
    if not SPLIT_SINGLE_CHUNK or len(ranges) != 1 or n < 2 or flops < _parallel.PARALLEL_FLOPS:
        return ranges
    k = _parallel.workers_for(n, 1)
    return ranges if k <= 1 else _parallel.batch_chunks(n, -(-n // k))


def _kept_whole(kept: dict[Any, Any] | None, n: int) -> Any:
    """The forward's kept column matrix of the whole batch, joined from its per-worker chunks
    (``_spread``) where it was split; None if not kept."""
    if not kept:
        return None
    if (0, n) in kept:
        return kept[0, n]
    parts = sorted((k, v) for k, v in kept.items() if len(k) == 2 and isinstance(k[0], int))
    if not parts or parts[0][0][0] != 0 or parts[-1][0][1] != n:
        return None
    if any(a[0][1] != b[0][0] for a, b in zip(parts, parts[1:])):
        return None
    return np.concatenate([col for _, col in parts], axis=0)


def _weight_rows(w: Any, groups: int) -> Any:
    """``(C_out, C/G, *kernel)`` -> ``(G, C_out/G, taps * C/G)``, C-contiguous: the transpose of
    ``lucid.kernels.weight_matrix``, whose columns are im2col's (tap, channel) order. Copying a
    weight in this order reads it in runs; ``weight_matrix``'s own order reads it with a stride
    of a whole filter (512 x 256 x 3 x 3: 0.5 ms against 4.0 ms). GEMMs take the transposed
    view at the same speed."""
    cout, cg = w.shape[0], w.shape[1]
    kernel = w.shape[2:]
    nd = len(kernel)
    wr = np.reshape(w, (groups, cout // groups, cg, *kernel))
    wr = np.transpose(wr, (0, 1, *range(3, nd + 3), 2))
    return np.reshape(wr, (groups, cout // groups, math.prod(kernel) * cg))


def _weight_from_rows(wr: Any, kernel: tuple[int, ...]) -> Any:
    """The inverse of ``_weight_rows``, contiguous (``lucid.kernels.weight_from_matrix`` from
    a ``(taps * C, C_out)`` matrix took 7.9 ms for 512 x 256 x 3 x 3; this takes 0.5 ms)."""
    groups, coutg, kg = wr.shape
    nd = len(kernel)
    cg = kg // math.prod(kernel)
    w = np.reshape(wr, (groups, coutg, *kernel, cg))
    w = np.transpose(w, (0, 1, nd + 2, *range(2, nd + 2)))
    return np.reshape(w, (groups * coutg, cg, *kernel))


def _grouped_matmul(col: Any, wm: Any, xp: Any) -> Any:
    """``(rows, G, K) x (G, K, M) -> (rows, G*M)``: one batched GEMM over the groups."""
    rows, groups = col.shape[0], col.shape[1]
    out = xp.matmul(xp.transpose(col, (1, 0, 2)), wm)  # (G, rows, M)
    return xp.reshape(xp.transpose(out, (1, 0, 2)), (rows, groups * wm.shape[2]))


def _flops(rows: int, k: int, n: int) -> float:
    return 2.0 * rows * k * n


def conv_forward(
    backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None = None
) -> Any:
    """Cross-correlation ``(N, C, *in) -> (N, C_out, *out)``; a channels-last view.

    With ``keep`` (a dict), small column matrices are stored in it for ``conv_weight_grad``.
    """
    xp = backend.xp
    n, c = x.shape[0], x.shape[1]
    cout = w.shape[0]
    rows_per = math.prod(g.out_size)
    if n == 0:
        return channels_first(xp.zeros((0, *g.out_size, cout), dtype=x.dtype), xp)
    xl = channels_last(x, xp)
    if c == 1 and _one_channel(x, g):
        out = _conv_one_channel(backend, xl, w, bias, g)
        if out is not None:
            return out
    if _blocks(x, c, cout, g) is not None and w.dtype == np.float32:
        out = _forward_by_blocks(backend, xl, w, bias, g)
        if out is not None:
            return out
    wm = np.transpose(_weight_rows(w, g.groups), (0, 2, 1))  # (G, taps*C/G, C_out/G)
    out = np.empty((n, *g.out_size, cout), dtype=np.result_type(x.dtype, w.dtype))

    def work(r: tuple[int, int]) -> None:
        s, e = r
        col = col_matrix(backend, xl[s:e], g)
        if keep is not None:
            keep[r] = col
        dst = np.reshape(out[s:e], ((e - s) * rows_per, cout))  # the chunk's rows of out
        if g.groups == 1:  # the GEMM writes there (no whole-batch concatenate after)
            xp.matmul(np.reshape(col, (col.shape[0], col.shape[2])), wm[0], out=dst)
        else:
            dst[...] = _grouped_matmul(col, wm, xp)
        if bias is not None:
            dst += bias

    flops = _flops(n * rows_per, c * g.taps // g.groups, cout)
    ranges = _spread(chunks(n, rows_per * c * g.taps * x.itemsize), n, flops)
    if n * rows_per * c * g.taps * x.itemsize > _KEEP_COLS_BYTES or _blocks(x, c, cout, g):
        keep = None
    _parallel.run_chunks(work, ranges, flops)
    return channels_first(out, xp)


def rows_of(arr: Any, s: int, e: int, xp: Any) -> Any:
    """Samples ``s:e`` of a channels-last array as a ``(rows, C)`` matrix (copied if needed)."""
    part = arr[s:e]
    # the row count named: -1 is ambiguous for a convolution of 0 output channels
    return xp.reshape(part, (math.prod(part.shape[:-1]), part.shape[-1]))


def conv_input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    """The gradient of ``conv_forward`` w.r.t. its input (also conv_transpose's forward).

    Per chunk: one (batched) GEMM to the column gradient, then one strided add per kernel tap
    into the padded input gradient (col2im). With few input channels per group the tap adds
    would move runs of only ``C/G`` values, so that case works channels-first instead, unless
    col2im is compiled (``lucid-core[numba]``, 2-D, one group: one pass, channels-last).
    """
    xp = backend.xp
    c = w.shape[1] * g.groups
    if dy.shape[0] == 0:
        return xp.zeros((0, c, *g.in_size), dtype=dy.dtype)
    rows_per = math.prod(g.out_size)
    flops = _flops(dy.shape[0] * rows_per, w.shape[1] * g.taps, dy.shape[1])
    ranges = _spread(chunks(dy.shape[0], rows_per * c * g.taps * dy.itemsize), dy.shape[0], flops)
    if _blocks(dy, c, dy.shape[1], g) is not None and w.dtype == np.float32:
        dx = _input_by_blocks(backend, dy, w, g)
        if dx is not None:
            return dx
    if g.groups == 1 and c < _NARROW_CHANNELS and _jit(dy, c, g) is None:
        parts = _parallel.run_chunks(_col2im_channels_first(backend, dy, w, g), ranges, flops)
        dx = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=1)
        return xp.transpose(dx, (1, 0, *range(2, dx.ndim)))  # (C, N, *in) -> (N, C, *in)
    work = _col2im_channels_last(backend, dy, w, g)
    if SPLIT_SINGLE_CHUNK and len(ranges) > 1:
        # Each chunk copies its part into the result on its own thread, where a concatenate
        # after would copy the whole gradient on the caller alone (the same bits).
        dx = np.empty((dy.shape[0], *g.in_size, c), dtype=dy.dtype)

        def into(r: tuple[int, int]) -> None:
            dx[r[0] : r[1]] = work(r)

        _parallel.run_chunks(into, ranges, flops)
        return channels_first(dx, xp)
    parts = _parallel.run_chunks(work, ranges, flops)
    dx = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=0)
    return channels_first(dx, xp)


def _col2im_channels_last(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    """Chunk worker: ``(s, e) -> dx[s:e]`` channels-last ``(m, *in, C)``."""
    xp = backend.xp
    cout, cg, groups, nd = dy.shape[1], w.shape[1], g.groups, g.nd
    dyl = channels_last(dy, xp)
    wm_t = _weight_rows(w, groups)  # (G, C_out/G, taps*Cg)
    rows_per = math.prod(g.out_size)
    crop = (slice(None), *g.crop(), slice(None))
    to_nhwgc = (1, *range(2, nd + 2), 0, nd + 2)
    jit = _jit(dy, cg, g) is not None
    geo = (*g.stride, *g.dilation, *g.out_size)

    def work(r: tuple[int, int]) -> Any:
        s, e = r
        m = e - s
        dyc = rows_of(dyl, s, e, xp)
        if groups == 1:
            dcol = xp.matmul(dyc, wm_t[0])[None]
        else:
            dyg = xp.transpose(xp.reshape(dyc, (m * rows_per, groups, cout // groups)), (1, 0, 2))
            dcol = xp.matmul(dyg, wm_t)  # (G, rows, taps*Cg)
        if jit:
            dpad = xp.zeros((m, *g.padded, cg), dtype=dy.dtype)
            flat = xp.reshape(dpad, (m, dpad.shape[1], -1))
            if _compiled.run(_JIT, "col2im", *g.kernel, dcol[0], *geo, flat):
                return dpad[crop]
        dcol = xp.reshape(dcol, (groups, m, *g.out_size, *g.kernel, cg))
        dpad = xp.zeros((m, *g.padded, groups, cg), dtype=dy.dtype)
        for tap in g.all_taps():
            src = dcol[(slice(None),) * (nd + 2) + tap]
            dpad[(slice(None),) + g.tap_slices(tap)] += xp.transpose(src, to_nhwgc)
        return xp.reshape(dpad, (m, *g.padded, cg * groups))[crop]

    return work


def _col2im_channels_first(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    """Chunk worker for one group of few channels: ``(s, e) -> dx[s:e]`` as ``(C, m, *in)``.

    The column gradient is computed transposed, ``(taps, C, rows)``, so each tap's block is
    contiguous and the tap adds move whole output rows.
    """
    xp = backend.xp
    c = w.shape[1]
    dyl = channels_last(dy, xp)
    wm = _weight_rows(w, 1)[0].T  # (taps*C, C_out)
    crop = (slice(None), slice(None), *g.crop())

    def work(r: tuple[int, int]) -> Any:
        s, e = r
        m = e - s
        dcol_t = xp.matmul(wm, xp.transpose(rows_of(dyl, s, e, xp)))  # (taps*C, rows)
        dcol_t = xp.reshape(dcol_t, (*g.kernel, c, m, *g.out_size))
        dpad = xp.zeros((c, m, *g.padded), dtype=dy.dtype)
        for tap in g.all_taps():
            dpad[(slice(None), slice(None)) + g.tap_slices(tap)] += dcol_t[tap]
        return dpad[crop]

    return work


def conv_weight_grad(
    backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None = None
) -> Any:
    """The gradient of ``conv_forward`` w.r.t. its weight: ``col^T @ dy`` summed over chunks.

    Each worker sums the chunks of its share of the batch; the shares are summed at the end.
    """
    xp = backend.xp
    n, c = x.shape[0], x.shape[1]
    cout = dy.shape[1]
    groups = g.groups
    kg = g.taps * (c // groups)
    if n == 0:
        return _weight_from_rows(xp.zeros((groups, cout // groups, kg), dtype=x.dtype), g.kernel)
    xl = channels_last(x, xp)
    dyl = channels_last(dy, xp)
    rows_per = math.prod(g.out_size)
    if c == 1 and _one_channel(x, g):
        dw = _weight_one_channel(backend, xl, dyl, g)
        if dw is not None:
            return dw
    if _blocks(x, c, cout, g) is not None and dy.dtype == np.float32:
        dw = _weight_by_blocks(backend, xl, dyl, g)
        if dw is not None:
            return dw

    def one(s: int, e: int) -> Any:
        col = kept.get((s, e)) if kept else None
        if col is None and (s, e) == (0, n):
            col = _kept_whole(kept, n)
        if col is None:
            col = col_matrix(backend, xl[s:e], g)  # (rows, G, Kg)
        dyc = rows_of(dyl, s, e, xp)
        if groups == 1:  # (1, C_out, Kg): _weight_rows' layout
            col2d = xp.reshape(col, (col.shape[0], kg))
            if kg * cout <= _SMALL_WEIGHT:  # col^T dy, seen transposed
                return xp.transpose(_gemm.tn_matmul(col2d, dyc))[None]
            return _gemm.tn_matmul(dyc, col2d)[None]
        colg = xp.transpose(col, (1, 0, 2))  # (G, rows, Kg)
        dyg = xp.transpose(xp.reshape(dyc, (-1, groups, cout // groups)), (1, 2, 0))
        return xp.matmul(dyg, colg)

    def share(ranges: list[tuple[int, int]]) -> Any:
        acc = one(*ranges[0])
        for s, e in ranges[1:]:
            acc += one(s, e)
        return acc

    ranges = chunks(n, rows_per * c * g.taps * x.itemsize)
    k = min(_parallel.workers(), len(ranges))
    shares = [ranges[i::k] for i in range(k)]
    flops = _flops(n * rows_per, kg, cout)
    if len(_spread(ranges, n, flops)) > 1 and len(shares) == 1 and not _parallel.in_worker():
        # One chunk: inline, its product split on the pool by ``_gemm`` (the same code as
        # run_chunks' single item, without marking OpenBLAS's threads as the last runtime).
        return _weight_from_rows(share(shares[0]), g.kernel)
    parts = _parallel.run_chunks(share, shares, flops)
    dwr = parts[0]
    for p in parts[1:]:
        dwr += p
    return _weight_from_rows(dwr, g.kernel)


def channel_sum(backend: Any, dy: Any) -> Any:
    """Sum over every dim but the channel dim (dim 1), as a GEMV (narrow sums are slow)."""
    xp = backend.xp
    mat = xp.reshape(channels_last(dy, xp), (-1, dy.shape[1]))
    return xp.matmul(xp.ones((1, mat.shape[0]), dtype=dy.dtype), mat)[0]
