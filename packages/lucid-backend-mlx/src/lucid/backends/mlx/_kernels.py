"""Fused kernels: MLX-native implementations of Functions that declare a ``kernel_name``.

Each class has the ``forward``/``backward`` staticmethods of the Function it replaces (same
signatures; ``ctx`` is that Function's node). Forwards call MLX's native kernel. Where the
default backward is written in lucid ops it stays (so double backward keeps working); the
convolutions' backward is MLX's own ``vjp`` of the native kernel, which has no double backward
(``once_differentiable``). MLX convolutions are channels-last: the transposes happen here.
"""

from __future__ import annotations

import math
from typing import Any

import mlx.core as mx

from lucid._tensor import Tensor
from lucid.autograd.function import once_differentiable

KERNELS: dict[str, Any] = {}


def _default_backward(ctx: Any, *grads: Any) -> Any:
    """The replaced Function's own backward (``ctx`` is an instance of that Function)."""
    return type(ctx).backward(ctx, *grads)


def _kernel(name: str) -> Any:
    def register(cls: Any) -> Any:
        KERNELS[name] = cls
        return cls

    return register


# -- softmax family and special functions: native forward, lucid-op backward -------------------
@_kernel("softmax")
class Softmax:
    backward = staticmethod(_default_backward)

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int) -> Any:
        out = mx.softmax(x, dim, precise=True, stream=ctx.backend.stream)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out


@_kernel("log_softmax")
class LogSoftmax:
    backward = staticmethod(_default_backward)

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int) -> Any:
        s = ctx.backend.stream
        out = mx.subtract(x, mx.logsumexp(x, dim, keepdims=True, stream=s), stream=s)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out


@_kernel("erf")
class Erf:
    backward = staticmethod(_default_backward)

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return mx.erf(x, stream=ctx.backend.stream)


@_kernel("erfinv")
class Erfinv:
    backward = staticmethod(_default_backward)

    @staticmethod
    def forward(ctx: Any, y: Any) -> Any:
        out = mx.erfinv(y, stream=ctx.backend.stream)
        ctx.save_for_backward(out)
        return out


@_kernel("gelu")
class Gelu:
    backward = staticmethod(_default_backward)

    @staticmethod
    def forward(ctx: Any, x: Any, approximate: str) -> Any:
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        s = ctx.backend.stream
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


def _wrap(ctx: Any, arr: Any) -> Tensor:
    return Tensor._make(arr, ctx.backend)


class _NativeConv:
    """Shared forward/backward of a convolution computed by ``conv_fn(x, w) -> y`` (NC... layout).

    ``ctx.conv`` holds the function of (x, w) that the forward ran, so the backward is its vjp.
    """

    @staticmethod
    def finish(ctx: Any, x: Any, w: Any, bias: Any, conv: Any) -> Any:
        ctx.conv = conv
        ctx.save_for_backward(x, w)
        out = conv(x, w)
        if bias is not None:
            out = out + mx.reshape(bias, (-1,) + (1,) * (out.ndim - 2))
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, g: Tensor) -> Any:
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = gw = gb = None
        if need[0] or need[1]:
            _, (dx, dw) = mx.vjp(ctx.conv, [x.data, w.data], [g.data])
            gx = _wrap(ctx, dx) if need[0] else None
            gw = _wrap(ctx, dw) if need[1] else None
        if need[2]:
            gb = _wrap(ctx, mx.sum(g.data, axis=[0, *range(2, g.ndim)]))
        return (gx, gw, gb) + (None,) * (len(need) - 3)


def _conv_fn(stream: Any, stride: Any, lo: Any, hi: Any, dilation: Any, groups: int) -> Any:
    def conv(x: Any, w: Any) -> Any:
        y = mx.conv_general(
            _to_last(x), _to_last(w), list(stride), (list(lo), list(hi)), list(dilation),
            groups=groups, stream=stream,
        )  # fmt: skip
        return _to_first(y)

    return conv


class Convolution:
    """conv1d/2d/3d: ``forward(ctx, x, weight, bias, stride, padding_pairs, dilation, groups)``."""

    backward = staticmethod(_NativeConv.backward)

    @staticmethod
    def forward(
        ctx: Any, x: Any, w: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int
    ) -> Any:
        lo = [p[0] for p in padding]
        hi = [p[1] for p in padding]
        conv = _conv_fn(ctx.backend.stream, stride, lo, hi, dilation, groups)
        return _NativeConv.finish(ctx, x, w, bias, conv)


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


class ConvolutionTranspose:
    """conv_transpose1d/2d/3d: ``forward(ctx, x, weight, bias, stride, padding_pairs,
    output_padding, groups, dilation)``."""

    backward = staticmethod(_NativeConv.backward)

    @staticmethod
    def forward(
        ctx: Any,
        x: Any,
        w: Any,
        bias: Any,
        stride: Any,
        padding: Any,
        output_padding: Any,
        groups: int,
        dilation: Any,
    ) -> Any:
        kernel = tuple(w.shape[2:])
        conv = _transpose_fn(
            ctx.backend.stream, kernel, stride, padding, output_padding, groups, dilation
        )
        return _NativeConv.finish(ctx, x, w, bias, conv)


for _n in (1, 2, 3):
    KERNELS[f"conv{_n}d"] = Convolution
    KERNELS[f"conv_transpose{_n}d"] = ConvolutionTranspose
