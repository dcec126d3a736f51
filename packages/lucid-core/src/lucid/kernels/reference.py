"""The reference kernels: readable array code that every backend can run, and the oracle the
fast kernels are tested against.

Everything here takes the array namespace ``xp`` (or, where a backend method is needed, such as
``sliding_windows``, the backend) as an argument and imports no backend: the channels-last
im2col layout the convolutions share, the padding and tap scatter of pooling, max pooling
(``MaxPoolArrays``, the default of ``MAX_POOL_ARRAYS``) and ReLU's gradient (``relu_grad``, the
default of ``RELU_GRAD``).
"""

from __future__ import annotations

import math
from typing import Any

from lucid.kernels.geometry import ConvGeometry, Ints

__all__ = [
    "MaxPoolArrays",
    "ReluGradArrays",
    "antialias_weights",
    "avg_pool_divisor",
    "channels_first",
    "channels_last",
    "im2col",
    "lowest",
    "pad_planes",
    "pad_spatial",
    "relu_grad",
    "scatter_taps",
    "weight_from_matrix",
    "weight_matrix",
    "windows",
]


def antialias_weights(xp: Any, in_len: int, out_len: int, scale: float, mode: str) -> Any:
    """The ``(out_len, in_len)`` float64 resampling matrix of torch's antialiased interpolation
    (``_compute_weights_aa``; torchvision's antialiased ``resize`` is the same): PIL's triangle
    (``"bilinear"``), Keys' cubic with a = -0.5 (``"bicubic"``) or Lanczos-3 (``"lanczos"``),
    widened by the downscaling factor ``scale`` (input length over output length, or the
    align_corners scale) and normalised to sum 1 per output. Built on the host row by row:
    lucid.nn's ``interpolate`` and lucid.data's ``Resize`` move it where they need it."""
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * max(scale, 1.0)
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    out = xp.zeros((out_len, in_len), dtype=xp.float64)
    for i in range(out_len):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_len)
        x = xp.abs((xp.arange(lo, hi) - center + 0.5) * inv)
        if mode == "bicubic":
            w = xp.where(x < 1, (1.5 * x - 2.5) * x * x + 1,
                         xp.where(x < 2, ((-0.5 * x + 2.5) * x - 4) * x + 2, 0.0))  # fmt: skip
        elif mode == "lanczos":
            w = xp.where(x < 3, xp.sinc(x) * xp.sinc(x / 3), 0.0)
        else:
            w = xp.maximum(0.0, 1.0 - x)
        total = w.sum()
        out[i, lo:hi] = w / total if total != 0 else w
    return out


def avg_pool_divisor(xp: Any, g: ConvGeometry, count_include_pad: bool, dtype: Any) -> Any:
    """1 / (elements averaged) for each output position, PyTorch's rule (broadcastable)."""
    count: Any = None
    for a in range(g.nd):
        start = xp.arange(g.out_size[a]) * g.stride[a] - g.pad_lo[a]
        end = xp.minimum(start + g.kernel[a], g.in_size[a] + g.pad_lo[a])
        if count_include_pad:
            size = end - start
        else:
            size = xp.minimum(end, g.in_size[a]) - xp.maximum(start, 0)
        size = xp.reshape(size, (-1,) + (1,) * (g.nd - 1 - a))
        count = size if count is None else count * size
    return (1.0 / count).astype(dtype)


# -- the channels-last im2col layout ----------------------------------------------------------
def channels_last(arr: Any, xp: Any) -> Any:
    """``(N, C, *S)`` -> a ``(N, *S, C)`` view."""
    return xp.transpose(arr, (0, *range(2, arr.ndim), 1))


def channels_first(arr: Any, xp: Any) -> Any:
    """``(N, *S, C)`` -> a ``(N, C, *S)`` view."""
    return xp.transpose(arr, (0, arr.ndim - 1, *range(1, arr.ndim - 1)))


def pad_spatial(xl: Any, g: ConvGeometry, xp: Any, value: float = 0.0) -> Any:
    """Pad the spatial dims of a channels-last array (constant ``value``)."""
    if not any(g.pad_lo) and not any(g.pad_hi):
        return xl
    if type(xl).__module__ == "numpy":  # np.pad's Python costs ~20 us a call (a batch-1 conv)
        return _pad_numpy(xl, g, xp, value)
    widths = ((0, 0), *zip(g.pad_lo, g.pad_hi), (0, 0))
    return xp.pad(xl, widths, constant_values=value)


def _pad_numpy(xl: Any, g: ConvGeometry, xp: Any, value: float) -> Any:
    """``np.pad(xl, widths, constant_values=value)`` for a NumPy array, without its wrapper:
    the same array (its shape, values and memory order: F where ``xl`` is F- but not
    C-contiguous, as np.pad picks)."""
    shape = (
        xl.shape[0],
        *(lo + n + hi for lo, n, hi in zip(g.pad_lo, xl.shape[1:-1], g.pad_hi)),
        xl.shape[-1],
    )
    order = "F" if xl.flags.fnc else "C"
    out = xp.full(shape, value, dtype=xl.dtype, order=order)  # (NumPy 1.26 has no
    # ndarray.__array_namespace__)
    inner = (
        slice(None),
        *(slice(lo, lo + n) for lo, n in zip(g.pad_lo, xl.shape[1:-1])),
        slice(None),
    )
    out[inner] = xl
    return out


def windows(backend: Any, xpad: Any, g: ConvGeometry) -> Any:
    """Every receptive field of a padded channels-last array: ``(N, *out, ..., *kernel)``.

    The dims between the spatial output dims and the kernel dims are the array's trailing dims
    (channels, or groups and channels). A view: nothing is copied.
    """
    nd = g.nd
    win = backend.sliding_windows(xpad, g.window, tuple(range(1, nd + 1)))
    extra = win.ndim - 1 - 2 * nd
    index = (
        slice(None),
        *(slice(0, s * (o - 1) + 1, s) for s, o in zip(g.stride, g.out_size)),
        *([slice(None)] * extra),
        *(slice(None, None, d) for d in g.dilation),
    )
    return win[index]


def im2col(backend: Any, xl: Any, g: ConvGeometry) -> Any:
    """Column matrix ``(rows, G, taps * C/G)`` of a channels-last batch, rows = N * prod(out).

    Columns are ordered (kernel taps, input channel of the group), copied once: a contiguous
    matrix, or for one input channel the transpose of one (each tap's column contiguous).
    """
    xp = backend.xp
    n, c = xl.shape[0], xl.shape[-1]
    groups = g.groups
    xpad = pad_spatial(xl, g, xp)
    xpad = xp.reshape(xpad, (n, *xpad.shape[1:-1], groups, c // groups))
    win = windows(backend, xpad, g)  # (n, *out, G, Cg, *kernel)
    nd = g.nd
    rows = n * math.prod(g.out_size)
    if c == 1:
        # One channel: a row-major copy would move runs of one value (a channels-last tap is
        # one number wide). Copy tap by tap instead, each moving whole output rows, into a
        # (taps, rows) matrix; its transpose is the same column matrix (BLAS takes either).
        taps_first = (*range(nd + 3, 2 * nd + 3), 0, *range(1, nd + 1), nd + 1, nd + 2)
        cols_t = xp.reshape(xp.transpose(win, taps_first), (g.taps, rows))
        return xp.reshape(xp.transpose(cols_t), (rows, 1, g.taps))
    perm = (0, *range(1, nd + 1), nd + 1, *range(nd + 3, 2 * nd + 3), nd + 2)
    return xp.reshape(xp.transpose(win, perm), (rows, groups, g.taps * (c // groups)))


def weight_matrix(w: Any, groups: int, xp: Any) -> Any:
    """``(C_out, C/G, *kernel)`` -> ``(G, taps * C/G, C_out/G)`` in im2col's column order."""
    cout, cg = w.shape[0], w.shape[1]
    kernel = w.shape[2:]
    nd = len(kernel)
    w = xp.reshape(w, (groups, cout // groups, cg, *kernel))
    w = xp.transpose(w, (0, *range(3, nd + 3), 2, 1))
    return xp.reshape(w, (groups, math.prod(kernel) * cg, cout // groups))


def weight_from_matrix(wm: Any, kernel: Ints, xp: Any) -> Any:
    """The inverse of ``weight_matrix``."""
    groups, kg, coutg = wm.shape
    nd = len(kernel)
    cg = kg // math.prod(kernel)
    w = xp.reshape(wm, (groups, *kernel, cg, coutg))
    w = xp.transpose(w, (0, nd + 2, nd + 1, *range(1, nd + 1)))
    return xp.reshape(w, (groups * coutg, cg, *kernel))


# -- max pooling in plain array code (lucid.nn's Functions and the backends' fallback) ---------
_ALL = (slice(None), slice(None))


def pad_planes(xp: Any, x: Any, g: ConvGeometry, value: float) -> Any:
    """A channels-first ``(N, C, *spatial)`` array padded by ``value`` to ``g.padded``."""
    if not any(g.pad_lo) and not any(g.pad_hi):
        return x
    return xp.pad(x, ((0, 0), (0, 0), *zip(g.pad_lo, g.pad_hi)), constant_values=value)


def lowest(dt: Any) -> float:
    """A padding value that never wins a window's max: -inf, or the integer dtype's minimum."""
    if dt.is_floating_point:
        return -math.inf
    return -(2 ** (8 * dt.itemsize - 1)) if dt.is_signed else 0


def scatter_taps(xp: Any, parts: Any, shape: tuple[int, ...], g: ConvGeometry, dtype: Any) -> Any:
    """Sum ``parts(tap_number)`` into a zero padded input at each tap's positions; crop.

    When windows do not overlap (stride >= window), each position gets at most one tap: the
    parts are written, not added.
    """
    # Channels-last, as convolution outputs are: the tap writes and the next op read it as is.
    out = channels_first(xp.zeros((shape[0], *g.padded, shape[1]), dtype=dtype), xp)
    disjoint = all(s >= w for s, w in zip(g.stride, g.window))
    for t, tap in enumerate(g.all_taps()):
        where = _ALL + g.tap_slices(tap)
        if disjoint:
            out[where] = parts(t)
        else:
            out[where] += parts(t)
    return out[_ALL + g.crop()]


def _winners(xp: Any, g: Any, idx: Any) -> Any:
    """``t -> g where tap t won, else 0``, computed channels-last (the layout of a pooled
    convolution output, so of ``idx``: mixed layouts make every elementwise op slow).

    A product with the mask is several times faster than ``where``; it differs only in the
    sign of the zeros it writes (``-1 * 0 = -0.0``) and where ``g`` is not finite (inf * 0 is
    nan), so such gradients take ``where``.
    """
    gl = channels_last(g, xp)
    gl = channels_first(xp.reshape(xp.reshape(gl, (-1,)), gl.shape), xp)  # copied if not yet
    if bool(xp.all(xp.isfinite(g))):
        return lambda t: gl * (idx == t)
    zero = xp.zeros((), dtype=g.dtype)
    return lambda t: xp.where(idx == t, gl, zero)


class MaxPoolArrays:
    """``MAX_POOL_ARRAYS`` in plain array code: a few whole-array ops per kernel tap."""

    @staticmethod
    def forward(backend: Any, x: Any, g: ConvGeometry, want_index: bool) -> tuple[Any, Any]:
        """The max over each window (NaN propagates) and, if wanted, the first tap holding it
        (``int8`` tap numbers, ``int32`` from 128 taps), else None."""
        xp = backend.xp
        xpad = pad_planes(xp, x, g, lowest(backend.dtype_of(x)))
        index_type = xp.int8 if g.taps < 128 else xp.int32
        best: Any = None
        idx: Any = None
        for t, tap in enumerate(g.all_taps()):
            v = xpad[_ALL + g.tap_slices(tap)]
            if best is None:
                best = v
                continue
            if want_index:  # the first index array keeps the input's memory order
                win = v > best
                tap_number = xp.asarray(t, dtype=index_type)
                idx = win.astype(index_type) if idx is None else xp.where(win, tap_number, idx)
            best = xp.maximum(best, v)
        if want_index and idx is None:
            idx = xp.zeros(best.shape, dtype=index_type)
        return (backend.copy(best) if g.taps == 1 else best), idx

    @staticmethod
    def scatter(backend: Any, grad: Any, idx: Any, shape: tuple[int, ...], g: ConvGeometry) -> Any:
        """The input gradient ``(N, C, *in)``: each output's ``grad`` at its window's winner."""
        xp = backend.xp
        return scatter_taps(xp, _winners(xp, grad, idx), shape, g, grad.dtype)


# -- ReLU's gradient ---------------------------------------------------------------------------
def relu_grad(xp: Any, g: Any, out: Any) -> Any:
    """``g * (out > 0)``: ReLU's gradient from its output (0 at 0, as PyTorch)."""
    return xp.multiply(g, xp.greater(out, 0))


class ReluGradArrays:
    """``RELU_GRAD`` in plain array code."""

    @staticmethod
    def forward(backend: Any, g: Any, out: Any) -> Any:
        """``g * (out > 0)``."""
        return relu_grad(backend.xp, g, out)
