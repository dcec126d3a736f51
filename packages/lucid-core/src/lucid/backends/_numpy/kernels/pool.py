"""The NumPy backend's max pooling: compiled 2-D loops where numba is installed, else core's.

``kernels.MAX_POOL_ARRAYS`` for NumPy. With ``lucid-core[numba]`` a 2-D float pool runs as one
compiled pass forward and one backward (``_pool_jit``), the batch split over numba's threads
when big enough; every other case (1-D, 3-D, integers, no numba, ``LUCID_NUMBA=0``) is core's
``kernels.MaxPoolArrays``, the tested oracle. Both give the same maxima and winning taps.

The compiled loops see a batch as ``(B, H, W, C)``: a channels-last input (a convolution's
output) as it is, a contiguous channels-first one as ``N*C`` planes of one channel; the output,
the tap numbers and the gradient keep the input's layout (no copies).
"""

from __future__ import annotations

from typing import Any, Literal

from lucid import kernels
from lucid.backends._numpy import _compiled
from lucid.kernels import ConvGeometry, channels_first, channels_last, pad_spatial

_JIT = "_pool_jit"


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


def pool_kernel(a: Any, g: ConvGeometry) -> Literal["compiled", "arrays"]:
    """Which max-pool kernel runs for ``a`` (the input forward, the gradient backward): the
    compiled loops for non-empty float32/float64 2-D pools where numba loads (and where the
    layout gives them planes without a copy, ``_planes``), else core's ``MaxPoolArrays``."""
    return "arrays" if _jit(a, g) is None else "compiled"


class CpuMaxPool:
    """``kernels.MAX_POOL_ARRAYS`` for NumPy."""

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool) -> tuple[Any, Any]:
        xp = backend.xp
        planes = _planes(x, xp) if pool_kernel(x, g) == "compiled" else None
        if planes is None:
            return kernels.MaxPoolArrays.forward(backend, x, g, want_index)
        n, c = x.shape[0], x.shape[1]
        xpad = pad_spatial(planes, g, xp, -float("inf"))  # planes are channels-last
        out = xp.empty((planes.shape[0], *g.out_size, planes.shape[3]), dtype=x.dtype)
        idx = xp.empty(out.shape, dtype=xp.int8 if g.taps < 128 else xp.int32)
        geo = (*g.stride, *g.dilation)
        if not _compiled.run(_JIT, "forward", *g.kernel, xpad, *geo, out, idx):
            return kernels.MaxPoolArrays.forward(backend, x, g, want_index)
        return _to_nchw(out, n, c, xp), (_to_nchw(idx, n, c, xp) if want_index else None)

    @staticmethod
    def scatter(backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry) -> Any:
        xp = backend.xp
        ip = _planes(idx, xp) if pool_kernel(grad, g) == "compiled" else None
        if ip is None:
            return kernels.MaxPoolArrays.scatter(backend, grad, idx, shape, g)
        n, c = shape[0], shape[1]
        if ip.shape[3] == c:  # channels-last
            gp = xp.ascontiguousarray(channels_last(grad, xp))
        else:
            gp = xp.reshape(xp.ascontiguousarray(grad), ip.shape)
        dxpad = xp.zeros((ip.shape[0], *g.padded, ip.shape[3]), dtype=grad.dtype)
        overlap = any(s < w for s, w in zip(g.stride, g.window))
        geo = (*g.stride, *g.dilation)
        if not _compiled.run(_JIT, "backward", *g.kernel, overlap, gp, ip, *geo, dxpad):
            return kernels.MaxPoolArrays.scatter(backend, grad, idx, shape, g)
        return _to_nchw(dxpad[(slice(None),) + g.crop()], n, c, xp)


def _to_nchw(planes: Any, n: int, c: int, xp: Any) -> Any:
    """``(N, *out, C)`` or ``(N*C, *out, 1)`` planes -> ``(N, C, *out)`` (a view)."""
    if planes.shape[-1] == c and planes.shape[0] == n:
        return channels_first(planes, xp)
    return xp.reshape(planes, (n, c, *planes.shape[1:3]))
