"""Reductions over dims (``dim`` int or tuple, ``keepdim``): sum, mean, var/std, prod, max/min,
amax/amin, argmax/argmin, logsumexp, norm, all/any, and the scans cumsum/cumprod/cummax/cummin/
logcumsumexp. A 0-d tensor has one dim to name (0 or -1), as in torch."""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from lucid import dtypes
from lucid._creation import eye
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import Function, once_differentiable
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import (
    normalize_dim,
    normalize_dims,
    piecewise_constant,
    refuse_overlap,
    require_tensor,
    scalar_type_name,
    to_float,
)
from lucid.ops.elementwise import maximum, minimum, where
from lucid.ops.join import cat
from lucid.ops.unary import abs as _abs

_INDEX = "integer (index) result"
OPS = OpTable(
    op("sum", sample((3, 4), gg=True), sample((3, 4), dim=1, tag="dim"),
       sample((2, 3, 4), dim=(0, 2), keepdim=True, tag="dims_keep")),
    op("mean", sample((3, 4), dim=-1, gg=True), sample((2, 3, 2), args=((0, 1),), tag="tuple")),
    op("var", sample((3, 4), dim=1, gg=True), sample((3, 4), dim=0, correction=0, keepdim=True,
       tag="correction0"), sample((3, 4), tag="all")),
    op("std", sample((3, 4, 2), dim=(0, 1)), sample((3, 5), dim=1, correction=2,
       tag="correction2")),
    op("var_mean", sample((3, 4), dim=1), method=False),
    op("std_mean", sample((3, 4), dim=0), method=False),
    op("prod", sample((2, 3), gg=True), sample((2, 4), dim=1, keepdim=True, tag="dim")),
    op("max", sample((3, 4), domain="away", ref="max", tag="all")),
    op("min", sample((3, 4), domain="away", ref="min", tag="all")),
    op("amax", sample((3, 4, 2), domain="away", dim=(0, 1), gg=True)),
    op("amin", sample((3, 4), domain="away", dim=-1, keepdim=True)),
    op("argmax", sample((3, 5), dim=1), nograd=_INDEX),
    op("argmin", sample((3, 5)), nograd=_INDEX),
    op("logsumexp", sample((3, 4), dim=1, gg=True), sample((3, 4), dim=(0, 1), keepdim=True,
       tag="tuple")),
    op("norm", sample((3, 4), gg=True), sample((3, 4), dim=1, tag="dim"),
       sample((3, 4), domain="away", p=1, dim=0, tag="p1"),
       sample((3, 4), domain="away", p=3, tag="p3"),
       sample((3, 4), domain="away", p=float("inf"), tag="inf")),
    op("cumsum", sample((3, 4), dim=1, gg=True)),
    op("cumprod", sample((3, 4), dim=1, gg=True)),
    op("cummax", sample((3, 5), dim=1), sample((), dim=0, tag="0d")),
    op("cummin", sample((3, 5), dim=-1)),
    op("logcumsumexp", sample((3, 4), dim=1, gg=True), sample((), dim=-1, tag="0d")),
    op("all", sample((3, 5), domain="bool"), nograd="boolean result"),
    op("any", sample((3, 5), domain="bool", dim=1), nograd="boolean result"),
    op("count_nonzero", sample((3, 5), domain="bool"), nograd="integer result"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class ValuesIndices(NamedTuple):
    """``(values, indices)``, what ``max``/``min`` with a ``dim`` return (torch.return_types)."""

    values: Tensor
    indices: Tensor


def restore_dims(g: Tensor, dims: tuple[int, ...], keepdim: bool, shape: tuple[int, ...]) -> Tensor:
    """Reshape a reduced gradient so it broadcasts against the input's ``shape``."""
    if not keepdim and dims:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g


def _count(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


_add_reduce: Any = np.add.reduce


class Sum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        if ctx.xp is np:  # np.sum's reduction without its Python wrapper (~2 us; the same bits)
            return _add_reduce(a, axis=dims, keepdims=keepdim)
        return ctx.xp.sum(a, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        g = restore_dims(g, ctx.dims, ctx.keepdim, ctx.shape)
        return g.expand(ctx.shape), None, None


class Prod(Function):
    """Product along one dim; the gradient avoids dividing by the input (zeros are fine)."""

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, keepdim: bool) -> Any:
        ctx.save_for_backward(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        out = ctx.xp.prod(a, axis=dim, keepdims=keepdim)
        # NumPy multiplies bools and small ints as int64: torch keeps the dtype it was asked for
        return out if out.dtype == a.dtype else out.astype(a.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (a,) = ctx.saved_tensors
        d, n = ctx.dim, a.shape[ctx.dim]
        g = restore_dims(g, (d,), ctx.keepdim, a.shape)
        if n <= 1:  # one factor: its gradient is g; no factor (an empty dim): an empty one
            return g.expand(a.shape), None, None
        one = a.narrow(d, 0, 1).new_ones(a.narrow(d, 0, 1).shape)
        left = cat([one, a.narrow(d, 0, n - 1)], d).cumprod(d)
        right = cat([a.narrow(d, 1, n - 1), one], d).flip(d).cumprod(d).flip(d)
        return g * left * right, None, None


def _save_reduced(ctx: Any, a: Any, out: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    """Keep what :func:`_restore_reduced` needs; returns ``out``."""
    ctx.save_for_backward(a, out)
    ctx.dims, ctx.keepdim = dims, keepdim
    return out


def _restore_reduced(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The saved input, and the saved output and ``g`` broadcast back to the input's shape."""
    a, out = ctx.saved_tensors
    dims, keep = ctx.dims, ctx.keepdim
    return a, restore_dims(out, dims, keep, a.shape), restore_dims(g, dims, keep, a.shape)


class Extreme(Function):
    """amax/amin over dims; ties share the gradient equally."""

    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...], keepdim: bool, largest: bool) -> Any:
        ctx._node_name = "AmaxBackward0" if largest else "AminBackward0"  # torch's names
        fn = ctx.xp.max if largest else ctx.xp.min
        out = fn(a, axis=dims, keepdims=keepdim)
        return _save_reduced(ctx, a, out, dims, keepdim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, out, g = _restore_reduced(ctx, g)
        mask = (a == out).to(g.dtype)
        return g * mask / mask.sum(ctx.dims, keepdim=True), None, None, None


class ExtremeAlong(Function):
    """max/min along one dim with indices; the gradient goes to the returned index."""

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, keepdim: bool, largest: bool) -> Any:
        ctx._node_name = "MaxBackward0" if largest else "MinBackward0"  # torch's names
        xp = ctx.xp
        idx = (xp.argmax if largest else xp.argmin)(a, axis=dim, keepdims=True)
        values = xp.take_along_axis(a, idx, axis=dim)
        idx = ctx.backend.astype(idx, dtypes.int64)
        if not keepdim:
            values, idx = xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        ctx.dim, ctx.keepdim, ctx.shape = dim, keepdim, a.shape
        return values, idx

    @staticmethod
    def backward(ctx: Any, g: Tensor, _: Tensor) -> Any:
        (idx,) = ctx.saved_tensors
        d = ctx.dim
        g = restore_dims(g, (d,), ctx.keepdim, ctx.shape)
        idx = restore_dims(idx, (d,), ctx.keepdim, ctx.shape)
        return g.new_zeros(ctx.shape).scatter(d, idx, g), None, None, None


class Scan(Function):
    """cumsum / cumprod along a dim."""

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, name: str) -> Any:
        ctx._node_name = name.capitalize() + "Backward0"  # torch's: CumsumBackward0
        out = getattr(ctx.xp, name)(a, axis=dim)
        if name == "cumprod":  # cumsum's gradient needs neither (in-place changes stay legal)
            ctx.save_for_backward(a, out)
        ctx.dim, ctx.kind = dim, name
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        d = ctx.dim
        if ctx.kind == "cumsum":
            return g.flip(d).cumsum(d).flip(d), None, None
        a, out = ctx.saved_tensors
        if not bool((a == 0).any()):
            return (g * out).flip(d).cumsum(d).flip(d) / a, None, None
        return _cumprod_grad_with_zeros(a, g, d), None, None


def _cumprod_grad_with_zeros(a: Tensor, g: Tensor, d: int) -> Tensor:
    """d/da_i of sum_j g_j prod_{k<=j} a_k, without dividing by a_i: O(n^2) in the dim size."""
    n = a.shape[d]
    x = a.movedim(d, -1)
    eye_n: Tensor = eye(n, dtype=dtypes.bool_, device=a.device)
    m: Tensor = where(eye_n, x.new_ones(()), x.unsqueeze(-2))  # m[..., i, k] = a_k, a_i -> 1
    upper = eye_n.new_ones((n, n)).triu().to(a.dtype)  # j >= i
    terms = m.cumprod(-1) * upper * g.movedim(d, -1).unsqueeze(-2)
    return terms.sum(-1).movedim(-1, d)


class CumExtreme(Function):
    """cummax / cummin along a dim with indices (the last of tied values; a NaN stays, as in
    torch); the gradient goes to the returned index."""

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, largest: bool) -> Any:
        ctx._node_name = "CummaxBackward0" if largest else "CumminBackward0"  # torch's
        xp = ctx.xp
        values = inclusive_scan(xp, a, dim, xp.maximum if largest else xp.minimum)
        shape = [1] * a.ndim
        shape[dim] = a.shape[dim]
        position = xp.reshape(ctx.backend.astype(xp.arange(a.shape[dim]), dtypes.int64), shape)
        hit = a == values
        if ctx.backend.dtype_of(a).is_floating_point:
            hit = hit | xp.isnan(a)
        idx = inclusive_scan(xp, xp.where(hit, position, 0), dim, xp.maximum)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        ctx.dim, ctx.shape = dim, a.shape
        return values, idx

    @staticmethod
    def backward(ctx: Any, g: Tensor, _: Tensor) -> Any:
        (idx,) = ctx.saved_tensors
        return g.new_zeros(ctx.shape).scatter_add(ctx.dim, idx, g), None, None


class LogCumSumExp(Function):
    """Running ``log(sum(exp(x)))`` along a dim, combined pairwise with ``logaddexp`` (stable)."""

    _node_name = "LogcumsumexpBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int) -> Any:
        # torch's CPU kernel runs the sum in its accumulate type (float32 in double, half and
        # bfloat16 in float32) and rounds each output: the backward's cancellation of its
        # positive and negative parts amplifies any other rounding
        combine, acc = ctx.xp.logaddexp, None
        wider = _SCAN_ACCUMULATE.get(ctx.backend.dtype_of(a).name)
        if wider is not None and hasattr(combine, "accumulate"):  # a one-pass scan (NumPy)
            acc = ctx.backend.native_dtype(wider)
        out = inclusive_scan(ctx.xp, a, dim, combine, acc)
        ctx.save_for_backward(a, out)
        ctx.dim = dim
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: torch's formula: the positive and negative parts of g summed in log space, so
        # no exp(x) or exp(-out) overflows.
        a, out = ctx.saved_tensors
        d = ctx.dim
        # a finite "log 0" (torch uses the lowest float): -inf would make nan second derivatives
        log_zero = g.new_full((), float(np.finfo(g.dtype.name).min) / 4)
        log_g = g.abs().log()

        def part(mask: Tensor) -> Tensor:
            flipped = where(mask, log_g - out, log_zero).flip(d)
            out_part: Tensor = (logcumsumexp(flipped, d).flip(d) + a).exp()
            return out_part

        return part(g > 0) - part(g < 0), None


# torch's CPU accumulate types (at::acc_type<T, false>) of the floating dtypes that widen
_SCAN_ACCUMULATE = {
    "float32": dtypes.float64,
    "float16": dtypes.float32,
    "bfloat16": dtypes.float32,
}


def inclusive_scan(xp: Any, a: Any, axis: int, combine: Any, acc: Any = None) -> Any:
    """Running ``combine`` (associative: maximum, logaddexp ...) along ``axis``, in log2(n)
    whole-array steps: step k combines each entry with the one 2**k before it. A combine that
    can accumulate itself (a NumPy ufunc) does, in one pass, in the native dtype ``acc`` when
    given (the result rounded back to ``a``'s dtype), as torch's CPU scans accumulate."""
    accumulate = getattr(combine, "accumulate", None)
    if accumulate is not None:
        if acc is None:
            return accumulate(a, axis=axis)
        return accumulate(a, axis=axis, dtype=acc).astype(a.dtype)
    n, shift = a.shape[axis], 1
    lead = (slice(None),) * axis
    while shift < n:
        rest = combine(a[lead + (slice(shift, None),)], a[lead + (slice(0, n - shift),)])
        a = xp.concatenate([a[lead + (slice(0, shift),)], rest], axis=axis)
        shift *= 2
    return a


class NormP2(Function):
    """Euclidean norm; the gradient at a zero vector is zero, as in torch."""

    _node_name = "LinalgVectorNormBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
        xp = ctx.xp
        m = xp.abs(a) if ctx.backend.dtype_of(a).is_complex else a
        out = xp.sqrt(xp.sum(m * m, axis=dims, keepdims=keepdim))
        return _save_reduced(ctx, a, out, dims, keepdim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, out, g = _restore_reduced(ctx, g)
        safe = where(out == 0, out.new_ones(()), out)
        return g * a / safe, None, None


class NuclearNorm(Function):
    """Sum of the singular values of the matrices in the last two dims; the gradient is
    ``U @ Vh`` (first order: ``lucid.linalg.matrix_norm(x, "nuc")`` differentiates twice)."""

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        u, s, vh = ctx.xp.linalg.svd(a, full_matrices=False)
        ctx.save_for_backward(u, vh)
        return ctx.xp.sum(s, axis=-1)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, g: Tensor) -> Any:
        u, vh = ctx.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * (u @ vh)


def _nuclear(a: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dims = (a.ndim - 2, a.ndim - 1) if dim is None else tuple(normalize_dim(d, a.ndim) for d in dim)
    if len(dims) != 2 or dims[0] == dims[1]:
        raise RuntimeError(f"nuclear norm requires a 'dim' argument of size 2, got dim={dim}")
    rest = [k for k in range(a.ndim) if k not in dims]
    out: Tensor = NuclearNorm.apply(a.permute(*rest, *dims))
    if keepdim:
        for d in sorted(dims):
            out = out.unsqueeze(d)
    return out


class BoolReduce(Function):
    """all / any / count_nonzero / argmax / argmin: no gradient."""

    @staticmethod
    def forward(ctx: Any, a: Any, name: str, dims: Any, keepdim: bool) -> Any:
        out = getattr(ctx.xp, name)(a, axis=dims, keepdims=keepdim)
        if name in ("argmax", "argmin"):
            out = ctx.backend.astype(out, dtypes.int64)
        ctx.mark_non_differentiable(out)
        return out


# -- out= of the reductions, with torch's rules -------------------------------------------------
# torch's names of a dtype: its ScalarType ("Float") and its C++ type ("float"), as its errors say
_TORCH_DTYPE_NAMES = {
    "bool": ("Bool", "bool"), "uint8": ("Byte", "unsigned char"), "int8": ("Char", "signed char"),
    "int16": ("Short", "short int"), "int32": ("Int", "int"), "int64": ("Long", "long int"),
    "float16": ("Half", "c10::Half"), "bfloat16": ("BFloat16", "c10::BFloat16"),
    "float32": ("Float", "float"), "float64": ("Double", "double"),
    "complex64": ("ComplexFloat", "c10::complex<float>"),
    "complex128": ("ComplexDouble", "c10::complex<double>"),
}  # fmt: skip


def _scalar_name(dt: Any) -> str:
    return _TORCH_DTYPE_NAMES[dtypes.to_dtype(dt).name][0]


def _cpp_name(dt: Any) -> str:
    return _TORCH_DTYPE_NAMES[dtypes.to_dtype(dt).name][1]


def _out_arg(name: str, out: Any, n: int = 1) -> tuple[Tensor, ...]:
    """``out`` as a tuple of ``n`` Tensors, or torch's TypeError."""
    if n == 1:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        return (out,)
    if not isinstance(out, (tuple, list)) or not builtins.all(isinstance(o, Tensor) for o in out):
        raise TypeError(
            f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}"
        )
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    return tuple(out)


def _run_dtype(name: str, dtype: Any, out: Any) -> Any:
    """The dtype a sum-like reduction runs in: ``dtype``, else ``out``'s (torch computes
    ``sum(x, out=o)`` in ``o``'s dtype); the two must agree."""
    if out is None:
        return dtype
    (o,) = _out_arg(name, out)
    if dtype is not None and dtypes.to_dtype(dtype) is not o.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(dtype)}, but got "
            f"{_cpp_name(o.dtype)} instead"
        )
    return o.dtype


def _check_cast(result: Tensor, out: Tensor) -> None:
    """torch's ``canCast``: no float into an integer/bool out, no complex into a real one."""
    r, o = result.dtype, out.dtype
    if r.category > o.category and not (o.category == dtypes.FLOAT and r.category == dtypes.FLOAT):
        raise RuntimeError(
            f"result type {_scalar_name(r)} can't be cast to the desired output type "
            f"{_scalar_name(o)}"
        )


def _write_reduced(name: str, result: Any, out: Any) -> Any:
    """``result`` (a Tensor or a named tuple of them) written into ``out`` as torch's reductions
    do: resized to the result's shape (with torch's warning where ``out`` had elements), cast to
    ``out``'s dtype (the caller checked it), refused under autograd; returns ``out``."""
    if out is None:
        return result
    results = tuple(result) if isinstance(result, tuple) else (result,)
    outs = _out_arg(name, out, len(results)) if isinstance(result, tuple) else _out_arg(name, out)
    for r, o in zip(results, outs):
        if o.requires_grad or (r.requires_grad and grad_mode._state.enabled):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
    for r, o in zip(results, outs):
        if tuple(o.shape) != tuple(r.shape):
            if o.numel():
                warnings.warn(
                    f"An output with one or more elements was resized since it had shape "
                    f"{list(o.shape)}, which does not match the required output shape "
                    f"{list(r.shape)}. This behavior is deprecated, and in a future PyTorch "
                    "release outputs will not be resized unless they have zero elements. You "
                    "can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                    "elements with t.resize_(0).",
                    UserWarning,
                    stacklevel=3,
                )
            o.resize_(r.shape)
        with grad_mode.no_grad():
            o.copy_(r)
    if isinstance(result, tuple):
        return type(result)(*outs)
    return outs[0]


def _float_out(name: str, result: Tensor, out: Any, wording: str = "cast") -> Any:
    """``_write_reduced`` for a floating result (mean, var, std, logsumexp, norm)."""
    if out is not None:
        (o,) = _out_arg(name, out)
        if wording == "floating" and o.dtype.category < dtypes.FLOAT:
            raise RuntimeError(
                f"{name}(): Expected floating point type for result tensor, but got: "
                f"{_scalar_name(o.dtype)}"
            )
        _check_cast(result, o)
    return _write_reduced(name, result, out)


def _same_dtype_out(name: str, result: Any, out: Any, input: Tensor) -> Any:  # noqa: A002
    """``_write_reduced`` for amax/amin: ``out`` must have the input's dtype (torch's wording)."""
    if out is not None:
        (o,) = _out_arg(name, out)
        if o.dtype is not input.dtype:
            raise RuntimeError(
                f"Expected the dtype for input and out to match, but got "
                f"{_scalar_name(input.dtype)} for input's dtype and {_scalar_name(o.dtype)} "
                "for out's dtype."
            )
    return _write_reduced(name, result, out)


def _exact_out(name: str, result: Any, out: Any) -> Any:
    """``_write_reduced`` where each ``out`` must have its result's dtype (torch's wording)."""
    if out is not None:
        results = tuple(result) if isinstance(result, tuple) else (result,)
        outs = (
            _out_arg(name, out, len(results)) if isinstance(result, tuple) else _out_arg(name, out)
        )
        for r, o in zip(results, outs):
            if o.dtype is not r.dtype:
                raise RuntimeError(
                    f"Expected out tensor to have dtype {_cpp_name(r.dtype)}, but got "
                    f"{_cpp_name(o.dtype)} instead"
                )
    return _write_reduced(name, result, out)


def _values_indices_out(name: str, result: Any, out: Any, input: Any = None) -> Any:  # noqa: A002
    """``_write_reduced`` for ``(values, indices)``: values in their dtype, indices int64,
    neither sharing memory with ``input``."""
    if out is not None:
        values, indices = _out_arg(name, out, 2)
        if input is not None:
            refuse_overlap((values, indices), input)
        for o, want in ((values, result[0].dtype), (indices, dtypes.int64)):
            if o.dtype is not want:
                raise RuntimeError(
                    f"Expected out tensor to have dtype {_cpp_name(want)}, but got "
                    f"{_cpp_name(o.dtype)} instead"
                )
    return _write_reduced(name, result, out)


def _named(result: Tensor, name: str) -> Tensor:
    """``result``, its node (new: the last step of a public op lucid composes) given torch's
    name of the whole op (``mean``'s last step is a division: ``MeanBackward0``)."""
    fn = result.grad_fn
    if fn is not None:
        fn._node_name = name
    return result


# -- public functions -----------------------------------------------------------------------------
def _accumulating(a: Tensor, dtype: Any) -> Tensor:
    """``a`` in the dtype a sum or product runs in: ``dtype`` if given, int64 for bool/ints."""
    if dtype is not None:
        return a.to(dtype)
    return a.to(dtypes.int64) if a.dtype.category < dtypes.FLOAT else a


def sum(  # noqa: A001
    input: Tensor,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Sum over ``dim`` (all dims by default). Integer and bool inputs sum as int64; with
    ``out=`` the sum runs in ``out``'s dtype, as in torch."""
    dtype = _run_dtype("sum", dtype, out)
    input = _accumulating(input, dtype)
    dims = normalize_dims(dim, input.ndim)
    result = Sum.apply(input, dims, keepdim)
    if dim is not None:
        _named(result, "SumBackward1")  # torch's node of sum over given dims
    return _write_reduced("sum", result, out)  # type: ignore[no-any-return]


def _float_input(name: str, a: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        a = a.to(dtype)
    if a.dtype.category < dtypes.FLOAT:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"{name}(): could not infer output dtype. {which} dtype must be either a floating "
            f"point or complex dtype. Got: {scalar_type_name(a.dtype)}"
        )
    return a


def mean(
    input: Tensor,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Mean over ``dim`` (all dims by default); floating inputs only. With ``out=`` it runs
    in ``out``'s floating dtype (an integer ``out`` is refused, as in torch)."""
    if out is not None:
        (o,) = _out_arg("mean", out)
        if dtype is None and o.dtype.category >= dtypes.FLOAT:
            dtype = _run_dtype("mean", None, o)
        elif dtype is not None:
            _run_dtype("mean", dtype, o)
    a = _float_input("mean", input, dtype)
    dims = normalize_dims(dim, a.ndim)
    result: Tensor = sum(a, dims, keepdim) / _count(a.shape, dims)
    _named(result, "MeanBackward0" if dim is None else "MeanBackward1")
    return _float_out("mean", result, out)  # type: ignore[no-any-return]


def _correction(correction: Any, unbiased: Any) -> Any:
    if unbiased is not None:
        if correction is not None:
            raise RuntimeError("var/std: pass either unbiased or correction, not both")
        return 1 if unbiased else 0
    return 1 if correction is None else correction


def _old_unbiased(dim: Any, unbiased: Any) -> tuple[Any, Any]:
    """``var(x, False)``: a bool where ``dim`` goes is torch's old positional ``unbiased``."""
    return (None, dim) if isinstance(dim, bool) else (dim, unbiased)


def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False,  # noqa: A002
        *, correction: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """Variance over ``dim`` with ``correction`` (1: Bessel's, the default; 0: population)."""
    if out is not None:
        return _float_out(  # type: ignore[no-any-return]
            "var", var(input, dim, unbiased, keepdim, correction=correction), out
        )
    dim, unbiased = _old_unbiased(dim, unbiased)
    a = _float_input("var", input, None)
    c = _correction(correction, unbiased)
    dims = normalize_dims(dim, a.ndim)
    d = a - a.mean(dims, keepdim=True)
    n = _count(a.shape, dims) - c
    sq = d * d if not d.is_complex() else d.real * d.real + d.imag * d.imag  # |d|^2, real
    return _named(sq.sum(dims, keepdim) / (n if n > 0 else math.nan if n == 0 else 0.0),
                  "VarBackward0")  # fmt: skip


def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False,  # noqa: A002
        *, correction: Any = None, out: Any = None) -> Tensor:  # fmt: skip
    """Square root of :func:`var`."""
    result = _named(var(input, dim, unbiased, keepdim, correction=correction).sqrt(),
                    "StdBackward0")  # fmt: skip
    return _float_out("std", result, out)  # type: ignore[no-any-return]


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False,  # noqa: A002
             *, correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``(var, mean)`` over ``dim``."""
    dim, unbiased = _old_unbiased(dim, unbiased)
    return var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False,  # noqa: A002
             *, correction: Any = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``(std, mean)`` over ``dim``."""
    dim, unbiased = _old_unbiased(dim, unbiased)
    return std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim)


def prod(
    input: Tensor,  # noqa: A002
    dim: int | None = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
    out: Any = None,
) -> Tensor:
    """Product over ``dim`` (all elements by default); with ``out=`` in ``out``'s dtype."""
    dtype = _run_dtype("prod", dtype, out)
    input = _accumulating(input, dtype)
    if dim is None:
        result: Tensor = Prod.apply(input.reshape(-1), 0, False)
        result = result.reshape((1,) * input.ndim) if keepdim else result
    else:
        result = along(input, dim, lambda a, d: Prod.apply(a, d, keepdim))
    return _write_reduced("prod", result, out)  # type: ignore[no-any-return]


def _check_nonempty(name: str, a: Tensor, dims: tuple[int, ...], full: bool = False) -> None:
    if builtins.any(a.shape[d] == 0 for d in dims) or (not dims and a.numel() == 0):
        # torch: RuntimeError for a reduction over all dims, IndexError for a named empty dim
        raise (RuntimeError if full or not dims else IndexError)(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            f"Specify the reduction dim with the 'dim' argument (input shape {list(a.shape)})."
        )


def _amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Largest value over ``dim`` (all dims for ``()``/None); ties share the gradient."""
    dims = normalize_dims(dim, input.ndim)
    _check_nonempty(
        "amax", input, dims, dim is None or (isinstance(dim, (tuple, list)) and not dim)
    )
    return Extreme.apply(input, dims, keepdim, True)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """Largest value over ``dim`` (all dims for ``()``/None); ties share the gradient.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = _same_dtype_out("amax", _amax(input, dim, keepdim), out, input)
    return result


def _amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Smallest value over ``dim`` (all dims for ``()``/None); ties share the gradient."""
    dims = normalize_dims(dim, input.ndim)
    _check_nonempty(
        "amin", input, dims, dim is None or (isinstance(dim, (tuple, list)) and not dim)
    )
    return Extreme.apply(input, dims, keepdim, False)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """Smallest value over ``dim`` (all dims for ``()``/None); ties share the gradient.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = _same_dtype_out("amin", _amin(input, dim, keepdim), out, input)
    return result


def _extreme(name: str, a: Tensor, dim: Any, keepdim: bool, largest: bool) -> Any:
    require_tensor(name, a)
    if isinstance(dim, Tensor):  # max(a, b): the elementwise form
        return maximum(a, dim) if largest else minimum(a, dim)
    if dim is None:
        return amax(a) if largest else amin(a)
    d = normalize_dim(dim, a.ndim)
    _check_nonempty(name, a, (d,) if a.ndim else ())
    if a.ndim == 0:
        return ValuesIndices(a, a.new_zeros((), dtype=dtypes.int64))
    values, indices = ExtremeAlong.apply_multi(a, d, keepdim, largest)
    return ValuesIndices(values, indices)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None,  # noqa: A001, A002
        out: Any = None) -> Any:  # fmt: skip
    """``max(x)`` -> tensor; ``max(x, dim)`` -> (values, indices); ``max(x, y)`` or
    ``max(x, other=y)`` -> maximum. ``out=``: a tensor, or ``(values, indices)`` with ``dim``."""
    if other is not None:
        return _extreme_out("max", _extreme("max", input, other, False, True), out, input)
    return _extreme_out("max", _extreme("max", input, dim, keepdim, True), out, input)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None,  # noqa: A001, A002
        out: Any = None) -> Any:  # fmt: skip
    """``min(x)`` -> tensor; ``min(x, dim)`` -> (values, indices); ``min(x, y)`` or
    ``min(x, other=y)`` -> minimum. ``out=``: a tensor, or ``(values, indices)`` with ``dim``."""
    if other is not None:
        return _extreme_out("min", _extreme("min", input, other, False, False), out, input)
    return _extreme_out("min", _extreme("min", input, dim, keepdim, False), out, input)


def _extreme_out(name: str, result: Any, out: Any, input: Tensor) -> Any:  # noqa: A002
    if out is None:
        return result
    if isinstance(result, tuple):
        return _values_indices_out(name, result, out, input)
    (o,) = _out_arg(name, out)
    if o.dtype is not result.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(result.dtype)}, but got "
            f"{_cpp_name(o.dtype)} instead"
        )
    return _write_reduced(name, result, out)


def _arg(name: str, a: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if dim is None:
        out: Tensor = BoolReduce.apply(a.reshape(-1), name, 0, False)
        return out.reshape((1,) * a.ndim) if keepdim else out

    def run(x: Tensor, d: int) -> Tensor:
        _check_nonempty(name, x, (d,))
        return BoolReduce.apply(x, name, d, keepdim)

    return along(a, dim, run)


def _index_out(name: str, result: Tensor, out: Any) -> Any:
    if out is not None:
        (o,) = _out_arg(name, out)
        if o.dtype is not dtypes.int64:
            raise RuntimeError(
                f"Expected out tensor to have dtype long int, but got {_cpp_name(o.dtype)} instead"
            )
    return _write_reduced(name, result, out)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None  # noqa: A002
           ) -> Tensor:  # fmt: skip
    """Index of the largest value along ``dim`` (of the flattened tensor without one)."""
    return _index_out("argmax", _arg("argmax", input, dim, keepdim), out)  # type: ignore[no-any-return]


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None  # noqa: A002
           ) -> Tensor:  # fmt: skip
    """Index of the smallest value along ``dim`` (of the flattened tensor without one)."""
    return _index_out("argmin", _arg("argmin", input, dim, keepdim), out)  # type: ignore[no-any-return]


def _bool_out(name: str, result: Tensor, out: Any) -> Any:
    if out is not None:
        (o,) = _out_arg(name, out)
        if o.dtype is not dtypes.bool_ and o.dtype is not dtypes.uint8:
            raise RuntimeError(
                f"{name} only supports bool tensor for result, got: {_scalar_name(o.dtype)}"
            )
    return _write_reduced(name, result, out)


def all(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A001, A002
    """True where every element over ``dim`` is nonzero (all dims by default)."""
    dims = normalize_dims(dim, input.ndim)
    if out is not None and getattr(out, "dtype", None) is dtypes.uint8:
        input = input.to(dtypes.uint8)  # torch's legacy uint8 result reduces the cast values
    return _bool_out("all", BoolReduce.apply(input, "all", dims, keepdim), out)  # type: ignore[no-any-return]


def any(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A001, A002
    """True where some element over ``dim`` is nonzero (all dims by default)."""
    dims = normalize_dims(dim, input.ndim)
    if out is not None and getattr(out, "dtype", None) is dtypes.uint8:
        input = input.to(dtypes.uint8)  # torch's legacy uint8 result reduces the cast values
    return _bool_out("any", BoolReduce.apply(input, "any", dims, keepdim), out)  # type: ignore[no-any-return]


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Number of nonzero elements over ``dim`` (int64)."""
    return sum(input != 0, dim)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *, out: Any = None) -> Tensor:  # noqa: A002
    """``log(sum(exp(x), dim))`` computed stably (the max is subtracted first)."""
    if out is not None:
        result = logsumexp(input, dim, keepdim)
        return _float_out("logsumexp", result, out, "floating")  # type: ignore[no-any-return]
    a: Tensor = to_float(input)
    dims = normalize_dims(dim, a.ndim)
    m = a.detach().amax(dims, keepdim=True)
    m = where(m.isfinite(), m, m.new_zeros(()))
    assert isinstance(m, Tensor)
    res = (a - m).exp().sum(dims, keepdim=True).log() + m
    return _named(res if keepdim else res.squeeze(dims) if dims else res, "LogsumexpBackward0")


def norm(
    input: Tensor,  # noqa: A002
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    out: Tensor | None = None,
    dtype: Any = None,
) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default); p in numbers, inf, -inf, "fro",
    "nuc" (torch's argument order: ``out`` before ``dtype``)."""
    result: Tensor = _exact_out("norm", _norm(input, p, dim, keepdim, dtype), out)
    return result


def _norm(input: Tensor, p: Any, dim: Any, keepdim: bool, dtype: Any) -> Tensor:  # noqa: A002
    a = _float_input("norm", input, dtype)
    dims = normalize_dims(dim, a.ndim)
    if p == "fro" or p == 2:
        return NormP2.apply(a, dims, keepdim)
    if p == "nuc":
        if dim is None and a.ndim != 2:
            raise RuntimeError(
                f"nuclear norm without a dim requires a 2-D input, got {a.ndim} dimensions"
            )
        return _nuclear(a, dim, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"norm: p={p!r} is not supported; expected 'fro', 'nuc' or a number")
    if p == math.inf:
        return amax(_abs(a), dims, keepdim)
    if p == -math.inf:
        return amin(_abs(a), dims, keepdim)
    if p == 0:
        return piecewise_constant(sum(a != 0, dims, keepdim).to(a.dtype), a)
    if p == 1:
        return sum(_abs(a), dims, keepdim)
    out: Tensor = sum(_abs(a) ** p, dims, keepdim) ** (1.0 / p)
    return out


_Along = TypeVar("_Along", Tensor, ValuesIndices)  # what ``along``'s ``fn`` returns


def along(a: Tensor, dim: int, fn: Callable[[Tensor, int], _Along]) -> _Along:
    """``fn(a, d)`` for ``dim`` normalised to ``d``; a 0-d tensor runs as a 1-element 1-d one
    and its result (a tensor or a tuple of them) comes back 0-d, as torch treats it."""
    d = normalize_dim(dim, a.ndim)
    if a.ndim:
        return fn(a, d)
    out = fn(a.reshape(1), 0)
    if isinstance(out, tuple):
        return type(out)(*(o.reshape(()) for o in out))
    return out.reshape(())


def cumsum(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:  # noqa: A002
    """Running sum along ``dim`` (integer inputs sum as int64; with ``out=``, in its dtype)."""
    dtype = _run_dtype("cumsum", dtype, out)
    a = _accumulating(input, dtype)
    result = along(a, dim, lambda a, d: Scan.apply(a, d, "cumsum"))
    return _write_reduced("cumsum", result, out)  # type: ignore[no-any-return]


def cumprod(input: Tensor, dim: int, *, dtype: Any = None, out: Any = None) -> Tensor:  # noqa: A002
    """Running product along ``dim``; the gradient handles zeros in the input."""
    dtype = _run_dtype("cumprod", dtype, out)
    a = _accumulating(input, dtype)
    result = along(a, dim, lambda a, d: Scan.apply(a, d, "cumprod"))
    return _write_reduced("cumprod", result, out)  # type: ignore[no-any-return]


def _cum_extreme(a: Tensor, dim: int, largest: bool) -> ValuesIndices:
    return along(a, dim, lambda x, d: ValuesIndices(*CumExtreme.apply(x, d, largest)))


def cummax(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:  # noqa: A002
    """``(values, indices)``: the running maximum along ``dim`` and where it was found.

    >>> lucid.cummax(lucid.tensor([1, 3, 2, 3]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return _values_indices_out("cummax", _cum_extreme(input, dim, True), out, input)  # type: ignore[no-any-return]


def cummin(input: Tensor, dim: int, *, out: Any = None) -> ValuesIndices:  # noqa: A002
    """``(values, indices)``: the running minimum along ``dim`` and where it was found."""
    return _values_indices_out("cummin", _cum_extreme(input, dim, False), out, input)  # type: ignore[no-any-return]


def logcumsumexp(input: Tensor, dim: int, *, out: Any = None) -> Tensor:  # noqa: A002
    """``log(cumsum(exp(input), dim))`` computed stably (no overflow for large inputs)."""
    result = along(to_float(input), dim, LogCumSumExp.apply)
    return _exact_out("logcumsumexp", result, out)  # type: ignore[no-any-return]
