"""Convolutions: conv1d/2d/3d and conv_transpose1d/2d/3d (``torch.nn.functional``).

Three differentiable ops that are each other's gradients: the convolution, its input gradient
(which is also the transposed convolution) and its weight gradient. Each op's backward is
written with the other two, so double backward (gradient penalties, gradgradcheck) works without
special cases. Their arithmetic is the backend's ``lucid.kernels.CONV_ARRAYS`` kernel (NumPy's
is chunked and threaded), else the reference im2col + GEMM in ``_im2col``.

A backend with a native convolution (MLX) may instead compute the whole public op, forward and
vector-Jacobian product, as array kernels (``kernels.CONV``, ``kernels.CONV_TRANSPOSE``; no
double backward then). The ops' ``padding`` argument is a tuple of ``(before, after)`` pairs,
one per spatial dim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid import Tensor, kernels
from lucid.amp.autocast_mode import autocast_active, lower_precision_inputs
from lucid.autograd.function import Function, quiet_array_call, records_nothing
from lucid.kernels import ConvGeometry, Ints, Pairs, conv_geometry, transpose_geometry
from lucid.nn.functional._im2col import ReferenceConv
from lucid.nn.functional._util import fused_backward, fused_forward

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]


def _arrays(ctx: Any) -> kernels.ConvArraysKernel:
    """The backend's convolution arithmetic, else the reference im2col + GEMM."""
    return kernels.CONV_ARRAYS.get(ctx.backend, ReferenceConv)


# -- the three ops -----------------------------------------------------------------------------
class _Conv(Function):
    """Cross-correlation of ``x`` with ``w`` for a given geometry."""

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, bias: Any, geom: ConvGeometry) -> Any:
        ctx.geom = geom
        ctx.save_for_backward(x, w)
        ctx.cols = {} if ctx.needs_input_grad[1] else None
        return _arrays(ctx).forward(ctx.backend, x, w, bias, geom, ctx.cols)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return (*_conv_backward(ctx, g), None)


def _conv_backward(ctx: Any, g: Tensor) -> tuple[Any, Any, Any]:
    x, w = ctx.saved_tensors
    need = ctx.needs_input_grad
    geom = ctx.geom
    if records_nothing() and not autocast_active():
        return _conv_backward_arrays(ctx, g, x, w)
    gx = _ConvInputGrad.apply(g, w, geom) if need[0] else None
    gw = _ConvWeightGrad.apply(x, g, geom, getattr(ctx, "cols", None)) if need[1] else None
    ctx.cols = None  # the forward's column matrices, used once
    gb = _ChannelSum.apply(g) if need[2] else None
    return gx, gw, gb


def _conv_backward_arrays(ctx: Any, g: Tensor, x: Tensor, w: Tensor) -> tuple[Any, Any, Any]:
    """The three gradient ops' kernel calls as their forwards make them (the same bits),
    without a ``Function.apply`` each, where no graph is built (the per-op Python of a
    training step's backward, issue 30)."""
    backend, ga, need, geom = g._backend, g._data, ctx.needs_input_grad, ctx.geom
    kernel = kernels.CONV_ARRAYS.get(backend, ReferenceConv)
    gx = gw = gb = None
    if need[0]:
        gx = quiet_array_call(backend, kernel.input_grad, backend, ga, w._data, geom)
    if need[1]:
        cols = getattr(ctx, "cols", None)
        gw = quiet_array_call(backend, kernel.weight_grad, backend, x._data, ga, geom, cols)
    ctx.cols = None  # the forward's column matrices, used once
    if need[2]:
        gb = quiet_array_call(backend, kernel.channel_sum, backend, ga)
    return gx, gw, gb


class _ConvInputGrad(Function):
    """``dy -> dx`` of a convolution with weight ``w`` (= the transposed convolution of dy)."""

    @staticmethod
    def forward(ctx: Any, dy: Any, w: Any, geom: ConvGeometry) -> Any:
        ctx.geom = geom
        ctx.save_for_backward(dy, w)
        return _arrays(ctx).input_grad(ctx.backend, dy, w, geom)

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        dy, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gdy = _Conv.apply(h, w, None, ctx.geom) if need[0] else None
        gw = _ConvWeightGrad.apply(h, dy, ctx.geom) if need[1] else None
        return gdy, gw, None


class _ConvWeightGrad(Function):
    """``(x, dy) -> dw`` of a convolution."""

    @staticmethod
    def forward(ctx: Any, x: Any, dy: Any, geom: ConvGeometry, cols: Any = None) -> Any:
        ctx.geom = geom
        ctx.save_for_backward(x, dy)
        return _arrays(ctx).weight_grad(ctx.backend, x, dy, geom, cols)

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        x, dy = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = _ConvInputGrad.apply(dy, h, ctx.geom) if need[0] else None
        gdy = _Conv.apply(x, h, None, ctx.geom) if need[1] else None
        return gx, gdy, None, None


class _ChannelSum(Function):
    """Sum over all dims but dim 1 (the bias gradient)."""

    @staticmethod
    def forward(ctx: Any, g: Any) -> Any:
        ctx.shape = g.shape
        return _arrays(ctx).channel_sum(ctx.backend, g)

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        shape = ctx.shape
        return h.reshape((1, shape[1]) + (1,) * (len(shape) - 2)).expand(shape)


# -- public ops (a backend may compute them whole: kernels.CONV, kernels.CONV_TRANSPOSE) ---------
class Convolution(Function):
    """``forward(ctx, x, weight, bias, stride, padding_pairs, dilation, groups)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs, dilation: Ints,
                groups: int) -> Any:  # fmt: skip
        y = fused_forward(ctx, kernels.CONV, x, w, bias, stride, padding, dilation, groups)
        if y is not None:
            return y
        geom = conv_geometry(x.shape[2:], w.shape[2:], stride, padding, dilation, groups)
        return _Conv.forward(ctx, x, w, bias, geom)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if ctx.fused is not None:
            return fused_backward(ctx, g)
        return (*_conv_backward(ctx, g), None, None, None, None)


class ConvolutionTranspose(Function):
    """``forward(ctx, x, weight, bias, stride, padding_pairs, output_padding, groups,
    dilation)``."""

    _node_name = "ConvolutionBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, bias: Any, stride: Ints, padding: Pairs, out_pad: Ints,
                groups: int, dilation: Ints) -> Any:  # fmt: skip
        y = fused_forward(ctx, kernels.CONV_TRANSPOSE, x, w, bias, stride, padding, out_pad,
                          groups, dilation)  # fmt: skip
        if y is not None:
            return y
        geom = transpose_geometry(x.shape[2:], w.shape[2:], stride, padding, out_pad, dilation,
                                  groups)  # fmt: skip
        ctx.geom = geom
        ctx.save_for_backward(x, w)
        out = _arrays(ctx).input_grad(ctx.backend, x, w, geom)
        if bias is not None:
            out = out + ctx.xp.reshape(bias, (-1,) + (1,) * len(geom.kernel))
        return out

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        if ctx.fused is not None:
            return fused_backward(ctx, h)
        x, w = ctx.saved_tensors
        need = ctx.needs_input_grad
        gx = _Conv.apply(h, w, None, ctx.geom) if need[0] else None
        gw = _ConvWeightGrad.apply(h, x, ctx.geom) if need[1] else None
        gb = _ChannelSum.apply(h) if need[2] else None
        return gx, gw, gb, None, None, None, None, None


# -- argument handling --------------------------------------------------------------------------
def int_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``value`` (an int, or 1 or ``n`` ints) as ``n`` ints; ``name`` is for the error."""
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise ValueError(f"expected {name} to be a single integer or a list of {n} integers, "
                         f"got {list(out)}")  # fmt: skip
    return out


def _padding_pairs(
    padding: Any, n: int, kernel: Sequence[int], stride: tuple[int, ...], dilation: tuple[int, ...]
) -> Pairs:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")  # fmt: skip
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pads = int_tuple(padding, n, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pads)


def _inputs(
    name: str, x: Tensor, w: Tensor, bias: Tensor | None, nd: int
) -> tuple[Tensor, Tensor, Tensor | None, bool]:
    """Both ops' tensors as autocast gives them, checked, ``x`` with a batch dim; and whether
    ``x`` came batched."""
    x, w, bias = lower_precision_inputs(x, w, bias)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x.shape)}")  # fmt: skip
    if w.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 2}-dimensional weight for {name}, but got "
                           f"{w.ndim}-dimensional weight of size {list(w.shape)}")  # fmt: skip
    if x.dtype is not w.dtype:
        raise RuntimeError(f"{name}: input type ({x.dtype.name}) and weight type "
                           f"({w.dtype.name}) should be the same")  # fmt: skip
    if bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(f"{name}: input type ({x.dtype.name}) and bias type "
                           f"({bias.dtype.name}) should be the same")  # fmt: skip
    batched = x.ndim == nd + 2
    return (x if batched else x.unsqueeze(0)), w, bias, batched


def _check_sizes(
    name: str, x_shape: tuple[int, ...], kernel: Sequence[int], geom_in: tuple[int, ...],
    padding: Pairs, dilation: tuple[int, ...], stride: tuple[int, ...]
) -> None:  # fmt: skip
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    padded = [i + a + b for i, (a, b) in zip(geom_in, padding)]
    window = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(w > p for w, p in zip(window, padded)):
        raise RuntimeError(
            f"{name}: calculated padded input size per channel: ({' x '.join(map(str, padded))})"
            f". Kernel size: ({' x '.join(map(str, window))}). Kernel size can't be greater than "
            f"actual input size (input of size {list(x_shape)})"
        )


def _conv(
    nd: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    dilation: Any, groups: int
) -> Tensor:  # fmt: skip
    name = f"conv{nd}d"
    x, weight, bias, batched = _inputs(name, x, weight, bias, nd)
    st = int_tuple(stride, nd, "stride")
    dil = int_tuple(dilation, nd, "dilation")
    kernel = weight.shape[2:]
    pads = _padding_pairs(padding, nd, kernel, st, dil)
    cout, cg = weight.shape[0], weight.shape[1]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if cout % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {list(weight.shape)} "
                           "instead")  # fmt: skip
    if x.shape[1] != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {cg * groups} channels, but got "
                           f"{x.shape[1]} channels instead")  # fmt: skip
    if bias is not None and tuple(bias.shape) != (cout,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-D "
                           f"with {cout} elements, but got bias of size {list(bias.shape)} "
                           "instead")  # fmt: skip
    _check_sizes(name, x.shape, kernel, x.shape[2:], pads, dil, st)
    out: Tensor = Convolution.apply(x, weight, bias, st, pads, dil, int(groups))
    return out if batched else out.squeeze(0)


def _conv_transpose(
    nd: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    output_padding: Any, groups: int, dilation: Any
) -> Tensor:  # fmt: skip
    name = f"conv_transpose{nd}d"
    x, weight, bias, batched = _inputs(name, x, weight, bias, nd)
    st = int_tuple(stride, nd, "stride")
    dil = int_tuple(dilation, nd, "dilation")
    opad = int_tuple(output_padding, nd, "output_padding")
    if isinstance(padding, str):
        raise ValueError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
    pads = _padding_pairs(padding, nd, weight.shape[2:], st, dil)
    cin, coutg = weight.shape[0], weight.shape[1]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if x.shape[1] != cin or cin % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {cin} channels, but got {x.shape[1]} "
                           f"channels instead")  # fmt: skip
    if bias is not None and tuple(bias.shape) != (coutg * groups,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"bias to be 1-D with {coutg * groups} elements, but got bias of size "
                           f"{list(bias.shape)} instead")  # fmt: skip
    if any(op >= max(s, d) or op < 0 for op, s, d in zip(opad, st, dil)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={list(opad)}, stride={list(st)}, "
                           f"dilation={list(dil)}")  # fmt: skip
    if any(s <= 0 for s in st):
        raise RuntimeError("non-positive stride is not supported")
    geom = transpose_geometry(x.shape[2:], weight.shape[2:], st, pads, opad, dil, groups)
    if any(o <= 0 for o in geom.in_size):
        raise RuntimeError(f"{name}: given input size {list(x.shape)}, the calculated output "
                           f"size {list(geom.in_size)} is too small")  # fmt: skip
    out: Tensor = ConvolutionTranspose.apply(x, weight, bias, st, pads, opad, int(groups), dil)
    return out if batched else out.squeeze(0)


# -- public functions ---------------------------------------------------------------------------
def conv1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1
) -> Tensor:  # fmt: skip
    """1-D cross-correlation over ``(N, C, L)`` (or unbatched ``(C, L)``), as torch's."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1
) -> Tensor:  # fmt: skip
    """2-D cross-correlation over ``(N, C, H, W)`` (or unbatched ``(C, H, W)``), as torch's.

    ``padding`` is an int, a pair, ``"valid"`` or ``"same"`` (stride 1 only).

    >>> x = lucid.randn(8, 3, 32, 32)
    >>> w = lucid.randn(16, 3, 3, 3)
    >>> conv2d(x, w, padding=1).shape
    (8, 16, 32, 32)
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, dilation: Any = 1, groups: int = 1
) -> Tensor:  # fmt: skip
    """3-D cross-correlation over ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``)."""
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1
) -> Tensor:  # fmt: skip
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, k)``."""
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


def conv_transpose2d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1
) -> Tensor:  # fmt: skip
    """2-D transposed convolution (the gradient of conv2d w.r.t. its input), as torch's.

    >>> x = lucid.randn(1, 4, 5, 5)
    >>> w = lucid.randn(4, 2, 3, 3)
    >>> conv_transpose2d(x, w, stride=2, padding=1, output_padding=1).shape
    (1, 2, 10, 10)
    """
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip


def conv_transpose3d(
    input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1
) -> Tensor:  # fmt: skip
    """3-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``."""
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)  # fmt: skip
