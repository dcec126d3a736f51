"""Unary math ops: exp/log family, trigonometry, sigmoid, relu, rounding, abs/sign, ...

Most share one pattern: ``out = xp.<name>(a)`` and a one-line gradient of the input ``a`` or
the output ``out`` (whichever the class says it saves). Integer inputs of the float functions
become the default float, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

from lucid import dtypes, kernels
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import SavedTensor, promote, require_tensors, to_float, write_out

OPS = OpTable(
    op("exp", sample((2, 3), gg=True, ref="exp")),
    op("expm1", sample((3,), ref="expm1")),
    op("exp2", sample((3,), ref="exp2")),
    op("log", sample((2, 3), domain="pos", gg=True, ref="log")),
    op("log2", sample((3,), domain="pos", ref="log2")),
    op("log10", sample((3,), domain="pos", ref="log10")),
    op("log1p", sample((3,), domain="pos", ref="log1p")),
    op("sqrt", sample((3,), domain="pos", gg=True, ref="sqrt")),
    op("rsqrt", sample((3,), domain="pos", gg=True)),
    op("reciprocal", sample((3,), domain="pos", gg=True, ref="reciprocal")),
    op("square", sample((3,), gg=True, ref="square")),
    op("abs", sample((3, 2), domain="away", ref="abs")),
    op("absolute", alias="abs"),
    op("neg", sample((3,), ref="negative")),
    op("negative", alias="neg"),
    op("sin", sample((3,), gg=True, ref="sin")),
    op("cos", sample((3,), gg=True, ref="cos")),
    op("tan", sample((3,), domain="unit", ref="tan")),
    op("asin", sample((3,), domain="unit", ref="arcsin")),
    op("arcsin", alias="asin"),
    op("acos", sample((3,), domain="unit", ref="arccos")),
    op("arccos", alias="acos"),
    op("atan", sample((3,), ref="arctan")),
    op("arctan", alias="atan"),
    op("atan2", sample((3,), (3,), ref="arctan2")),
    op("arctan2", alias="atan2"),
    op("sinh", sample((3,), ref="sinh")),
    op("cosh", sample((3,), ref="cosh")),
    op("tanh", sample((3,), gg=True, ref="tanh")),
    op("asinh", sample((3,), ref="arcsinh")),
    op("arcsinh", alias="asinh"),
    op("acosh", sample((3,), domain="gt1", ref="arccosh")),
    op("arccosh", alias="acosh"),
    op("atanh", sample((3,), domain="unit", ref="arctanh")),
    op("arctanh", alias="atanh"),
    op("sigmoid", sample((3, 4), gg=True)),
    op(
        "logit",
        sample((3, 4), domain="prob", gg=True),
        sample((3, 4), domain="prob", eps=0.2, tag="eps"),
    ),
    op("relu", sample((3, 4), domain="away", gg=True)),
    op("floor", sample((3,), domain="away", ref="floor")),
    op("ceil", sample((3,), domain="away", ref="ceil")),
    op("round", sample((3,), domain="away", ref="round")),
    op("trunc", sample((3,), domain="away", ref="trunc")),
    op("fix", alias="trunc"),
    op("sign", sample((3,), domain="away", ref="sign")),
    op("frac", sample((3,), domain="away")),
    op("nan_to_num", sample((3,), ref="nan_to_num")),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class _Unary(Function):
    """``xp.<xp_name>(a)``; ``grad(g, saved)`` with saved = the input, or the output if
    ``saves_output``."""

    xp_name: ClassVar[str]
    saves_output: ClassVar[bool] = False

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        cls = type(ctx)
        out = getattr(ctx.xp, cls.xp_name)(a)
        ctx.save_for_backward(out if cls.saves_output else a)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (s,) = ctx.saved_tensors
        return type(ctx).grad(g, s)

    @staticmethod
    def grad(g: Tensor, s: Tensor) -> Tensor:
        raise NotImplementedError


class _Unsaved(Function):
    """``xp.<xp_name>(a)`` for functions whose gradient needs neither input nor output."""

    xp_name: ClassVar[str]

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return getattr(ctx.xp, type(ctx).xp_name)(a)


class _Flat(_Unsaved):
    """Piecewise-constant functions (floor, sign, ...): the gradient is zero everywhere."""

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g * 0


_Grad = Callable[[Tensor, Tensor], Tensor]


def _unary(name: str, xp_name: str, grad: _Grad, saves_output: bool = False) -> type[_Unary]:
    """The :class:`_Unary` ``name``: forward ``xp.<xp_name>``, backward ``grad(g, saved)``."""
    attrs = {"xp_name": xp_name, "saves_output": saves_output, "grad": staticmethod(grad),
             "_saved_result" if saves_output else "_saved_self": SavedTensor(0)}  # fmt: skip
    return cast("type[_Unary]", type(name, (_Unary,), attrs))


# Each gradient rule, of the upstream gradient g and the saved input a (or output out).
Exp = _unary("Exp", "exp", lambda g, out: g * out, saves_output=True)
Expm1 = _unary("Expm1", "expm1", lambda g, out: g * (out + 1), saves_output=True)
Log = _unary("Log", "log", lambda g, a: g / a)
Log2 = _unary("Log2", "log2", lambda g, a: g / (a * math.log(2.0)))
Log10 = _unary("Log10", "log10", lambda g, a: g / (a * math.log(10.0)))
Log1p = _unary("Log1p", "log1p", lambda g, a: g / (a + 1))
Sqrt = _unary("Sqrt", "sqrt", lambda g, out: g / (out * 2), saves_output=True)
Reciprocal = _unary("Reciprocal", "reciprocal", lambda g, out: -g * out * out, saves_output=True)
Square = _unary("Square", "square", lambda g, a: g * a * 2)
# NOTE: the gradient at 0 is 0 (sign(0)), as in PyTorch.
Abs = _unary("Abs", "abs", lambda g, a: g * a.sgn())  # sgn: z/|z| for complex
Sin = _unary("Sin", "sin", lambda g, a: g * a.cos())
Cos = _unary("Cos", "cos", lambda g, a: -g * a.sin())
Tan = _unary("Tan", "tan", lambda g, out: g * (out * out + 1), saves_output=True)
Asin = _unary("Asin", "arcsin", lambda g, a: g * (1 - a * a).rsqrt())
Acos = _unary("Acos", "arccos", lambda g, a: -g * (1 - a * a).rsqrt())
Atan = _unary("Atan", "arctan", lambda g, a: g / (a * a + 1))
Sinh = _unary("Sinh", "sinh", lambda g, a: g * a.cosh())
Cosh = _unary("Cosh", "cosh", lambda g, a: g * a.sinh())
Tanh = _unary("Tanh", "tanh", lambda g, out: g * (1 - out * out), saves_output=True)
Asinh = _unary("Asinh", "arcsinh", lambda g, a: g * (a * a + 1).rsqrt())
Acosh = _unary("Acosh", "arccosh", lambda g, a: g * (a * a - 1).rsqrt())
Atanh = _unary("Atanh", "arctanh", lambda g, a: g / (1 - a * a))


class Exp2(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.power(2.0, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        return g * out * math.log(2.0)


class Rsqrt(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.reciprocal(ctx.xp.sqrt(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        return g * out * out * out * -0.5


class Sigmoid(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        xp = ctx.xp
        # torch's formula (its CPU kernel's): exp(-a) overflows to inf below -88 (float32),
        # giving 0 as the limit is; four passes where a stable where() of two branches took
        # nine (issue 30: 18x torch's time at 393K elements).
        fused = kernels.ACTIVATION.find(ctx.backend)
        out = None if fused is None else fused.forward(ctx.backend, "sigmoid", a)
        if out is None:
            out = xp.reciprocal(xp.add(xp.exp(xp.negative(a)), 1))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        if not grad_mode._state.enabled:  # first order: the backend's one pass, if it has one
            fused = kernels.ACTIVATION_GRAD.find(ctx.backend)
            d = None if fused is None else fused.forward(ctx.backend, "sigmoid", g._data, out._data)
            if d is not None:
                return Tensor.from_backend_array(d, ctx.backend)
        return g * (1 - out) * out  # torch's order (sigmoid_backward)


class Relu(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        fused = kernels.ACTIVATION.find(ctx.backend)  # one pass where the backend has one
        out = None if fused is None else fused.forward(ctx.backend, "relu", a)
        if out is None:
            out = ctx.xp.maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: the gradient at 0 is 0, as in PyTorch.
        (out,) = ctx.saved_tensors
        return _PositiveMask.apply(g, out)


class _PositiveMask(Function):
    """``g * (out > 0)``, ReLU's gradient, in one op (the mask is a constant: ``out`` gets no
    gradient), so its double backward is the same op. A backend may fuse it
    (``kernels.RELU_GRAD``, arrays in and out)."""

    @staticmethod
    def forward(ctx: Any, g: Any, out: Any) -> Any:
        ctx.save_for_backward(out)
        return kernels.RELU_GRAD.get(ctx.backend, kernels.ReluGradArrays).forward(
            ctx.backend, g, out
        )

    @staticmethod
    def backward(ctx: Any, h: Tensor) -> Any:
        (out,) = ctx.saved_tensors
        return _PositiveMask.apply(h, out), None


class Logit(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, eps: float | None) -> Any:
        xp = ctx.xp
        p = a if eps is None else xp.clip(a, eps, 1 - eps)
        ctx.save_for_backward(a)
        ctx.eps = eps
        return xp.log(p / (1 - p))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: with eps, the gradient is 0 where the input was clamped, as in PyTorch.
        (a,) = ctx.saved_tensors
        grad = g / (a * (1 - a))
        if ctx.eps is not None:
            grad = grad * ((a >= ctx.eps) & (a <= 1 - ctx.eps)).to(g.dtype)
        return grad, None


class Frac(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return ctx.xp.subtract(a, ctx.xp.trunc(a))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g


class NanToNum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, nan: float, posinf: Any, neginf: Any) -> Any:
        ctx.save_for_backward(a)
        return ctx.xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (a,) = ctx.saved_tensors
        return g * a.isfinite().to(g.dtype), None, None, None


class Floor(_Flat):
    xp_name = "floor"


class Ceil(_Flat):
    xp_name = "ceil"


class Trunc(_Flat):
    xp_name = "trunc"


class Sign(_Flat):
    xp_name = "sign"


class Round(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, decimals: int) -> Any:
        return ctx.xp.round(a, decimals)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g * 0, None


class Neg(_Unsaved):
    xp_name = "negative"

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return -g


def _float_op(cls: type[Function], doc: str) -> Callable[..., Tensor]:
    def op(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
        if out is None:
            return cls.apply(to_float(input))
        result: Tensor = write_out(op.__name__, cls.apply(to_float(input)), out, input)
        return result

    op.__name__ = op.__qualname__ = cls.__name__.lower()
    op.__doc__ = doc
    return op


def _same_type_op(cls: type[Function], doc: str) -> Callable[..., Tensor]:
    def op(input: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
        if out is None:
            return cls.apply(input)
        result: Tensor = write_out(op.__name__, cls.apply(input), out, input)
        return result

    op.__name__ = op.__qualname__ = cls.__name__.lower()
    op.__doc__ = doc
    return op


exp = _float_op(Exp, "Elementwise e**x.")
expm1 = _float_op(Expm1, "Elementwise e**x - 1, accurate near 0.")
exp2 = _float_op(Exp2, "Elementwise 2**x.")
log = _float_op(Log, "Natural logarithm.")
log2 = _float_op(Log2, "Base-2 logarithm.")
log10 = _float_op(Log10, "Base-10 logarithm.")
log1p = _float_op(Log1p, "log(1 + x), accurate near 0.")
sqrt = _float_op(Sqrt, "Square root.")
rsqrt = _float_op(Rsqrt, "1 / sqrt(x).")
reciprocal = _float_op(Reciprocal, "1 / x.")
sin = _float_op(Sin, "Sine.")
cos = _float_op(Cos, "Cosine.")
tan = _float_op(Tan, "Tangent.")
asin = arcsin = _float_op(Asin, "Inverse sine.")
acos = arccos = _float_op(Acos, "Inverse cosine.")
atan = arctan = _float_op(Atan, "Inverse tangent.")
sinh = _float_op(Sinh, "Hyperbolic sine.")
cosh = _float_op(Cosh, "Hyperbolic cosine.")
tanh = _float_op(Tanh, "Hyperbolic tangent.")
asinh = arcsinh = _float_op(Asinh, "Inverse hyperbolic sine.")
acosh = arccosh = _float_op(Acosh, "Inverse hyperbolic cosine.")
atanh = arctanh = _float_op(Atanh, "Inverse hyperbolic tangent.")
sigmoid = _float_op(Sigmoid, "1 / (1 + exp(-x)), computed without overflow.")


def square(input: Tensor) -> Tensor:  # noqa: A002
    """x * x (a bool input squares as int64, as torch)."""
    return Square.apply(input.to(dtypes.int64) if input.dtype is dtypes.bool_ else input)


abs = absolute = _same_type_op(Abs, "Absolute value.")  # noqa: A001
_neg = _same_type_op(Neg, "-x.")


def neg(input: Tensor) -> Tensor:  # noqa: A002
    """-x (a bool tensor is refused, as torch: use ``~`` or ``logical_not``)."""
    if isinstance(input, Tensor) and input.dtype is dtypes.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return _neg(input)


negative = neg
relu = _same_type_op(Relu, "max(x, 0); the gradient at 0 is 0.")
floor = _same_type_op(Floor, "Largest integer <= x (zero gradient).")
ceil = _same_type_op(Ceil, "Smallest integer >= x (zero gradient).")
trunc = fix = _same_type_op(Trunc, "Round toward zero (zero gradient).")


def sign(input: Tensor) -> Tensor:  # noqa: A002
    """-1, 0 or 1 (zero gradient); a bool input comes back as a copy."""
    if input.dtype.is_complex:
        raise RuntimeError(
            "Unlike NumPy, lucid.sign is not intended to support complex numbers. Please use "
            "lucid.sgn instead."
        )
    return input.clone() if input.dtype is dtypes.bool_ else Sign.apply(input)


frac = _same_type_op(Frac, "x - trunc(x).")


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001, A002
    """Round half to even, like torch (zero gradient)."""
    return Round.apply(input, decimals)


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(p / (1 - p)), the inverse of sigmoid; ``eps`` first clamps p to [eps, 1 - eps]."""
    return Logit.apply(to_float(input), eps)


def nan_to_num(
    input: Tensor,  # noqa: A002
    nan: float | None = None,
    posinf: float | None = None,
    neginf: float | None = None,
) -> Tensor:
    """NaN (by 0.0 unless ``nan``), +inf and -inf replaced by finite values (gradient only
    where finite)."""
    return NanToNum.apply(input, 0.0 if nan is None else nan, posinf, neginf)


def atan2(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """Angle of the point (other, input), elementwise."""
    require_tensors("atan2", input, other)
    y, x = promote(input, other)
    return Atan2.apply(to_float(y), to_float(x))


arctan2 = atan2


class Atan2(Function):
    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, y: Any, x: Any) -> Any:
        ctx.save_for_backward(y, x)
        return ctx.xp.arctan2(y, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        y, x = ctx.saved_tensors
        r2 = y * y + x * x
        gy = g * x / r2 if ctx.needs_input_grad[0] else None
        gx = -g * y / r2 if ctx.needs_input_grad[1] else None
        return gy, gx
