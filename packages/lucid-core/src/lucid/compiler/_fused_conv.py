"""Fused ops that only ``lucid.compile`` runs: a first convolution and its max pooling.

``ConvMaxPool`` is ``max_pool2d(conv2d(x, w, b, padding), k)`` for an input of one channel
that needs no gradient (an image batch into a CNN's first layer), stride-1 convolution, a
non-overlapping pool (window = stride, no padding or dilation): one compiled pass forward
(``kernels._convpool_jit``), the convolution's output never written, and one backward pass
for the weight and bias gradients from the pooled gradient (the pooling's scattered gradient
never made). ``_arrays._fuse_conv_max_pool`` puts it into a program where the capture has the
two ops; it is used only where numba's kernels load (``lucid-core[numba]``), and computes
with NumPy (the same values, to float rounding) where they stop loading afterwards.

Values: the convolution's sums are ``_im2col_jit``'s, the maxima and winning taps
``_pool_jit``'s (the first tap wins ties): the forward gives eager code's bits, and so does the
weight gradient (always ``_im2col_jit.weight_one_channel``'s loop: a kernel row's taps in one
pass). The bias gradient is a float64 sum of the pooled gradient: equal to eager's to float32
rounding (tested against eager and a float64 oracle), as a fused elementwise group's gradient
is, without writing the convolution's scattered output gradient (LeNet-5 b64's compiled step:
0.93x the time at two threads, docs/performance.md, session 15). With ``EXACT`` the backward
writes that gradient for eager code's bias sum: every result then has eager's bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.backends._numpy import _compiled
from lucid.backends._numpy.kernels.im2col import channel_sum

_JIT = "_convpool_jit"
# True: the bias gradient as eager code's bits too (its sum over the scattered gradient, which
# the backward then writes); False (the default since session 15): a float64 sum over the
# pooled gradient, equal to float32 rounding, as lucid.compile's other fusions
# (docs/performance.md). Read at capture, so a program keeps the mode it was captured in.
EXACT = False
# The line ``program.arrays.rewrites`` gets, and what it adds where the bias gradient is the
# float64 sum (tools/compile_zoo.py then compares within float32 tolerance, not bit for bit).
REWRITE = "conv2d and max_pool2d ran as one fused pass each way"
INEXACT_NOTE = " (bias gradient summed in float64: eager's to float32 rounding)"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def fusable(x_shape: tuple[int, ...], dtype: Any, kernel: tuple[int, ...],
            padding: Any, pool: tuple[int, int]) -> bool:  # fmt: skip
    """Whether ``ConvMaxPool`` takes this input (``(N, 1, H, W)`` float32/float64, a 2-D
    kernel, padding pairs) and pool window, with numba's kernels loading."""
    if len(x_shape) != 4 or x_shape[1] != 1 or np.dtype(dtype) not in _FLOATS:
        return False
    if len(kernel) != 2 or len(padding) != 2 or any(p < 1 for p in pool):
        return False
    hp = x_shape[2] + padding[0][0] + padding[0][1]
    wp = x_shape[3] + padding[1][0] + padding[1][1]
    oh, ow = hp - kernel[0] + 1, wp - kernel[1] + 1
    if oh < pool[0] or ow < pool[1] or x_shape[0] == 0:
        return False
    return _compiled.load(_JIT) is not None


def _padded(x: Any, padding: Any) -> Any:
    """``x`` ``(N, 1, H, W)`` zero-padded, as ``(N, Hp, Wp)`` C-contiguous."""
    (t, b), (lft, r) = padding
    n, _, h, w = x.shape
    xpad = np.zeros((n, h + t + b, w + lft + r), dtype=x.dtype)
    xpad[:, t : t + h, lft : lft + w] = x[:, 0]
    return xpad


class ConvMaxPool(Function):
    """``max_pool2d(conv2d(x, w, b, padding=padding), pool)`` in one op (the module's
    docstring); ``forward(ctx, x, w, b, padding, pool, exact)``, ``padding`` as pairs,
    ``exact`` the program's ``EXACT`` (None: the module's setting now)."""

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, b: Any, padding: Any, pool: tuple[int, int],
                exact: bool | None = None) -> Any:  # fmt: skip
        cout, _, kh, kw = w.shape
        xpad = _padded(x, padding)
        n, hp, wp = xpad.shape
        oh, ow = hp - kh + 1, wp - kw + 1
        ph, pw = pool
        wm = np.ascontiguousarray(w.reshape(cout, kh * kw))
        bias = np.zeros(cout, dtype=x.dtype) if b is None else np.ascontiguousarray(b)
        out = np.empty((n, oh // ph, ow // pw, cout), dtype=x.dtype)
        idx = np.empty(out.shape, dtype=np.int8 if ph * pw < 128 else np.int32)
        ctx.xpad, ctx.idx, ctx.pool, ctx.wshape = xpad, idx, pool, w.shape
        ctx.has_bias = b is not None
        ctx.exact = EXACT if exact is None else exact
        ctx.kernel = "numba"
        if _compiled.load(_JIT) is None or not _compiled.run(
            _JIT, "conv_pool", kh, kw, ph, pw, xpad.reshape(n, hp * wp), wp, wm, bias, out, idx
        ):
            ctx.kernel = "numpy"
            out, idx = _numpy_forward(xpad, wm, bias, (kh, kw), pool, out.dtype)
            ctx.idx = idx
        return np.transpose(out, (0, 3, 1, 2))  # (N, C, PH, PW), a view as eager conv's

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        cout, _, kh, kw = ctx.wshape
        ph, pw = ctx.pool
        xpad, idx = ctx.xpad, ctx.idx
        n, hp, wp = xpad.shape
        oh, ow = hp - kh + 1, wp - kw + 1
        gl = np.ascontiguousarray(np.transpose(g._data, (0, 2, 3, 1)))  # channels-last
        if gl.dtype != xpad.dtype:
            gl = gl.astype(xpad.dtype)
        dw = np.empty((cout, kh * kw))
        db = np.empty(cout)
        exact = ctx.exact
        # exact: the convolution's output gradient, as eager code's pool backward makes it,
        # for eager code's bias sum (the same bits)
        dy = np.empty((n, oh, ow, cout) if exact else (n, 0, 0, cout), dtype=xpad.dtype)
        if exact:  # the kernel writes every position a window covers; zero the rest
            dy[:, (oh // ph) * ph :] = 0
            dy[:, :, (ow // pw) * pw :] = 0
        done = ctx.kernel == "numba" and _compiled.load(_JIT) is not None
        if done:
            done = _compiled.run(_JIT, "conv_pool_weight", kh, kw, ph, pw, exact,
                                 xpad.reshape(n, hp * wp), wp, gl, idx, dw, db, dy)  # fmt: skip
        if not done:
            exact = False
            dw, db = _numpy_weight(xpad, gl, idx, (kh, kw), ctx.pool)
        dt, bk = xpad.dtype, g.backend
        need = ctx.needs_input_grad
        gw = Tensor.from_backend_array(dw.astype(dt).reshape(ctx.wshape), bk) if need[1] else None
        gb = None
        if need[2] and ctx.has_bias:
            gb_a = channel_sum(bk, np.transpose(dy, (0, 3, 1, 2))) if exact else db.astype(dt)
            gb = Tensor.from_backend_array(gb_a, bk)
        return None, gw, gb, None, None, None


def _numpy_forward(xpad: Any, wm: Any, bias: Any, kernel: tuple[int, int],
                   pool: tuple[int, int], dt: Any) -> tuple[Any, Any]:  # fmt: skip
    """``ConvMaxPool``'s forward in NumPy (numba stopped loading): channels-last pooled output
    and winning taps (the first maximum wins, as the compiled pass)."""
    kh, kw = kernel
    n, hp, wp = xpad.shape
    oh, ow = hp - kh + 1, wp - kw + 1
    cout = wm.shape[0]
    y = np.empty((n, oh, ow, cout), dtype=dt)
    y[...] = bias
    for u in range(kh):
        for v in range(kw):
            y += xpad[:, u : u + oh, v : v + ow, None] * wm[:, u * kw + v]
    ph, pw = pool
    qh, qw = oh // ph, ow // pw
    win = y[:, : qh * ph, : qw * pw].reshape(n, qh, ph, qw, pw, cout)
    win = np.moveaxis(win, 3, 2).reshape(n, qh, qw, ph * pw, cout)
    idx = np.argmax(win, axis=3).astype(np.int8 if ph * pw < 128 else np.int32)
    out = np.take_along_axis(win, idx[:, :, :, None, :].astype(np.intp), axis=3)[:, :, :, 0]
    return np.ascontiguousarray(out), idx


def _numpy_weight(xpad: Any, gl: Any, idx: Any, kernel: tuple[int, int],
                  pool: tuple[int, int]) -> tuple[Any, Any]:  # fmt: skip
    """``ConvMaxPool``'s weight and bias gradients in NumPy (float64 sums)."""
    kh, kw = kernel
    ph, pw = pool
    n, hp, wp = xpad.shape
    oh, ow = hp - kh + 1, wp - kw + 1
    qh, qw, cout = gl.shape[1], gl.shape[2], gl.shape[3]
    taps = np.arange(ph * pw).reshape(1, 1, 1, ph * pw, 1)
    spread = np.where(idx[:, :, :, None, :] == taps, gl[:, :, :, None, :], 0)
    spread = spread.reshape(n, qh, qw, ph, pw, cout)
    dy = np.zeros((n, oh, ow, cout))
    dy[:, : qh * ph, : qw * pw] = np.moveaxis(spread, 3, 2).reshape(n, qh * ph, qw * pw, cout)
    dw = np.empty((cout, kh * kw))
    for u in range(kh):
        for v in range(kw):
            dw[:, u * kw + v] = np.einsum("nhwc,nhw->c", dy, xpad[:, u : u + oh, v : v + ow])
    return dw, gl.sum(axis=(0, 1, 2), dtype=np.float64)
