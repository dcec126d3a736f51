"""2-D im2col and col2im as compiled loops, with numba (``lucid-core[numba]``).

Optional: ``im2col`` uses these where numba is installed and enabled (``lucid.backends.cpu``), for
2-D convolutions of one group. In NumPy the column matrix is built, and the column gradient
added back, one kernel tap at a time over strided views: 25 passes for a 5x5 kernel, each moving
runs of ``C`` values (one value, for a first layer on images). Here each is one pass over the
rows, without the GIL (``nogil``), so the convolution's chunk threads still run side by side
(several times faster: docs/performance.md).

Layouts are the NumPy code's: ``xpad`` is a padded channels-last batch ``(N, Hp, Wp, C)``, the
column matrix ``(N * OH * OW, KH * KW * C)`` row-major with columns in (tap, channel) order.
The kernel size is a compile-time constant (one function per size, cached on disk), as in
``_pool_jit``; a padded row is passed as one ``Wp * C`` run, so that without dilation a kernel
row's ``KW`` taps are one contiguous copy (or add) of ``KW * C`` values. ``im2col`` copies, so
it is bit-identical to NumPy's; ``col2im`` adds each position's terms in row order where NumPy
adds them tap by tap, so sums of overlapping taps agree to float rounding.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import prange

from lucid.backends._numpy._numba import (
    NoAliasCompiler,
    U,
    run,
    run_split,
    specialised,
    split_threads,
)


def im2col(kh: int, kw: int, xpad: Any, *args: Any) -> None:
    """Run the compiled ``(xpad, sh, sw, dh, dw, oh, ow, col)`` copy of a ``kh x kw`` kernel."""
    _move(f"im2col_{kh}x{kw}", kh, kw, False, xpad, args[:-1], args[-1], args[-1].size)


def col2im(kh: int, kw: int, col: Any, *args: Any) -> None:
    """Run the compiled ``(col, sh, sw, dh, dw, oh, ow, dxpad)`` adds of a ``kh x kw`` kernel."""
    *geo, dxpad = args
    _move(f"col2im_{kh}x{kw}", kh, kw, True, dxpad, tuple(geo), col, col.size)


def _move(name: str, kh: int, kw: int, add: bool, grid: Any, geo: Any, col: Any, size: int) -> None:
    run(name, specialised(name, _make_move, kh, kw, add), _make_split_move, (grid, *geo, col), size)


def conv_one_channel(kh: int, kw: int, *args: Any) -> None:
    """Run the compiled ``(xflat, wp, w, bias, planes, out)`` convolution of one input channel,
    its samples split over numba's threads when big enough (``split_threads``)."""
    name = f"conv_one_channel_{kh}x{kw}"
    run(name, specialised(name, _make_one_channel, kh, kw), _make_split_one_channel, args,
        args[-1].size)  # fmt: skip


def weight_one_channel(kh: int, kw: int, xflat: Any, wp: int, dy: Any, dw: Any) -> None:
    """Into ``dw`` ``(C_out, KH * KW)`` (float64), the weight gradient of a stride-1
    convolution of one input channel: ``xflat`` the padded input ``(N, Hp * Wp)``, ``dy``
    channels-last ``(N, OH, OW, C_out)``; samples split over numba's threads when big enough."""
    n, oh, ow, cout = dy.shape
    k = split_threads(dy.size)
    planes = np.zeros((k, cout, (oh - 1) * wp + ow), dtype=dy.dtype)  # padding columns stay 0
    parts = np.zeros((k, cout, kh * kw))
    name = f"weight_one_channel_{kh}x{kw}"
    fn = specialised(name, _make_weight_one_channel, kh, kw, decorator=_jit_fast)
    if k == 1:
        fn(xflat, wp, dy, planes[0], parts[0])
    else:
        args = (xflat, wp, dy, planes, parts)
        run_split(name + "_split", _make_split_weight, fn, args, k,
                  lambda: fn(xflat, wp, dy, planes[0], parts[0]))  # fmt: skip
    np.sum(parts, axis=0, out=dw)


# The weight gradient's dot products are float reductions, which LLVM vectorises only when it
# may reorder them ('reassoc'; 'contract': fused multiply-adds; ~10x, docs/performance.md). The
# order differs from a GEMM's anyway; each sample's sums are float32 runs of one output plane,
# added up in float64.
_jit_fast = numba.njit(
    nogil=True, cache=True, fastmath={"reassoc", "contract"}, pipeline_class=NoAliasCompiler
)


@numba.njit(inline="always", nogil=True, cache=True)
def weight_taps(KH: int, KW: int, xflat: Any, n: int, wp: int, plane: Any, acc: Any,  # noqa: N803
                cout: int, length: int) -> None:  # fmt: skip
    """``acc[o, u*KW + v] +=`` sample ``n``'s sum of ``plane[o] * x`` at tap (u, v), for each
    of the ``cout`` output channels ``o``: ``plane`` ``(C_out, length)``, ``length = (OH - 1)
    * Wp + OW``, holds the sample's output gradient over the padded width (its padding
    columns zero), so a tap's sum is one contiguous dot product. Inlined (numba's IR) into
    ``weight_one_channel`` and ``_convpool_jit.conv_pool_weight``, whose ``KH``/``KW`` are
    constants and whose fast-math flags it takes: their vector loops compile as the two
    hand-written copies did (``cout`` and ``length`` come from the caller: read in here, they
    changed how the caller's copy loop before it compiled)."""
    for o in range(cout):
        for u in range(KH):
            # a kernel row's KW taps in one pass: KW independent sums share each plane load
            # (one sum a pass is bound by its add chain: ~2.5x slower)
            off = u * wp
            s = np.zeros(KW, dtype=plane.dtype)
            for q in range(length):
                p = plane[U(o), U(q)]
                for v in range(KW):
                    s[v] += p * xflat[U(n), U(off + v + q)]
            for v in range(KW):
                acc[U(o), U(u * KW + v)] += s[v]


def _make_move(KH: int, KW: int, ADD: bool) -> Any:  # noqa: N803 (compile-time constants)
    def move(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int, col: Any) -> None:
        """Between a padded batch ``grid`` ``(N, Hp, Wp * C)`` and its column matrix ``col``
        ``(rows, KH*KW*C)``: ``col[(n, i, j), (u, v, c)] = grid[n, i*sh + u*dh, j*sw + v*dw,
        c]`` (im2col), or with ``ADD`` the column gradient added back into ``grid`` (zeroed):
        col2im. ``C = col's columns / taps``. Without dilation a kernel row's taps are one run
        of ``KW * C`` values in both."""
        ch = col.shape[1] // (KH * KW)
        run = KW * ch
        for n in range(grid.shape[0]):
            for i in range(oh):
                for j in range(ow):
                    row = U((n * oh + i) * ow + j)
                    for u in range(KH):
                        r = U(i * sh + u * dh)
                        for v in range(1 if dw == 1 else KW):
                            # dw == 1: the whole kernel row at once (v = 0, KW * C values)
                            at, to = (j * sw + v * dw) * ch, u * run + v * ch
                            for q in range(run if dw == 1 else ch):
                                if ADD:
                                    grid[U(n), r, U(at + q)] += col[row, U(to + q)]
                                else:
                                    col[row, U(to + q)] = grid[U(n), r, U(at + q)]

    return move


def _make_one_channel(KH: int, KW: int) -> Any:  # noqa: N803
    def conv_one_channel(
        xflat: Any, wp: int, w: Any, bias: Any, planes: Any, out: Any
    ) -> None:  # fmt: skip
        """A stride-1 convolution of one input channel, without a column matrix.

        ``xflat`` is the padded input ``(N, Hp * Wp)``, ``w`` ``(C_out, KH * KW)``, ``planes``
        scratch ``(N, C_out, (OH - 1) * Wp + OW)``: each output plane is computed over the
        padded width (``wp - OW`` values per row are computed and dropped), one position at a
        time with its taps unrolled (one store per position; tap by tap over the plane was
        slower), then stored channels-last in ``out`` ``(N, OH, OW, C_out)``. Each
        output sums bias, then the taps in row-major order."""
        oh, ow = out.shape[1], out.shape[2]
        length = planes.shape[2]
        for n in range(planes.shape[0]):
            for o in range(planes.shape[1]):
                for q in range(length):
                    acc = bias[U(o)]
                    for u in range(KH):  # unrolled: LLVM vectorises the q loop
                        for v in range(KW):
                            acc += w[U(o), U(u * KW + v)] * xflat[U(n), U(u * wp + v + q)]
                    planes[U(n), U(o), U(q)] = acc
            for i in range(oh):
                for j in range(ow):
                    for o in range(planes.shape[1]):
                        out[U(n), U(i), U(j), U(o)] = planes[U(n), U(o), U(i * wp + j)]

    return conv_one_channel


def _make_weight_one_channel(KH: int, KW: int) -> Any:  # noqa: N803
    def weight_one_channel(xflat: Any, wp: int, dy: Any, plane: Any, acc: Any) -> None:
        """``acc[o, u*KW + v] += sum over samples and positions of dy * x`` at tap (u, v):
        each sample's ``dy`` plane is laid out over the padded width in ``plane`` (its
        padding columns zero), so a tap's sum is one contiguous dot product, a kernel row's
        ``KW`` taps summed side by side in one pass (float32 sums per sample, reassociated:
        ``_convpool_jit.conv_pool_weight`` runs this same loop, for the same bits)."""
        oh, ow, cout = dy.shape[1], dy.shape[2], dy.shape[3]
        length = plane.shape[1]
        for n in range(dy.shape[0]):
            for i in range(oh):
                for j in range(ow):
                    for o in range(cout):
                        plane[U(o), U(i * wp + j)] = dy[U(n), U(i), U(j), U(o)]
            weight_taps(KH, KW, xflat, n, wp, plane, acc, cout, length)

    return weight_one_channel


# -- the same passes with the batch split over numba's threads (``split_threads``) -----------
# Each calls the serial pass, given to ``specialised`` as ``inner``, on its share of the batch.
inner: Any = None


def _make_split_move() -> Any:
    def move_split(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int, col: Any,
                   k: int) -> None:  # fmt: skip
        n, rows = grid.shape[0], oh * ow
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(grid[s:e], sh, sw, dh, dw, oh, ow, col[s * rows : e * rows])

    return move_split


def _make_split_one_channel() -> Any:
    def conv_split(xflat: Any, wp: int, w: Any, bias: Any, planes: Any, out: Any, k: int) -> None:
        n = xflat.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(xflat[s:e], wp, w, bias, planes[s:e], out[s:e])

    return conv_split


def _make_split_weight() -> Any:
    def weight_split(xflat: Any, wp: int, dy: Any, planes: Any, parts: Any, k: int) -> None:
        n = xflat.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(xflat[s:e], wp, dy[s:e], planes[t], parts[t])

    return weight_split
