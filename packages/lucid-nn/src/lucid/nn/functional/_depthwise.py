"""Depthwise convolution (groups == channels, one filter each): tap loops, no GEMM.

As a grouped im2col GEMM a depthwise convolution is one matrix-vector product per channel,
which BLAS runs far below speed. Channels-last, each kernel tap is instead one multiply-add of
a strided view of the input by a per-channel weight vector, over whole rows of channels.
Forward, input gradient and weight gradient all loop over the taps only.
"""

from __future__ import annotations

import math
from typing import Any

from lucid.nn.functional import _blas
from lucid.nn.functional._im2col import (
    ConvGeometry,
    channels_first,
    channels_last,
    chunks,
    pad_spatial,
)


def is_depthwise(w: Any, g: ConvGeometry) -> bool:
    """One input channel per group and one output channel per group."""
    return g.groups > 1 and w.shape[1] == 1 and w.shape[0] == g.groups


def _tap_weights(w: Any, xp: Any) -> Any:
    """``(C, 1, *kernel)`` -> ``(taps, C)``."""
    return xp.transpose(xp.reshape(w, (w.shape[0], -1)))


def _ranges(n: int, g: ConvGeometry, c: int, itemsize: int) -> list[tuple[int, int]]:
    return chunks(n, 4 * math.prod(g.padded) * c * itemsize)


def _flops(n: int, g: ConvGeometry, c: int) -> float:
    return 2.0 * n * math.prod(g.out_size) * c * g.taps


def forward(backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    n, c = x.shape[0], x.shape[1]
    xl = channels_last(x, xp)
    wt = _tap_weights(w, xp)
    lead = (slice(None),)

    def work(r: tuple[int, int]) -> Any:
        xpad = pad_spatial(xl[r[0] : r[1]], g, xp)
        out: Any = None
        for t, tap in enumerate(g.all_taps()):
            term = xpad[lead + g.tap_slices(tap)] * wt[t]
            if out is None:
                out = term
            else:
                out += term
        if bias is not None:
            out += bias
        return out

    parts = _blas.run_chunks(work, _ranges(n, g, c, x.itemsize), _flops(n, g, c))
    out = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=0)
    return channels_first(out, xp)


def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    n, c = dy.shape[0], dy.shape[1]
    dyl = channels_last(dy, xp)
    wt = _tap_weights(w, xp)
    lead = (slice(None),)
    crop = (slice(None), *(slice(lo, lo + i) for lo, i in zip(g.pad_lo, g.in_size)), slice(None))

    def work(r: tuple[int, int]) -> Any:
        dyc = dyl[r[0] : r[1]]
        dpad = xp.zeros((dyc.shape[0], *g.padded, c), dtype=dy.dtype)
        for t, tap in enumerate(g.all_taps()):
            dpad[lead + g.tap_slices(tap)] += dyc * wt[t]
        return dpad[crop]

    parts = _blas.run_chunks(work, _ranges(n, g, c, dy.itemsize), _flops(n, g, c))
    dx = parts[0] if len(parts) == 1 else xp.concatenate(parts, axis=0)
    return channels_first(dx, xp)


def weight_grad(backend: Any, x: Any, dy: Any, g: ConvGeometry) -> Any:
    xp = backend.xp
    n, c = x.shape[0], x.shape[1]
    xl = channels_last(x, xp)
    dyl = channels_last(dy, xp)
    lead = (slice(None),)

    def work(r: tuple[int, int]) -> Any:
        xpad = pad_spatial(xl[r[0] : r[1]], g, xp)
        dyc = dyl[r[0] : r[1]]
        rows = dyc.shape[0] * math.prod(g.out_size)
        ones = xp.ones((1, rows), dtype=x.dtype)
        sums = []
        for tap in g.all_taps():
            prod = xp.reshape(xpad[lead + g.tap_slices(tap)] * dyc, (rows, c))
            sums.append(xp.matmul(ones, prod))  # a GEMV: narrow column sums are slow
        return xp.concatenate(sums, axis=0)  # (taps, C)

    parts = _blas.run_chunks(work, _ranges(n, g, c, x.itemsize), _flops(n, g, c))
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return xp.reshape(xp.transpose(total), (c, 1, *g.kernel))
