"""Helpers shared by op modules: operand promotion, dim normalisation, the Function of a
smooth elementwise function whose gradient needs only its input, and ``out=`` writes."""

from __future__ import annotations

import functools
import inspect
import operator
import warnings
from collections.abc import Callable
from typing import Any, ClassVar, ParamSpec, TypeAlias, TypeVar, overload

import numpy as np

from lucid import dtypes
from lucid._creation import from_data
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import Function

Scalar = (int, float, bool, complex)
# A Python number, as ``promote`` may hand back the scalar side of a tensor-scalar pair.
PyScalar: TypeAlias = int | float | complex
P = ParamSpec("P")
R = TypeVar("R")


def as_tensor_like(x: Any, ref: Tensor) -> Tensor:
    """Wrap arrays / sequences as tensors on ``ref``'s device (scalars stay scalars)."""
    if isinstance(x, Tensor):
        return x
    wrapped: Tensor = from_data(x, device=ref.device)
    return wrapped


@overload
def promote(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]: ...
@overload
def promote(a: Tensor, b: object) -> tuple[Tensor, Tensor | PyScalar]: ...
@overload
def promote(a: PyScalar, b: Tensor) -> tuple[Tensor | PyScalar, Tensor]: ...
@overload
def promote(a: object, b: object) -> tuple[Tensor | PyScalar, Tensor | PyScalar]: ...
def promote(a: object, b: object) -> tuple[Tensor | PyScalar, Tensor | PyScalar]:
    """Cast the operands of a binary op to PyTorch's result type. At least one is a Tensor;
    the other comes back a Tensor or, where it is a Python number and the backend takes weak
    scalars (or the Tensor is not 0-d), that number."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._data.dtype == b._data.dtype:
                return a, b
            da, db = a.dtype, b.dtype
            dims = [d for t, d in ((a, da), (b, db)) if t.ndim > 0]
            zero = [d for t, d in ((a, da), (b, db)) if t.ndim == 0]
            res = dtypes.result_type(dims, zero, [])
            return (a if da is res else cast(a, res)), (b if db is res else cast(b, res))
        if type(b) is not float and type(b) is not int and isinstance(b, np.generic):
            b = python_scalar(b)  # (Python numbers, the common case, skip the check)
        if isinstance(b, Scalar):
            a = _with_scalar(a, b)
            return a, (b if a._backend.weak_python_scalars or a.ndim else _zero_dim(b, a))
        return promote(a, as_tensor_like(b, a))
    if isinstance(b, Tensor):
        if type(a) is not float and type(a) is not int and isinstance(a, np.generic):
            a = python_scalar(a)
        if isinstance(a, Scalar):
            b = _with_scalar(b, a)
            return (a if b._backend.weak_python_scalars or b.ndim else _zero_dim(a, b)), b
        return promote(as_tensor_like(a, b), b)
    raise TypeError(f"expected at least one Tensor operand, got {type(a).__name__} and "
                    f"{type(b).__name__}")  # fmt: skip


def python_scalar(s: Any) -> Any:
    """A NumPy scalar (``np.float64(2)``, ``np.sqrt(4)``, ``np.int64(3)``) as the Python
    number torch takes it for: a weak scalar, so ``x / np.sqrt(d)`` keeps ``x``'s float32
    (NumPy's own rules would make the result float64). Anything else comes back as it is."""
    return s.item() if isinstance(s, np.generic) and s.dtype.kind in "biufc" else s


def _zero_dim(s: Any, t: Tensor) -> Tensor:
    """``s`` as a 0-d tensor of ``t``'s dtype (for backends without weak Python scalars)."""
    return Tensor.from_backend_array(t._backend.asarray(s, t.dtype), t._backend)


def _with_scalar(t: Tensor, s: Any) -> Tensor:
    """``t`` cast to the result type of ``t`` with a Python number (usually ``t`` itself)."""
    category = t.dtype.category
    kind = type(s)
    if (kind is float and category >= dtypes.FLOAT) or (kind is int and category >= dtypes.INT):
        return t  # the common cases: the tensor's dtype wins
    d = t.dtype
    res = dtypes.result_type([d], [], [s])
    return t if res is d else cast(t, res)


def require_tensor(name: str, value: Any, arg: str = "input", position: int = 1) -> None:
    """torch's TypeError for a Python number (or other non-tensor) where it takes a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
            f"not {type(value).__name__}"
        )


def require_tensors(name: str, input: Any, other: Any, arg: str = "other") -> None:  # noqa: A002
    """Both operands of a Tensor-only binary op (``maximum``, ``atan2``, ...) are tensors."""
    require_tensor(name, input)
    require_tensor(name, other, arg, 2)


def to_float(x: Any) -> Any:
    """Integer and bool tensors become the default float (for float-only functions)."""
    if isinstance(x, Tensor) and x.dtype.category < dtypes.FLOAT:
        return cast(x, dtypes.get_default_dtype())
    return x


class Cast(Function):
    _node_name = "ToCopyBackward0"  # torch's name of this node
    complex_aware = True  # a real source gets the real part of a complex gradient

    @staticmethod
    def forward(ctx: Any, a: Any, dtype: dtypes.dtype) -> Any:
        ctx.src = ctx.backend.dtype_of(a)
        out = ctx.backend.astype(a, dtype)
        if dtype.category < dtypes.FLOAT:
            ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if g.dtype.is_complex and not ctx.src.is_complex:
            g = g.real
        return g.to(ctx.src), None


def cast(a: Tensor, dtype: Any) -> Tensor:
    """``a`` converted to ``dtype`` (differentiable between floating types)."""
    dt = dtypes.to_dtype(dtype)
    if a.dtype is dt:
        return a
    return Cast.apply(a, dt)


def normalize_dim(dim: int, ndim: int) -> int:
    if type(dim) is not int:  # a NumPy integer, a 0-d integer tensor: its int, as torch's
        dim = operator.index(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def index_int(value: Any) -> int | None:
    """``value`` as an int where it is one integer as torch's int arguments take it (a Python
    int, a NumPy integer such as ``np.prod(shape)``'s, a 0-d integer array or tensor: what
    ``__index__`` gives); None where it is not (a sequence of them, a float, a bool array).
    For the int-or-sequence arguments: sizes, dims, counts."""
    if isinstance(value, int):
        return value
    if isinstance(value, np.integer):
        return int(value)
    if getattr(value, "ndim", None) == 0 and hasattr(value, "__index__"):
        try:
            return operator.index(value)
        except TypeError:
            return None
    return None


def ints_of(value: Any) -> tuple[int, ...]:
    """An int-or-sequence argument (a shape, dims) as a tuple of ints: one integer
    (``index_int``) as a 1-tuple, else each element's int."""
    one = index_int(value)
    return (one,) if one is not None else tuple(operator.index(v) for v in value)


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """``None`` or ``()`` -> all dims (as torch's reductions); int or sequence -> sorted
    non-negative tuple."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims: tuple[int, ...]
    one = index_int(dim)
    if one is not None:
        dims = (normalize_dim(one, ndim),)
    else:
        dims = tuple(sorted(normalize_dim(int(d), ndim) for d in dim))
        if len(set(dims)) != len(dims):
            twice = next(d for d in dims if dims.count(d) > 1)
            raise RuntimeError(f"dim {twice} appears multiple times in the list of dims")
    return dims if ndim else ()  # a 0-d tensor has one dim (0 or -1) to name, none to reduce


def one_of(name: str, **alternatives: Any) -> Any:
    """The one of torch's alternative spellings of an argument that was given (``hsplit``'s
    ``sections`` or ``indices``: one Python signature holds both names as keywords)."""
    given = [value for value in alternatives.values() if value is not None]
    if len(given) != 1:
        names = " or ".join(f"'{k}'" for k in alternatives)
        raise TypeError(f"{name}() expected exactly one of {names}, got {len(given)}")
    return given[0]


def shape_arg(args: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept ``f(x, 2, 3)`` and ``f(x, (2, 3))`` like torch's varargs shape methods."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


class OfInput(Function):
    """``values(xp, x)`` on the saved input; the gradient is ``g * derivative(x)`` (in lucid
    ops, so differentiable again where ``derivative`` is)."""

    values: ClassVar[Any]
    derivative: ClassVar[Any]

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return type(ctx).values(ctx.xp, x)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        return g * type(ctx).derivative(x)


_SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def scalar_type_name(dtype: dtypes.dtype) -> str:
    """torch's C++ name of a dtype, as its error messages print it (float64 -> Double)."""
    return _SCALAR_TYPE_NAMES.get(dtype.name, dtype.name)


def scaled_sum(input: Any, product: Tensor, beta: Any, alpha: Any) -> Tensor:  # noqa: A002
    """``beta * input + alpha * product`` of the ``add*`` BLAS ops (addmm, addmv, addr, ...);
    ``beta == 0`` ignores input (NaN there too). On integer and bool products torch casts
    ``beta`` and ``alpha`` to the product's dtype first (``0.6`` is ``0`` for int64, ``2`` is
    ``True`` for bool, whose sum is a logical or), so the result keeps that dtype."""
    dt = product.dtype
    if dt is dtypes.bool_:
        alpha, beta = bool(alpha), bool(beta)
    elif not (dt.is_floating_point or dt.is_complex):
        alpha, beta = int(alpha), int(beta)
    if alpha is not True and alpha != 1:
        product = product * alpha
    if beta is False or beta == 0:
        return product
    scaled = input if beta is True or beta == 1 else input * beta
    if dt is dtypes.bool_ and isinstance(scaled, Tensor) and scaled.dtype is dtypes.bool_:
        return product | scaled
    out: Tensor = product + scaled
    return out


class _Piecewise(Function):
    """A result that is piecewise constant in ``x`` (a count of non-zeros, an identity power):
    torch records it with a zero gradient, so it requires grad when ``x`` does."""

    @staticmethod
    def forward(ctx: Any, x: Any, value: Any) -> Any:
        ctx.shape, ctx.dtype = tuple(x.shape), ctx.backend.dtype_of(x)
        return value

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.new_zeros(ctx.shape, dtype=ctx.dtype), None


def piecewise_constant(value: Tensor, x: Tensor) -> Tensor:
    """``value`` (computed from ``x`` without a graph), recorded with a zero gradient for ``x``
    as torch records ``norm(x, 0)``, ``matrix_power(x, 0)`` and a determinant's sign."""
    if not x.requires_grad or not x.dtype.is_floating_point:
        return value
    out: Tensor = _Piecewise.apply(x, value.detach()._data)
    return out


class SavedTensor:
    """torch's ``grad_fn._saved_<name>`` accessor on a node class: the ``index``-th value the
    node saved for backward, through the saved-tensor hooks' unpack (None where the node did
    not need it: a Mul whose other input needs no grad keeps no ``self``)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, ctx: Any, owner: Any = None) -> Any:
        if ctx is None:
            return self
        return ctx.saved_tensors[self.index]


def _tensors_in(values: Any) -> list[Tensor]:
    found: list[Tensor] = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found += _tensors_in(v)
    return found


def refuse_overlap(outs: Any, *inputs: Any) -> None:
    """torch's error where an ``out=`` tensor shares memory with an input of the op."""
    sources = _tensors_in(inputs)
    targets = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    if any(isinstance(o, Tensor) and _overlap(o, s) for o in targets for s in sources):
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to "
            "tensor refer to a single memory location. Please clone() the tensor before "
            "performing the operation."
        )


def _overlap(a: Tensor, b: Tensor, whole: bool = False) -> bool:
    """Whether ``a`` and ``b`` share memory (``whole``: anywhere in ``a``'s base array, where
    a resize of ``a`` would write)."""
    if a is b:
        return True
    x, y = a._data, b._data
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        while whole and isinstance(x.base, np.ndarray):
            x = x.base
        return bool(np.shares_memory(x, y))
    return x is y


def _same_memory(o: Tensor, s: Tensor, r: Tensor) -> bool:
    """``out`` is an input itself, of the result's shape (``maximum(m, v, out=m)``): torch's
    full overlap, which it allows (the result is whole before ``out`` is written)."""
    x, y = o._data, s._data
    if o.shape != r.shape or o.shape != s.shape:
        return False
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        return bool(
            x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.strides == y.strides
        )
    return x is y


def write_out(
    name: str, result: Any, out: Any, *inputs: Any, cast: bool | str = False, warn: bool = True
) -> Any:
    """``result`` when ``out`` is None, else ``result`` written into ``out`` (a tensor, or a
    tuple of them for an op with several results) with torch's checks: the same dtype (with
    ``cast``, as torch's elementwise ops, any dtype of the result's kind or above: bool < int <
    float < complex), no memory shared with an input, no autograd; a tensor of another shape is
    resized (with torch's warning where it had elements, unless ``warn`` is False: torch's
    factories and ``addbmm`` resize silently). ``cast="cat"``: the stack family's TypeError."""
    if out is None:
        return result
    results = tuple(result) if isinstance(result, tuple) else (result,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(outs) != len(results) or not all(isinstance(o, Tensor) for o in outs):
        kinds = ", ".join(type(o).__name__ for o in outs)
        raise TypeError(f"{name}(): argument 'out' must be {len(results)} Tensor(s), got ({kinds})")
    sources = _tensors_in(inputs)
    for r, o in zip(results, outs, strict=True):
        if o.dtype is not r.dtype and cast:
            if o.dtype.category < r.dtype.category and cast == "cat":
                raise TypeError(
                    "torch.cat(): input types can't be cast to the desired output type "
                    f"{scalar_type_name(o.dtype)}"
                )
            if o.dtype.category < r.dtype.category:
                raise RuntimeError(
                    f"result type {scalar_type_name(r.dtype)} can't be cast to the desired "
                    f"output type {scalar_type_name(o.dtype)}"
                )
        elif o.dtype is not r.dtype:
            raise RuntimeError(
                f"{name}(): Expected out tensor to have dtype {r.dtype}, but got {o.dtype} instead"
            )
        strides = getattr(o._data, "strides", None) or ()
        if any(st == 0 and n > 1 for st, n in zip(strides, o.shape, strict=False)):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation."
            )
        if any(_overlap(o, s, whole=o.shape != r.shape) and not _same_memory(o, s, r)
               for s in sources):  # fmt: skip
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )
        if o.requires_grad or (r.requires_grad and grad_mode._state.enabled):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
    for r, o in zip(results, outs, strict=True):
        if o.shape != r.shape:
            if o.numel() and warn:
                warnings.warn(_RESIZED.format(list(o.shape), list(r.shape)), stacklevel=3)
            o.resize_(r.shape)
        o.copy_(r)
    if isinstance(result, tuple) and type(result) is not tuple:
        return type(result)(*outs)  # a named tuple of the out tensors, as torch's
    return outs if isinstance(result, tuple) else outs[0]


_RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def with_out(
    fn: Callable[P, R], *, cast: bool | str = False, factory: bool = False, warn: bool = True
) -> Callable[P, R]:
    """``fn``'s public form taking torch's keyword-only ``out=`` (``fn`` itself where it takes
    one): the result written into ``out`` by :func:`write_out` (``cast``: an elementwise op's
    castable dtypes; ``factory``: a creation function, which takes ``out``'s dtype where no
    ``dtype`` is given, as torch's). Without ``out`` it is ``fn``'s call, one frame more; the
    op modules' own functions, which lucid calls inside, and the Tensor methods stay bare."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn
    params = list(signature.parameters.values())
    if any(p.name == "out" for p in params):
        return fn
    name = getattr(fn, "__name__", "op")
    takes_dtype = "dtype" in signature.parameters

    @functools.wraps(fn)
    def op(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if factory and takes_dtype and kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        result = fn(*args, **kwargs)
        return write_out(name, result, out, *args, *kwargs.values(), cast=cast, warn=warn)

    keyword = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    op.__signature__ = signature.replace(parameters=[*params[:at], keyword, *params[at:]])  # type: ignore[attr-defined]
    op.__without_out__ = fn  # type: ignore[attr-defined]
    return op


def add_out(
    namespace: dict[str, Any],
    names: str,
    *,
    cast: str = "",
    factory: str = "",
    cat: str = "",
    silent: str = "",
) -> None:
    """Give the functions ``names`` (space-separated) of a namespace torch's ``out=``
    (:func:`with_out`); those also in ``cast`` cast as elementwise ops, in ``factory`` as
    creation functions, in ``cat`` as the stack family (cat's casts and TypeError), in
    ``silent`` (and ``factory``) resize without torch's warning. One wrapper per function, so
    aliases stay the same object."""
    casting, factories, cats = set(cast.split()), set(factory.split()), set(cat.split())
    quiet = factories | set(silent.split())
    for n in names.split():
        fn = namespace[n]
        wrapped = _WITH_OUT.get(fn)
        if wrapped is None:
            kind: bool | str = "cat" if n in cats else n in casting
            wrapped = with_out(fn, cast=kind, factory=n in factories, warn=n not in quiet)
            _WITH_OUT[fn] = wrapped
        namespace[n] = wrapped


_WITH_OUT: dict[Any, Any] = {}


def with_out_of(fn: Any) -> Any:
    """The ``out=`` form :func:`add_out` gave ``fn``, None where it gave none."""
    try:
        return _WITH_OUT.get(fn)
    except TypeError:  # unhashable
        return None
