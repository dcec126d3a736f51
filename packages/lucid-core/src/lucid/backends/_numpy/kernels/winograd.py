"""Winograd F(2x2, 3x3) for stride-1, dilation-1, ungrouped 3x3 convolutions.

Each 4x4 input tile ``d`` (stride 2) gives a 2x2 output tile ``A^T [(G g G^T) * (B^T d B)] A``:
16 products per tile and channel pair instead of 36, so the GEMM work is 2.25x smaller than
im2col's. Activations are channels-last, as in ``im2col``: the input transform is separable,
a few adds of strided views of whole rows of channels (no column matrix), the 16 products are
one batched GEMM ``(16, tiles, C) x (16, C, K)``, and the output transform is adds again.

The input gradient is the same algorithm on ``dy`` with the flipped, transposed kernel (a
stride-1 convolution's transpose is a convolution with padding ``2 - p``). The weight gradient
works in the transformed domain: ``dU = V^T dM`` over the tiles, ``dw = G^T dU G``, where
``V`` is the forward's transformed input (kept for small layers) and ``dM = A dY A^T``.
The batch is processed in cache-sized chunks on the BLAS workers (``_parallel.run_chunks``).

F(2x2, 3x3)'s transforms have coefficients 0, +-1 and 1/2, so its float32 error is that of
im2col's GEMM (about 3e-7 of the output's scale). ``F4``, F(4x4, 3x3), cuts the GEMM work a
further 1.8x but has coefficients up to 8 and 20x the error (about 8e-6, as in the F(4x4)
kernels of cuDNN and oneDNN). With its transforms compiled (``lucid-core[numba]``,
``_winograd4_jit``) it is the faster one for outputs of 8x8 and more (ResNet-18-CIFAR b128 step
1.96 -> 1.65-1.68 s with the Haswell GEMM kernel); in NumPy its transforms cost more than the
GEMM work it saves, so without numba every layer takes F(2x2, 3x3) (``tiling``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _gemm, _parallel, _settings
from lucid.kernels import ConvGeometry, channels_first, channels_last


@dataclass(frozen=True)
class Tiling:
    """A Winograd algorithm F(m x m, 3x3): ``y = A^T [(G g G^T) * (B^T d B)] A`` per tile."""

    m: int  # output tile side; input tiles are m + 2 square, taken with stride m
    bt: tuple[tuple[float, ...], ...]  # (t, t)
    g: tuple[tuple[float, ...], ...]  # (t, 3)
    at: tuple[tuple[float, ...], ...]  # (m, t)

    @property
    def t(self) -> int:
        return self.m + 2

    @property
    def a(self) -> tuple[tuple[float, ...], ...]:
        """``A`` (t, m): the transposed output transform, for ``dM = A dY A^T``."""
        return tuple(zip(*self.at))


# Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016).
F2 = Tiling(
    2,
    bt=((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1)),
    g=((1, 0, 0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0, 0, 1)),
    at=((1, 1, 1, 0), (0, 1, -1, -1)),
)
F4 = Tiling(
    4,
    bt=(
        (4, 0, -5, 0, 1, 0),
        (0, -4, -4, 1, 1, 0),
        (0, 4, -4, -1, 1, 0),
        (0, -2, -1, 2, 1, 0),
        (0, 2, -1, -2, 1, 0),
        (0, 4, 0, -5, 0, 1),
    ),
    g=(
        (1 / 4, 0, 0),
        (-1 / 6, -1 / 6, -1 / 6),
        (-1 / 6, 1 / 6, -1 / 6),
        (1 / 24, 1 / 12, 1 / 6),
        (1 / 24, -1 / 12, 1 / 6),
        (0, 0, 1),
    ),
    at=((1, 1, 1, 1, 1, 0), (0, 1, -1, 2, -2, 0), (0, 1, 1, 4, 4, 0), (0, 1, -1, 8, -8, 1)),
)
# Bytes of transformed input + products per chunk, and the fewest tiles per chunk (below that
# the GEMMs are too short to run at speed). 8 MiB rather than 4: fewer, longer ufunc calls
# contend less for the GIL at two threads (docs/performance.md, "Kernel constants").
_CHUNK_BYTES = 8 << 20
_CHUNK_TILES = 128
# Transformed inputs up to this size (all chunks) are kept for the weight gradient; they are
# 4x the input, so keeping big layers' costs more memory than the time it saves.
_KEEP_BYTES = 8 << 20
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# F(4x4, 3x3) from outputs of this side up; smaller outputs have too few tiles to pay for its
# transforms, and its transformed weights on 4x4 outputs pass glibc's mmap threshold (fresh
# pages every call): F(2x2) there (docs/performance.md, "Kernel constants").
_F4_MIN_SIZE = 8
# Products whose right matrices are this small (a 64-channel layer's 64 x 64) run in blocks of
# _SMALL_ROWS rows on the pool's threads: OpenBLAS's small-matrix kernels take such a block
# without packing it; from 128 channels on, blocks are slower (docs/performance.md,
# "Kernel constants").
_SMALL_MATRIX = 64 * 64
_SMALL_ROWS = 192
# F(2x2, 3x3)'s transforms compiled with numba where it is installed (``lucid-core[numba]``,
# ``_winograd_jit``): one pass each, without the GIL. ``LUCID_NUMBA=0`` keeps the NumPy ones.
# F(4x4, 3x3)'s are generated from its tables (``tools/codegen/winograd_jit.py``).
_JIT = {2: "_winograd_jit", 4: "_winograd4_jit"}


def _jit(f: Tiling, dtype: Any) -> Any:
    """The compiled transforms for ``f`` and ``dtype``, or None (NumPy's are used)."""
    if f.m not in _JIT or dtype not in _DTYPES:
        return None
    return _compiled.load(_JIT[f.m])


def _run_jit(f: Tiling, name: str, *args: Any) -> bool:
    """Run the compiled transform ``name``; False (NumPy's from then on) where numba fails."""
    return _compiled.run(_JIT[f.m], name, *args)


Ranges = list[tuple[int, int]]
_KEY = "winograd"  # kept transformed inputs are filed under (_KEY, tile side, start, end)


def tiling(g: ConvGeometry) -> Tiling:
    """The tiling for a geometry: ``lucid.backends.cpu.winograd_tiling`` if ``F2`` or ``F4``
    (seeded from ``LUCID_WINOGRAD``); else F(4x4,
    3x3) where its compiled transforms load and the output is a whole number of 4x4 tiles,
    F(2x2, 3x3) elsewhere (see the module's docstring)."""
    if _settings.cpu.winograd_tiling != "auto":
        return F4 if _settings.cpu.winograd_tiling == "F4" else F2
    h, w = g.out_size
    if h % 4 == 0 and w % 4 == 0 and min(h, w) >= _F4_MIN_SIZE and _compiled.load(_JIT[4]):
        return F4
    return F2


def applies(x: Any, g: ConvGeometry) -> bool:
    """A 2-D, 3x3, stride-1, undilated, ungrouped float32/64 convolution, padding at most 2."""
    return (
        g.kernel == (3, 3)
        and g.stride == (1, 1)
        and g.dilation == (1, 1)
        and g.groups == 1
        and max(*g.pad_lo, *g.pad_hi) <= 2
        and min(g.out_size) > 0
        and x.shape[0] > 0
        and x.dtype in _DTYPES
    )


def coverage(g: ConvGeometry, size: Sequence[int]) -> tuple[float, int]:
    """How fully ``tiling(g)``'s tiles cover an output of spatial ``size`` (odd sizes waste a
    row and a column of each tile), and how many tiles one sample takes."""
    f = tiling(g)
    th, tw = _tiles(f, size)
    return size[0] * size[1] / (f.m * f.m * th * tw), th * tw


# -- linear combinations of strided views (the transforms) ------------------------------------
def _combine(coefs: Sequence[float], parts: Sequence[Any], out: Any) -> None:
    """``out = sum(c * p)`` over the nonzero coefficients, with adds where they are +-1."""
    terms = [(c, p) for c, p in zip(coefs, parts) if c != 0]
    (c0, p0), rest = terms[0], terms[1:]
    if rest and c0 == 1 and abs(rest[0][0]) == 1:
        (np.add if rest[0][0] == 1 else np.subtract)(p0, rest[0][1], out=out)
        rest = rest[1:]
    elif c0 == 1:
        np.copyto(out, p0)
    else:
        np.multiply(p0, c0, out=out)
    for c, p in rest:
        if c == 1:
            np.add(out, p, out=out)
        elif c == -1:
            np.subtract(out, p, out=out)
        else:
            out += c * p


def _tiles(f: Tiling, size: Sequence[int]) -> tuple[int, int]:
    """Output tiles down and across that cover ``size``."""
    return -(-size[0] // f.m), -(-size[1] // f.m)


def _extent(f: Tiling, tiles: tuple[int, int], halo: int) -> tuple[int, int]:
    """The rows and columns that ``tiles`` output tiles cover, plus ``halo``."""
    return f.m * tiles[0] + halo, f.m * tiles[1] + halo


# F(4x4, 3x3)'s compiled transforms write 36 planes at once: planes a multiple of 4 KiB apart
# fall into the same cache sets, so each is padded 64 bytes further (docs/performance.md,
# "Kernel constants").
# F(2x2, 3x3)'s 16 planes stay contiguous (its loops are faster on a contiguous array).
_PLANE_PAD = 64


def _planes(f: Tiling, shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised ``(t, t, *shape)`` array for a compiled transform to write."""
    t = f.t
    if f.m == 2:
        return np.empty((t, t, *shape), dtype=dtype)
    size = int(np.prod(shape))
    buf = np.empty((t * t, size + _PLANE_PAD // np.dtype(dtype).itemsize), dtype=dtype)
    return np.reshape(buf[:, :size], (t, t, *shape))


def _input_transform(f: Tiling, xpad: Any, tiles: tuple[int, int]) -> Any:
    """``B^T d B`` of every tile of a padded ``(n, H, W, C)``: ``(t*t, n*th*tw, C)``."""
    n, c, t, m = xpad.shape[0], xpad.shape[-1], f.t, f.m
    th, tw = tiles
    if _jit(f, xpad.dtype) is not None:
        v = _planes(f, (n, th, tw, c), xpad.dtype)
        if _run_jit(f, "input_transform", xpad, th, tw, v):
            return np.reshape(v, (t * t, n * th * tw, c))
    rows = [xpad[:, j : j + m * (th - 1) + 1 : m] for j in range(t)]
    half = np.empty((t, n, th, xpad.shape[2], c), dtype=xpad.dtype)
    for i in range(t):
        _combine(f.bt[i], rows, half[i])
    v = np.empty((t, t, n, th, tw, c), dtype=xpad.dtype)
    for i in range(t):
        cols = [half[i][:, :, k : k + m * (tw - 1) + 1 : m] for k in range(t)]
        for j in range(t):
            _combine(f.bt[j], cols, v[i, j])
    return np.reshape(v, (t * t, n * th * tw, c))


def _output_transform(f: Tiling, prod: Any, out: Any) -> None:
    """``A^T M A`` of every tile of ``prod`` (``(t*t, n*th*tw, K)``) into ``out``, a
    ``(n, th, m, tw, m, K)`` view of the channels-last output."""
    t, m = f.t, f.m
    n, th, _, tw, _, k = out.shape
    prod = np.reshape(prod, (t, t, n, th, tw, k))
    if _jit(f, prod.dtype) is not None and out.dtype == prod.dtype:
        if _run_jit(f, "output_transform", prod, out):
            return
    half = np.empty((m, t, n, th, tw, k), dtype=prod.dtype)
    for i in range(m):
        for j in range(t):
            _combine(f.at[i], [prod[r, j] for r in range(t)], half[i, j])
    for i in range(m):
        for j in range(m):
            _combine(f.at[j], [half[i, r] for r in range(t)], out[:, :, i, :, j])


def _output_grad_transform(f: Tiling, dy: Any, tiles: tuple[int, int]) -> Any:
    """``A dY A^T`` of every output tile of ``dy`` (``(n, m*th, m*tw, K)``): ``(t*t, tiles, K)``."""
    t, m = f.t, f.m
    n, k = dy.shape[0], dy.shape[-1]
    th, tw = tiles
    if _jit(f, dy.dtype) is not None:
        v = _planes(f, (n, th, tw, k), dy.dtype)
        if _run_jit(f, "output_grad_transform", dy, th, tw, v):
            return np.reshape(v, (t * t, n * th * tw, k))
    d6 = np.reshape(dy, (n, th, m, tw, m, k))
    half = np.empty((t, n, th, tw, m, k), dtype=dy.dtype)
    for i in range(t):
        _combine(f.a[i], [d6[:, :, r] for r in range(m)], half[i])
    out = np.empty((t, t, n, th, tw, k), dtype=dy.dtype)
    for i in range(t):
        for j in range(t):
            _combine(f.a[j], [half[i, :, :, :, r] for r in range(m)], out[i, j])
    return np.reshape(out, (t * t, n * th * tw, k))


def _kron(f: Tiling, dtype: Any) -> Any:
    """``G (x) G`` ``(t*t, 9)``: ``G g G^T`` of a flattened 3x3 ``g`` is ``_kron @ g``
    (read-only, made once per tiling and dtype: ~0.1 ms a call on the main thread)."""
    return _kron_of(f, np.dtype(dtype))


@functools.lru_cache(maxsize=16)
def _kron_of(f: Tiling, dtype: np.dtype[Any]) -> Any:
    gm = np.array(f.g, dtype=dtype)
    out = np.kron(gm, gm)
    out.setflags(write=False)
    return out


def weight_transform(f: Tiling, w: Any, flipped: bool = False) -> Any:
    """``G g G^T`` of ``(K, C, 3, 3)`` weights as a contiguous ``(t*t, C, K)``.

    ``flipped``: of the input gradient's kernel (each 3x3 rotated by 180 degrees, ``C`` and
    ``K`` swapped), ``(t*t, K, C)``. One GEMM ``(t*t, 9) x (9, C*K)`` either way (GEMMs with
    a transposed right operand measured 10-20% slower, so the result is made contiguous).
    Big ones run in column blocks on every core (``_split_transform``).
    """
    kron = _kron(f, w.dtype)
    if flipped:
        kron = kron[:, ::-1]
    rows, cols = (w.shape[0], w.shape[1]) if flipped else (w.shape[1], w.shape[0])
    split = _split_transform(kron, w, flipped, rows, cols)
    if split is not None:
        return split
    if flipped:
        flat = np.reshape(w, (-1, 9))
    else:
        flat = np.reshape(np.transpose(w, (1, 0, 2, 3)), (-1, 9))
    return np.reshape(_gemm.pool_matmul(kron, flat.T), (-1, rows, cols))


# Weight transforms (and their transposes) of at least this many result elements run in
# blocks on every core: the copy of the transposed weight and the 9-deep GEMM are memory-bound
# and were ~45 ms a ResNet-18-CIFAR step on the main thread alone, other cores idle
# (docs/performance.md, "The ResNet step's serial part"). False: one thread, as before.
SPLIT_WEIGHT_TRANSFORMS = True
_SPLIT_TRANSFORM_ELEMENTS = 1 << 18


def _transform_blocks(n: int, elements: int) -> Ranges | None:
    """Ranges of ``n`` rows for a split transform of ``elements`` result elements, or None
    (one thread: small, switched off, or inside a worker)."""
    if not SPLIT_WEIGHT_TRANSFORMS or n < 2:
        return None
    k = _parallel.workers_for(elements, _SPLIT_TRANSFORM_ELEMENTS)
    if k <= 1:
        return None
    return _parallel.batch_chunks(n, -(-n // (2 * k)))


def _split_transform(kron: Any, w: Any, flipped: bool, rows: int, cols: int) -> Any:
    """``weight_transform``'s GEMM in blocks of ``rows`` (input channels, or output channels
    when ``flipped``) on every core, each block copying its own part of the weight: the same
    bits (each result column is the same 9-term dot product). None where it does not split."""
    tt = kron.shape[0]
    ranges = _transform_blocks(rows, tt * rows * cols)
    if ranges is None:
        return None
    out = np.empty((tt, rows, cols), dtype=np.result_type(kron.dtype, w.dtype))

    def work(r: tuple[int, int]) -> None:
        s, e = r
        if flipped:
            flat = np.reshape(w[s:e], (-1, 9))
        else:
            flat = np.reshape(np.transpose(w[:, s:e], (1, 0, 2, 3)), (-1, 9))
        np.matmul(kron, flat.T, out=np.reshape(out[:, s:e], (tt, (e - s) * cols)))

    with _parallel.blas_threads.single_blas_thread():
        _parallel.map_blocks(work, ranges, out.size, _SPLIT_TRANSFORM_ELEMENTS)
    return out


def _weight_from_transformed(f: Tiling, du: Any) -> Any:
    """``G^T dU G`` (the transpose of ``weight_transform``): ``(t*t, K, C)`` -> ``(K, C, 3, 3)``."""
    k, c = du.shape[1], du.shape[2]
    kron = _kron(f, du.dtype)
    ranges = _transform_blocks(k, du.size)
    if ranges is not None:  # row blocks on every core: each result row is the same dot product
        dut = np.reshape(du, (du.shape[0], k * c)).T
        flat = np.empty((k * c, 9), dtype=np.result_type(du.dtype, kron.dtype))

        def work(r: tuple[int, int]) -> None:
            s, e = r[0] * c, r[1] * c
            np.matmul(dut[s:e], kron, out=flat[s:e])

        with _parallel.blas_threads.single_blas_thread():
            _parallel.map_blocks(work, ranges, du.size, _SPLIT_TRANSFORM_ELEMENTS)
        return np.reshape(flat, (k, c, 3, 3))
    flat = _gemm.pool_matmul(np.reshape(du, (du.shape[0], k * c)).T, kron)
    return np.reshape(flat, (k, c, 3, 3))


# -- padding and chunks -----------------------------------------------------------------------
def _padded(xl: Any, lo: Sequence[int], extent: tuple[int, int]) -> Any:
    """``xl`` (``(n, H, W, C)``) zero-padded by ``lo`` before and out to ``extent`` after."""
    n, h, w, c = xl.shape
    hp, wp = extent
    xpad = np.zeros((n, hp, wp, c), dtype=xl.dtype)
    rows, cols = min(h, hp - lo[0]), min(w, wp - lo[1])
    xpad[:, lo[0] : lo[0] + rows, lo[1] : lo[1] + cols] = xl[:, :rows, :cols]
    return xpad


def _covering(yl: Any, extent: tuple[int, int]) -> Any:
    """``yl`` as is if it is ``extent`` in size, else zero-padded after up to it."""
    return yl if yl.shape[1:3] == extent else _padded(yl, (0, 0), extent)


def _chunks(f: Tiling, n: int, tiles: tuple[int, int], c: int, k: int, itemsize: int) -> Ranges:
    """Batch ranges whose transformed inputs and products hold about ``_CHUNK_BYTES`` each
    (``batch_chunks``: a multiple of the workers, near-equal)."""
    per_sample = f.t * f.t * tiles[0] * tiles[1] * (c + k) * itemsize
    per = max(1, _CHUNK_BYTES // per_sample, -(-_CHUNK_TILES // (tiles[0] * tiles[1])))
    return _parallel.batch_chunks(n, per)


def _products(v: Any, u: Any) -> Any:
    """``v @ u``, ``(t*t, tiles, C) x (t*t, C, K)``: in row blocks for small ``C x K`` on the
    pool (``_SMALL_MATRIX``), else one batched GEMM."""
    rows = v.shape[1]
    if u.shape[1] * u.shape[2] > _SMALL_MATRIX or rows <= _SMALL_ROWS or not _parallel.in_worker():
        return _gemm.matmul(v, u)
    out = np.empty((v.shape[0], rows, u.shape[2]), dtype=np.result_type(v.dtype, u.dtype))
    for s in range(0, rows, _SMALL_ROWS):
        _gemm.matmul(v[:, s : s + _SMALL_ROWS], u, out=out[:, s : s + _SMALL_ROWS])
    return out


def _flops(f: Tiling, n: int, tiles: tuple[int, int], c: int, k: int) -> float:
    return 2.0 * n * tiles[0] * tiles[1] * f.t * f.t * c * k


# -- the convolution and its gradients --------------------------------------------------------
def _convolve(
    f: Tiling, xl: Any, u: Any, bias: Any, lo: Sequence[int], out_size: Sequence[int],
    keep: dict[Any, Any] | None,
) -> Any:  # fmt: skip
    """Stride-1 3x3 cross-correlation of channels-last ``xl`` padded by ``lo`` before, with
    transformed weights ``u`` (``(t*t, C, K)``): ``(n, *out_size, K)``, channels-last."""
    n, c, k = xl.shape[0], xl.shape[-1], u.shape[-1]
    tiles = _tiles(f, out_size)
    y = np.empty((n, *_extent(f, tiles, 0), k), dtype=xl.dtype)

    def work(r: tuple[int, int]) -> None:
        s, e = r
        v = _input_transform(f, _padded(xl[s:e], lo, _extent(f, tiles, 2)), tiles)
        if keep is not None:
            keep[_KEY, f.m, s, e] = v
        out = np.reshape(y[s:e], (e - s, tiles[0], f.m, tiles[1], f.m, k))
        _output_transform(f, _products(v, u), out)
        if bias is not None:
            y[s:e] += bias

    ranges = _chunks(f, n, tiles, c, k, xl.itemsize)
    _parallel.run_chunks(work, ranges, _flops(f, n, tiles, c, k))
    if y.shape[1:3] == tuple(out_size):
        return y
    return y[:, : out_size[0], : out_size[1]]


def conv_forward(
    backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None = None
) -> Any:
    """Cross-correlation ``(N, C, H, W) -> (N, K, H', W')``; a channels-last view.

    With ``keep`` (a dict), small transformed inputs are stored in it for ``conv_weight_grad``.
    """
    f = tiling(g)
    n, c = x.shape[0], x.shape[1]
    tiles = _tiles(f, g.out_size)
    if n * f.t * f.t * tiles[0] * tiles[1] * c * x.itemsize > _KEEP_BYTES:
        keep = None
    y = _convolve(f, channels_last(x, np), weight_transform(f, w), bias, g.pad_lo, g.out_size, keep)
    return channels_first(y, np)


def conv_input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    """The gradient w.r.t. the input: ``dy`` convolved with the flipped kernel, padding ``2-p``."""
    f = tiling(g)
    u = weight_transform(f, w, flipped=True)
    lo = tuple(2 - p for p in g.pad_lo)
    return channels_first(_convolve(f, channels_last(dy, np), u, None, lo, g.in_size, None), np)


def conv_weight_grad(
    backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None = None
) -> Any:
    """The gradient w.r.t. the weight: ``G^T (sum over tiles of V^T dM) G``.

    Each worker sums the chunks of its share of the batch; the shares are summed at the end.
    """
    f = tiling(g)
    n, c, k = x.shape[0], x.shape[1], dy.shape[1]
    tiles = _tiles(f, g.out_size)
    xl, dyl = channels_last(x, np), channels_last(dy, np)

    def one(s: int, e: int) -> Any:
        v = kept.get((_KEY, f.m, s, e)) if kept else None
        if v is None:
            v = _input_transform(f, _padded(xl[s:e], g.pad_lo, _extent(f, tiles, 2)), tiles)
        dm = _output_grad_transform(f, _covering(dyl[s:e], _extent(f, tiles, 0)), tiles)
        return _gemm.matmul(np.transpose(dm, (0, 2, 1)), v)  # (t*t, K, C)

    def share(ranges: Ranges) -> Any:
        acc = one(*ranges[0])
        for s, e in ranges[1:]:
            acc += one(s, e)
        return acc

    ranges = _chunks(f, n, tiles, c, k, x.itemsize)
    workers = min(_parallel.workers(), len(ranges))
    parts = _parallel.run_chunks(share, [ranges[i::workers] for i in range(workers)],
                             _flops(f, n, tiles, c, k))  # fmt: skip
    return _weight_from_transformed(f, _sum_shares(parts))


def _sum_shares(parts: list[Any]) -> Any:
    """``parts[0] + parts[1] + ...`` into ``parts[0]`` (each share's sum is a fresh array: no
    third one allocated); big ones in row blocks on every core (``SPLIT_WEIGHT_TRANSFORMS``),
    each element summed in the same order."""
    du = parts[0]
    ranges = _transform_blocks(du.shape[0] * du.shape[1], du.size) if len(parts) > 1 else None
    if ranges is None or not du.flags.c_contiguous:
        for p in parts[1:]:
            du += p
        return du
    rows = [np.reshape(p, (du.shape[0] * du.shape[1], -1)) for p in parts]

    def work(r: tuple[int, int]) -> None:
        s, e = r
        for p in rows[1:]:
            rows[0][s:e] += p[s:e]

    _parallel.map_blocks(work, ranges, du.size, _SPLIT_TRANSFORM_ELEMENTS)
    return du
