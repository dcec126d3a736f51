"""The NumPy backend's max pooling: compiled 2-D loops where numba is installed, else core's.

``kernels.MAX_POOL_ARRAYS`` for NumPy. With ``lucid-core[numba]`` a 2-D float pool runs as one
compiled pass forward and one backward (``_pool_jit``), on the batch in blocks over every core
when big enough; every other case (1-D, 3-D, integers, no numba, ``LUCID_NUMBA=0``) is core's
``kernels.MaxPoolArrays``, the tested oracle. Both give the same maxima and winning taps.

The compiled loops see a batch as ``(B, H, W, C)``: a channels-last input (a convolution's
output) as it is, a contiguous channels-first one as ``N*C`` planes of one channel; the output,
the tap numbers and the gradient keep the input's layout (no copies).
"""

from __future__ import annotations

from typing import Any

from lucid import kernels
from lucid.backends._numpy import _parallel
from lucid.backends._numpy.kernels import _compiled
from lucid.kernels import ConvGeometry, channels_first, channels_last, pad_spatial

_JIT = "_pool_jit"
# Elements of input from which the compiled passes split the batch over the cores (they hold
# no GIL). LeNet-5's first pool (301K elements, 0.2 ms) was slower split in two: 11.95 ->
# 11.18 ms a train step with it kept on one thread (2 cores, medians of 9 interleaved rounds).
_PARALLEL_ELEMENTS = 1 << 21


def _planes(arr: Any, xp: Any) -> Any:
    """``arr`` ``(N, C, H, W)`` as a C-contiguous ``(B, H, W, C')`` view, or None (a copy
    would be needed)."""
    cl = channels_last(arr, xp)
    if cl.flags.c_contiguous:
        return cl
    if arr.flags.c_contiguous:
        n, c, h, w = arr.shape
        return xp.reshape(arr, (n * c, h, w, 1))
    return None


def _jit(x: Any, g: ConvGeometry) -> Any:
    if g.nd != 2 or x.size == 0 or x.dtype.char not in "fd":  # float32, float64
        return None
    return _compiled.load(_JIT)


class CpuMaxPool:
    """``kernels.MAX_POOL_ARRAYS`` for NumPy."""

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool) -> tuple[Any, Any]:
        xp = backend.xp
        jit = _jit(x, g)
        planes = _planes(x, xp) if jit is not None else None
        if planes is None:
            return kernels.MaxPoolArrays.forward(backend, x, g, want_index)
        n, c = x.shape[0], x.shape[1]
        xpad = pad_spatial(planes, g, xp, -float("inf"))  # planes are channels-last
        b, cp = planes.shape[0], planes.shape[3]
        out = xp.empty((b, *g.out_size, cp), dtype=x.dtype)
        idx = xp.empty(out.shape, dtype=xp.int8 if g.taps < 128 else xp.int32)
        geo = (*g.stride, *g.dilation)

        def work(r: tuple[int, int]) -> bool:
            s, e = r
            return _compiled.run(_JIT, "forward", *g.kernel, xpad[s:e], *geo, out[s:e], idx[s:e])

        ok = _parallel.map_blocks(work, _blocks(b, planes), x.size, _PARALLEL_ELEMENTS)
        if not all(ok):
            return kernels.MaxPoolArrays.forward(backend, x, g, want_index)
        return _to_nchw(out, n, c, xp), (_to_nchw(idx, n, c, xp) if want_index else None)

    @staticmethod
    def scatter(backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry) -> Any:
        xp = backend.xp
        jit = _jit(grad, g)
        ip = _planes(idx, xp) if jit is not None else None
        if ip is None:
            return kernels.MaxPoolArrays.scatter(backend, grad, idx, shape, g)
        n, c = shape[0], shape[1]
        if ip.shape[3] == c:  # channels-last
            gp = xp.ascontiguousarray(channels_last(grad, xp))
        else:
            gp = xp.reshape(xp.ascontiguousarray(grad), ip.shape)
        b = ip.shape[0]
        dxpad = xp.zeros((b, *g.padded, ip.shape[3]), dtype=grad.dtype)
        overlap = any(s < w for s, w in zip(g.stride, g.window))
        geo = (*g.stride, *g.dilation)

        def work(r: tuple[int, int]) -> bool:
            s, e = r
            return _compiled.run(_JIT, "backward", *g.kernel, overlap, gp[s:e], ip[s:e], *geo,
                                 dxpad[s:e])  # fmt: skip

        ok = _parallel.map_blocks(work, _blocks(b, dxpad), dxpad.size, _PARALLEL_ELEMENTS)
        if not all(ok):
            return kernels.MaxPoolArrays.scatter(backend, grad, idx, shape, g)
        return _to_nchw(dxpad[(slice(None),) + g.crop()], n, c, xp)


def _blocks(b: int, planes: Any) -> list[tuple[int, int]]:
    """About 64K elements per block, at least one plane."""
    per = max(1, (1 << 16) // max(1, planes[0].size))
    return _parallel.blocks(b, per)


def _to_nchw(planes: Any, n: int, c: int, xp: Any) -> Any:
    """``(N, *out, C)`` or ``(N*C, *out, 1)`` planes -> ``(N, C, *out)`` (a view)."""
    if planes.shape[-1] == c and planes.shape[0] == n:
        return channels_first(planes, xp)
    return xp.reshape(planes, (n, c, *planes.shape[1:3]))
