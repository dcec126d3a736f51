"""Converters of lucid-nn's fused ops: linear, convolution, pooling, normalisation, activations."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import Tensor
from lucid.onnx._context import Context, dtype_of
from lucid.onnx._convert import converts, one
from lucid.onnx._trace import Call
from lucid.onnx.errors import UnsupportedOperatorError

F = "lucid.nn.functional."


@converts(f"{F}linear._Linear")
def _linear(ctx: Context, call: Call) -> list[str]:
    x, w, b = call.args
    g = ctx.graph
    if x.ndim == 2:
        inputs = [ctx.name(x), ctx.name(w)] + ([ctx.name(b)] if b is not None else [])
        return one(g.op("Gemm", *inputs, transB=1))
    out = g.op("MatMul", ctx.name(x), g.op("Transpose", ctx.name(w), perm=[1, 0]))
    return one(out if b is None else g.op("Add", out, ctx.name(b)))


def _pads(padding: Any) -> list[int]:
    """lucid's per-dim (before, after) pairs as ONNX's [begins..., ends...]."""
    pairs = [(p, p) if isinstance(p, int) else tuple(p) for p in padding]
    return [int(p[0]) for p in pairs] + [int(p[1]) for p in pairs]


@converts(f"{F}conv.Convolution")
def _conv(ctx: Context, call: Call) -> list[str]:
    x, w, b, stride, padding, dilation, groups = call.args
    inputs = [ctx.name(x), ctx.name(w)] + ([ctx.name(b)] if b is not None else [])
    return one(ctx.graph.op("Conv", *inputs, strides=list(stride), pads=_pads(padding),
                            dilations=list(dilation), group=int(groups)))  # fmt: skip


@converts(f"{F}conv.ConvolutionTranspose")
def _conv_transpose(ctx: Context, call: Call) -> list[str]:
    x, w, b, stride, padding, out_pad, groups, dilation = call.args
    inputs = [ctx.name(x), ctx.name(w)] + ([ctx.name(b)] if b is not None else [])
    return one(ctx.graph.op("ConvTranspose", *inputs, strides=list(stride),
                            pads=_pads(padding), output_padding=list(out_pad),
                            dilations=list(dilation), group=int(groups)))  # fmt: skip


@converts(f"{F}pooling.MaxPool")
def _max_pool(ctx: Context, call: Call) -> list[str]:
    x, kernel, stride, padding, dilation, ceil_mode, return_indices = call.args
    if return_indices:
        raise UnsupportedOperatorError(f"{ctx.where}: max pooling with return_indices=True")
    return one(ctx.graph.op("MaxPool", ctx.name(x), kernel_shape=list(kernel),
                            strides=list(stride), pads=_pads(padding),
                            dilations=list(dilation), ceil_mode=int(ceil_mode)))  # fmt: skip


@converts(f"{F}pooling.AvgPool")
def _avg_pool(ctx: Context, call: Call) -> list[str]:
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor = call.args
    if divisor is not None:
        raise UnsupportedOperatorError(f"{ctx.where}: average pooling with divisor_override")
    return one(ctx.graph.op("AveragePool", ctx.name(x), kernel_shape=list(kernel),
                            strides=list(stride), pads=_pads(padding), ceil_mode=int(ceil_mode),
                            count_include_pad=int(count_include_pad)))  # fmt: skip


@converts(f"{F}pooling._AdaptiveMax")
def _adaptive_max(ctx: Context, call: Call) -> list[str]:
    x, out_size, return_indices = call.args
    sizes = tuple(x.shape[2:])
    if return_indices or any(s % o for s, o in zip(sizes, out_size)):
        raise UnsupportedOperatorError(
            f"{ctx.where}: adaptive max pooling from {list(sizes)} to {list(out_size)} (ONNX "
            "has it only where the output size divides the input's, without indices)"
        )
    kernel = [s // o for s, o in zip(sizes, out_size)]
    return one(ctx.graph.op("MaxPool", ctx.name(x), kernel_shape=kernel, strides=kernel))


@converts(f"{F}normalization._LayerNorm")
def _layer_norm(ctx: Context, call: Call) -> list[str]:
    x, w, b, nd, eps = call.args
    shape = tuple(x.shape[-nd:])
    dtype = dtype_of(x)
    g = ctx.graph
    scale = ctx.name(w) if w is not None else g.const(np.ones(shape, dtype))
    inputs = [ctx.name(x), scale] + ([ctx.name(b)] if b is not None else [])
    return one(g.op("LayerNormalization", *inputs, axis=-int(nd), epsilon=float(eps)))


@converts(f"{F}normalization._BatchNorm")
def _batch_norm_training(ctx: Context, call: Call) -> list[str]:
    raise UnsupportedOperatorError(
        f"{ctx.where}: batch norm with batch statistics (training mode); call model.eval() "
        "before exporting"
    )


@converts(f"{F}activation._MaskedLinear")
def _masked_linear(ctx: Context, call: Call) -> list[str]:
    x, kind, a, b = call.args
    g, name = ctx.graph, ctx.name(x)
    if kind == "leaky":
        return one(g.op("LeakyRelu", name, alpha=float(a)))
    if kind == "hardtanh":
        return one(g.op("Clip", name, ctx.scalar(a, x), ctx.scalar(b, x)))
    if kind == "threshold":
        keep = g.op("Greater", name, ctx.scalar(a, x))
        return one(g.op("Where", keep, name, ctx.scalar(b, x)))
    return one(g.op("HardSigmoid", name, alpha=1 / 6, beta=0.5))


@converts(f"{F}activation._ELU")
def _elu(ctx: Context, call: Call) -> list[str]:
    x, alpha, scale, input_scale = call.args
    g, name = ctx.graph, ctx.name(x)
    zero = ctx.scalar(0, x)
    neg = g.op("Exp", g.op("Mul", g.op("Min", name, zero), ctx.scalar(input_scale, x)))
    neg = g.op("Mul", g.op("Sub", neg, ctx.scalar(1, x)), ctx.scalar(alpha, x))
    out = g.op("Where", g.op("Greater", name, zero), name, neg)
    return one(out if scale == 1.0 else g.op("Mul", out, ctx.scalar(scale, x)))


@converts(f"{F}activation._Softplus")
def _softplus(ctx: Context, call: Call) -> list[str]:
    x, beta, threshold = call.args
    g, name = ctx.graph, ctx.name(x)
    scaled = name if beta == 1 else g.op("Mul", name, ctx.scalar(beta, x))
    soft = g.op("Softplus", scaled)
    soft = soft if beta == 1 else g.op("Div", soft, ctx.scalar(beta, x))
    linear = g.op("Greater", scaled, ctx.scalar(threshold, x))
    return one(g.op("Where", linear, name, soft))


@converts(f"{F}activation._SiLU")
def _silu(ctx: Context, call: Call) -> list[str]:
    g, name = ctx.graph, ctx.name(call.args[0])
    return one(g.op("Mul", name, g.op("Sigmoid", name)))  # as torch.onnx exports it


@converts(f"{F}activation._Mish")
def _mish(ctx: Context, call: Call) -> list[str]:
    g, name = ctx.graph, ctx.name(call.args[0])
    return one(g.op("Mul", name, g.op("Tanh", g.op("Softplus", name))))  # any opset


@converts(f"{F}activation._Hardswish")
def _hardswish(ctx: Context, call: Call) -> list[str]:
    g, name = ctx.graph, ctx.name(call.args[0])
    return one(g.op("Mul", name, g.op("HardSigmoid", name, alpha=1 / 6, beta=0.5)))


@converts(f"{F}activation._LogSigmoid")
def _log_sigmoid(ctx: Context, call: Call) -> list[str]:
    g = ctx.graph
    return one(g.op("Neg", g.op("Softplus", g.op("Neg", ctx.name(call.args[0])))))


@converts(f"{F}activation._PReLU")
def _prelu(ctx: Context, call: Call) -> list[str]:
    x, w = call.args
    return one(ctx.graph.op("PRelu", ctx.name(x), ctx.name(w)))


@converts("lucid.nn.modules.rnn._FusedLSTM")
def _fused_lstm(ctx: Context, call: Call) -> list[str]:
    """One LSTM layer and direction (lucid-nn's fused kernel) as the ops its reference
    (``_lstm_reference``) applies, unrolled over the steps: the same graph as before the
    kernel, which ``lucid.onnx.load`` runs too (ONNX's ``LSTM`` op is not in its kernels)."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse = call.args
    g = ctx.graph
    steps, hidden = int(x.shape[0]), int(w_hh.shape[1])

    def linear(a: str, w_t: str, b: Tensor | None) -> str:
        out = g.op("MatMul", a, w_t)
        return out if b is None else g.op("Add", out, ctx.name(b))

    w_ih_t, w_hh_t = (g.op("Transpose", ctx.name(w), perm=[1, 0]) for w in (w_ih, w_hh))
    proj = linear(ctx.name(x), w_ih_t, b_ih)  # every step's input projection in one MatMul
    parts = g.node("Split", [proj, g.ints([1] * steps)], steps, axis=0)
    h, c = ctx.name(h0), ctx.name(c0)
    outs: list[str] = [""] * steps
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        z = g.op("Add", g.op("Squeeze", parts[t], g.ints([0])), linear(h, w_hh_t, b_hh))
        i, f, cell, o = g.node("Split", [z, g.ints([hidden] * 4)], 4, axis=-1)
        c = g.op("Add", g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", cell)),
                 g.op("Mul", g.op("Sigmoid", f), c))  # fmt: skip
        h = g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", c))
        outs[t] = g.op("Unsqueeze", h, g.ints([0]))
    return [g.op("Concat", *outs, axis=0), h, c]


@converts("lucid.nn.modules.rnn._FusedGRU")
def _fused_gru(ctx: Context, call: Call) -> list[str]:
    """One GRU layer and direction (lucid-nn's fused kernel) as its reference's ops
    (``_cell_reference``, gate order r, z, n), unrolled over the steps, as ``_FusedLSTM``."""
    return _unrolled_cell(ctx, call, "GRU")


@converts("lucid.nn.modules.rnn._FusedRNN")
def _fused_rnn(ctx: Context, call: Call) -> list[str]:
    """One Elman RNN layer and direction (lucid-nn's fused kernel) as its reference's ops,
    unrolled over the steps, as ``_FusedLSTM``."""
    return _unrolled_cell(ctx, call, "Tanh" if call.args[6] == "tanh" else "Relu")


def _unrolled_cell(ctx: Context, call: Call, kind: str) -> list[str]:
    x, h0, w_ih, w_hh, b_ih, b_hh = call.args[:6]
    reverse = call.args[-1]
    g = ctx.graph
    steps, hidden = int(x.shape[0]), int(w_hh.shape[1])

    def linear(a: str, w_t: str, b: Tensor | None) -> str:
        out = g.op("MatMul", a, w_t)
        return out if b is None else g.op("Add", out, ctx.name(b))

    w_ih_t, w_hh_t = (g.op("Transpose", ctx.name(w), perm=[1, 0]) for w in (w_ih, w_hh))
    proj = linear(ctx.name(x), w_ih_t, b_ih)  # every step's input projection in one MatMul
    parts = g.node("Split", [proj, g.ints([1] * steps)], steps, axis=0)
    h = ctx.name(h0)
    outs: list[str] = [""] * steps
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        xt = g.op("Squeeze", parts[t], g.ints([0]))
        hh = linear(h, w_hh_t, b_hh)
        if kind == "GRU":
            xr, xz, xn = g.node("Split", [xt, g.ints([hidden] * 3)], 3, axis=-1)
            hr, hz, hn = g.node("Split", [hh, g.ints([hidden] * 3)], 3, axis=-1)
            r = g.op("Sigmoid", g.op("Add", xr, hr))
            z = g.op("Sigmoid", g.op("Add", xz, hz))
            n = g.op("Tanh", g.op("Add", xn, g.op("Mul", r, hn)))
            h = g.op("Add", n, g.op("Mul", z, g.op("Sub", h, n)))
        else:
            h = g.op(kind, g.op("Add", xt, hh))
        outs[t] = g.op("Unsqueeze", h, g.ints([0]))
    return [g.op("Concat", *outs, axis=0), h]
