"""Depthwise convolution (groups == channels, one filter each): tap loops, no GEMM.

As a grouped im2col GEMM a depthwise convolution is one matrix-vector product per channel,
which BLAS runs far below speed. Channels-last, each kernel tap is instead one multiply-add of
a strided view of the input by a per-channel weight vector, over whole rows of channels.
Forward, input gradient and weight gradient all loop over the taps only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from lucid.backends._numpy import _parallel
from lucid.backends._numpy.kernels.im2col import chunks
from lucid.kernels import ConvGeometry, channels_first, channels_last, pad_spatial

_LEAD = (slice(None),)


def _tap_weights(w: Any, xp: Any) -> Any:
    """``(C, 1, *kernel)`` -> ``(taps, C)``."""
    return xp.transpose(xp.reshape(w, (w.shape[0], -1)))


def _run(work: Callable[[tuple[int, int]], Any], a: Any, g: ConvGeometry) -> list[Any]:
    """``work`` over cache-sized batch ranges of ``a`` (``(N, C, ...)``), on the BLAS workers."""
    n, c = a.shape[0], a.shape[1]
    ranges = chunks(n, 4 * math.prod(g.padded) * c * a.itemsize)
    return _parallel.run_chunks(work, ranges, 2.0 * n * math.prod(g.out_size) * c * g.taps)


def _joined(parts: list[Any], xp: Any) -> Any:
    """The channels-last chunk results as one ``(N, C, *S)`` view."""
    return channels_first(parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=0), xp)


def _tap_products(xl: Any, r: tuple[int, int], g: ConvGeometry, xp: Any) -> Iterator[Any]:
    """Yield each tap's strided view of the padded channels-last chunk ``xl[r]``."""
    xpad = pad_spatial(xl[r[0] : r[1]], g, xp)
    for tap in g.all_taps():
        yield xpad[_LEAD + g.tap_slices(tap)]


def forward(backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    xl = channels_last(x, xp)
    wt = _tap_weights(w, xp)

    def work(r: tuple[int, int]) -> Any:
        out: Any = None
        for t, view in enumerate(_tap_products(xl, r, g, xp)):
            if out is None:
                out = view * wt[t]
            else:
                out += view * wt[t]
        if bias is not None:
            out += bias
        return out

    return _joined(_run(work, x, g), xp)


def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    c = dy.shape[1]
    dyl = channels_last(dy, xp)
    wt = _tap_weights(w, xp)
    crop = (slice(None), *g.crop(), slice(None))

    def work(r: tuple[int, int]) -> Any:
        dyc = dyl[r[0] : r[1]]
        dpad = xp.zeros((dyc.shape[0], *g.padded, c), dtype=dy.dtype)
        for t, tap in enumerate(g.all_taps()):
            dpad[_LEAD + g.tap_slices(tap)] += dyc * wt[t]
        return dpad[crop]

    return _joined(_run(work, dy, g), xp)


def weight_grad(backend: Any, x: Any, dy: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    c = x.shape[1]
    xl = channels_last(x, xp)
    dyl = channels_last(dy, xp)

    def work(r: tuple[int, int]) -> Any:
        dyc = dyl[r[0] : r[1]]
        rows = dyc.shape[0] * math.prod(g.out_size)
        ones = xp.ones((1, rows), dtype=x.dtype)
        taps = _tap_products(xl, r, g, xp)
        # one GEMV per tap: narrow column sums are slow
        sums = [xp.matmul(ones, xp.reshape(v * dyc, (rows, c))) for v in taps]
        return xp.concatenate(sums, axis=0)  # (taps, C)

    parts = _run(work, x, g)
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return xp.reshape(xp.transpose(total), (c, 1, *g.kernel))
