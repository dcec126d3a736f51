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

import math
import operator
from collections.abc import Sequence
from typing import Any

import lucid
from lucid import Tensor, kernels
from lucid.amp.autocast_mode import autocast_active, lower_precision_inputs
from lucid.autograd.function import Function, quiet_array_call, records_nothing
from lucid.kernels import ConvGeometry, Ints, Pairs, conv_geometry, transpose_geometry
from lucid.nn.functional._im2col import ReferenceConv
from lucid.nn.functional._util import (
    check_tensor,
    fused_backward,
    fused_forward,
    int_list,
    trunc_div,
)
from lucid.ops.shape import index_int

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


# -- argument handling: ATen's checks, in its order and words ------------------------------------
def int_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """``value`` (an int, or 1 or ``n`` ints) as ``n`` ints; ``name`` is for the error."""
    one = index_int(value)
    if one is not None:
        return (one,) * n
    out = tuple(int(v) for v in value)
    if len(out) == 1:
        return out * n
    if len(out) != n:
        raise ValueError(f"expected {name} to be a single integer or a list of {n} integers, "
                         f"got {list(out)}")  # fmt: skip
    return out


Shape = tuple[int, ...]

# dtypes as ATen's "Input type (float) and bias type (double)" message names them
_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                 "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
                 "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                 "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}  # fmt: skip


def _scalar_name(dtype: Any) -> str:
    name = str(dtype).rsplit(".", 1)[-1]
    return _SCALAR_NAMES.get(name, name)


def _batchify(name: str, nd: int, x: Tensor) -> bool:
    """ATen's ``batchify``: whether ``x`` has a batch dim (else it gets one)."""
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x.shape)}")  # fmt: skip
    return x.ndim == nd + 2


def _expand_param(values: Sequence[int], name: str, dim: int) -> tuple[int, ...]:
    """ATen's ``expand_param_if_needed`` (``dim``: the weight's spatial dims)."""
    if len(values) == 1:
        return tuple(values) * dim
    if len(values) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           "values to match the convolution dimensions, but got "
                           f"{name}={list(values)}")  # fmt: skip
    return tuple(values)


def _check_shape_forward(
    shape: Shape, ws: Shape, bias: Tensor | None, groups: int, padding: Ints, out_pad: Ints,
    stride: Ints, dilation: Ints, transposed: bool
) -> None:  # fmt: skip
    """ATen's ``check_shape_forward`` (``shape``: the input's, batched)."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in out_pad):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    k, wd = len(shape), len(ws)
    if wd != k:
        raise RuntimeError(f"Expected {wd}-dimensional input for {wd}-dimensional weight "
                           f"{list(ws)}, but got {k}-dimensional input of size {list(shape)} "
                           "instead")  # fmt: skip
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {list(ws)} instead")  # fmt: skip
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(ws)}] "
                           "instead")  # fmt: skip
    bias_shape = None if bias is None else tuple(bias.shape)
    if not transposed:
        if shape[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected "
                               f"input{list(shape)} to have {ws[1] * groups} channels, but got "
                               f"{shape[1]} channels instead")  # fmt: skip
        if bias_shape is not None and bias_shape != (ws[0],):
            raise RuntimeError(f"Given weight of size {list(ws)}, expected bias to be "
                               f"1-dimensional with {ws[0]} elements, but got bias of size "
                               f"{list(bias_shape)} instead")  # fmt: skip
        padded = [shape[i] + 2 * padding[i - 2] for i in range(2, k)]
        window = [dilation[i - 2] * (ws[i] - 1) + 1 for i in range(2, k)]
        if any(p < w for p, w in zip(padded, window)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(map(str, padded))}). Kernel size: "
                               f"({' x '.join(map(str, window))}). Kernel size can't be greater "
                               "than actual input size")  # fmt: skip
    else:
        if shape[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected "
                               f"input{list(shape)} to have {ws[0]} channels, but got "
                               f"{shape[1]} channels instead")  # fmt: skip
        if bias_shape is not None and bias_shape != (ws[1] * groups,):
            raise RuntimeError(f"Given transposed=1, weight of size {list(ws)}, expected bias to "
                               f"be 1-dimensional with {ws[1] * groups} elements, but got bias "
                               f"of size {list(bias_shape)} instead")  # fmt: skip


def _convolution_checks(
    shape: Shape, w: Tensor, bias: Tensor | None, stride: Sequence[int],
    padding: Sequence[int], dilation: Sequence[int], transposed: bool,
    out_pad: Sequence[int], groups: int
) -> tuple[Ints, Ints, Ints, Ints]:  # fmt: skip
    """ATen's ``_convolution`` up to its choice of backend (``shape``: the input's, batched):
    stride, padding, dilation and output_padding expanded to the weight's spatial dims."""
    dim = w.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    st = _expand_param(stride, "stride", dim)
    pad = _expand_param(padding, "padding", dim)
    dil = _expand_param(dilation, "dilation", dim)
    opad = _expand_param(out_pad, "output_padding", dim)
    _check_shape_forward(shape, w.shape, bias, groups, pad, opad, st, dil, transposed)
    if (shape[0] == 0 or shape[1] == 0) or math.prod(shape) != 0:
        return st, pad, dil, opad
    view = shape if len(shape) != 3 else (shape[0], shape[1], 1, shape[2])  # 1-d runs as 2-d
    raise RuntimeError("Only zero batch or zero channel inputs are supported, but got input "
                       f"shape: {list(view)}")  # fmt: skip


def _same_padding(
    shape: Shape, w: Tensor, stride: Sequence[int], dilation: Sequence[int], groups: int
) -> tuple[Shape, list[int], Pairs]:
    """ATen's ``_convolution_same_mode``: its checks, the input shape and padding its
    convolution sees (an uneven padding is an input padded on one side first) and the
    ``(before, after)`` padding of each spatial dim."""
    k = w.ndim
    if k <= 2:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if k != len(shape):
        raise RuntimeError(f"Expected {k}-dimensional input for {k}-dimensional weight"
                           f"{list(w.shape)}, but got {len(shape)}-dimensional input of size "
                           f"{list(shape)} instead")  # fmt: skip
    dim = k - 2
    if len(stride) not in (dim, 1):
        raise RuntimeError(f"stride cannot broadcast to {dim} dimensions")
    if len(dilation) not in (dim, 1):
        raise RuntimeError(f"dilation cannot broadcast to {dim} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    seen, lefts, pairs = list(shape), [], []
    for i in range(dim):
        d = dilation[0] if len(dilation) == 1 else dilation[i]
        total = d * (w.shape[i + 2] - 1)
        left = trunc_div(total, 2)
        right = total - left
        pairs.append((left, right))
        seen[i + 2] += right - left  # one side's padding (or cropping) first
        lefts.append(left)
    return tuple(seen), lefts, tuple(pairs)


def _check_tensors(name: str, x: Any, w: Any, bias: Any) -> None:
    check_tensor(name, x)
    check_tensor(name, w, "weight", 2)
    if bias is not None:
        check_tensor(name, bias, "bias", 3)


def _check_kernel(w: Tensor, x: Tensor, dil: Ints) -> None:
    """The backends' checks torch makes where the input is not empty (its wording varies with
    the backend)."""
    if x.shape[0] == 0 or x.shape[1] == 0:
        return
    kernel = w.shape[2:] if w.ndim != 3 else (1, w.shape[2])  # 1-d runs as 2-d
    if any(k <= 0 for k in kernel):
        got = (f"kernel_height: {kernel[0]} kernel_width: {kernel[1]}" if len(kernel) == 2
               else f": {' x '.join(map(str, kernel))} (TxHxW)")  # fmt: skip
        raise RuntimeError(f"kernel size should be greater than zero, but got {got}")
    if any(d <= 0 for d in dil):
        raise RuntimeError("non-positive dilation is not supported")


_TENSOR_TYPES = {"float32": "Float", "float64": "Double", "float16": "Half",
                 "bfloat16": "BFloat16"}  # fmt: skip


def _check_types(x: Tensor, w: Tensor, bias: Tensor | None = None) -> None:
    """The input's, weight's (and bias's) dtypes are the same (torch's words are its CPU
    backends')."""
    for what, t in (("weight", w), ("bias", bias)):
        if t is None or t.dtype is x.dtype:
            continue
        xn, tn = (str(a.dtype).rsplit(".", 1)[-1] for a in (x, t))
        xn, tn = _TENSOR_TYPES.get(xn, xn), _TENSOR_TYPES.get(tn, tn)
        if x.dtype is lucid.float32:  # the oneDNN backend's words
            raise RuntimeError(f"Input type (torch.{xn}Tensor) and {what} type (torch.{tn}Tensor)"
                               f" should be the same or input should be a MKLDNN tensor and "
                               f"{what} is a dense tensor")  # fmt: skip
        raise RuntimeError(f"expected scalar type {xn} but found {tn}")


def _transpose_backend_checks(
    x: Tensor, w: Tensor, bias: Tensor | None, stride: Ints, dil: Ints, out_pad: Ints,
    out_size: Ints
) -> None:  # fmt: skip
    """The checks of torch's CPU transposed convolutions (``slow_conv_transpose2d/3d``'s
    words; a 1-d one runs as 2-d), for a non-empty input."""
    _check_kernel(w, x, (1,) * len(dil))
    names = ("depth", "height", "width") if len(dil) == 3 else ("height", "width")
    if len(dil) == 1:
        stride, dil, out_pad = (1, *stride), (1, *dil), (0, *out_pad)
        out_size, in_size = (1, *out_size), (1, *x.shape[2:])
    else:
        in_size = x.shape[2:]
    if any(d <= 0 for d in dil):
        got = ", ".join(f"dilation_{n}: {d}" for n, d in zip(names, dil))
        raise RuntimeError(f"dilation should be greater than zero, but got {got}")
    if any(op >= s and op >= d for op, s, d in zip(out_pad, stride, dil)):
        got = " ".join(
            f"{what}_{n}: {v}"
            for what, values in (
                ("output_padding", out_pad),
                ("stride", stride),
                ("dilation", dil),
            )  # fmt: skip
            for n, v in zip(names, values)
        )
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                           f"but got {got}")  # fmt: skip
    _check_types(x, w, bias)
    low = 0 if x.dtype is lucid.float32 else 1  # oneDNN's (float32) takes an empty output
    if any(o < low for o in out_size):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, in_size))}). "
                           "Calculated output size per channel: "
                           f"({' x '.join(map(str, out_size))}). Output size is too "
                           "small")  # fmt: skip


def _conv(
    nd: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    dilation: Any, groups: int
) -> Tensor:  # fmt: skip
    name = f"conv{nd}d"
    _check_tensors(name, x, weight, bias)
    x, weight, bias = lower_precision_inputs(x, weight, bias)
    st_in = int_list(name, stride, "stride", nd)
    dil_in = int_list(name, dilation, "dilation", nd)
    groups = operator.index(groups)
    if isinstance(padding, str):
        batched = _batchify(name, nd, x)
        shape = x.shape if batched else (1, *x.shape)
        if padding == "same":
            shape, pad_in, pairs = _same_padding(shape, weight, st_in, dil_in, groups)
            opad_in = [0] * max(weight.ndim - 2, 1)
        elif padding == "valid":
            pad_in, opad_in, pairs = [0], [0], ((0, 0),) * nd
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pad_in = int_list(name, padding, "padding", nd)
        if bias is not None and bias.dtype is not x.dtype:
            raise RuntimeError(f"Input type ({_scalar_name(x.dtype)}) and bias type "
                               f"({_scalar_name(bias.dtype)}) should be the same")  # fmt: skip
        batched = _batchify(name, nd, x)
        shape = x.shape if batched else (1, *x.shape)
        opad_in, pairs = [0] * nd, ()
    st, pad, dil, _ = _convolution_checks(shape, weight, bias, st_in, pad_in, dil_in, False,
                                          opad_in, groups)  # fmt: skip
    x = x if batched else x.unsqueeze(0)
    _check_kernel(weight, x, dil)
    _check_types(x, weight)
    pads = pairs or tuple((p, p) for p in pad)
    out: Tensor = Convolution.apply(x, weight, bias, st, pads, dil, int(groups))
    return out if batched else out.squeeze(0)


def _conv_transpose(
    nd: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    output_padding: Any, groups: int, dilation: Any
) -> Tensor:  # fmt: skip
    name = f"conv_transpose{nd}d"
    _check_tensors(name, x, weight, bias)
    x, weight, bias = lower_precision_inputs(x, weight, bias)
    st_in = int_list(name, stride, "stride", nd)
    pad_in = int_list(name, padding, "padding", nd)
    opad_in = int_list(name, output_padding, "output_padding", nd)
    dil_in = int_list(name, dilation, "dilation", nd)
    groups = operator.index(groups)
    batched = _batchify(name, nd, x)
    shape = x.shape if batched else (1, *x.shape)
    st, pad, dil, opad = _convolution_checks(shape, weight, bias, st_in, pad_in, dil_in, True,
                                             opad_in, groups)  # fmt: skip
    x = x if batched else x.unsqueeze(0)
    pads = tuple((p, p) for p in pad)
    geom = transpose_geometry(x.shape[2:], weight.shape[2:], st, pads, opad, dil, groups)
    if x.shape[0] and x.shape[1]:  # torch's backends' checks (none for an empty input)
        _transpose_backend_checks(x, weight, bias, st, dil, opad, geom.in_size)
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
