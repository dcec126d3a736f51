"""2-D im2col and col2im as compiled loops, with numba (``lucid-core[numba]``).

Optional: ``im2col`` uses these where numba is installed and ``LUCID_NUMBA`` is not ``0``, for
2-D convolutions of one group. In NumPy the column matrix is built, and the column gradient
added back, one kernel tap at a time over strided views: 25 passes for a 5x5 kernel, each moving
runs of ``C`` values (one value, for a first layer on images). Here each is one pass over the
rows, without the GIL (``nogil``), so the convolution's chunk threads still run side by side.
For LeNet-5's second convolution col2im goes from ~1.7 to ~0.2 ms.

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

from lucid.backends._numpy.kernels._winograd_jit import U, specialised


def im2col(kh: int, kw: int, xpad: Any, *args: Any) -> None:
    """Run the compiled ``(xpad, sh, sw, dh, dw, oh, ow, col)`` copy of a ``kh x kw`` kernel."""
    specialised(f"im2col_{kh}x{kw}", _make_move, kh, kw, False)(xpad, *args)


def col2im(kh: int, kw: int, col: Any, *args: Any) -> None:
    """Run the compiled ``(col, sh, sw, dh, dw, oh, ow, dxpad)`` adds of a ``kh x kw`` kernel."""
    *geo, dxpad = args
    specialised(f"col2im_{kh}x{kw}", _make_move, kh, kw, True)(dxpad, *geo, col)


def conv_one_channel(kh: int, kw: int, *args: Any) -> None:
    """Run the compiled ``(xflat, wp, w, bias, planes, out)`` convolution of one input channel."""
    specialised(f"conv_one_channel_{kh}x{kw}", _make_one_channel, kh, kw)(*args)


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
        padded width, so that a tap is one long contiguous multiply-add (``wp - OW`` values per
        row are computed and dropped), then stored channels-last in ``out`` ``(N, OH, OW,
        C_out)``. Each output sums bias, then the taps in row-major order."""
        oh, ow = out.shape[1], out.shape[2]
        length = planes.shape[2]
        for n in range(planes.shape[0]):
            for o in range(planes.shape[1]):
                for q in range(length):
                    planes[U(n), U(o), U(q)] = bias[U(o)]
                for u in range(KH):
                    for v in range(KW):
                        wv = w[U(o), U(u * KW + v)]
                        off = u * wp + v
                        for q in range(length):
                            planes[U(n), U(o), U(q)] += wv * xflat[U(n), U(off + q)]
            for i in range(oh):
                for j in range(ow):
                    for o in range(planes.shape[1]):
                        out[U(n), U(i), U(j), U(o)] = planes[U(n), U(o), U(i * wp + j)]

    return conv_one_channel
