"""Fused kernels: MLX-native implementations of the array-level contracts in ``lucid.kernels``.

Each class maps MLX arrays to MLX arrays (``backend`` gives the stream and random keys); the
Functions in lucid.ops and lucid.nn own the graph and keep what a kernel's forward returns for
its backward (``residuals``). Softmax, erf and GELU compute the values natively; their backward
stays the Function's own, in lucid ops (so double backward keeps working). The whole-op kernels
(convolutions, pooling, layer norm, attention) return ``(output, residuals)`` and their backward
is MLX's own ``vjp`` of the native computation (no double backward). MLX convolutions are
channels-last: the transposes happen here. Pooling windows come from core's ``pool_geometry``,
the same geometry lucid.nn's reference pooling uses.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

import mlx.core as mx
from lucid import kernels
from lucid.backends import Backend
from lucid.kernels import ConvGeometry, Needs, avg_pool_divisor, pool_geometry


# -- softmax family and special functions: native values, the Function's lucid-op backward ------
class Softmax:
    @staticmethod
    def forward(backend: Any, x: Any, dim: int) -> Any:
        return mx.softmax(x, dim, precise=True, stream=backend.stream)


class LogSoftmax:
    @staticmethod
    def forward(backend: Any, x: Any, dim: int) -> Any:
        s = backend.stream
        return mx.subtract(x, mx.logsumexp(x, dim, keepdims=True, stream=s), stream=s)


class Erf:
    @staticmethod
    def forward(backend: Any, x: Any) -> Any:
        return mx.erf(x, stream=backend.stream)


class Erfinv:
    @staticmethod
    def forward(backend: Any, y: Any) -> Any:
        return mx.erfinv(y, stream=backend.stream)


class Gelu:
    @staticmethod
    def forward(backend: Any, x: Any, approximate: str) -> Any:
        s = backend.stream
        if approximate == "tanh":
            k = math.sqrt(2.0 / math.pi)
            inner = mx.tanh(k * (x + 0.044715 * x * x * x), stream=s)
            return 0.5 * x * (1.0 + inner)
        return 0.5 * x * (1.0 + mx.erf(x * math.sqrt(0.5), stream=s))


# -- convolution ---------------------------------------------------------------------------------
def _to_last(a: Any) -> Any:
    return mx.transpose(a, (0, *range(2, a.ndim), 1))


def _to_first(a: Any) -> Any:
    return mx.transpose(a, (0, a.ndim - 1, *range(1, a.ndim - 1)))


class _NativeConv:
    """Shared forward/backward of a convolution computed by ``conv(x, w) -> y`` (NC... layout).

    The residuals hold ``conv`` with its inputs, so the backward is its vjp.
    """

    @staticmethod
    def finish(x: Any, w: Any, bias: Any, conv: Any) -> tuple[Any, Any]:
        out = conv(x, w)
        if bias is not None:
            out = out + mx.reshape(bias, (-1,) + (1,) * (out.ndim - 2))
        return out, (conv, x, w)

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs) -> tuple[Any, ...]:
        conv, x, w = residuals
        gx = gw = gb = None
        if needs[0] or needs[1]:
            _, (dx, dw) = mx.vjp(conv, [x, w], [g])
            gx = dx if needs[0] else None
            gw = dw if needs[1] else None
        if needs[2]:
            gb = mx.sum(g, axis=[0, *range(2, g.ndim)])
        return gx, gw, gb


def _conv_fn(stream: Any, stride: Any, lo: Any, hi: Any, dilation: Any, groups: int) -> Any:
    def conv(x: Any, w: Any) -> Any:
        y = mx.conv_general(
            _to_last(x), _to_last(w), list(stride), (list(lo), list(hi)), list(dilation),
            groups=groups, stream=stream,
        )  # fmt: skip
        return _to_first(y)

    return conv


class Convolution(_NativeConv):
    """conv1d/2d/3d: ``forward(backend, x, weight, bias, stride, padding_pairs, dilation,
    groups)``."""

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
        groups: int
    ) -> tuple[Any, Any]:  # fmt: skip
        lo = [p[0] for p in padding]
        hi = [p[1] for p in padding]
        conv = _conv_fn(backend.stream, stride, lo, hi, dilation, groups)
        return _NativeConv.finish(x, w, bias, conv)


def _transpose_fn(
    stream: Any, kernel: Any, stride: Any, padding: Any, out_pad: Any, groups: int, dilation: Any
) -> Any:
    """A transposed convolution as a convolution of the stride-dilated input, flipped kernel."""
    lo = [d * (k - 1) - p[0] for k, d, p in zip(kernel, dilation, padding)]
    hi = [d * (k - 1) - p[1] + op for k, d, p, op in zip(kernel, dilation, padding, out_pad)]

    def conv(x: Any, w: Any) -> Any:
        cin, coutg = w.shape[0], w.shape[1]
        # (Cin, Cout/G, *k) -> (G*Cout/G, *k, Cin/G): MLX's (C_out, *k, C_in/G) layout.
        wg = mx.reshape(w, (groups, cin // groups, coutg, *kernel))
        wg = mx.transpose(wg, (0, 2, *range(3, wg.ndim), 1))
        wg = mx.reshape(wg, (groups * coutg, *kernel, cin // groups))
        y = mx.conv_general(
            _to_last(x), wg, 1, (lo, hi), list(dilation), list(stride), groups=groups, flip=True,
            stream=stream,
        )  # fmt: skip
        return _to_first(y)

    return conv


class ConvolutionTranspose(_NativeConv):
    """conv_transpose1d/2d/3d: ``forward(backend, x, weight, bias, stride, padding_pairs,
    output_padding, groups, dilation)``."""

    @staticmethod
    def forward(backend: Any, x: Any, w: Any, bias: Any, stride: Any, padding: Any, out_pad: Any,
                groups: int, dilation: Any) -> tuple[Any, Any]:  # fmt: skip
        kernel = tuple(w.shape[2:])
        conv = _transpose_fn(backend.stream, kernel, stride, padding, out_pad, groups, dilation)
        return _NativeConv.finish(x, w, bias, conv)


# -- pooling: strided windows of the padded input, reduced; backward is their vjp ----------------
def _windows(x: Any, g: ConvGeometry, fill: float) -> Any:
    """(N, C, *out, *kernel) windows of ``x`` padded with ``fill``, and the kernel axes."""
    nd = g.nd
    pad = any(g.pad_lo) or any(g.pad_hi)
    xpad = mx.pad(x, [(0, 0), (0, 0), *zip(g.pad_lo, g.pad_hi)], constant_values=fill) if pad else x
    strides = [1] * xpad.ndim
    for i in range(xpad.ndim - 2, -1, -1):
        strides[i] = strides[i + 1] * xpad.shape[i + 1]
    sp = strides[2:]
    shape = [*xpad.shape[:2], *g.out_size, *g.kernel]
    step = [
        *strides[:2],
        *[st * s for st, s in zip(sp, g.stride)],
        *[st * d for st, d in zip(sp, g.dilation)],
    ]
    return mx.as_strided(xpad, shape, step), tuple(range(2 + nd, 2 + 2 * nd))


def _tiles(g: ConvGeometry) -> bool:
    """Windows that do not overlap, without padding or dilation: the input's (cropped) tiles."""
    return (
        tuple(g.stride) == tuple(g.kernel)
        and not any(g.pad_lo)
        and not any(g.pad_hi)
        and all(d == 1 for d in g.dilation)
    )


def _tile_windows(x: Any, g: ConvGeometry) -> Any:
    """``(N, C, *out, taps)``: each tile's values (kernel row-major), by reshapes of ``x``."""
    nd = g.nd
    crop = (slice(None), slice(None), *(slice(0, o * k) for o, k in zip(g.out_size, g.kernel)))
    split = [v for o, k in zip(g.out_size, g.kernel) for v in (o, k)]
    t = mx.reshape(x[crop], (*x.shape[:2], *split))
    t = mx.transpose(t, (0, 1, *range(2, 2 + 2 * nd, 2), *range(3, 3 + 2 * nd, 2)))
    return mx.reshape(t, (*x.shape[:2], *g.out_size, g.taps))


def _untile(cot: Any, shape: tuple[int, ...], g: ConvGeometry) -> Any:
    """The inverse of ``_tile_windows``: ``(N, C, *out, taps)`` -> ``shape``, zero past the
    tiles (the rows and columns a floor-mode pool leaves out)."""
    nd = g.nd
    t = mx.reshape(cot, (*shape[:2], *g.out_size, *g.kernel))
    order = [0, 1]
    for a in range(nd):
        order += [2 + a, 2 + nd + a]
    t = mx.transpose(t, order)
    t = mx.reshape(t, (*shape[:2], *(o * k for o, k in zip(g.out_size, g.kernel))))
    pads = [(0, 0), (0, 0), *((0, n - o * k) for n, o, k in zip(shape[2:], g.out_size, g.kernel))]
    return mx.pad(t, pads) if any(p[1] for p in pads) else t


class MaxPool:
    """max_pool{1,2,3}d: ``forward(backend, x, kernel, stride, padding, dilation, ceil_mode,
    return_indices)``; with ``return_indices`` it declines (the reference runs).

    The gradient goes to the first maximum of each window, as PyTorch's (MLX's own vjp of max
    would split it between ties, which are common after a ReLU).
    """

    @staticmethod
    def forward(backend: Any, x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, return_indices: bool) -> tuple[Any, Any] | None:  # fmt: skip
        if return_indices:
            return None
        g = pool_geometry(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
        windows: Any = None
        win_shape: Any = None
        tiles = _tiles(g)
        if tiles:  # disjoint windows that tile the input: reshapes, no strided windows
            flat = _tile_windows(x, g)
        else:

            def windows(a: Any) -> Any:
                return _windows(a, g, -math.inf)[0]

            win = windows(x)
            flat = mx.reshape(win, (*win.shape[: win.ndim - len(kernel)], -1))
            win_shape = win.shape
        # positions carry no gradient (mx.vjp, under lucid.compile, refuses them otherwise)
        idx = mx.stop_gradient(mx.argmax(flat, axis=-1, keepdims=True))
        out = mx.squeeze(mx.take_along_axis(flat, idx, axis=-1), -1)
        return out, (x, idx, g, tiles, windows, win_shape)

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs) -> tuple[Any, ...]:
        x, idx, geom, tiles, windows, win_shape = residuals
        onehot = mx.arange(geom.taps) == idx
        cot = mx.where(onehot, mx.expand_dims(g, -1), 0.0).astype(g.dtype)
        if tiles:
            dx = _untile(cot, x.shape, geom)
        else:
            _, (dx,) = mx.vjp(windows, [x], [mx.reshape(cot, win_shape)])
        return (dx,)


class AvgPool:
    """avg_pool{1,2,3}d: ``forward(backend, x, kernel, stride, padding, ceil_mode,
    count_include_pad, divisor_override)``; the backward is the pool's vjp."""

    @staticmethod
    def forward(backend: Any, x: Any, kernel: Any, stride: Any, padding: Any, ceil_mode: bool,
                count_include_pad: bool, divisor_override: Any) -> tuple[Any, Any]:  # fmt: skip
        ones = (1,) * len(kernel)
        g = pool_geometry(x.shape[2:], kernel, stride, padding, ones, ceil_mode)
        if divisor_override:
            scale: Any = 1.0 / divisor_override
        else:
            scale = mx.array(avg_pool_divisor(np, g, count_include_pad, np.float32))

        def pool(a: Any) -> Any:
            win, axes = _windows(a, g, 0.0)
            return mx.sum(win, axis=axes) * scale

        return pool(x).astype(x.dtype), (pool, x)

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs) -> tuple[Any, ...]:
        pool, x = residuals
        _, (dx,) = mx.vjp(pool, [x], [g])
        return (dx,)


# -- layer norm over the last dim: mx.fast.layer_norm ---------------------------------------------
class LayerNorm:
    """``forward(backend, x, weight, bias, nd, eps)``; nd > 1 declines (the reference runs)."""

    @staticmethod
    def forward(
        backend: Any, x: Any, weight: Any, bias: Any, nd: int, eps: float
    ) -> tuple[Any, Any] | None:
        if nd != 1:
            return None
        y = mx.fast.layer_norm(x, weight, bias, eps, stream=backend.stream)
        return y, (x, weight, bias, eps)

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs) -> tuple[Any, ...]:
        x, w, b, eps = residuals
        present = [a for a in (x, w, b) if a is not None]

        def f(*arrays: Any) -> Any:
            it = iter(arrays)
            return mx.fast.layer_norm(next(it), next(it) if w is not None else None,
                                      next(it) if b is not None else None, eps)  # fmt: skip

        _, grads = mx.vjp(f, present, [g])
        it = iter(grads)
        out = [next(it) if a is not None else None for a in (x, w, b)]
        return tuple(o if n else None for o, n in zip(out, needs))


# -- scaled dot-product attention: mx.fast.scaled_dot_product_attention --------------------------
class ScaledDotProductAttention:
    """``forward(backend, q, k, v, attn_mask, dropout_p, is_causal, scale, needs)`` (lucid.nn's
    "sdpa"; ``needs`` for q, k, v and the mask).

    (B, H, L, E) inputs without dropout run MLX's fused kernel (grouped-query heads included);
    other ranks and dropout run the same formula in MLX ops. A query whose keys are all masked
    gets zeros (and no gradient), as on "cpu" and in torch. Backward: the vjp of what ran.
    """

    @staticmethod
    def forward(backend: Any, q: Any, k: Any, v: Any, mask: Any, dropout_p: float,
                is_causal: bool, scale: Any, needs: Needs) -> tuple[Any, Any]:  # fmt: skip
        length, source = q.shape[-2], k.shape[-2]
        factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
        if is_causal:  # top-left aligned, as torch (MLX's "causal" aligns bottom-right)
            mask = mx.arange(source)[None, :] <= mx.arange(length)[:, None]
        keep = None
        if dropout_p > 0.0:
            key = backend._next_key(None)
            shape = (*q.shape[:-1], source)
            keep = mx.random.bernoulli(1.0 - dropout_p, shape, key=key)
        fused = keep is None and q.ndim == 4 and k.ndim == 4 and q.shape[0] == k.shape[0]
        fused = fused and (mask is None or mask.ndim <= 4)
        attend = _fused_attention if fused else _attention
        dead = None if mask is None or is_causal else _dead_rows(mask)
        attend = functools.partial(_guarded, attend, dead, factor=factor, keep=keep, p=dropout_p)
        diff_mask = mask is not None and mask.dtype != mx.bool_ and needs[3]
        primals = [q, k, v, mask] if diff_mask else [q, k, v]
        return attend(q, k, v, mask), (attend, primals, mask)

    @staticmethod
    def backward(backend: Any, residuals: Any, g: Any, needs: Needs) -> tuple[Any, ...]:
        attend, primals, mask = residuals
        if len(primals) == 3:

            def fn(q: Any, k: Any, v: Any) -> Any:
                return attend(q, k, v, mask)

        else:
            fn = attend
        _, grads = mx.vjp(fn, primals, [g])
        return tuple(a if need else None for a, need in zip(grads, needs))


def _dead_rows(mask: Any) -> Any:
    """``(..., L, 1)`` bool: True for the queries whose keys are all masked out."""
    if mask.dtype == mx.bool_:
        return mx.logical_not(mx.any(mask, axis=-1, keepdims=True))
    return mx.all(mask == -math.inf, axis=-1, keepdims=True)


def _guarded(attend: Any, dead: Any, q: Any, k: Any, v: Any, mask: Any, **kw: Any) -> Any:
    """``attend`` with the rows in ``dead`` zeroed. Their mask is opened first: a softmax over
    only -inf gives NaN (or, in MLX's fused kernel, the mean of the values), and a NaN would
    leak into the gradients through ``where`` even where it is not selected."""
    if dead is None:
        return attend(q, k, v, mask, **kw)
    safe = mx.logical_or(mask, dead) if mask.dtype == mx.bool_ else mx.where(dead, 0.0, mask)
    return mx.where(dead, 0.0, attend(q, k, v, safe, **kw))


def _fused_attention(q: Any, k: Any, v: Any, mask: Any, factor: float, keep: Any, p: float) -> Any:
    return mx.fast.scaled_dot_product_attention(q, k, v, scale=factor, mask=mask)


def _attention(q: Any, k: Any, v: Any, mask: Any, factor: float, keep: Any, p: float) -> Any:
    heads, kv_heads = (q.shape[-3], k.shape[-3]) if q.ndim >= 3 and k.ndim >= 3 else (1, 1)
    if heads != kv_heads and kv_heads and heads % kv_heads == 0:  # grouped-query heads
        k = mx.repeat(k, heads // kv_heads, axis=-3)
        v = mx.repeat(v, heads // kv_heads, axis=-3)
    scores = (q * factor) @ mx.swapaxes(k, -1, -2)
    if mask is not None:
        scores = mx.where(mask, scores, -math.inf) if mask.dtype == mx.bool_ else scores + mask
    weights = mx.softmax(scores, axis=-1, precise=True)
    if keep is not None:
        weights = mx.where(keep, weights / (1.0 - p), 0.0)
    return weights @ v


def register(backend: Backend) -> None:
    """File every kernel here under its contract (mypy checks each against the protocol)."""
    kernels.SOFTMAX.register(backend, Softmax)
    kernels.LOG_SOFTMAX.register(backend, LogSoftmax)
    kernels.ERF.register(backend, Erf)
    kernels.ERFINV.register(backend, Erfinv)
    kernels.GELU.register(backend, Gelu)
    kernels.CONV.register(backend, Convolution)
    kernels.CONV_TRANSPOSE.register(backend, ConvolutionTranspose)
    kernels.MAX_POOL.register(backend, MaxPool)
    kernels.AVG_POOL.register(backend, AvgPool)
    kernels.LAYER_NORM.register(backend, LayerNorm)
    kernels.SDPA.register(backend, ScaledDotProductAttention)
