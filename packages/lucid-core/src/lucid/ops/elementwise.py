"""Binary elementwise ops: arithmetic, pow, maximum/minimum, where, clamp, comparisons, casts.

Each differentiable op is a small Function: forward on arrays, backward in lucid ops (so
double backward works). Broadcast gradients are reduced by the engine, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import (
    SavedTensor,
    Scalar,
    as_tensor_like,
    promote,
    python_scalar,
    require_tensor,
    require_tensors,
    to_float,
    write_out,
)
from lucid.ops._util import cast as cast  # this module's op (its Function is in _util)

_BOOL = "boolean result"
_INT = "integer op"
OPS = OpTable(
    op("add", sample((3, 4), (4,), gg=True), sample((3, 4), (3, 4), alpha=2.5, tag="alpha"),
       method=False),
    op("sub", sample((2, 3), (3,), gg=True), method=False),
    op("subtract", alias="sub"),
    op("rsub", sample((3,), (3,)), method=False),
    op("mul", sample((2, 3), (2, 1), gg=True), method=False),
    op("multiply", alias="mul"),
    op("div", sample((2, 3), (3,), domain="pos", gg=True), method=False),
    op("divide", alias="div"),
    op("true_divide", alias="div"),
    op("floor_divide", sample((3, 4), (3, 4), domain="pos"), nograd="piecewise constant"),
    op("remainder", sample((4,), (4,), domain="pos", ref="remainder")),
    op("fmod", sample((4,), (4,), domain="pos", ref="fmod")),
    op("pow", sample((2, 3), (2, 3), domain="pos", gg=True, ref="power", tag="tensor")),
    op("float_power", sample((3, 4), domain="pos", args=(1.5,)),
       sample((3, 4), (3, 4), domain="pos", tag="tensor")),
    op("maximum", sample((3, 4), (3, 4), ref="maximum")),
    op("minimum", sample((3, 4), (4,), ref="minimum")),
    op("fmax", sample((3, 4), (3, 4), ref="fmax")),
    op("fmin", sample((3, 4), (4,), ref="fmin")),
    op("where", untested="takes a condition: core_op_cases' where cases"),
    op("hypot", sample((3,), (2, 3), ref="hypot")),
    op("copysign", sample((3, 2), (3, 2), domain="away", ref="copysign")),
    op("logaddexp", sample((3, 4), (3, 4), gg=True, ref="logaddexp"),
       sample((3, 4), (4,), tag="broadcast")),
    op("logaddexp2", sample((3, 4), (3, 4), gg=True, ref="logaddexp2")),
    op("xlogy", sample((3,), (3,), domain="pos")),
    op("clamp", sample((3, 4), domain="away", args=(-0.5, 0.5), ref="clip")),
    op("clip", alias="clamp"),
    op("clamp_min", sample((3, 4), domain="away", args=(0.3,))),
    op("clamp_max", sample((3, 4), domain="away", args=(0.3,))),
    op("lerp", sample((3,), (3,), args=(0.3,)), sample((3,), (3,), (3,), tag="tensor_w")),
    op("addcmul", sample((3,), (3,), (3,), value=0.5)),
    op("addcdiv", sample((3,), (3,), (3,), domain="pos", value=2)),
    op("cast", method=False, untested="a dtype conversion (Tensor.to): test_core_tensor"),
    *[op(n, sample((3, 4), (3, 4)), nograd=_BOOL) for n in ("eq", "ne", "lt", "le", "gt", "ge")],
    op("greater", alias="gt"),
    op("greater_equal", alias="ge"),
    op("less", alias="lt"),
    op("less_equal", alias="le"),
    op("not_equal", alias="ne"),
    op("isclose", sample((3, 4), (3, 4)), nograd=_BOOL),
    op("equal", untested="returns a Python bool: test_core_tensor"),
    op("allclose", untested="returns a Python bool: test_core_tensor"),
    *[op(n, sample((3, 4), (3, 4)), nograd=_BOOL) for n in ("logical_and", "logical_or",
                                                          "logical_xor")],
    *[op(n, sample((3, 4)), nograd=_BOOL) for n in ("logical_not", "isnan", "isinf", "isfinite",
                                                   "signbit")],
    *[op(n, sample((3, 4), (3, 4), domain="int", high=16), nograd=_INT)
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    op("bitwise_not", sample((3, 4), domain="int", high=16), nograd=_INT),
    op("bitwise_left_shift", sample((3, 4), (3, 4), domain="int", high=6, ref="left_shift"),
       nograd=_INT),
    op("bitwise_right_shift", sample((3, 4), (3, 4), domain="int", high=6, ref="right_shift"),
       nograd=_INT),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


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
    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        # Save only what the gradients need: `y.mul_(2)` on an intermediate must not keep y.
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        return ctx.xp.multiply(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        ga = g * b if ctx.needs_input_grad[0] else None
        gb = g * a if ctx.needs_input_grad[1] else None
        return ga, gb

    _saved_self = SavedTensor(0)  # torch's names for what the node saved
    _saved_other = SavedTensor(1)


class Div(Function):
    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b)
        return ctx.xp.true_divide(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        ga = g / b if ctx.needs_input_grad[0] else None
        gb = -g * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb

    _saved_self = SavedTensor(0)
    _saved_other = SavedTensor(1)


class Pow(Function):
    _node_name = "PowBackward1"  # torch's name for tensor ** tensor
    _pack_order = (1, 0, 2)  # torch saves exponent, self, result

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        xp = ctx.xp
        if ctx.backend.dtype_of(b).category == dtypes.INT and bool(xp.any(b < 0)):
            out = _int_power(xp, a, b)
        else:
            out = xp.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b, out = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # NOTE: b * a**(b-1), written so that b == 0 gives 0 even where a == 0 (as torch).
            ga = where(b == 0, 0.0, g * b * a ** (b - 1))
        if ctx.needs_input_grad[1]:
            # NOTE: d/db a**b = a**b * log(a); torch defines it as 0 where a == 0 and b >= 0,
            # and keeps inf * log(0) = -inf where a == 0 and b < 0.
            gb = g * where((a == 0) & (b >= 0), 0.0, out * a.log())
        return ga, gb

    _saved_self = SavedTensor(0)
    _saved_exponent = SavedTensor(1)
    _saved_result = SavedTensor(2)


def _int_power(xp: Any, a: Any, b: Any) -> Any:
    """Integer ``a ** b`` with negative exponents in ``b`` as torch computes them: 1 for a base
    of 1, +-1 for -1, 0 for any other base (where NumPy raises)."""
    neg = b < 0
    pos = xp.power(a, xp.where(neg, xp.zeros_like(b), b))
    one = xp.ones_like(pos)
    odd = xp.remainder(b, 2) != 0
    minus_one = xp.where(odd, -one, one)
    small = xp.where(a == 1, one, xp.where(a == -1, minus_one, xp.zeros_like(pos)))
    return xp.where(neg, small, pos)


class LogAddExp(Function):
    """``log(exp(a) + exp(b))``, or in base 2 (``logaddexp2``); the gradients are torch's
    ``g / (1 + exp(b - a))`` and ``g / (1 + exp(a - b))`` (``exp2`` in base 2)."""

    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, base2: bool) -> Any:
        ctx._node_name = "Logaddexp2Backward0" if base2 else "LogaddexpBackward0"  # torch's
        ctx.save_for_backward(a, b)
        ctx.base2 = base2
        if not base2:
            return ctx.xp.logaddexp(a, b)
        return ctx.xp.logaddexp(a * _LN2, b * _LN2) / _LN2

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g / (1 + _exp(b - a, ctx.base2))
        if ctx.needs_input_grad[1]:
            gb = g / (1 + _exp(a - b, ctx.base2))
        return ga, gb, None


_LN2 = 0.6931471805599453


def _exp(x: Tensor, base2: bool) -> Tensor:
    return x.exp2() if base2 else x.exp()


class Copysign(Function):
    """``|a|`` with the sign bit of ``b``; ``b`` gets a zero gradient (as torch)."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        out = ctx.xp.copysign(a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, out = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g * where(a == 0, 0.0, out / a)
        if ctx.needs_input_grad[1]:
            gb = g.new_zeros(g.shape)
        return ga, gb


# ``a ** e`` for these Python exponents on float tensors, as torch's CPU kernel computes them
# (``pow_tensor_scalar_optimized_kernel``): multiplies, a square root, a reciprocal.
_POW_FORMS: dict[float, Any] = {
    3: lambda xp, a: xp.multiply(xp.multiply(a, a), a),
    -2: lambda xp, a: xp.reciprocal(xp.multiply(a, a)),
    0.5: lambda xp, a: xp.sqrt(a),
    -0.5: lambda xp, a: xp.reciprocal(xp.sqrt(a)),
}


class PowScalar(Function):
    """``a ** e`` for a Python number ``e`` (the common case: no log, no mask on b)."""

    _node_name = "PowBackward0"  # torch's name for tensor ** number

    @staticmethod
    def forward(ctx: Any, a: Any, e: Any) -> Any:
        ctx.save_for_backward(a)
        ctx.e = e
        xp = ctx.xp
        if e in _POW_FORMS and type(e) is not bool and ctx.backend.dtype_of(a).is_floating_point:
            # torch's forms for these exponents (the same bits as its CPU kernel): a libm powf
            # per element is ~80x slower than the multiplies (x ** 3 over 393K float32s:
            # 23.5 ms against 0.3 ms; minGPT's tanh GELU)
            return _POW_FORMS[e](xp, a)
        if not ctx.backend.weak_python_scalars and a.ndim == 0:
            # NumPy < 2 promotes a 0-d float32 ** Python float to float64: pin the dtype.
            e = ctx.xp.asarray(e, dtype=a.dtype)
        return ctx.xp.power(a, e)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (a,) = ctx.saved_tensors
        e = ctx.e
        if e == 0:
            return g * 0, None
        if e == 1:
            return g, None
        if e == 2:
            return g * 2 * a, None
        return g * e * a ** (e - 1), None

    _saved_self = SavedTensor(0)

    @property
    def _saved_exponent(self) -> Any:
        """The Python number exponent (torch's ``_saved_exponent``)."""
        return getattr(self, "e")  # noqa: B009  (set by forward, on the node)


class Maximum(Function):
    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return ctx.xp.maximum(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: ties share the gradient equally, as in torch.
        a, b = ctx.saved_tensors
        w = (a > b).to(g.dtype) + (a == b).to(g.dtype) * 0.5
        return (g * w if ctx.needs_input_grad[0] else None), (
            g * (1 - w) if ctx.needs_input_grad[1] else None
        )


class Minimum(Function):
    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return ctx.xp.minimum(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        w = (a < b).to(g.dtype) + (a == b).to(g.dtype) * 0.5
        return (g * w if ctx.needs_input_grad[0] else None), (
            g * (1 - w) if ctx.needs_input_grad[1] else None
        )


class Where(Function):
    @staticmethod
    def forward(ctx: Any, cond: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(cond)
        return ctx.xp.where(cond, a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (cond,) = ctx.saved_tensors
        zero = g.new_zeros(())
        ga = where(cond, g, zero) if ctx.needs_input_grad[1] else None
        gb = where(cond, zero, g) if ctx.needs_input_grad[2] else None
        return None, ga, gb


class Clamp(Function):
    """``clip(a, lo, hi)``; lo/hi are None, Python numbers or arrays."""

    _pack_order = (2, 1, 0)  # torch saves max, min, self

    @staticmethod
    def forward(ctx: Any, a: Any, lo: Any, hi: Any) -> Any:
        ctx.save_for_backward(a, lo, hi)
        xp = ctx.xp
        out = a if lo is None else xp.maximum(a, lo)
        return out if hi is None else xp.minimum(out, hi)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: the gradient passes where lo <= a <= hi (boundaries included); when lo > hi
        # the output is hi, so hi gets the gradient (torch's rules).
        a, lo, hi = ctx.saved_tensors
        zero = g.new_zeros(())
        need_a, need_lo, need_hi = ctx.needs_input_grad
        ga = glo = ghi = None
        if need_a:
            if lo is None:
                inside = a <= hi
            elif hi is None:
                inside = a >= lo
            else:
                inside = (a >= lo) & (a <= hi)
            ga = where(inside, g, zero)
        if need_lo:
            glo = where((a < lo) & (lo < hi) if hi is not None else a < lo, g, zero)
        if need_hi:
            ghi = where((a > hi) | (hi < lo) if lo is not None else a > hi, g, zero)
        return ga, glo, ghi


class NonDiff(Function):
    """Any op without a gradient (comparisons, logical ops, floor_divide on ints ...)."""

    @staticmethod
    def forward(ctx: Any, name: str, *args: Any) -> Any:
        out = getattr(ctx.xp, name)(*args)
        ctx.mark_non_differentiable(out)
        return out


class Remainder(Function):
    """Python's ``%`` (sign of the divisor) for op ``remainder``, C's for ``fmod``."""

    _pack_order = (1, 0)  # torch saves other, then self

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any, name: str) -> Any:
        ctx._node_name = name.capitalize() + "Backward1"  # torch's: RemainderBackward1
        ctx.save_for_backward(a, b)
        ctx.rounding = "floor" if name == "remainder" else "trunc"
        return getattr(ctx.xp, name)(a, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, b = ctx.saved_tensors
        gb = None
        if ctx.needs_input_grad[1]:
            gb = -g * div(a, b, rounding_mode=ctx.rounding).detach()
        return g, gb, None


# -- public functions -----------------------------------------------------------------------------
def add(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``a + alpha * b`` with PyTorch's type promotion; ``out=`` writes into that tensor."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    if alpha != 1:
        b = b * alpha
    if out is None:
        return Add.apply(a, b)
    result: Tensor = write_out("add", Add.apply(a, b), out, input, other)
    return result


def sub(input: Any, other: Any, *, alpha: Any = 1, out: Any = None) -> Tensor:
    """``a - alpha * b`` with PyTorch's type promotion; ``out=`` writes into that tensor."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    if alpha != 1:
        b = b * alpha
    if out is None:
        return Sub.apply(a, b)
    result: Tensor = write_out("sub", Sub.apply(a, b), out, input, other)
    return result


subtract = sub


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``b - alpha * a``."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensor("rsub", a)
    return sub(b, a, alpha=alpha)


def mul(input: Any, other: Any, *, out: Any = None) -> Tensor:
    """``a * b`` with PyTorch's type promotion; ``out=`` writes into that tensor."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    if out is None:
        return Mul.apply(a, b)
    result: Tensor = write_out("mul", Mul.apply(a, b), out, input, other)
    return result


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None, out: Any = None) -> Tensor:
    """True division (ints become the default float) or ``"trunc"``/``"floor"`` rounding;
    ``out=`` writes into that tensor."""
    if out is not None:
        result: Tensor = write_out("div", div(input, other, rounding_mode=rounding_mode), out,
                                   input, other)  # fmt: skip
        return result
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(
                f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{rounding_mode}'"
            )
        ref = a if isinstance(a, Tensor) else b
        if not ref.dtype.is_floating_point:
            if rounding_mode == "floor":
                return NonDiff.apply("floor_divide", a, b)
            q = NonDiff.apply("trunc", NonDiff.apply("true_divide", a, b))
            return cast(q, ref.dtype)
    quotient: Tensor = Div.apply(to_float(a), to_float(b))
    if rounding_mode == "trunc":
        return quotient.trunc()
    if rounding_mode == "floor":
        return quotient.floor()
    return quotient


divide = div
true_divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    """``a // b`` rounded toward minus infinity."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return div(a, b, rounding_mode="floor")


def remainder(input: Any, other: Any) -> Tensor:
    """Remainder with the sign of the divisor (Python's ``%``)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    return Remainder.apply(a, b, "remainder")


def fmod(input: Any, other: Any) -> Tensor:
    """Remainder with the sign of the dividend (C's ``fmod``)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensor("fmod", a)
    a, b = promote(a, b)
    return Remainder.apply(a, b, "fmod")


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001
    """``a ** b``: tensor or scalar exponent, or a scalar base with a tensor exponent."""
    a, b = input, python_scalar(exponent)  # torch's names outside, short ones inside
    if isinstance(a, Tensor) and isinstance(b, bool):
        b = int(b)  # ``x ** True`` is ``x ** 1``, as in torch (a bool reached the array power)
    if isinstance(a, Tensor) and isinstance(b, Scalar):  # (a bool ``b`` is an int by now)
        if a.dtype.category < dtypes.FLOAT and isinstance(b, float):
            a = to_float(a)
        elif a.dtype.category < dtypes.FLOAT and not isinstance(b, complex) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return PowScalar.apply(a, b)
    a, b = promote(a, b)
    if not isinstance(a, Tensor):
        a = b.new_tensor(a) if isinstance(b, Tensor) else a
    return Pow.apply(a, b)


def float_power(input: Any, exponent: Any) -> Tensor:  # noqa: A002
    """``input ** exponent`` computed in double precision: float64 (complex128 for complex
    operands) whatever the inputs' dtypes, as torch."""
    tensors = [t for t in (input, exponent) if isinstance(t, Tensor)]
    cplx = any(t.dtype.is_complex for t in tensors) or any(
        isinstance(t, complex) for t in (input, exponent)
    )
    wide = dtypes.complex128 if cplx else dtypes.float64
    a = input.to(wide) if isinstance(input, Tensor) else input
    b = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    if isinstance(a, Tensor) and isinstance(b, (int, float, complex)) and not isinstance(b, bool):
        return PowScalar.apply(a, b)
    return pow(a, b)


def maximum(input: Any, other: Any) -> Tensor:
    """Elementwise maximum; tied elements share the gradient equally."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("maximum", a, b)
    a, b = promote(a, b)
    return Maximum.apply(a, b)


def minimum(input: Any, other: Any) -> Tensor:
    """Elementwise minimum; tied elements share the gradient equally."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("minimum", a, b)
    a, b = promote(a, b)
    return Minimum.apply(a, b)


def fmax(input: Any, other: Any) -> Tensor:
    """Elementwise maximum (NaN handling as :func:`maximum`)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("fmax", a, b)
    return maximum(a, b)


def fmin(input: Any, other: Any) -> Tensor:
    """Elementwise minimum (NaN handling as :func:`minimum`)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("fmin", a, b)
    return minimum(a, b)


def where(condition: Any, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``condition ? input : other`` elementwise (scalars allowed for input/other)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    if not isinstance(condition, Tensor):
        ref = input if isinstance(input, Tensor) else other
        condition = as_tensor_like(condition, ref)
    if condition.dtype is not dtypes.bool_:
        condition = cast(condition, dtypes.bool_)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = condition.new_tensor(input, dtype=dtypes.result_type([], [], [input, other]))
    input, other = promote(input, other)
    return Where.apply(condition, input, other)


def hypot(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``sqrt(input**2 + other**2)`` elementwise."""
    require_tensors("hypot", input, other)
    a, b = promote(input, other)
    a, b = to_float(a), to_float(b)
    out: Tensor = (a * a + b * b).sqrt()
    return out


def copysign(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``|input|`` with the sign of ``other`` (its sign bit, so -0.0 counts as negative)."""
    require_tensor("copysign", input)
    a, b = _float_pair(input, other)
    return Copysign.apply(a, b)


def _float_pair(input: Any, other: Any) -> tuple[Tensor, Tensor]:
    """Both operands as tensors of one floating dtype (the promoted one; ints become float)."""
    a, b = promote(input, other)
    a, b = to_float(a), to_float(b)
    ref = a if isinstance(a, Tensor) else b
    a = a if isinstance(a, Tensor) else ref.new_tensor(a)
    b = b if isinstance(b, Tensor) else ref.new_tensor(b)
    return a, b


def logaddexp(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``log(exp(input) + exp(other))`` without overflow.

    >>> lucid.logaddexp(lucid.tensor([0.0, 1.0]), lucid.tensor([0.0, -1.0]))
    tensor([0.6931, 1.1269])
    """
    require_tensors("logaddexp", input, other)
    a, b = _float_pair(input, other)
    return LogAddExp.apply(a, b, False)


def logaddexp2(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``log2(2**input + 2**other)`` without overflow."""
    a, b = _float_pair(input, other)
    return LogAddExp.apply(a, b, True)


def xlogy(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input * log(other)``, and 0 where ``input == 0`` (unless ``other`` is NaN)."""
    a, b = promote(input, other)
    a, b = to_float(a), to_float(b)
    if not isinstance(b, Tensor):
        b = a.new_tensor(b)
    if not isinstance(a, Tensor):
        a = b.new_tensor(a)
    out: Tensor = where((a == 0) & ~b.isnan(), 0.0, a * b.log())
    return out


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Clip to ``[min, max]``; bounds are numbers or tensors (then broadcast)."""
    a = input  # torch's parameter names outside, short ones inside
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    min, max = python_scalar(min), python_scalar(max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is not None:
            a, min = promote(a, min)
        if max is not None:
            a, max = promote(a, max)
            if isinstance(min, Tensor) and min.dtype is not a.dtype:
                min = cast(min, a.dtype)
    else:
        bound = [v for v in (min, max) if v is not None]
        res = dtypes.result_type([a.dtype], [], bound)
        if res is not a.dtype:
            a = cast(a, res)
    return Clamp.apply(a, min, max)


clip = clamp


def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``clamp(a, min, None)``."""
    a = input  # torch's parameter names outside, short ones inside
    require_tensor("clamp_min", a)
    return clamp(a, min, None)


def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``clamp(a, None, max)``."""
    a = input  # torch's parameter names outside, short ones inside
    require_tensor("clamp_max", a)
    return clamp(a, None, max)


def lerp(input: Tensor, end: Any, weight: Any) -> Tensor:  # noqa: A002
    """``input + weight * (end - input)``."""
    start = input  # torch's parameter names outside, short ones inside
    out: Tensor = start + weight * (end - start)
    return out


def addcmul(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``a + value * tensor1 * tensor2``."""
    a = input  # torch's parameter names outside, short ones inside
    prod = tensor2 * tensor1  # (Mul saves its operands for hooks in torch's order)
    out: Tensor = a + (prod * value if value != 1 else prod)
    return out


def addcdiv(input: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``a + value * tensor1 / tensor2``."""
    a = input  # torch's parameter names outside, short ones inside
    q = tensor1 / tensor2
    out: Tensor = a + (q * value if value != 1 else q)
    return out


# -- comparisons and logical ops ------------------------------------------------------------------
def _nondiff(name: str, a: Any, b: Any) -> Tensor:
    require_tensor(_COMPARISON_NAMES.get(name, name), a)
    a, b = promote(a, b)
    return NonDiff.apply(name, a, b)


_COMPARISON_NAMES = {"equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
                     "greater": "gt", "greater_equal": "ge"}  # fmt: skip


def eq(input: Any, other: Any) -> Tensor:
    """Elementwise ``==`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("equal", a, b)


def ne(input: Any, other: Any) -> Tensor:
    """Elementwise ``!=`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("not_equal", a, b)


def lt(input: Any, other: Any) -> Tensor:
    """Elementwise ``<`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("less", a, b)


def le(input: Any, other: Any) -> Tensor:
    """Elementwise ``<=`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("less_equal", a, b)


def gt(input: Any, other: Any) -> Tensor:
    """Elementwise ``>`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("greater", a, b)


def ge(input: Any, other: Any) -> Tensor:
    """Elementwise ``>=`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return _nondiff("greater_equal", a, b)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements (``torch.equal``)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return a.shape == b.shape and bool(eq(a, b).all())


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False
) -> bool:
    """True if ``|a - b| <= atol + rtol * |b|`` everywhere."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def isclose(
    input: Tensor, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False
) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (bool)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("isclose", a, b)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = promote(a, b)
    return NonDiff.apply("isclose", a, b, rtol, atol, equal_nan)


def _bool(x: Any, ref: Any) -> Any:
    if isinstance(x, Tensor):
        return x if x.dtype is dtypes.bool_ else cast(x, dtypes.bool_)
    return as_tensor_like(x, ref).bool()


def logical_and(input: Tensor, other: Any) -> Tensor:
    """Elementwise logical and (bool result)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("logical_and", a, b)
    return NonDiff.apply("logical_and", _bool(a, b), _bool(b, a))


def logical_or(input: Tensor, other: Any) -> Tensor:
    """Elementwise logical or (bool result)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("logical_or", a, b)
    return NonDiff.apply("logical_or", _bool(a, b), _bool(b, a))


def logical_xor(input: Tensor, other: Any) -> Tensor:
    """Elementwise logical xor (bool result)."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    require_tensors("logical_xor", a, b)
    return NonDiff.apply("logical_xor", _bool(a, b), _bool(b, a))


def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical not (bool result)."""
    a = input  # torch's parameter names outside, short ones inside
    return NonDiff.apply("logical_not", a)


def _check_bitwise(a: Any) -> None:
    if isinstance(a, Tensor) and a.dtype.category >= dtypes.FLOAT:
        raise RuntimeError(
            f"bitwise ops are only defined for integer and bool tensors, got {a.dtype}"
        )


def bitwise_and(input: Any, other: Any) -> Tensor:
    """Elementwise ``&`` of integer or bool tensors."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    _check_bitwise(a)
    _check_bitwise(b)
    return NonDiff.apply("bitwise_and", a, b)


def bitwise_or(input: Any, other: Any) -> Tensor:
    """Elementwise ``|`` of integer or bool tensors."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    _check_bitwise(a)
    _check_bitwise(b)
    return NonDiff.apply("bitwise_or", a, b)


def bitwise_xor(input: Any, other: Any) -> Tensor:
    """Elementwise ``^`` of integer or bool tensors."""
    a, b = input, other  # torch's parameter names outside, short ones inside
    a, b = promote(a, b)
    _check_bitwise(a)
    _check_bitwise(b)
    return NonDiff.apply("bitwise_xor", a, b)


def bitwise_not(input: Tensor) -> Tensor:
    """Elementwise ``~`` (logical not for bool tensors)."""
    a = input  # torch's parameter names outside, short ones inside
    _check_bitwise(a)
    name = "logical_not" if a.dtype is dtypes.bool_ else "invert"
    return NonDiff.apply(name, a)


def bitwise_left_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input << other`` for integer tensors; a shift by a negative amount or by the bit width
    or more gives 0, as torch."""
    a, b = _int_pair(input, other)
    out = NonDiff.apply("left_shift", a, b)
    shifted: Tensor = where(_out_of_range(b, a.dtype), 0, out)
    return shifted


def bitwise_right_shift(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input >> other`` (arithmetic for signed ints); a shift out of ``[0, bits)`` gives the
    sign fill (0 or -1), as torch."""
    a, b = _int_pair(input, other)
    out = NonDiff.apply("right_shift", a, b)
    fill = (a < 0).to(a.dtype) * -1 if a.dtype.is_signed else 0
    shifted: Tensor = where(_out_of_range(b, a.dtype), fill, out)
    return shifted


def _int_pair(input: Any, other: Any) -> tuple[Tensor, Any]:
    a, b = promote(input, other)
    a = a if isinstance(a, Tensor) else b.new_tensor(a)
    for x in (a, b):
        if isinstance(x, (Tensor, float)) and not _is_integer(x):
            kind = x.dtype if isinstance(x, Tensor) else "a Python float"
            raise NotImplementedError(f"bit shifts take integer tensors only, got {kind}")
    return a, b


def _is_integer(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype.category == dtypes.INT


def _out_of_range(shift: Any, dt: dtypes.dtype) -> Any:
    """Where a shift amount is negative or at least the bit width (numpy and MLX differ there)."""
    bits = dt.itemsize * 8
    return (shift < 0) | (shift >= bits) if isinstance(shift, Tensor) else not 0 <= shift < bits


def isnan(input: Tensor) -> Tensor:
    """True where the element is NaN."""
    a = input  # torch's parameter names outside, short ones inside
    return NonDiff.apply("isnan", a)


def isinf(input: Tensor) -> Tensor:
    """True where the element is +-inf."""
    a = input  # torch's parameter names outside, short ones inside
    return NonDiff.apply("isinf", a)


def isfinite(input: Tensor) -> Tensor:
    """True where the element is neither inf nor NaN."""
    a = input  # torch's parameter names outside, short ones inside
    return NonDiff.apply("isfinite", a)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (negative numbers and -0.0)."""
    a = input  # torch's parameter names outside, short ones inside
    return NonDiff.apply("signbit", a)
