"""Elementwise ops: arithmetic, transcendental functions, comparisons, casts.

Each differentiable op is a small Function: forward on arrays, backward in lucid ops.
"""

from __future__ import annotations

from typing import Any

from lucid import _dtype
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._util import promote


class Add(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        return ctx.xp.add(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g, g


class Sub(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        return ctx.xp.subtract(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g, (-g if ctx.needs_input_grad[1] else None)


class Mul(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return ctx.xp.multiply(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return ctx.xp.true_divide(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        ga = g / b if ctx.needs_input_grad[0] else None
        gb = -g * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


class Neg(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return ctx.xp.negative(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return -g


class Exp(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        return g * out


class Log(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.save_for_backward(a)
        return ctx.xp.log(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (a,) = ctx.saved_tensors
        return g / a


class Tanh(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        return g * (1 - out * out)


class Relu(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: the gradient at 0 is 0, as in PyTorch.
        (out,) = ctx.saved_tensors
        return g * (out > 0).to(g.dtype)


class Cast(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dtype: _dtype.dtype) -> Any:
        ctx.src = ctx.backend.dtype_of(a)
        return ctx.backend.astype(a, dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.to(ctx.src), None


class Compare(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, op: str) -> Any:
        out = getattr(ctx.xp, op)(a, b)
        ctx.mark_non_differentiable(out)
        return out


def add(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    a, b = promote(a, b)
    if alpha != 1:
        b = b * alpha
    return Add.apply(a, b)  # type: ignore[no-any-return]


def sub(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    a, b = promote(a, b)
    if alpha != 1:
        b = b * alpha
    return Sub.apply(a, b)  # type: ignore[no-any-return]


def mul(a: Any, b: Any) -> Tensor:
    a, b = promote(a, b)
    return Mul.apply(a, b)  # type: ignore[no-any-return]


def div(a: Any, b: Any, rounding_mode: str | None = None) -> Tensor:
    a, b = promote(a, b)
    a, b = _to_float(a), _to_float(b)
    out: Tensor = Div.apply(a, b)
    if rounding_mode == "trunc":
        return out.trunc()  # type: ignore[no-any-return]
    if rounding_mode == "floor":
        return out.floor()  # type: ignore[no-any-return]
    return out


def _to_float(x: Any) -> Any:
    if isinstance(x, Tensor) and x.dtype.category < _dtype.FLOAT:
        return cast(x, _dtype.get_default_dtype())
    return x


def neg(a: Tensor) -> Tensor:
    return Neg.apply(a)  # type: ignore[no-any-return]


def exp(a: Tensor) -> Tensor:
    return Exp.apply(_to_float(a))  # type: ignore[no-any-return]


def log(a: Tensor) -> Tensor:
    return Log.apply(_to_float(a))  # type: ignore[no-any-return]


def tanh(a: Tensor) -> Tensor:
    return Tanh.apply(_to_float(a))  # type: ignore[no-any-return]


def relu(a: Tensor) -> Tensor:
    return Relu.apply(a)  # type: ignore[no-any-return]


def cast(a: Tensor, dtype: Any) -> Tensor:
    dt = _dtype.to_dtype(dtype)
    if a.dtype is dt:
        return a
    return Cast.apply(a, dt)  # type: ignore[no-any-return]


def _compare(op: str, a: Any, b: Any) -> Tensor:
    a, b = promote(a, b)
    return Compare.apply(a, b, op)  # type: ignore[no-any-return]


def eq(a: Any, b: Any) -> Tensor:
    return _compare("equal", a, b)


def ne(a: Any, b: Any) -> Tensor:
    return _compare("not_equal", a, b)


def lt(a: Any, b: Any) -> Tensor:
    return _compare("less", a, b)


def le(a: Any, b: Any) -> Tensor:
    return _compare("less_equal", a, b)


def gt(a: Any, b: Any) -> Tensor:
    return _compare("greater", a, b)


def ge(a: Any, b: Any) -> Tensor:
    return _compare("greater_equal", a, b)
