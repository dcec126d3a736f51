"""Converters of lucid-core's ops (``lucid.ops``): elementwise, shape, indexing, reductions."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid import Tensor
from lucid.onnx._context import Context, dtype_of, onnx_type
from lucid.onnx._convert import converts, one
from lucid.onnx._graph import INT64_MAX, INT64_MIN
from lucid.onnx._trace import Call
from lucid.onnx.errors import UnsupportedOperatorError

OPS = "lucid.ops."


def _out_dtype(call: Call, index: int = 0) -> np.dtype[Any]:
    return dtype_of(call.outputs[index])


# -- elementwise -----------------------------------------------------------------------------
_BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div", "Pow": "Pow",
           "Maximum": "Max", "Minimum": "Min"}  # fmt: skip


@converts(*(f"{OPS}elementwise.{k}" for k in _BINARY), dynamic=True)
def _binary(ctx: Context, call: Call) -> list[str]:
    dtype = _out_dtype(call)
    a, b = (_operand(ctx, i, dtype) for i in range(2))
    return one(ctx.graph.op(_BINARY[call.name], a, b))


def _operand(ctx: Context, position: int, dtype: np.dtype[Any]) -> str:
    """Argument ``position`` as a value; a number that follows a dynamic axis (a mean's count
    over the batch) is computed from the input's shape."""
    first, second = ctx.arg_pairs(position)
    if isinstance(first, Tensor) or first == second:
        return ctx.operand(first, dtype)
    if float(first).is_integer() and float(second).is_integer():
        size = ctx.graph.dynamic_size(int(first), int(second))
        if size is not None:
            scalar = ctx.graph.op("Reshape", size, ctx.graph.ints([]))
            return ctx.graph.op("Cast", scalar, to=onnx_type(dtype))
    raise UnsupportedOperatorError(
        f"{ctx.where}: a number follows a dynamic axis ({first!r} in one run, {second!r} with "
        "the axes resized); export without dynamic_axes"
    )


@converts(f"{OPS}elementwise.PowScalar")
def _pow_scalar(ctx: Context, call: Call) -> list[str]:
    x, e = call.args
    dtype = _out_dtype(call)
    if e == 2:
        a = ctx.operand(x, dtype)
        return one(ctx.graph.op("Mul", a, a))
    return one(ctx.graph.op("Pow", ctx.operand(x, dtype), ctx.scalar(e, dtype)))


@converts(f"{OPS}elementwise.Where")
def _where(ctx: Context, call: Call) -> list[str]:
    cond, a, b = call.args
    dtype = _out_dtype(call)
    c = ctx.operand(cond, np.dtype(bool))
    return one(ctx.graph.op("Where", c, ctx.operand(a, dtype), ctx.operand(b, dtype)))


@converts(f"{OPS}elementwise.Clamp")
def _clamp(ctx: Context, call: Call) -> list[str]:
    x, lo, hi = call.args
    dtype = _out_dtype(call)
    out = ctx.operand(x, dtype)
    if lo is not None:
        out = ctx.graph.op("Max", out, ctx.operand(lo, dtype))
    if hi is not None:
        out = ctx.graph.op("Min", out, ctx.operand(hi, dtype))
    return one(out)


@converts(f"{OPS}_util.Cast")
def _cast(ctx: Context, call: Call) -> list[str]:
    return one(ctx.graph.op("Cast", ctx.name(call.args[0]), to=onnx_type(_out_dtype(call))))


_COMPARE = {"less": "Less", "less_equal": "LessOrEqual", "greater": "Greater",
            "greater_equal": "GreaterOrEqual", "equal": "Equal", "logical_and": "And",
            "logical_or": "Or", "logical_xor": "Xor"}  # fmt: skip
_PREDICATE = {"logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf"}


@converts(f"{OPS}elementwise.NonDiff")
def _non_diff(ctx: Context, call: Call) -> list[str]:
    name, *args = call.args
    g = ctx.graph
    if name in _PREDICATE and len(args) == 1:
        return one(g.op(_PREDICATE[name], ctx.name(args[0])))
    if name in _COMPARE or name == "not_equal":
        tensors = [a for a in args if isinstance(a, Tensor)]
        common = np.result_type(*(dtype_of(t) for t in tensors))
        a, b = (ctx.operand(x, common) for x in args[:2])
        if name == "not_equal":
            return one(g.op("Not", g.op("Equal", a, b)))
        return one(g.op(_COMPARE[name], a, b))
    raise UnsupportedOperatorError(f"{ctx.where}: the op {name!r} has no ONNX mapping")


# -- unary -----------------------------------------------------------------------------------
_UNARY = {n: n for n in ("Exp", "Log", "Sqrt", "Reciprocal", "Abs", "Neg", "Sin", "Cos", "Tan",
                         "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Asinh", "Acosh",
                         "Atanh", "Sigmoid", "Relu", "Floor", "Ceil", "Sign", "Erf")}  # fmt: skip
_UNARY_MODULES = {"Erf": "special"}


@converts(*(f"{OPS}{_UNARY_MODULES.get(k, 'unary')}.{k}" for k in _UNARY))
def _unary(ctx: Context, call: Call) -> list[str]:
    return one(ctx.graph.op(_UNARY[call.name], ctx.name(call.args[0])))


@converts(f"{OPS}unary.Rsqrt", f"{OPS}unary.Square", f"{OPS}unary.Expm1", f"{OPS}unary.Log1p",
          f"{OPS}unary.Log2", f"{OPS}unary.Log10", f"{OPS}unary.Exp2")  # fmt: skip
def _unary_composite(ctx: Context, call: Call) -> list[str]:
    x = call.args[0]
    g, a = ctx.graph, ctx.name(x)
    one_ = ctx.scalar(1, x)
    if call.name == "Rsqrt":
        return one(g.op("Reciprocal", g.op("Sqrt", a)))
    if call.name == "Square":
        return one(g.op("Mul", a, a))
    if call.name == "Expm1":
        return one(g.op("Sub", g.op("Exp", a), one_))
    if call.name == "Log1p":
        return one(g.op("Log", g.op("Add", a, one_)))
    if call.name == "Exp2":
        return one(g.op("Pow", ctx.scalar(2, x), a))
    base = 2.0 if call.name == "Log2" else 10.0
    return one(g.op("Div", g.op("Log", a), ctx.scalar(math.log(base), x)))


@converts(f"{OPS}unary.Round")
def _round(ctx: Context, call: Call) -> list[str]:
    x, decimals = call.args
    g = ctx.graph
    if decimals == 0:
        return one(g.op("Round", ctx.name(x)))
    scale = ctx.scalar(10.0**decimals, x)
    return one(g.op("Div", g.op("Round", g.op("Mul", ctx.name(x), scale)), scale))


@converts(f"{OPS}special.Gelu")
def _gelu(ctx: Context, call: Call) -> list[str]:
    x, approximate = call.args
    g, a = ctx.graph, ctx.name(x)
    half = g.op("Mul", a, ctx.scalar(0.5, x))
    if approximate == "tanh":
        cube = g.op("Mul", g.op("Mul", g.op("Mul", a, a), a), ctx.scalar(0.044715, x))
        inner = g.op("Mul", g.op("Add", a, cube), ctx.scalar(math.sqrt(2 / math.pi), x))
        return one(g.op("Mul", half, g.op("Add", g.op("Tanh", inner), ctx.scalar(1, x))))
    erf = g.op("Erf", g.op("Mul", a, ctx.scalar(1 / math.sqrt(2), x)))
    return one(g.op("Mul", half, g.op("Add", erf, ctx.scalar(1, x))))


@converts(f"{OPS}softmax.Softmax", f"{OPS}softmax.LogSoftmax")
def _softmax(ctx: Context, call: Call) -> list[str]:
    x, dim = call.args
    return one(ctx.graph.op(call.name, ctx.name(x), axis=int(dim)))


# -- matmul ------------------------------------------------------------------------------------
@converts(f"{OPS}matmul.Matmul")
def _matmul(ctx: Context, call: Call) -> list[str]:
    a, b = call.args
    return one(ctx.graph.op("MatMul", ctx.name(a), ctx.name(b)))


@converts(f"{OPS}matmul.Einsum")
def _einsum(ctx: Context, call: Call) -> list[str]:
    (ins, out), *arrays = call.args
    equation = ",".join(ins) + "->" + out
    return one(ctx.graph.op("Einsum", *(ctx.name(a) for a in arrays), equation=equation))


# -- shape -------------------------------------------------------------------------------------
@converts(f"{OPS}shape.Reshape", dynamic=True)
def _reshape(ctx: Context, call: Call) -> list[str]:
    shape = ctx.graph.shape_of(ctx.shapes(), ctx.where, allow_infer=True)
    return one(ctx.graph.op("Reshape", ctx.name(call.args[0]), shape))


@converts(f"{OPS}shape.Expand", f"{OPS}shape.ExpandCopy", dynamic=True)
def _expand(ctx: Context, call: Call) -> list[str]:
    shape = ctx.graph.shape_of(ctx.shapes(), ctx.where, allow_infer=False)
    out = ctx.graph.op("Expand", ctx.name(call.args[0]), shape)
    if call.name == "ExpandCopy" and dtype_of(call.args[0]) != _out_dtype(call):
        out = ctx.graph.op("Cast", out, to=onnx_type(_out_dtype(call)))
    return one(out)


@converts(f"{OPS}shape.Permute")
def _permute(ctx: Context, call: Call) -> list[str]:
    x, dims = call.args
    return one(ctx.graph.op("Transpose", ctx.name(x), perm=[int(d) for d in dims]))


@converts(f"{OPS}shape.Clone", f"{OPS}shape.ToDevice", f"{OPS}shape.ToMemoryFormat")
def _identity(ctx: Context, call: Call) -> list[str]:
    return one(ctx.graph.op("Identity", ctx.name(call.args[0])))


@converts(f"{OPS}movement.Triangle")
def _triangle(ctx: Context, call: Call) -> list[str]:
    x, k, name = call.args
    g = ctx.graph
    return one(g.op("Trilu", ctx.name(x), g.const(np.int64(k)), upper=int(name == "triu")))


@converts(f"{OPS}movement.Flip")
def _flip(ctx: Context, call: Call) -> list[str]:
    x, dims = call.args
    g, n = ctx.graph, len(dims)
    starts, ends = g.ints([-1] * n), g.ints([INT64_MIN] * n)
    axes, steps = g.ints(list(dims)), g.ints([-1] * n)
    return one(g.op("Slice", ctx.name(x), starts, ends, axes, steps))


# -- joining and splitting ---------------------------------------------------------------------
@converts(f"{OPS}join.Cat")
def _cat(ctx: Context, call: Call) -> list[str]:
    dim, *tensors = call.args
    return one(ctx.graph.op("Concat", *(ctx.name(t) for t in tensors), axis=int(dim)))


@converts(f"{OPS}join.Split")
def _split(ctx: Context, call: Call) -> list[str]:
    x, dim, sizes = call.args[:3]
    g = ctx.graph
    return g.node("Split", [ctx.name(x), g.ints(sizes)], len(sizes), axis=int(dim))


@converts(f"{OPS}join.Unbind")
def _unbind(ctx: Context, call: Call) -> list[str]:
    x, dim = call.args
    g, n = ctx.graph, len(call.outputs)
    parts = g.node("Split", [ctx.name(x), g.ints([1] * n)], n, axis=int(dim))
    axes = g.ints([dim])
    return [g.op("Squeeze", p, axes) for p in parts]


@converts(f"{OPS}join.ConstantPad")
def _pad(ctx: Context, call: Call) -> list[str]:
    x, widths, value = call.args
    g = ctx.graph
    pads = g.ints([w[0] for w in widths] + [w[1] for w in widths])
    return one(g.op("Pad", ctx.name(x), pads, ctx.scalar(value, x), mode="constant"))


# -- reductions --------------------------------------------------------------------------------
@converts(f"{OPS}reduction.Sum")
def _sum(ctx: Context, call: Call) -> list[str]:
    x, dims, keepdim = call.args
    g = ctx.graph
    if not dims:
        return one(g.op("Identity", ctx.name(x)))
    return one(g.op("ReduceSum", ctx.name(x), g.ints(dims), keepdims=int(keepdim)))


def _reduce(ctx: Context, op: str, x: str, dims: Any, keepdim: bool) -> str:
    g = ctx.graph
    if g.opset >= 18:
        return g.op(op, x, g.ints(dims), keepdims=int(keepdim))
    return g.op(op, x, axes=[int(d) for d in dims], keepdims=int(keepdim))


@converts(f"{OPS}reduction.Extreme")
def _extreme(ctx: Context, call: Call) -> list[str]:
    x, dims, keepdim, largest = call.args
    if not dims:
        return one(ctx.graph.op("Identity", ctx.name(x)))
    op = "ReduceMax" if largest else "ReduceMin"
    return one(_reduce(ctx, op, ctx.name(x), dims, keepdim))


@converts(f"{OPS}reduction.ExtremeAlong")
def _extreme_along(ctx: Context, call: Call) -> list[str]:
    x, dim, keepdim, largest = call.args
    g, a = ctx.graph, ctx.name(x)
    values = _reduce(ctx, "ReduceMax" if largest else "ReduceMin", a, (dim,), keepdim)
    index = g.op("ArgMax" if largest else "ArgMin", a, axis=int(dim), keepdims=int(keepdim))
    return [values, index]


@converts(f"{OPS}reduction.BoolReduce")
def _bool_reduce(ctx: Context, call: Call) -> list[str]:
    x, name, dims, keepdim = call.args
    g, a = ctx.graph, ctx.name(x)
    if name in ("argmax", "argmin"):
        op = "ArgMax" if name == "argmax" else "ArgMin"
        return one(g.op(op, a, axis=int(dims), keepdims=int(keepdim)))
    if name not in ("all", "any") or not dims:
        raise UnsupportedOperatorError(f"{ctx.where}: the reduction {name!r} has no ONNX mapping")
    nonzero = g.op("Cast", g.op("Not", g.op("Equal", a, ctx.scalar(0, x))), to=onnx_type(np.int32))
    found = _reduce(ctx, "ReduceMin" if name == "all" else "ReduceMax", nonzero, dims, keepdim)
    return one(g.op("Cast", found, to=onnx_type(np.bool_)))


# -- indexing ----------------------------------------------------------------------------------
@converts(f"{OPS}indexing.GetItem", dynamic=True)
def _getitem(ctx: Context, call: Call) -> list[str]:
    x, index, advanced = call.args
    items = index if isinstance(index, tuple) else (index,)
    items = _expand_ellipsis(items, x.ndim)
    _, index2 = ctx.arg_pairs(1)
    items2 = _expand_ellipsis(index2 if isinstance(index2, tuple) else (index2,), x.ndim)
    if any(_fixed(a) and not _fixed_equal(a, b) for a, b in zip(items, items2)):
        raise UnsupportedOperatorError(
            f"{ctx.where}: an index follows a dynamic axis (a slice bound computed from a "
            "size); export without dynamic_axes for that dim"
        )
    if advanced:
        return one(_gather(ctx, x, items))
    return one(_basic_index(ctx, ctx.name(x), items))


def _fixed(item: Any) -> bool:
    return item is None or item is Ellipsis or isinstance(item, (slice, int))


def _fixed_equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


def _expand_ellipsis(items: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    if not any(i is Ellipsis for i in items):
        return items
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    k = next(n for n, i in enumerate(items) if i is Ellipsis)
    return items[:k] + (slice(None),) * (ndim - used) + items[k + 1 :]


def _slice_of(item: Any) -> tuple[int, int, int] | None:
    """(start, end, step) of a slice or an integer index; None for a full slice."""
    if not isinstance(item, slice):
        i = int(item)
        return i, (i + 1 if i != -1 else INT64_MAX), 1
    step = 1 if item.step is None else int(item.step)
    if item.start is None and item.stop is None and step == 1:
        return None
    lo = item.start if item.start is not None else (0 if step > 0 else -1)
    hi = item.stop if item.stop is not None else (INT64_MAX if step > 0 else INT64_MIN)
    return int(lo), int(hi), step


def _basic_index(ctx: Context, x: str, items: tuple[Any, ...]) -> str:
    """Slices and integers as one Slice, integers' dims squeezed, ``None``s unsqueezed."""
    g = ctx.graph
    cuts: list[tuple[int, int, int, int]] = []  # (start, end, axis, step)
    squeeze: list[int] = []
    unsqueeze: list[int] = []
    dim = out = 0
    for item in items:
        if item is None:
            unsqueeze.append(out)
            out += 1
            continue
        cut = _slice_of(item)
        if cut is not None:
            cuts.append((cut[0], cut[1], dim, cut[2]))
        if isinstance(item, slice):
            out += 1
        else:
            squeeze.append(dim)
        dim += 1
    if cuts:
        starts, ends, axes, steps = (list(c) for c in zip(*cuts))
        x = g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes), g.ints(steps))
    if squeeze:
        x = g.op("Squeeze", x, g.ints(squeeze))
    if unsqueeze:
        x = g.op("Unsqueeze", x, g.ints(unsqueeze))
    return x


def _gather(ctx: Context, x: Tensor, items: tuple[Any, ...]) -> str:
    """One integer index array at one axis (``weight[ids]``, ``x[:, ids]``): Gather."""
    arrays = [n for n, i in enumerate(items) if not isinstance(i, (slice, int, type(None)))]
    rest_full = all(i == slice(None) for n, i in enumerate(items) if n not in arrays)
    index = items[arrays[0]] if len(arrays) == 1 else None
    if index is None or not rest_full or np.asarray(index).dtype == np.bool_:
        raise UnsupportedOperatorError(
            f"{ctx.where}: only indexing with one integer index tensor (with full slices "
            "elsewhere) has an ONNX mapping; boolean masks and several index tensors do not"
        )
    idx = index if isinstance(index, Tensor) else None
    name = ctx.name(idx) if idx is not None else ctx.name_array(index)
    return ctx.graph.op("Gather", ctx.name(x), name, axis=arrays[0])
