"""Complex-number ops: ``real``/``imag``, ``conj``, ``angle``, ``sgn``, ``polar``, ``complex``,
``view_as_real``/``view_as_complex``.

Gradients follow PyTorch's convention for complex numbers: the gradient handed to a complex
input is the conjugate Wirtinger derivative ``dL/dx + i dL/dy`` of the real loss, so that
``p -= lr * p.grad`` descends. These ops are not holomorphic, so each writes its own rule
(``complex_aware``); the holomorphic ops of the other tables get the rule from the engine (it
conjugates their ordinary formula, see ``lucid.autograd.engine``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op
from lucid.ops._util import scalar_type_name, write_out
from lucid.ops.unary import Sign

_T = "complex inputs: test_core_fft.py"
OPS = OpTable(
    op("real", method=False, untested=_T),  # Tensor.real/.imag are properties (lucid._tensor)
    op("imag", method=False, untested=_T),
    op("conj", untested=_T),
    op("conj_physical", untested=_T),
    op("resolve_conj", untested=_T),
    op("resolve_neg", untested=_T),
    op("is_conj", untested=_T),
    op("is_neg", untested=_T),
    op("angle", untested=_T),
    op("sgn", untested=_T),
    op("polar", method=False, untested=_T),
    op("complex", method=False, untested=_T),
    op("view_as_real", method=False, untested=_T),
    op("view_as_complex", method=False, untested=_T),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names

_REAL_OF = {"complex64": dtypes.float32, "complex128": dtypes.float64}
_COMPLEX_OF = {"float32": dtypes.complex64, "float64": dtypes.complex128}


def real_dtype(dt: dtypes.dtype) -> dtypes.dtype:
    """The real dtype of a complex one (complex64 -> float32); other dtypes come back as is."""
    return _REAL_OF.get(dt.name, dt)


def complex_dtype(dt: dtypes.dtype) -> dtypes.dtype:
    """The complex dtype with ``dt`` as its parts (float32 -> complex64); float16/bfloat16
    and non-floats go to complex64 (lucid has no complex32), complex stays as is."""
    if dt.is_complex:
        return dt
    return _COMPLEX_OF.get(dt.name, dtypes.complex64)


class _Aware(Function):
    """Base of the ops whose backward already follows PyTorch's complex convention."""

    complex_aware = True


class Real(_Aware):
    is_view = True  # NumPy's ``a.real`` is a writable view, as torch's

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.cdt = ctx.backend.dtype_of(a)
        return ctx.xp.real(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.to(ctx.cdt)


class Imag(_Aware):
    is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.cdt = ctx.backend.dtype_of(a)
        return ctx.xp.imag(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # L = f(y): dL/dx + i dL/dy = i g
        return g.to(ctx.cdt) * 1j


class Conj(_Aware):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return ctx.xp.conj(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return conj(g)


class Angle(_Aware):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.save_for_backward(a)
        xp = ctx.xp
        return xp.arctan2(xp.imag(a), xp.real(a))  # (MLX has no angle; 0 or pi for reals)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (a,) = ctx.saved_tensors
        if not a.is_complex():
            return g * 0
        # torch's angle_backward: i z / |z|^2, zero at 0
        r2 = real(a) * real(a) + imag(a) * imag(a)
        safe = r2 + (r2 == 0).to(r2.dtype)
        return (a * 1j / safe * g).masked_fill(r2 == 0, 0)


class Sgn(_Aware):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        xp = ctx.xp
        r = xp.abs(a)
        zero = r == 0
        out = a / xp.where(zero, xp.ones_like(r), r)
        ctx.save_for_backward(r, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        r, s = ctx.saved_tensors
        # torch's sgn_backward: (g - s^2 conj(g)) / (2|z|), zero at 0
        safe = r + (r == 0).to(r.dtype)
        return ((g - s * s * conj(g)) / (safe * 2)).masked_fill(r == 0, 0)


class Complex(_Aware):
    @staticmethod
    def forward(ctx: Any, re: Any, im: Any, cdt: dtypes.dtype) -> Any:
        b = ctx.backend
        out = b.astype(re, cdt) + b.astype(im, cdt) * 1j
        return b.astype(out, cdt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        gr = real(g) if ctx.needs_input_grad[0] else None
        gi = imag(g) if ctx.needs_input_grad[1] else None
        return gr, gi, None


class ViewAsReal(_Aware):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        xp = ctx.xp
        return xp.stack([xp.real(a), xp.imag(a)], axis=-1)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return view_as_complex(g)


class ViewAsComplex(_Aware):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        b = ctx.backend
        cdt = complex_dtype(b.dtype_of(a))
        out = b.astype(a[..., 0], cdt) + b.astype(a[..., 1], cdt) * 1j
        return b.astype(out, cdt)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return view_as_real(g)


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real part of a complex tensor (a view, writable on NumPy); a real tensor itself."""
    if not input.is_complex():
        return input
    return Real.apply(input)


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary part of a complex tensor (a view, writable on NumPy)."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate; a real tensor itself. Lucid has no lazy conjugate bit: this is
    ``conj_physical`` (a new tensor), and ``is_conj`` is always False."""
    if not input.is_complex():
        return input
    return Conj.apply(input)


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate, computed now (as ``conj`` in lucid)."""
    return conj(input)


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: lucid's conjugates are never lazy."""
    return input


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: lucid has no lazy negation bit."""
    return input


def is_conj(input: Tensor) -> bool:  # noqa: A002
    """Always False: lucid has no lazy conjugate bit."""
    return False


def is_neg(input: Tensor) -> bool:  # noqa: A002
    """Always False: lucid has no lazy negation bit."""
    return False


def angle(input: Tensor) -> Tensor:  # noqa: A002
    """The argument of each element, in radians (``atan2(imag, real)``); for real inputs 0 or
    pi. Complex in gives the real dtype; integers give the default float."""
    x = input
    if not x.dtype.is_complex and not x.dtype.is_floating_point:
        x = x.to(dtypes.get_default_dtype())
    return Angle.apply(x)


def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """``z / |z|`` (0 at 0) for complex tensors; ``sign`` for real ones."""
    if not input.is_complex():
        return input.clone() if input.dtype is dtypes.bool_ else Sign.apply(input)
    return Sgn.apply(input)


_HALF_FLOAT_DOUBLE = {"float16", "float32", "float64"}


def _complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """The complex tensor ``real + i imag``: float32 parts give complex64, float64 parts
    complex128 (both parts of one dtype, as torch)."""
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if not (_HALF_FLOAT_DOUBLE >= {real.dtype.name, imag.dtype.name}):
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got "
            f"{scalar_type_name(real.dtype)} and {scalar_type_name(imag.dtype)}"
        )
    if real.dtype is not imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(real.dtype)} but got scalar type "
            f"{scalar_type_name(imag.dtype)} for second argument"
        )
    if real.dtype.name not in _COMPLEX_OF:
        raise RuntimeError(
            f"Expected both inputs to be Float or Double tensors but got {real.dtype.name} and "
            f"{imag.dtype.name}"
        )
    return Complex.apply(real, imag, _COMPLEX_OF[real.dtype.name])


def complex(real: Tensor, imag: Tensor, *, out: Any = None) -> Tensor:  # noqa: A001
    """The complex tensor ``real + i imag``: float32 parts give complex64, float64 parts
    complex128 (both parts of one dtype, as torch).

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = _complex(real, imag)
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(result.dtype)} but got scalar "
            f"type {scalar_type_name(out.dtype)} for argument 'out'"
        )
    result = write_out("complex", result, out, real, imag)
    return result


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (dtypes as ``complex``)."""
    for name, t in (("abs", abs), ("angle", angle)):
        if not isinstance(t, Tensor):
            raise TypeError(f"polar(): argument '{name}' must be Tensor, not {type(t).__name__}")
    return complex(abs * angle.cos(), abs * angle.sin())


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor as a real one with a last dim of 2 (real, imaginary). Lucid returns a
    copy, not a view: writing into it does not change ``input``."""
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """A real tensor whose last dim has size 2 as a complex one (a copy in lucid)."""
    if input.dtype.name not in _COMPLEX_OF:
        raise RuntimeError(
            "view_as_complex is only supported for float and double tensors, but got a tensor "
            f"of scalar type: {input.dtype.name}"
        )
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return ViewAsComplex.apply(input)
