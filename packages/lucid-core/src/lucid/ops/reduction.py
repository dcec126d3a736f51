"""Reductions over dims (``dim`` int or tuple, ``keepdim``): sum, mean, var/std, prod, max/min,
amax/amin, argmax/argmin, logsumexp, norm, all/any, and the scans cumsum/cumprod/cummax/cummin/
logcumsumexp. A 0-d tensor has one dim to name (0 or -1), as in torch."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from lucid import dtypes
from lucid._creation import eye
from lucid._tensor import Tensor
from lucid.autograd.function import Function, once_differentiable
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import (
    normalize_dim,
    normalize_dims,
    piecewise_constant,
    require_tensor,
    to_float,
    write_out,
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


class Sum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
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

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int) -> Any:
        out = inclusive_scan(ctx.xp, a, dim, ctx.xp.logaddexp)
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


def inclusive_scan(xp: Any, a: Any, axis: int, combine: Any) -> Any:
    """Running ``combine`` (associative: maximum, logaddexp ...) along ``axis``, in log2(n)
    whole-array steps: step k combines each entry with the one 2**k before it. A combine that
    can accumulate itself (a NumPy ufunc) does, in one pass."""
    accumulate = getattr(combine, "accumulate", None)
    if accumulate is not None:
        return accumulate(a, axis=axis)
    n, shift = a.shape[axis], 1
    lead = (slice(None),) * axis
    while shift < n:
        rest = combine(a[lead + (slice(shift, None),)], a[lead + (slice(0, n - shift),)])
        a = xp.concatenate([a[lead + (slice(0, shift),)], rest], axis=axis)
        shift *= 2
    return a


class NormP2(Function):
    """Euclidean norm; the gradient at a zero vector is zero, as in torch."""

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
) -> Tensor:
    """Sum over ``dim`` (all dims by default). Integer and bool inputs sum as int64."""
    input = _accumulating(input, dtype)
    dims = normalize_dims(dim, input.ndim)
    return Sum.apply(input, dims, keepdim)


def _float_input(name: str, a: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        a = a.to(dtype)
    if a.dtype.category < dtypes.FLOAT:
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {a.dtype.name.capitalize()}"
        )
    return a


def mean(
    input: Tensor,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """Mean over ``dim`` (all dims by default); floating inputs only."""
    a = _float_input("mean", input, dtype)
    dims = normalize_dims(dim, a.ndim)
    return sum(a, dims, keepdim) / _count(a.shape, dims)


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
        *, correction: Any = None) -> Tensor:  # fmt: skip
    """Variance over ``dim`` with ``correction`` (1: Bessel's, the default; 0: population)."""
    dim, unbiased = _old_unbiased(dim, unbiased)
    a = _float_input("var", input, None)
    c = _correction(correction, unbiased)
    dims = normalize_dims(dim, a.ndim)
    d = a - a.mean(dims, keepdim=True)
    n = _count(a.shape, dims) - c
    sq = d * d if not d.is_complex() else d.real * d.real + d.imag * d.imag  # |d|^2, real
    return sq.sum(dims, keepdim) / (n if n > 0 else math.nan if n == 0 else 0.0)


def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False,  # noqa: A002
        *, correction: Any = None) -> Tensor:  # fmt: skip
    """Square root of :func:`var`."""
    return var(input, dim, unbiased, keepdim, correction=correction).sqrt()


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
) -> Tensor:
    """Product over ``dim`` (all elements by default)."""
    input = _accumulating(input, dtype)
    if dim is None:
        out: Tensor = Prod.apply(input.reshape(-1), 0, False)
        return out.reshape((1,) * input.ndim) if keepdim else out
    return along(input, dim, lambda a, d: Prod.apply(a, d, keepdim))


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
    result: Tensor = write_out("amax", _amax(input, dim, keepdim), out, input)
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
    result: Tensor = write_out("amin", _amin(input, dim, keepdim), out, input)
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


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001, A002
    """``max(x)`` -> tensor; ``max(x, dim)`` -> (values, indices); ``max(x, y)`` or
    ``max(x, other=y)`` -> maximum."""
    if other is not None:
        return _extreme("max", input, other, False, True)
    return _extreme("max", input, dim, keepdim, True)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001, A002
    """``min(x)`` -> tensor; ``min(x, dim)`` -> (values, indices); ``min(x, y)`` or
    ``min(x, other=y)`` -> minimum."""
    if other is not None:
        return _extreme("min", input, other, False, False)
    return _extreme("min", input, dim, keepdim, False)


def _arg(name: str, a: Tensor, dim: Any, keepdim: bool) -> Tensor:
    if dim is None:
        out: Tensor = BoolReduce.apply(a.reshape(-1), name, 0, False)
        return out.reshape((1,) * a.ndim) if keepdim else out

    def run(x: Tensor, d: int) -> Tensor:
        _check_nonempty(name, x, (d,))
        return BoolReduce.apply(x, name, d, keepdim)

    return along(a, dim, run)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the largest value along ``dim`` (of the flattened tensor without one)."""
    return _arg("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the smallest value along ``dim`` (of the flattened tensor without one)."""
    return _arg("argmin", input, dim, keepdim)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """True where every element over ``dim`` is nonzero (all dims by default)."""
    dims = normalize_dims(dim, input.ndim)
    return BoolReduce.apply(input, "all", dims, keepdim)


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001, A002
    """True where some element over ``dim`` is nonzero (all dims by default)."""
    dims = normalize_dims(dim, input.ndim)
    return BoolReduce.apply(input, "any", dims, keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Number of nonzero elements over ``dim`` (int64)."""
    return sum(input != 0, dim)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(x), dim))`` computed stably (the max is subtracted first)."""
    a: Tensor = to_float(input)
    dims = normalize_dims(dim, a.ndim)
    m = a.detach().amax(dims, keepdim=True)
    m = where(m.isfinite(), m, m.new_zeros(()))
    assert isinstance(m, Tensor)
    out = (a - m).exp().sum(dims, keepdim=True).log() + m
    return out if keepdim else out.squeeze(dims) if dims else out


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
    result: Tensor = write_out("norm", _norm(input, p, dim, keepdim, dtype), out, input)
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


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """Running sum along ``dim`` (integer inputs sum as int64)."""
    return along(_accumulating(input, dtype), dim, lambda a, d: Scan.apply(a, d, "cumsum"))


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """Running product along ``dim``; the gradient handles zeros in the input."""
    return along(_accumulating(input, dtype), dim, lambda a, d: Scan.apply(a, d, "cumprod"))


def _cum_extreme(a: Tensor, dim: int, largest: bool) -> ValuesIndices:
    return along(a, dim, lambda x, d: ValuesIndices(*CumExtreme.apply(x, d, largest)))


def cummax(input: Tensor, dim: int) -> ValuesIndices:  # noqa: A002
    """``(values, indices)``: the running maximum along ``dim`` and where it was found.

    >>> lucid.cummax(lucid.tensor([1, 3, 2, 3]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return _cum_extreme(input, dim, True)


def cummin(input: Tensor, dim: int) -> ValuesIndices:  # noqa: A002
    """``(values, indices)``: the running minimum along ``dim`` and where it was found."""
    return _cum_extreme(input, dim, False)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """``log(cumsum(exp(input), dim))`` computed stably (no overflow for large inputs)."""
    return along(to_float(input), dim, LogCumSumExp.apply)
