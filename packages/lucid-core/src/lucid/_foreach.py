"""torch's ``torch._foreach_*`` functions: one op applied to every tensor of a list.

Libraries call them directly although torch keeps them private: EMA helpers
(``torch._foreach_lerp_(ema_params, params, 1 - decay)``, ``_foreach_copy_``), optimizers
written outside torch (``_foreach_mul_``, ``_foreach_add_(params, updates, alpha=-lr)``,
``_foreach_sign_``), gradient clipping (``_foreach_norm``). torch runs them as fused kernels;
here each is the plain op, applied tensor by tensor, so values, dtypes, broadcasting and
autograd are the op's own. Arguments, results and errors are torch's: the first argument is
a list (or tuple) of tensors; the second is a number, a list of numbers, a list of tensors
(paired with the first) or, for ``add``/``sub``'s ``alpha`` forms and ``mul``/``div``, one
0-d tensor; an out-of-place function returns a tuple, an in-place one (``..._``) changes the
tensors and returns its first argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

from lucid._tensor import Tensor
from lucid.linalg import vector_norm
from lucid.ops.elementwise import pow as _pow

_UNARY = (
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
    "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round",
    "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
)  # fmt: skip

TensorList = Sequence[Tensor]


def _tensor_list(name: str, tensors: Any, position: int = 1, arg: str = "self") -> list[Tensor]:
    """``tensors`` as a list, once it is a non-empty list or tuple of Tensors (torch's checks)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be tuple of Tensors, "
            f"not {type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument {position - 1}, "
                f"but got {type(t).__name__}"
            )
    if position == 1 and not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return list(tensors)


def _paired(name: str, self: list[Tensor], other: Any, position: int = 2) -> list[Tensor]:
    """A second tensor list, as long as the first."""
    others = _tensor_list(name, other, position, "other")
    if len(others) != len(self):
        raise RuntimeError(
            f"Tensor lists must have the same number of tensors, got {len(self)} and {len(others)}"
        )
    return others


def _scalars(self: list[Tensor], scalars: Sequence[Any]) -> list[Any]:
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    return list(scalars)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def _invalid(name: str, *args: Any, **kwargs: Any) -> TypeError:
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)})"
    )


def _per_tensor(
    name: str, self: Any, other: Any, *, tensor_other: bool, alpha: Any = None
) -> tuple[list[Tensor], list[Any]]:
    """The tensors and, for each, the second operand (a number or a tensor)."""
    tensors = _tensor_list(name, self)
    if _is_scalar(other):
        if alpha is not None:
            raise _invalid(name, self, other, alpha=alpha)
        return tensors, [other] * len(tensors)
    if isinstance(other, Tensor):
        if not tensor_other:
            raise _invalid(name, self, other)
        if other.dim() != 0:
            raise RuntimeError(
                f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                f"{other.numel()} elements."
            )
        return tensors, [other] * len(tensors)
    if isinstance(other, (list, tuple)):
        if other and all(_is_scalar(s) for s in other):
            if alpha is not None:
                raise _invalid(name, self, other, alpha=alpha)
            return tensors, _scalars(tensors, other)
        return tensors, list(_paired(name, tensors, other))
    raise _invalid(name, self, other)


def _finish(name: str, doc: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "lucid"
    fn.__doc__ = doc
    return fn


def _unary(op: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def out_of_place(self: TensorList) -> tuple[Tensor, ...]:
        tensors = _tensor_list(f"_foreach_{op}", self)
        return tuple(getattr(t, op)() for t in tensors)

    def in_place(self: TensorList) -> TensorList:
        for t in _tensor_list(f"_foreach_{op}_", self):
            getattr(t, op + "_")()
        return self

    return (
        _finish(
            f"_foreach_{op}",
            f"``tuple(t.{op}() for t in self)``: torch's ``_foreach_{op}``.",
            out_of_place,
        ),
        _finish(
            f"_foreach_{op}_",
            f"``t.{op}_()`` for each ``t`` of ``self``; returns ``self``.",
            in_place,
        ),
    )


def _binary(
    op: str, *, alpha: bool = False, tensor_other: bool = False
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``add``/``sub`` (with ``alpha``), ``mul``/``div`` (a 0-d tensor operand too)."""

    def _apply(name: str, self: Any, other: Any, a: Any, inplace: bool) -> list[Tensor]:
        tensors, others = _per_tensor(
            name, self, other, tensor_other=tensor_other, alpha=None if a == 1 else a
        )
        method = op + "_" if inplace else op
        kwargs = {"alpha": a} if alpha and a != 1 else {}
        return [getattr(t, method)(o, **kwargs) for t, o in zip(tensors, others, strict=True)]

    if alpha:

        def out_of_place(self: TensorList, other: Any, *, alpha: Any = 1) -> tuple[Tensor, ...]:
            return tuple(_apply(f"_foreach_{op}", self, other, alpha, False))

        def in_place(self: TensorList, other: Any, *, alpha: Any = 1) -> TensorList:
            _apply(f"_foreach_{op}_", self, other, alpha, True)
            return self

    else:

        def out_of_place(self: TensorList, other: Any) -> tuple[Tensor, ...]:  # type: ignore[misc]
            return tuple(_apply(f"_foreach_{op}", self, other, 1, False))

        def in_place(self: TensorList, other: Any) -> TensorList:  # type: ignore[misc]
            _apply(f"_foreach_{op}_", self, other, 1, True)
            return self

    operand = "a number, a list of numbers or a list of tensors" + (
        ", or one 0-d tensor" if tensor_other else ""
    )
    extra = " times ``alpha``" if alpha else ""
    return (
        _finish(
            f"_foreach_{op}",
            f"``t.{op}(o)`` for each ``t`` of ``self``, ``o`` from ``other`` ({operand}"
            f"{extra}): torch's ``_foreach_{op}``; returns a tuple.",
            out_of_place,
        ),
        _finish(
            f"_foreach_{op}_",
            f"In-place ``_foreach_{op}``: ``t.{op}_(o)`` for each ``t``; returns ``self``.",
            in_place,
        ),
    )


def _clamp_like(op: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``clamp_min``/``clamp_max``/``maximum``/``minimum``: a number or a tensor per tensor."""
    scalar_method = {"maximum": "clamp_min", "minimum": "clamp_max"}.get(op, op)

    def _values(self: Any, other: Any, name: str) -> list[Tensor]:
        tensors, others = _per_tensor(name, self, other, tensor_other=False)
        out = []
        for t, o in zip(tensors, others, strict=True):
            out.append(getattr(t, scalar_method if _is_scalar(o) else op)(o))
        return out

    def out_of_place(self: TensorList, other: Any) -> tuple[Tensor, ...]:
        return tuple(_values(self, other, f"_foreach_{op}"))

    def in_place(self: TensorList, other: Any) -> TensorList:
        name = f"_foreach_{op}_"
        for t, v in zip(self, _values(self, other, name), strict=True):
            t.copy_(v)
        return self

    return (
        _finish(
            f"_foreach_{op}",
            f"``{op}`` of each tensor of ``self`` with a number, or with the matching tensor "
            f"or number of ``other``: torch's ``_foreach_{op}``; returns a tuple.",
            out_of_place,
        ),
        _finish(
            f"_foreach_{op}_",
            f"In-place ``_foreach_{op}``; returns ``self``.",
            in_place,
        ),
    )


def _pointwise(op: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``addcmul``/``addcdiv``: ``value`` a number, a list of numbers or a 1-D tensor of them."""

    def _values(self: Any, tensor1: Any, tensor2: Any, value: Any, name: str) -> list[Any]:
        tensors = _tensor_list(name, self)
        t1 = _paired(name, tensors, tensor1, 2)
        t2 = _paired(name, tensors, tensor2, 3)
        if _is_scalar(value):
            values = [value] * len(tensors)
        elif isinstance(value, Tensor):
            if value.dim() != 1:
                raise RuntimeError(
                    f"Expected packed scalar Tensor to be of dimension 1. Got {value.dim()} "
                    "instead."
                )
            if value.numel() != len(tensors):
                raise RuntimeError(
                    f"Expected length of scalars to match input of length {len(tensors)} but "
                    f"got {value.numel()} instead."
                )
            values = value.tolist()
        elif isinstance(value, (list, tuple)):
            values = _scalars(tensors, value)
        else:
            raise _invalid(name, self, tensor1, tensor2, value)
        return [tensors, t1, t2, values]

    def out_of_place(
        self: TensorList, tensor1: TensorList, tensor2: TensorList, value: Any = 1
    ) -> tuple[Tensor, ...]:
        tensors, t1, t2, values = _values(self, tensor1, tensor2, value, f"_foreach_{op}")
        return tuple(
            getattr(t, op)(a, b, value=v)
            for t, a, b, v in zip(tensors, t1, t2, values, strict=True)
        )

    def in_place(
        self: TensorList, tensor1: TensorList, tensor2: TensorList, value: Any = 1
    ) -> TensorList:
        tensors, t1, t2, values = _values(self, tensor1, tensor2, value, f"_foreach_{op}_")
        for t, a, b, v in zip(tensors, t1, t2, values, strict=True):
            getattr(t, op + "_")(a, b, value=v)
        return self

    return (
        _finish(
            f"_foreach_{op}",
            f"``t.{op}(t1, t2, value=v)`` for each ``t`` of ``self`` with the matching tensors "
            f"of ``tensor1``/``tensor2`` and ``value`` (a number, a list of numbers or a 1-D "
            f"tensor of them): torch's ``_foreach_{op}``; returns a tuple.",
            out_of_place,
        ),
        _finish(
            f"_foreach_{op}_",
            f"In-place ``_foreach_{op}``; returns ``self``.",
            in_place,
        ),
    )


def _lerp_values(name: str, self: Any, tensors1: Any, weight: Any) -> list[Any]:
    tensors = _tensor_list(name, self)
    ends = _paired(name, tensors, tensors1, 2)
    if _is_scalar(weight):
        weights = [weight] * len(tensors)
    elif isinstance(weight, (list, tuple)) and weight and all(_is_scalar(w) for w in weight):
        weights = _scalars(tensors, weight)
    else:
        weights = _paired(name, tensors, weight, 3)
    return [tensors, ends, weights]


def _foreach_lerp(self: TensorList, tensors1: TensorList, weight: Any) -> tuple[Tensor, ...]:
    """``t.lerp(end, w)`` for each ``t`` of ``self``, ``end`` from ``tensors1``, ``w`` a
    number, a list of numbers or a list of tensors: torch's ``_foreach_lerp``."""
    tensors, ends, weights = _lerp_values("_foreach_lerp", self, tensors1, weight)
    return tuple(t.lerp(e, w) for t, e, w in zip(tensors, ends, weights, strict=True))


def _foreach_lerp_(self: TensorList, tensors1: TensorList, weight: Any) -> TensorList:
    """In-place ``_foreach_lerp``: ``t.lerp_(end, w)`` for each ``t``; returns ``self``."""
    tensors, ends, weights = _lerp_values("_foreach_lerp_", self, tensors1, weight)
    for t, e, w in zip(tensors, ends, weights, strict=True):
        t.lerp_(e, w)
    return self


def _pow_values(name: str, self: Any, exponent: Any) -> tuple[list[Tensor], list[Any]]:
    return _per_tensor(name, self, exponent, tensor_other=False)


def _foreach_pow(self: Any, exponent: Any) -> tuple[Tensor, ...]:
    """``t.pow(e)`` for each ``t`` of ``self`` (``e`` a number, a list of numbers or a list of
    tensors), or ``pow(self, e)`` for each tensor ``e`` of ``exponent`` when ``self`` is a
    number: torch's ``_foreach_pow``."""
    if _is_scalar(self):
        exponents = _tensor_list("_foreach_pow", exponent, 2, "exponent")
        if not exponents:
            raise RuntimeError("Tensor list must have at least one tensor.")
        return tuple(_pow(self, e) for e in exponents)
    tensors, exps = _pow_values("_foreach_pow", self, exponent)
    return tuple(t.pow(e) for t, e in zip(tensors, exps, strict=True))


def _foreach_pow_(self: TensorList, exponent: Any) -> TensorList:
    """In-place ``_foreach_pow``: ``t.pow_(e)`` for each ``t``; returns ``self``."""
    tensors, exps = _pow_values("_foreach_pow_", self, exponent)
    for t, e in zip(tensors, exps, strict=True):
        t.pow_(e)
    return self


def _foreach_norm(self: TensorList, ord: Any = 2, dtype: Any = None) -> tuple[Tensor, ...]:  # noqa: A002
    """``linalg.vector_norm(t, ord, dtype=dtype)`` of each tensor (a 0-d tensor each): torch's
    ``_foreach_norm``."""
    tensors = _tensor_list("_foreach_norm", self)
    return tuple(vector_norm(t, ord, dtype=dtype) for t in tensors)


def _foreach_powsum(self: TensorList, ord: Any = 2, dtype: Any = None) -> tuple[Tensor, ...]:  # noqa: A002
    """``(t.abs() ** ord).sum()`` of each tensor, in ``dtype`` when given (the norm before its
    root): torch's ``_foreach_powsum``."""
    tensors = _tensor_list("_foreach_powsum", self)
    out = []
    for t in tensors:
        if dtype is not None:
            t = t.to(dtype)
        out.append(t.abs().pow(ord).sum())
    return tuple(out)


def _foreach_max(self: TensorList) -> tuple[Tensor, ...]:
    """The largest element of each tensor (a 0-d tensor each): torch's ``_foreach_max``."""
    tensors = _tensor_list("_foreach_max", self)
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError(
                "_foreach_max cannot compute the maximum of an empty tensor; max over zero "
                "elements is undefined."
            )
    return tuple(t.max() for t in tensors)


def _foreach_mm(self: TensorList, mat2: TensorList) -> tuple[Tensor, ...]:
    """``t.mm(m)`` for each ``t`` of ``self`` and the matching ``m`` of ``mat2``: torch's
    ``_foreach_mm``."""
    tensors = _tensor_list("_foreach_mm", self)
    others = _paired("_foreach_mm", tensors, mat2)
    return tuple(t.mm(m) for t, m in zip(tensors, others, strict=True))


def _foreach_copy_(self: TensorList, src: TensorList, non_blocking: bool = False) -> TensorList:
    """``t.copy_(s)`` for each ``t`` of ``self`` and the matching ``s`` of ``src``
    (broadcast, cast to ``t``'s dtype); returns ``self``: torch's ``_foreach_copy_``."""
    tensors = _tensor_list("_foreach_copy_", self)
    sources = _paired("_foreach_copy_", tensors, src)
    for t, s in zip(tensors, sources, strict=True):
        t.copy_(s, non_blocking)
    return self


def _foreach_clone(self: TensorList, *, memory_format: Any = None) -> tuple[Tensor, ...]:
    """``t.clone()`` of each tensor: torch's ``_foreach_clone``."""
    tensors = _tensor_list("_foreach_clone", self)
    if memory_format is None:
        return tuple(t.clone() for t in tensors)
    return tuple(t.clone(memory_format=memory_format) for t in tensors)


def _foreach_zero_(self: TensorList) -> TensorList:
    """``t.zero_()`` for each tensor; returns ``self``: torch's ``_foreach_zero_``."""
    for t in _tensor_list("_foreach_zero_", self):
        t.zero_()
    return self


_FUNCTIONS: dict[str, Callable[..., Any]] = {}
for _op in _UNARY:
    _FUNCTIONS[f"_foreach_{_op}"], _FUNCTIONS[f"_foreach_{_op}_"] = _unary(_op)
for _op, _kw in (
    ("add", {"alpha": True, "tensor_other": True}),
    ("sub", {"alpha": True}),
    ("mul", {"tensor_other": True}),
    ("div", {"tensor_other": True}),
):
    _FUNCTIONS[f"_foreach_{_op}"], _FUNCTIONS[f"_foreach_{_op}_"] = _binary(_op, **_kw)
for _op in ("clamp_max", "clamp_min", "maximum", "minimum"):
    _FUNCTIONS[f"_foreach_{_op}"], _FUNCTIONS[f"_foreach_{_op}_"] = _clamp_like(_op)
for _op in ("addcmul", "addcdiv"):
    _FUNCTIONS[f"_foreach_{_op}"], _FUNCTIONS[f"_foreach_{_op}_"] = _pointwise(_op)
for _fn in (
    _foreach_lerp, _foreach_lerp_, _foreach_pow, _foreach_pow_, _foreach_norm, _foreach_powsum,
    _foreach_max, _foreach_mm, _foreach_copy_, _foreach_clone, _foreach_zero_,
):  # fmt: skip
    _fn.__module__ = "lucid"
    _FUNCTIONS[_fn.__name__] = _fn
globals().update(_FUNCTIONS)

__all__ = sorted(_FUNCTIONS)
