"""Pooling: max/avg pool 1d/2d/3d, adaptive avg/max pool, lp pool, fractional max pool
(``torch.nn.functional``).

Pooling works on strided views of the padded input, one per kernel tap (a basic slice, no
copy): max pooling keeps a running maximum and the winning tap, average pooling a running sum.
The loops are over kernel taps (4 for a 2x2 pool), never over pixels. Each op's backward is a
Function whose own backward is the op again (both are linear in the gradient), so double
backward works.

A backend may compute the public ops whole, forward and vector-Jacobian product, as array
kernels (``kernels.MAX_POOL``, ``kernels.AVG_POOL``: MLX does); the geometry is core's
``lucid.kernels.pool_geometry``. Max
pooling's arithmetic (the windows' max and winning tap, the gradient's scatter) is the backend's
``kernels.MAX_POOL_ARRAYS`` (NumPy compiles the 2-D case where numba is installed), core's
``kernels.MaxPoolArrays`` by default.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, kernels
from lucid.amp.autocast_mode import autocast_active
from lucid.autograd.function import Function, quiet_array_call, records_nothing
from lucid.kernels import (
    ConvGeometry,
    Ints,
    avg_pool_divisor,
    pad_planes,
    pool_geometry,
    scatter_taps,
)
from lucid.nn.functional._util import fused_backward, fused_forward
from lucid.nn.functional.conv import int_tuple

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "lp_pool1d",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

_ALL = (slice(None), slice(None))


# -- array helpers -------------------------------------------------------------------------------
def _crop(g: ConvGeometry) -> tuple[slice, ...]:
    return (*_ALL, *g.crop())


# -- max pooling ---------------------------------------------------------------------------------
def _flat_indices(xp: Any, idx: Any, g: ConvGeometry) -> Any:
    """Tap numbers -> flat positions in each input plane (PyTorch's return_indices)."""
    coords = list(zip(*g.all_taps())) if g.taps else [()] * g.nd
    flat = None
    plane = 1
    for a in reversed(range(g.nd)):
        base = xp.arange(g.out_size[a]) * g.stride[a] - g.pad_lo[a]
        base = xp.reshape(base, (-1,) + (1,) * (g.nd - 1 - a))
        table = xp.asarray(coords[a], dtype=xp.int64) * g.dilation[a]
        pos = (base + xp.take(table, idx)) * plane
        flat = pos if flat is None else flat + pos
        plane *= g.in_size[a]
    return flat


def _max_arrays(ctx: Any) -> kernels.MaxPoolArraysKernel:
    """The backend's array-level max pool (NumPy: compiled 2-D loops where numba is installed),
    else core's plain array code."""
    return kernels.MAX_POOL_ARRAYS.get(ctx.backend, kernels.MaxPoolArrays)


class _MaxPoolGrad(Function):
    """``g -> dx``: each output's gradient goes to the input position that won its window."""

    @staticmethod
    def forward(ctx: Any, g: Any, idx: Any, geom: ConvGeometry, shape: tuple[int, ...]) -> Any:
        ctx.idx, ctx.geom = idx, geom
        return _max_arrays(ctx).scatter(ctx.backend, g, idx, shape, geom)

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        return _MaxPoolGather.apply(h, ctx.idx, ctx.geom), None, None, None


class _MaxPoolGather(Function):
    """``h -> h at each window's winning position`` (the adjoint of ``_MaxPoolGrad``)."""

    @staticmethod
    def forward(ctx: Any, h: Any, idx: Any, geom: ConvGeometry) -> Any:
        ctx.idx, ctx.geom, ctx.shape = idx, geom, h.shape
        xp = ctx.xp
        hpad = pad_planes(xp, h, geom, 0.0)
        out = xp.zeros(idx.shape, dtype=h.dtype)
        for t, tap in enumerate(geom.all_taps()):
            out = xp.where(idx == t, hpad[_ALL + geom.tap_slices(tap)], out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return _MaxPoolGrad.apply(g, ctx.idx, ctx.geom, ctx.shape), None, None


class MaxPool(Function):
    """``forward(ctx, x, kernel, stride, padding, dilation, ceil_mode, return_indices)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, dilation: Ints,
                ceil_mode: bool, return_indices: bool) -> Any:  # fmt: skip
        y = fused_forward(ctx, kernels.MAX_POOL, x, kernel, stride, padding, dilation,
                          ceil_mode, return_indices)  # fmt: skip
        if y is not None:
            return y
        g = pool_geometry(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
        want = return_indices or ctx.needs_input_grad[0]
        out, idx = _max_arrays(ctx).forward(ctx.backend, x, g, want)
        ctx.idx, ctx.geom, ctx.shape = idx, g, x.shape
        if not return_indices:
            return out
        flat = _flat_indices(ctx.xp, idx, g)
        ctx.mark_non_differentiable(flat)
        return out, flat

    @staticmethod
    def backward(ctx: Any, g: Tensor, *_: Any) -> Any:
        if ctx.fused is not None:
            return fused_backward(ctx, g)
        if records_nothing() and not autocast_active():  # _MaxPoolGrad's kernel call, without
            backend = g._backend  # its Function.apply (no graph to build, issue 30)
            kernel = kernels.MAX_POOL_ARRAYS.get(backend, kernels.MaxPoolArrays)
            gx = quiet_array_call(backend, kernel.scatter, backend, g._data, ctx.idx, ctx.shape,
                                  ctx.geom)  # fmt: skip
        else:
            gx = _MaxPoolGrad.apply(g, ctx.idx, ctx.geom, ctx.shape)
        return gx, None, None, None, None, None, None


# -- average pooling -----------------------------------------------------------------------------
def _inv_divisor(
    xp: Any, g: ConvGeometry, count_include_pad: bool, override: Any, dtype: Any
) -> Any:
    """1 / (elements averaged) for each output position, PyTorch's rule (broadcastable)."""
    if override:
        return xp.asarray(1.0 / override, dtype=dtype)
    return avg_pool_divisor(xp, g, count_include_pad, dtype)


class _AvgPoolGrad(Function):
    """``g -> dx`` of average pooling (each input gets its windows' scaled gradients)."""

    @staticmethod
    def forward(ctx: Any, g: Any, inv: Any, geom: ConvGeometry, shape: tuple[int, ...]) -> Any:
        ctx.inv, ctx.geom = inv, geom
        scaled = g * inv
        return scatter_taps(ctx.xp, lambda t: scaled, shape, geom, g.dtype)

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        return _AvgPoolSum.apply(h, ctx.inv, ctx.geom), None, None, None


class _AvgPoolSum(Function):
    """Windowed sums times ``inv`` (average pooling for a given geometry and divisor)."""

    @staticmethod
    def forward(ctx: Any, x: Any, inv: Any, geom: ConvGeometry) -> Any:
        ctx.inv, ctx.geom, ctx.shape = inv, geom, x.shape
        return _avg_forward(ctx.backend, x, inv, geom)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return _AvgPoolGrad.apply(g, ctx.inv, ctx.geom, ctx.shape), None, None


def _avg_forward(backend: Any, x: Any, inv: Any, g: ConvGeometry) -> Any:
    xpad = pad_planes(backend.xp, x, g, 0.0)
    total: Any = None
    for tap in g.all_taps():
        v = xpad[_ALL + g.tap_slices(tap)]
        if total is None:
            total = backend.copy(v)
        else:
            total += v
    return total * inv


class AvgPool(Function):
    """``forward(ctx, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)``."""

    @staticmethod
    def forward(ctx: Any, x: Any, kernel: Ints, stride: Ints, padding: Ints, ceil_mode: bool,
                count_include_pad: bool, divisor_override: Any) -> Any:  # fmt: skip
        y = fused_forward(ctx, kernels.AVG_POOL, x, kernel, stride, padding, ceil_mode,
                          count_include_pad, divisor_override)  # fmt: skip
        if y is not None:
            return y
        ones = (1,) * len(kernel)
        g = pool_geometry(x.shape[2:], kernel, stride, padding, ones, ceil_mode)
        inv = _inv_divisor(ctx.xp, g, count_include_pad, divisor_override, x.dtype)
        ctx.inv, ctx.geom, ctx.shape = inv, g, x.shape
        return _avg_forward(ctx.backend, x, inv, g)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if ctx.fused is not None:
            return fused_backward(ctx, g)
        gx = _AvgPoolGrad.apply(g, ctx.inv, ctx.geom, ctx.shape)
        return gx, None, None, None, None, None, None


# -- geometry and arguments ----------------------------------------------------------------------
def _prepare(
    name: str, x: Tensor, nd: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any
) -> tuple[Tensor, bool, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for "
                           f"input, but got input of size: {list(x.shape)}")  # fmt: skip
    batched = x.ndim == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    k = int_tuple(kernel_size, nd, "kernel_size")
    s = (
        k
        if stride is None or (not isinstance(stride, int) and len(stride) == 0)
        else int_tuple(stride, nd, "stride")
    )
    p = int_tuple(padding, nd, "padding")
    d = int_tuple(dilation, nd, "dilation")
    if any(v <= 0 for v in k + s + d):
        raise RuntimeError(f"{name}: kernel_size, stride and dilation must be greater than zero, "
                           f"got kernel_size={list(k)}, stride={list(s)}, "
                           f"dilation={list(d)}")  # fmt: skip
    if any(pi < 0 or 2 * pi > di * (ki - 1) + 1 for pi, ki, di in zip(p, k, d)):
        raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, but "
                           f"got pad={list(p)}, kernel_size={list(k)} and "
                           f"dilation={list(d)}")  # fmt: skip
    return x, batched, k, s, p, d


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool", "float16": "Half"}  # fmt: skip


def _torch_name(dtype: Any) -> str:
    """The dtype as torch's "not implemented for 'Long'" messages name it."""
    name = str(dtype).rsplit(".", 1)[-1]
    return f"'{_TORCH_NAMES.get(name, name)}'"


def _check_out(name: str, x: Tensor, g: ConvGeometry) -> None:
    if any(o <= 0 for o in g.out_size):
        raise RuntimeError(f"{name}: given input size {list(x.shape)}, the calculated output size "
                           f"{list(g.out_size)} is too small")  # fmt: skip


def _max_pool(
    nd: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
    ceil_mode: bool, return_indices: bool
) -> Any:  # fmt: skip
    name = f"max_pool{nd}d"
    given = list(x.shape) if isinstance(x, Tensor) else None
    x, batched, k, s, p, d = _prepare(name, x, nd, kernel_size, stride, padding, dilation)
    if 0 in x.shape[1:]:  # only the batch dim may be empty
        if nd == 3:
            raise RuntimeError(
                f"max_pool3d: Expected input's non-batch dimensions to have positive length, "
                f"but input has a shape of {given}"
            )
        raise RuntimeError(
            f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got: {given}"
        )
    if x.dtype == lucid.bool or x.dtype.is_complex or (nd == 1 and not x.dtype.is_floating_point):
        kernel = "max_pool1d_impl" if nd == 1 else name  # torch's kernel names
        raise NotImplementedError(f'"{kernel}" not implemented for {_torch_name(x.dtype)}')
    _check_out(name, x, pool_geometry(x.shape[2:], k, s, p, d, ceil_mode))
    out = MaxPool.apply(x, k, s, p, d, bool(ceil_mode), bool(return_indices))
    if batched:
        return out
    if return_indices:
        return out[0].squeeze(0), out[1].squeeze(0)
    return out.squeeze(0)


def _avg_pool(
    nd: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
    count_include_pad: bool, divisor_override: Any
) -> Tensor:  # fmt: skip
    name = f"avg_pool{nd}d"
    x, batched, k, s, p, _ = _prepare(name, x, nd, kernel_size, stride, padding, 1)
    if x.dtype is lucid.int64:  # torch's CPU kernel: int64 sums divided, truncated to 0
        wide = _avg_pool(nd, x.to(lucid.float64), k, s, p, ceil_mode, count_include_pad,
                         divisor_override)  # fmt: skip
        result: Tensor = wide.trunc().to(lucid.int64)
        return result if batched else result.squeeze(0)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"avg_pool2d" not implemented for {_torch_name(x.dtype)}')
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_out(name, x, pool_geometry(x.shape[2:], k, s, p, (1,) * nd, ceil_mode))
    out: Tensor = AvgPool.apply(
        x, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override
    )
    return out if batched else out.squeeze(0)


# -- public: max / avg ---------------------------------------------------------------------------
def max_pool1d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> Any:  # fmt: skip
    """1-D max pooling over ``(N, C, L)``; with ``return_indices`` also the argmax positions."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> Any:  # fmt: skip
    """2-D max pooling over ``(N, C, H, W)`` (stride defaults to the kernel size), as torch's.

    >>> max_pool2d(lucid.randn(1, 3, 8, 8), 2).shape
    (1, 3, 4, 4)
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> Any:  # fmt: skip
    """3-D max pooling over ``(N, C, D, H, W)``."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``max_pool1d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _max_pool(1, input, kernel_size, stride, padding, dilation,
                                           ceil_mode, True)  # fmt: skip
    return out


def max_pool2d_with_indices(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``max_pool2d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _max_pool(2, input, kernel_size, stride, padding, dilation,
                                           ceil_mode, True)  # fmt: skip
    return out


def max_pool3d_with_indices(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
    ceil_mode: bool = False, return_indices: bool = False
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``max_pool3d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _max_pool(3, input, kernel_size, stride, padding, dilation,
                                           ceil_mode, True)  # fmt: skip
    return out


def avg_pool1d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True
) -> Tensor:  # fmt: skip
    """1-D average pooling over ``(N, C, L)``."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None
) -> Tensor:  # fmt: skip
    """2-D average pooling over ``(N, C, H, W)``, PyTorch's divisor rules.

    >>> avg_pool2d(lucid.ones(1, 1, 4, 4), 2).sum().item()
    4.0
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip


def avg_pool3d(
    input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None
) -> Tensor:  # fmt: skip
    """3-D average pooling over ``(N, C, D, H, W)``."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip


# -- max unpooling ------------------------------------------------------------------------------
def _unpool_output_size(
    x: Tensor, kernel: Ints, stride: Ints, padding: Ints, output_size: Any
) -> tuple[int, ...]:
    """torch's rule: ``(in - 1) * stride - 2 * padding + kernel``, or ``output_size`` when it
    is within one stride of that."""
    nd = len(kernel)
    default = tuple(
        (x.shape[x.ndim - nd + a] - 1) * stride[a] + kernel[a] - 2 * padding[a] for a in range(nd)
    )
    if output_size is None:
        return default
    sizes = tuple(int(v) for v in output_size)
    if len(sizes) == nd + 2:
        sizes = sizes[2:]
    if len(sizes) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, "
                         f"but it has a length of '{len(sizes)}'")  # fmt: skip
    for a in range(nd):
        low, high = default[a] - stride[a], default[a] + stride[a]
        if not low < sizes[a] < high:
            raise ValueError(f'invalid output_size "{sizes}" (dim {a} must be between {low} and '
                             f"{high})")  # fmt: skip
    return sizes


def _check_unpool_indices(x: Tensor, indices: Any, out: tuple[int, ...]) -> None:
    if not isinstance(indices, Tensor) or indices.dtype != lucid.int64:
        got = indices.dtype.name if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"elements in indices should be type int64 but got: {got}")
    if indices.shape != x.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")  # fmt: skip
    if indices.numel() == 0:
        return
    plane = math.prod(out)
    low, high = int(indices.min().item()), int(indices.max().item())
    if low < 0 or high >= plane:
        raise RuntimeError(f"Found an invalid max index: {high if high >= plane else low} (output "
                           f"volumes are of size {'x'.join(map(str, out))})")  # fmt: skip


def _max_unpool(
    nd: int, x: Tensor, indices: Any, kernel_size: Any, stride: Any, padding: Any,
    output_size: Any
) -> Tensor:  # fmt: skip
    name = f"max_unpool{nd}d"
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor for "
                           f"input, but got input of size: {list(x.shape)}")  # fmt: skip
    k = int_tuple(kernel_size, nd, "kernel_size")
    s = k if stride is None else int_tuple(stride, nd, "stride")
    out = _unpool_output_size(x, k, s, int_tuple(padding, nd, "padding"), output_size)
    _check_unpool_indices(x, indices, out)
    lead = x.shape[: x.ndim - nd]
    zeros = lucid.zeros(*lead, math.prod(out), dtype=x.dtype, device=x.device)
    flat = zeros.scatter(-1, indices.reshape(*lead, -1), x.reshape(*lead, -1))
    result: Tensor = flat.reshape(*lead, *out)
    return result


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    output_size: Any = None
) -> Tensor:  # fmt: skip
    """The partial inverse of :func:`max_pool1d`: each value goes back to its argmax, zeros
    elsewhere (``indices`` from ``return_indices=True``)."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    output_size: Any = None
) -> Tensor:  # fmt: skip
    """The partial inverse of :func:`max_pool2d` (``output_size`` resolves odd input sizes).

    >>> y, idx = max_pool2d(lucid.randn(1, 1, 4, 4), 2, return_indices=True)
    >>> max_unpool2d(y, idx, 2).shape
    (1, 1, 4, 4)
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
    output_size: Any = None
) -> Tensor:  # fmt: skip
    """The partial inverse of :func:`max_pool3d`."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# -- adaptive pooling ----------------------------------------------------------------------------
def _bounds(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows: [floor(i*size/out), ceil((i+1)*size/out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive_sizes(
    name: str, x: Tensor, nd: int, output_size: Any
) -> tuple[Tensor, bool, tuple[int, ...]]:
    if x.ndim not in (nd + 1, nd + 2):
        if nd > 1 and isinstance(output_size, (tuple, list)) and x.ndim <= len(output_size):
            # torch's Python-level check of a sequence output_size (_list_with_default)
            raise ValueError(
                f"{name}: Input dimension should be at least {len(output_size) + 1}, got input "
                f"of size {list(x.shape)}"
            )
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got input of "
                           f"size {list(x.shape)}")  # fmt: skip
    batched = x.ndim == nd + 2
    if not batched:
        x = x.unsqueeze(0)
    sizes = (
        (output_size,) * nd
        if isinstance(output_size, int) or output_size is None
        else tuple(output_size)
    )
    if len(sizes) != nd:
        raise RuntimeError(
            f"{name}() argument 'output_size' should contain {nd} int(s) (got {len(sizes)})"
        )
    out = tuple(x.shape[2 + i] if s is None else int(s) for i, s in enumerate(sizes))
    if any(s <= 0 for s in out) or any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"{name}: output size {list(out)} and input size {list(x.shape)} must "
                           f"be positive")  # fmt: skip
    return x, batched, out


def _averaging_matrix(size: int, out: int, like: Tensor) -> Tensor:
    """``(out, size)`` matrix whose rows average PyTorch's adaptive windows."""
    rows = [[0.0] * size for _ in range(out)]
    for r, (s, e) in enumerate(_bounds(size, out)):
        for j in range(s, e):
            rows[r][j] = 1.0 / (e - s)
    matrix: Tensor = lucid.tensor(rows, dtype=like.dtype, device=like.device)
    return matrix


def _adaptive_avg(nd: int, x: Tensor, output_size: Any) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    if not x.dtype.is_floating_point and nd == 2 and output_size in (1, (1, 1), [1, 1]):
        raise RuntimeError(  # torch takes a mean for a 1x1 output
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_torch_name(x.dtype)[1:-1]}"
        )
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f'"adaptive_avg_pool2d" not implemented for {_torch_name(x.dtype)}'
        )
    x, batched, out = _adaptive_sizes(name, x, nd, output_size)
    in_size = x.shape[2:]
    if all(i % o == 0 for i, o in zip(in_size, out)):
        k = tuple(i // o for i, o in zip(in_size, out))
        y = AvgPool.apply(x, k, k, (0,) * nd, False, True, None)
    else:
        # Separable: average along each spatial dim with a small matrix.
        y = x
        for a in range(nd):
            dim = 2 + a
            m = _averaging_matrix(in_size[a], out[a], x)
            y = (y.transpose(dim, -1) @ m.t()).transpose(dim, -1)
    result: Tensor = y if batched else y.squeeze(0)
    return result


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output length, PyTorch's window rule."""
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed ``(H_out, W_out)`` (``None`` keeps that size).

    >>> adaptive_avg_pool2d(lucid.randn(2, 8, 7, 7), 1).shape
    (2, 8, 1, 1)
    """
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed ``(D_out, H_out, W_out)``."""
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd: int, x: Tensor, output_size: Any, return_indices: bool) -> Any:
    name = f"adaptive_max_pool{nd}d"
    if not x.dtype.is_floating_point:
        raise NotImplementedError(
            f'"adaptive_max_pool2d" not implemented for {_torch_name(x.dtype)}'
        )
    x, batched, out = _adaptive_sizes(name, x, nd, output_size)
    in_size = x.shape[2:]
    if all(i % o == 0 for i, o in zip(in_size, out)):
        k = tuple(i // o for i, o in zip(in_size, out))
        res = MaxPool.apply(x, k, k, (0,) * nd, (1,) * nd, False, return_indices)
    else:
        res = _AdaptiveMax.apply(x, out, return_indices)
    if batched:
        return res
    if return_indices:
        return res[0].squeeze(0), res[1].squeeze(0)
    return res.squeeze(0)


class _AdaptiveMax(Function):
    """Adaptive max pooling with uneven windows: a loop over the (few) output cells."""

    @staticmethod
    def forward(ctx: Any, x: Any, out_size: tuple[int, ...], return_indices: bool) -> Any:
        xp = ctx.xp
        n, c = x.shape[:2]
        in_size = x.shape[2:]
        cells = _cells(in_size, out_size)
        vals, flats = [], []
        for cell in cells:
            block = x[_ALL + tuple(slice(s, e) for s, e in cell)]
            local = xp.argmax(xp.reshape(block, (n, c, -1)), axis=-1)
            vals.append(xp.max(xp.reshape(block, (n, c, -1)), axis=-1))
            flats.append(_local_to_flat(xp, local, cell, in_size))
        out = xp.reshape(xp.stack(vals, axis=-1), (n, c, *out_size))
        flat = xp.reshape(xp.stack(flats, axis=-1), (n, c, *out_size))
        ctx.flat, ctx.shape = flat, x.shape
        if not return_indices:
            return out
        ctx.mark_non_differentiable(flat)
        return out, flat

    @staticmethod
    def backward(ctx: Any, g: Tensor, *_: Any) -> Any:
        n, c = ctx.shape[:2]
        idx = Tensor.from_backend_array(ctx.flat, g.backend).reshape(n, c, -1)
        plane = math.prod(ctx.shape[2:])
        dx = lucid.zeros(n, c, plane, dtype=g.dtype, device=g.device)
        dx = dx.scatter_add(2, idx, g.reshape(n, c, -1))
        return dx.reshape(ctx.shape), None, None


def _cells(in_size: Sequence[int], out_size: Sequence[int]) -> list[tuple[tuple[int, int], ...]]:
    per_dim = [_bounds(i, o) for i, o in zip(in_size, out_size)]
    cells: list[tuple[tuple[int, int], ...]] = [()]
    for bounds in per_dim:
        cells = [(*cell, b) for cell in cells for b in bounds]
    return cells


def _local_to_flat(xp: Any, local: Any, cell: Any, in_size: Sequence[int]) -> Any:
    widths = [e - s for s, e in cell]
    flat = 0
    rem = local
    coords = []
    for w in reversed(widths):
        coords.append(rem % w)
        rem = rem // w
    coords.reverse()
    for (s, _), co, size in zip(cell, coords, in_size):
        flat = flat * size + (co + s)
    return flat


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed output length."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed ``(H_out, W_out)``; with ``return_indices`` also the argmax."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed ``(D_out, H_out, W_out)``; with ``return_indices`` also the
    argmax (flat within each plane)."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _adaptive_max(1, input, output_size, True)
    return out


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _adaptive_max(2, input, output_size, True)
    return out


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _adaptive_max(3, input, output_size, True)
    return out


# -- power-average pooling -----------------------------------------------------------------------
def _lp_pool(nd: int, x: Tensor, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:  # fmt: skip
    k = int_tuple(kernel_size, nd, "kernel_size")
    pooled = _avg_pool(nd, x.pow(norm_type), k, stride, 0, ceil_mode, True, None)
    area = math.prod(k)
    out: Tensor = (pooled.sign() * pooled.abs().relu()).mul(area).pow(1.0 / norm_type)
    return out


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows, as torch's."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 2-D windows, as torch's."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 3-D windows, as torch's."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# -- fractional max pooling ----------------------------------------------------------------------
def _intervals(sample: Any, in_size: int, out_size: int, pool: int) -> Any:
    """torch's window starts for one dim, from the per-plane samples in [0, 1) (computed in
    the samples' dtype, as torch's kernel does, so the windows are the same)."""
    dt = sample.dtype.type
    idx = np.arange(out_size - 1, dtype=sample.dtype)
    starts = np.empty(sample.shape + (out_size,), dtype=np.int64)
    if out_size > 1:
        alpha = dt(in_size - pool) / dt(out_size - 1)
        s = sample[..., None]
        starts[..., :-1] = ((idx + s) * alpha).astype(np.int64) - (s * alpha).astype(np.int64)
    starts[..., -1] = in_size - pool
    return starts


def _fractional(nd: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                return_indices: bool, samples: Tensor | None) -> Any:  # fmt: skip
    name = f"fractional_max_pool{nd}d"
    check_tensor_dims = (nd + 1, nd + 2)
    if input.ndim not in check_tensor_dims:
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    k = int_tuple(kernel_size, nd, "kernel_size")
    in_size = x.shape[2:]
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else output_ratio
        if len(ratio) != nd:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")  # fmt: skip
        out = tuple(int(i * r) for i, r in zip(in_size, ratio))
    else:
        out = int_tuple(output_size, nd, "output_size")
    n, c = x.shape[:2]
    for i, (o, kk, size) in enumerate(zip(out, k, in_size)):
        if o + kk - 1 > size:
            what = ("time", "height", "width")[3 - nd + i]
            raise RuntimeError(f"{name}_out(): pool {what} {kk} too large relative to input "
                               f"{what} {size}")  # fmt: skip
    if samples is None:
        samples = lucid.rand(n, c, nd, dtype=x.dtype, device=x.device)
    if samples.ndim != 3 or samples.shape[0] < n or samples.shape[1:] != (c, nd):
        raise RuntimeError(
            f"{name}(): expected _random_samples of shape {[n, c, nd]}, got {list(samples.shape)}"
        )
    # the windows are chosen on the host (a few small integer arrays); the values are then a
    # gather, so autograd and the device are lucid's
    smp = np.asarray(samples.detach().numpy())[:n]
    # torch's kernels read the samples as (W, H) in 2-D and as (T, H, W) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_intervals(smp[..., order[d]], in_size[d], out[d], k[d]) for d in range(nd)]
    xv = np.asarray(x.detach().numpy()).reshape(n, c, -1)
    best_val = np.full((n, c, *out), -np.inf, dtype=xv.dtype)
    best_idx = np.zeros((n, c, *out), dtype=np.int64)
    strides = [math.prod(in_size[d + 1 :]) for d in range(nd)]
    for offset in np.ndindex(*k):  # row-major over the window: the first maximum wins
        flat = np.zeros((n, c, *out), dtype=np.int64)
        for d in range(nd):
            shape = [n, c] + [1] * nd
            shape[2 + d] = out[d]
            flat = flat + ((starts[d] + offset[d]) * strides[d]).reshape(shape)
        val = np.take_along_axis(xv, flat.reshape(n, c, -1), 2).reshape(flat.shape)
        take = (val > best_val) | (np.isnan(val) & ~np.isnan(best_val))
        if offset == (0,) * nd:
            take = np.ones_like(take)
        best_val = np.where(take, val, best_val)
        best_idx = np.where(take, flat, best_idx)
    idx = lucid.tensor(best_idx, device=x.device)
    y = x.reshape(n, c, -1).gather(2, idx.reshape(n, c, -1)).reshape(n, c, *out)
    if not batched:
        y, idx = y.squeeze(0), idx.squeeze(0)
    return (y, idx) if return_indices else y


def fractional_max_pool2d(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> Any:  # fmt: skip
    """Fractional max pooling (Graham, 2014): ``kernel_size`` windows at pseudo-random
    starts that shrink the input to ``output_size`` (or ``output_ratio`` of it). The starts
    come from ``_random_samples`` ``(N, C, 2)`` in [0, 1), drawn with ``lucid.rand`` (so
    ``lucid.manual_seed`` fixes them) when not given."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)  # fmt: skip


def fractional_max_pool3d(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> Any:  # fmt: skip
    """Fractional max pooling over 3-D windows; ``_random_samples`` is ``(N, C, 3)``."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)  # fmt: skip


def fractional_max_pool2d_with_indices(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``fractional_max_pool2d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _fractional(2, input, kernel_size, output_size, output_ratio,
                                             True, _random_samples)  # fmt: skip
    return out


def fractional_max_pool3d_with_indices(
    input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
    return_indices: bool = False, _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``fractional_max_pool3d`` with its indices (torch's name)."""
    out: tuple[Tensor, Tensor] = _fractional(3, input, kernel_size, output_size, output_ratio,
                                             True, _random_samples)  # fmt: skip
    return out
