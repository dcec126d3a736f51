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
from collections.abc import Iterable, Sequence
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
from lucid.nn.functional._util import (
    check_dim_range,
    check_tensor,
    fused_backward,
    fused_forward,
    int_list,
    size_at,
    trunc_div,
)
from lucid.nn.functional.conv import int_tuple
from lucid.ops.shape import index_int

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


# -- geometry and arguments: ATen's checks, in its order and words -------------------------------
Shape = tuple[int, ...]


def _out_size(size: int, k: int, pad: int, stride: int, dil: int, ceil_mode: bool) -> int:
    """ATen's ``pooling_output_shape``, its argument checks included."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > trunc_div((k - 1) * dil + 1, 2):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dil}")  # fmt: skip
    out = (size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1  # the last window starts inside the (left-padded) input
    return out


def _shape_check_2d(shape: Shape, k: Ints, s: Ints, p: Ints, d: Ints, out: Ints) -> None:
    """ATen's ``pool2d_shape_check`` (``(H, W)`` pairs)."""
    (kh, kw), (dh, dw), (ph, pw), (lh, lw), (oh, ow) = k, s, p, d, out
    if not (kw > 0 and kh > 0):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if not (dw > 0 and dh > 0):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {dh} dW: {dw}")
    if not (lh > 0 and lw > 0):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {lh} "
                           f"dilationW: {lw}")  # fmt: skip
    ndim = len(shape)
    valid = shape[1] != 0 and shape[2] != 0
    if not ((ndim == 3 and shape[0] != 0 and valid) or (ndim == 4 and valid and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(shape)}")  # fmt: skip
    if not (kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")  # fmt: skip
    if not (ow >= 1 and oh >= 1):
        c, ih, iw = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{ih}x{iw}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")  # fmt: skip


def _shape_check_3d(
    fn: str, shape: Shape, k: Ints, s: Ints, p: Ints, d: Ints, out: Ints, check_input_size: bool
) -> None:
    """ATen's ``pool3d_shape_check`` (``(T, H, W)`` triples)."""
    (kt, kh, kw), (dt, dh, dw), (pt, ph, pw), (lt, lh, lw) = k, s, p, d
    if not (kt > 0 and kw > 0 and kh > 0):
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} "
                           f"kW: {kw}")  # fmt: skip
    if not (dt > 0 and dw > 0 and dh > 0):
        raise RuntimeError(f"stride should be greater than zero, but got dT: {dt} dH: {dh} "
                           f"dW: {dw}")  # fmt: skip
    if not (lt > 0 and lw > 0 and lh > 0):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {lt} "
                           f"dilationH: {lh} dilationW: {lw}")  # fmt: skip
    ndim = len(shape)
    if ndim not in (4, 5):
        raise RuntimeError(f"{fn}: Expected 4D or 5D tensor for input, but got: {list(shape)}")
    for i, size in enumerate(shape):
        if size <= 0 and not (ndim == 5 and i == 0):  # the batch dim may be empty
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {list(shape)} and non-batch "
                               f"dimension {size} has length zero!")  # fmt: skip
    c, it, ih, iw = shape[-4:]
    if check_input_size and not (it >= kt and ih >= kh and iw >= kw):
        raise RuntimeError(f"input image (T: {it} H: {ih} W: {iw}) smaller than kernel size "
                           f"(kT: {kt} kH: {kh} kW: {kw})")  # fmt: skip
    if not (kt // 2 >= pt and kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {kt} kW: {kw} kH: {kh} padT: {pt} padW: {pw} "
                           f"padH: {ph}")  # fmt: skip
    ot, oh, ow = out
    if not (ot >= 1 and ow >= 1 and oh >= 1):
        raise RuntimeError(f"Given input size: ({c}x{it}x{ih}x{iw}). Calculated output size: "
                           f"({c}x{ot}x{oh}x{ow}). Output size is too small")  # fmt: skip


def _expand(values: list[int], n: int, default: list[int] | None = None) -> tuple[int, ...]:
    """A checked int list of 1 or ``n`` values as ``n`` (``default`` where it is empty)."""
    if not values and default is not None:
        return tuple(default)
    return tuple(values) * n if len(values) == 1 else tuple(values)


def _check_lengths(fn: str, nd: int, args: dict[str, list[int]], avg: bool) -> None:
    """ATen's length checks of the 2-d and 3-d pooling ops' int lists (each op its words)."""
    count = {2: "two", 3: "three"}[nd]
    for name, values in args.items():
        allowed = (0, 1, nd) if name == "stride" else (1, nd)
        if len(values) in allowed:
            continue
        if avg and nd == 3:
            how = "be omitted, a single int," if name == "stride" else "be a single int,"
        elif name == "stride":
            how = "either be omitted, a single int,"
        elif name == "dilation":
            how = "be either a single int,"
        else:
            how = "either be a single int,"
        raise RuntimeError(f"{fn}: {name} must {how} or a tuple of {count} ints")


def _pool_nd_checks(
    op: str, nd: int, shape: Shape, k: list[int], s: list[int], p: list[int], d: list[int],
    ceil_mode: bool, divisor_override: Any = None
) -> tuple[Ints, Ints, Ints, Ints]:  # fmt: skip
    """The checks of ATen's ``max_pool2d_with_indices``, ``avg_pool2d``,
    ``max_pool3d_with_indices`` and ``avg_pool3d`` (``op`` "max" or "avg") on a tensor of
    ``shape``, in its order; the arguments expanded to ``nd`` ints each."""
    avg = op == "avg"
    fn = f"{op}_pool{nd}d"
    lists = {"kernel_size": k, "stride": s, "padding": p}
    if not avg:
        lists["dilation"] = d
    _check_lengths(fn, nd, lists, avg)
    kk = _expand(k, nd)
    ss = _expand(s, nd, list(kk))
    pp = _expand(p, nd)
    dd = _expand(d, nd) if not avg else (1,) * nd
    ndim = len(shape)
    if nd == 3 or not avg:
        if ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                               "for input")  # fmt: skip
    if avg and divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    for dim in range(-nd - 1, 0):  # the sizes ATen reads: input.size(-3) and on
        size_at(shape, dim)
    out = tuple(
        _out_size(shape[ndim - nd + a], kk[a], pp[a], ss[a], dd[a], ceil_mode) for a in range(nd)
    )
    if nd == 2:
        _shape_check_2d(shape, kk, ss, pp, dd, out)
    else:
        where = "avg_pool3d()" if avg else "max_pool3d_with_indices_out_cpu_template()"
        _shape_check_3d(where, shape, kk, ss, pp, dd, out, check_input_size=avg)
    return kk, ss, pp, dd


def _pool1d_checks(
    op: str, shape: Shape, k: list[int], s: list[int], p: list[int], d: list[int],
    ceil_mode: bool
) -> tuple[Ints, Ints, Ints, Ints]:  # fmt: skip
    """ATen's ``max_pool1d_with_indices`` and ``avg_pool1d``: the 1-d arguments checked, then
    the 2-d op's checks on the input with an ``H`` of 1."""
    fn = f"{op}_pool1d"
    s = s or k
    check_dim_range(fn, shape, 2, 4)
    lists = {"kernel_size": k, "stride": s, "padding": p}
    if op == "max":
        lists["dilation"] = d
    for name, values in lists.items():
        if len(values) != 1:
            raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got "
                               f"{len(values)})")  # fmt: skip
    shape2 = (*shape[:-1], 1, shape[-1])
    ones = [1, 1] if op == "max" else [1]
    _pool_nd_checks(op, 2, shape2, [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]] if d else ones,
                    ceil_mode)  # fmt: skip
    return (k[0],), (s[0],), (p[0],), (d[0] if op == "max" else 1,)


def _max_pool1d_checks(
    shape: Shape, k: list[int], s: list[int], p: list[int], d: list[int], ceil_mode: bool
) -> tuple[Ints, Ints, Ints, Ints]:
    """ATen's ``max_pool1d`` (no indices): its own checks, in its order and words."""
    ndim = len(shape)
    if not (
        (ndim == 2 and shape[0] != 0 and shape[1] != 0)
        or (ndim == 3 and shape[1] != 0 and shape[2] != 0)
    ):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(shape)}")  # fmt: skip
    fn = "max_pool1d()"
    if len(k) != 1:
        raise RuntimeError(f"{fn} kernel_size must be an int, list of ints or tuple of ints of "
                           f"size 1 but got size {len(k)}")  # fmt: skip
    if len(s) not in (0, 1):
        raise RuntimeError(f"{fn} stride must be None, an int, list of ints, or tuple of ints of "
                           f"size 1 but got size {len(s)}")  # fmt: skip
    if len(p) != 1:
        raise RuntimeError(f"{fn} padding must be an int, list of ints, or tuple of ints of size 1 "
                           f"but got size {len(p)}")  # fmt: skip
    if len(d) != 1:
        raise RuntimeError(f"{fn} dilation must be an int, list of ints or tuple of ints of size 1 "
                           f"but got size {len(d)}")  # fmt: skip
    (kk,), (ss,), (pp,), (dd,) = k, s or k, p, d
    if kk <= 0:
        raise RuntimeError(f"{fn} kernel_size must be greater than zero, but got {kk}")
    if ss <= 0:
        raise RuntimeError(f"{fn} stride must be greater than zero, but got {ss}")
    if pp < 0:
        raise RuntimeError(f"{fn} padding must be non-negative, but got {pp}")
    if pp > kk // 2:
        raise RuntimeError(f"{fn} padding should be at most half of kernel size, but got "
                           f"padding={pp} and kernel_size={kk}")  # fmt: skip
    if dd <= 0:
        raise RuntimeError(f"{fn} dilation must be greater than zero, but got {dd}")
    out = _out_size(shape[-1], kk, pp, ss, dd, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"{fn} Invalid computed output size: {out}")
    return (kk,), (ss,), (pp,), (dd,)


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool", "float16": "Half"}  # fmt: skip


def _torch_name(dtype: Any) -> str:
    """The dtype as torch's "not implemented for 'Long'" messages name it."""
    name = str(dtype).rsplit(".", 1)[-1]
    return f"'{_TORCH_NAMES.get(name, name)}'"


def _batched(x: Tensor, nd: int) -> tuple[Tensor, bool]:
    """``x`` with a batch dim, and whether it came with one."""
    batched = x.ndim == nd + 2
    return (x if batched else x.unsqueeze(0)), batched


def _max_pool(
    nd: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
    ceil_mode: bool, return_indices: bool
) -> Any:  # fmt: skip
    name = f"max_pool{nd}d"
    fn = f"{name}_with_indices" if return_indices else name
    check_tensor(fn, x)
    args = (
        int_list(fn, kernel_size, "kernel_size", nd),
        int_list(fn, stride, "stride", nd, none_ok=True),
        int_list(fn, padding, "padding", nd),
        int_list(fn, dilation, "dilation", nd),
    )
    if nd == 1 and not return_indices:
        k, s, p, d = _max_pool1d_checks(x.shape, *args, ceil_mode)
    elif nd == 1:
        k, s, p, d = _pool1d_checks("max", x.shape, *args, ceil_mode)
    else:
        k, s, p, d = _pool_nd_checks("max", nd, x.shape, *args, ceil_mode)
    if x.dtype == lucid.bool or x.dtype.is_complex or (nd == 1 and not x.dtype.is_floating_point):
        kernel = "max_pool1d_impl" if nd == 1 else name  # torch's kernel names
        raise NotImplementedError(f'"{kernel}" not implemented for {_torch_name(x.dtype)}')
    x, batched = _batched(x, nd)
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
    check_tensor(name, x)
    args: tuple[list[int], list[int], list[int], list[int]] = (
        int_list(name, kernel_size, "kernel_size", nd),
        int_list(name, stride, "stride", nd, none_ok=True),
        int_list(name, padding, "padding", nd),
        [],
    )
    if nd == 1:
        k, s, p, _ = _pool1d_checks("avg", x.shape, *args, ceil_mode)
    else:
        k, s, p, _ = _pool_nd_checks("avg", nd, x.shape, *args, ceil_mode, divisor_override)
    x, batched = _batched(x, nd)
    if x.dtype is lucid.int64:  # torch's CPU kernel: int64 sums divided, truncated to 0
        wide = _avg_pool(nd, x.to(lucid.float64), k, s, p, ceil_mode, count_include_pad,
                         divisor_override)  # fmt: skip
        result: Tensor = wide.trunc().to(lucid.int64)
        return result if batched else result.squeeze(0)
    if not x.dtype.is_floating_point:
        kernel = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"  # torch's kernel names
        raise NotImplementedError(f'"{kernel}" not implemented for {_torch_name(x.dtype)}')
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


def _averaging_matrix(size: int, out: int, like: Tensor) -> Tensor:
    """``(out, size)`` matrix whose rows average PyTorch's adaptive windows."""
    rows = [[0.0] * size for _ in range(out)]
    for r, (s, e) in enumerate(_bounds(size, out)):
        for j in range(s, e):
            rows[r][j] = 1.0 / (e - s)
    matrix: Tensor = lucid.tensor(rows, dtype=like.dtype, device=like.device)
    return matrix


def _list_with_default(output_size: Any, shape: Shape) -> Any:
    """torch.nn.functional's ``_list_with_default``: the None entries of a sequence
    ``output_size`` are the input's sizes."""
    if (size := index_int(output_size)) is not None:
        return size
    if len(shape) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    return [v if v is not None else d for v, d in zip(output_size, shape[-len(output_size) :])]


def _adaptive_output(name: str, nd: int, x: Tensor, output_size: Any) -> tuple[Shape, list[int]]:
    """The input's shape and the output sizes as ATen's 2-d or 3-d op sees them (the 1-d
    ops are the 2-d ones with an ``H`` of 1), after torch's checks before that op's."""
    check_tensor(name, x)
    if nd > 1:
        sizes = _list_with_default(output_size, x.shape)
        return x.shape, int_list(name, sizes, "output_size", nd)
    # the argument parser's TypeError first (adaptive_avg_pool1d's names no position)
    out = int_list(name, output_size, "output_size", 1, position="max" in name)
    check_dim_range(name, x.shape, 2, 4)
    if len(out) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(out)})")  # fmt: skip
    return (*x.shape[:-1], 1, x.shape[-1]), [1, *out]


def _non_empty(fn: str, shape: Shape, dims: Any) -> None:
    for i in dims:
        if shape[i] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(shape)} with dimension "
                               f"{i % len(shape)} being empty")  # fmt: skip


def _empty_output(x: Tensor, out: Sequence[int]) -> Tensor:
    """The (empty) pooled output of an empty input or for an output size with a 0, on
    ``x``'s graph."""
    empty: Tensor = x.flatten()[:0].reshape(*x.shape[:2], *out)
    return empty


def _adaptive_avg(nd: int, x: Tensor, output_size: Any) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    shape, sizes = _adaptive_output(name, nd, x, output_size)
    op, n2 = f"adaptive_avg_pool{max(nd, 2)}d", max(nd, 2)
    if len(sizes) != n2:
        raise RuntimeError(f"{op}: output_size must be {n2}")
    if any(v < 0 for v in sizes):
        got = ", ".join(map(str, sizes[:2])) + "".join(f",{v}" for v in sizes[2:])
        raise RuntimeError(f"{op}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{got}}}")  # fmt: skip
    if all(v == 1 for v in sizes):  # torch takes a mean over the spatial dims (any rank)
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                               "a floating point or complex dtype. Got: "
                               f"{_torch_name(x.dtype)[1:-1]}")  # fmt: skip
        mean: Tensor = x.mean(dim=tuple(range(-1, -nd - 1, -1)), keepdim=True)
        return mean
    if n2 == 2:
        if len(shape) not in (3, 4):
            raise RuntimeError(f"{op}(): Expected 3D or 4D tensor, but got {list(shape)}")
        _non_empty(op, shape, (-2, -1))
    else:
        _non_empty(op, shape, range(1, len(shape)))
        if len(shape) not in (4, 5):
            raise RuntimeError(f"{op}(): Expected 4D or 5D tensor, but got {list(shape)}")
    empty = x.numel() == 0 or 0 in sizes  # the 2-d op calls no kernel for an empty output
    if not x.dtype.is_floating_point and (nd == 3 or not empty):
        kernel = f"{op}_cpu" if nd == 3 else op  # torch's kernel names
        raise NotImplementedError(f'"{kernel}" not implemented for {_torch_name(x.dtype)}')
    out = tuple(sizes[-nd:])
    x, batched = _batched(x, nd)
    in_size = x.shape[2:]
    if 0 in out or x.numel() == 0:
        y = _empty_output(x, out)
    elif all(i % o == 0 for i, o in zip(in_size, out)):
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
    shape, sizes = _adaptive_output(name, nd, x, output_size)
    if nd == 1:
        _non_empty(name, x.shape, range(1, x.ndim))
    op, n2 = f"adaptive_max_pool{max(nd, 2)}d", max(nd, 2)
    if len(shape) not in (n2 + 1, n2 + 2):
        raise RuntimeError(f"{op}(): Expected {n2 + 1}D or {n2 + 2}D tensor, but got: "
                           f"{list(shape)}")  # fmt: skip
    _non_empty(op, shape, range(1, len(shape)))
    if len(sizes) != n2:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {n2}")
    full = [*shape[:-n2], *sizes]
    for v in full:
        if v < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {full}")
    if not x.dtype.is_floating_point:
        kernel = f"{op}_cpu" if nd == 3 else op  # torch's kernel names
        raise NotImplementedError(f'"{kernel}" not implemented for {_torch_name(x.dtype)}')
    out = tuple(sizes[-nd:])
    x, batched = _batched(x, nd)
    in_size = x.shape[2:]
    if 0 in out or x.numel() == 0:
        empty = _empty_output(x, out)
        res: Any = (empty, lucid.zeros(*empty.shape, dtype=lucid.int64, device=x.device))
        res = res if return_indices else res[0]
    elif all(i % o == 0 for i, o in zip(in_size, out)):
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
    area: Any = kernel_size  # torch.nn.functional's order: the kernel's area, the
    if nd > 1:  # infinite norms' max pooling, the average pooling
        ks = tuple(kernel_size) if isinstance(kernel_size, Iterable) else (kernel_size,) * nd
        if nd == 2:
            kw, kh = ks
            area = kw * kh
        else:
            kd, kw, kh = ks
            area = kd * kw * kh
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        sign = 1 if norm_type > 0 else -1
        peak: Tensor = _max_pool(nd, x.abs() * sign, kernel_size, stride, 0, 1, ceil_mode, False)
        return peak * sign
    pooled = _avg_pool(nd, x.pow(norm_type), kernel_size, stride, 0, ceil_mode, True, None)
    count = None if isinstance(area, bool) else index_int(area)  # a NumPy integer: an int
    if count is None:
        raise TypeError("mul(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(area).__name__}")  # fmt: skip
    area = count
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
    # torch.nn.functional's part: the output size, the random samples
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")  # fmt: skip
        ratio = tuple(output_ratio) if isinstance(output_ratio, Iterable) else (output_ratio,) * nd
        output_size = [int(size_at(input.shape, a - nd) * ratio[a]) for a in range(nd)]
    if samples is None:
        n_batch = 1 if input.ndim == nd + 1 else size_at(input.shape, 0)
        planes = size_at(input.shape, -nd - 1)
        if not input.dtype.is_floating_point:
            raise NotImplementedError(
                f'"check_uniform_bounds" not implemented for {_torch_name(input.dtype)}'
            )
        samples = lucid.rand(n_batch, planes, nd, dtype=input.dtype, device=input.device)
    # ATen's part
    k = tuple(int_list(name, kernel_size, "kernel_size", nd))
    out = tuple(int_list(name, output_size, "output_size", nd))
    count = "" if nd == 2 else "three "
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of "
                           f"{count}Ints")  # fmt: skip
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of "
                           f"{count}Ints")  # fmt: skip
    fn = f"{name}()" if nd == 2 else f"{name}_out()"
    in_shape = input.shape
    if len(in_shape) not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(in_shape)}")  # fmt: skip
    for i in range(1, len(in_shape)):
        if in_shape[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(in_shape)} with dimension {i} being "
                               "empty.")  # fmt: skip
    in_size = in_shape[-nd:]
    names = ("height", "width") if nd == 2 else ("time", "width", "height")
    for what in names:  # 3-d: T, W, H, each bound strict and a negative size as 0 (torch's)
        a = ("time", "height", "width").index(what) - (3 - nd)
        size = out[a] if nd == 2 else max(out[a], 0)
        if not (size + k[a] - 1 < in_size[a] + (nd == 2)):
            raise RuntimeError(f"{fn}: pool {what} {k[a]} too large relative to input {what} "
                               f"{in_size[a]}")  # fmt: skip
    full = [*in_shape[:-nd], *out]
    for v in full:
        if v < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {full}")
    batched = input.ndim == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    if x.numel() == 0 or 0 in out:
        y = _empty_output(x, out)
        idx = lucid.zeros(*y.shape, dtype=lucid.int64, device=x.device)
        if not batched:
            y, idx = y.squeeze(0), idx.squeeze(0)
        return (y, idx) if return_indices else y
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
