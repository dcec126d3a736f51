"""The masked reductions and normalizations of ``torch.masked`` on dense tensors.

Each op replaces the masked-out elements of ``input`` by its reduction's identity (0 for sum,
1 for prod, -inf for amax and the softmaxes, +inf for amin, ...) and runs the ordinary op, as
torch's strided path does, so gradients are the ordinary op's, zero at masked-out elements. A
``mask`` broadcasts to ``input`` (it may have fewer dims, not more) and any dtype reads as bool;
``mask=None`` keeps every element. Where every element of a reduction is masked out, the result
is the identity (sum 0, amax -inf, ...) or nan where there is none (mean, var, std, median).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lucid import dtypes, linalg, ops
from lucid._compat import iinfo
from lucid._creation import full_like, ones, tensor, zeros_like
from lucid._tensor import Tensor
from lucid.ops._util import index_int

Dims = int | Sequence[int] | None
_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")  # summed in int64, as torch.sum


def _dims(dim: Dims, ndim: int) -> tuple[int, ...]:
    """``dim`` as sorted non-negative dims; None or () is every dim (torch's _canonical_dim)."""
    if (one := index_int(dim)) is not None:
        dim = one
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(ndim))
    top = max(ndim, 1)
    out: list[int] = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in out or (d % top) in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= top or d < -top:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-top}, {top - 1}], but "
                f"got {d})"
            )
        out.append(d % top)
    return tuple(sorted(out))


def _reduce_dims(dims: tuple[int, ...]) -> tuple[int, ...] | None:
    return dims if dims else None  # a 0-d input reduces over "every" dim: None


def _input_mask(input: Tensor, mask: Any) -> Tensor:  # noqa: A002
    """``mask`` as a bool tensor of ``input``'s shape (broadcast, converted)."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked: mask must be a Tensor or None, got {type(mask).__name__}")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than "
                f"of the input): mask {list(mask.shape)}, input {list(input.shape)}"
            )
        mask = ops.broadcast_to(mask, input.shape)
    out: Tensor = mask.to(dtypes.bool_)
    return out


def _identity(name: str, input: Tensor) -> float | int | None:  # noqa: A002
    """The value that leaves reduction ``name`` unchanged, for ``input``'s dtype."""
    dt = input.dtype
    if name in ("sum", "cumsum", "norm"):
        return 0
    if name in ("prod", "cumprod"):
        return 1
    low = name in ("amax", "argmax", "logsumexp", "logaddexp")
    if dt.is_floating_point or dt.is_complex:
        return -math.inf if low else math.inf
    if dt is dtypes.bool_:
        return None
    info = iinfo(dt)
    return int(info.min if low else info.max)


def _combine(name: str, input: Tensor, mask: Any) -> Tensor:  # noqa: A002
    """``input`` with its masked-out elements set to the identity of ``name``."""
    if mask is None:
        return input
    fill = _identity(name, input)
    if fill is None:
        raise RuntimeError(f"masked {name}: no identity value for a {input.dtype} input")
    value = tensor(fill, dtype=input.dtype, device=input.device)
    return ops.where(_input_mask(input, mask), input, value)  # type: ignore[no-any-return]


def _sum_dtype(input: Tensor, dtype: Any) -> Any:  # noqa: A002
    if dtype is not None:
        return dtype
    return dtypes.int64 if input.dtype.name in _SMALL_INTS else input.dtype


def sum(  # noqa: A001
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The sum of the masked-in elements over ``dim`` (0 where all are masked out)."""
    dims = _dims(dim, input.ndim)
    masked = _combine("sum", input, mask)
    return ops.sum(masked, _reduce_dims(dims), bool(keepdim), dtype=_sum_dtype(input, dtype))


def prod(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The product of the masked-in elements over ``dim`` (1 where all are masked out)."""
    dims = _dims(dim, input.ndim)
    result = _combine("prod", input, mask).to(_sum_dtype(input, dtype))
    if result.ndim == 0:
        return ops.prod(result)
    for d in reversed(dims):
        result = ops.prod(result, d, bool(keepdim))
    return result


def cumsum(
    input: Tensor,  # noqa: A002
    dim: int,
    *,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The cumulative sum along ``dim``, masked-out elements counting as 0."""
    d = _dims(dim, input.ndim)[0]
    dt = input.dtype if dtype is None else dtype
    return ops.cumsum(_combine("cumsum", input, mask), d, dtype=dt).to(dt)


def cumprod(
    input: Tensor,  # noqa: A002
    dim: int,
    *,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The cumulative product along ``dim``, masked-out elements counting as 1."""
    d = _dims(dim, input.ndim)[0]
    dt = input.dtype if dtype is None else dtype
    return ops.cumprod(_combine("cumprod", input, mask), d, dtype=dt).to(dt)


def amax(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The largest masked-in element over ``dim`` (-inf, or the dtype's minimum, where all
    are masked out)."""
    dims = _dims(dim, input.ndim)
    out = ops.amax(_combine("amax", input, mask), _reduce_dims(dims) or (), bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def amin(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The smallest masked-in element over ``dim`` (+inf, or the dtype's maximum, where all
    are masked out)."""
    dims = _dims(dim, input.ndim)
    out = ops.amin(_combine("amin", input, mask), _reduce_dims(dims) or (), bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def argmax(
    input: Tensor,  # noqa: A002
    dim: int | None = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The index of the largest masked-in element along ``dim`` (of the flattened input for
    None), cast to ``dtype`` (default: ``input``'s, as torch)."""
    out = ops.argmax(_combine("argmax", input, mask), dim, bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def argmin(
    input: Tensor,  # noqa: A002
    dim: int | None = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The index of the smallest masked-in element along ``dim``, cast to ``dtype`` (default:
    ``input``'s, as torch)."""
    out = ops.argmin(_combine("argmin", input, mask), dim, bool(keepdim))
    return out.to(input.dtype if dtype is None else dtype)


def _count(input: Tensor, dim: Dims, keepdim: bool, mask: Tensor | None) -> Tensor:  # noqa: A002
    """How many elements each reduction keeps (int64)."""
    inmask = ones(input.shape, dtype=dtypes.bool_) if mask is None else _input_mask(input, mask)
    return ops.sum(inmask.to(dtypes.int64), _reduce_dims(_dims(dim, input.ndim)), keepdim)


def _float_dtype(name: str, input: Tensor, dtype: Any) -> dtypes.dtype:  # noqa: A002
    dt = input.dtype if dtype is None else dtypes.to_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        source = "Input" if dtype is None else "Optional"
        raise ValueError(
            f"{name}(): Could not infer output dtype. {source} dtype must be either a floating "
            f"point or complex dtype. Got: {dt}"
        )
    return dt


def mean(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The mean of the masked-in elements over ``dim`` (nan where all are masked out)."""
    dt = _float_dtype("mean", input, dtype)
    total = sum(input, dim, keepdim=keepdim, dtype=dt, mask=mask)
    return total / _count(input, dim, bool(keepdim), mask)


def median(
    input: Tensor,  # noqa: A002
    dim: int = -1,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The median of the masked-in elements along ``dim`` (nan where all are masked out; an
    integer input must keep an element in every reduction)."""
    dt = input.dtype if dtype is None else dtype
    d = _dims(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(dtypes.float32)
    if mask is not None:
        x = ops.where(_input_mask(x, mask), x, tensor(math.nan, dtype=x.dtype))
    found: Any = ops.nanmedian(x, d if input.ndim else None, keepdim)
    out: Tensor = found if isinstance(found, Tensor) else found[0]  # (values, indices) with a dim
    if is_float:
        return out
    if bool(ops.isnan(out).any()):
        raise ValueError(
            "masked median expects no fully masked out rows if dtype is not floating point"
        )
    return out.to(dt)


def logsumexp(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """``log(sum(exp(x)))`` of the masked-in elements over ``dim`` (-inf where all are masked
    out)."""
    dims = _dims(dim, input.ndim)
    out = ops.logsumexp(_combine("logsumexp", input, mask), dims, keepdim)
    return out.to(input.dtype if dtype is None else dtype)


def logaddexp(
    input: Tensor,  # noqa: A002
    other: Tensor,
    *,
    dtype: Any = None,
    input_mask: Tensor | None = None,
    other_mask: Tensor | None = None,
) -> Tensor:
    """``log(exp(input) + exp(other))``, each side's masked-out elements counting as -inf."""
    a = _combine("logaddexp", input, input_mask)
    b = _combine("logaddexp", other, other_mask)
    return ops.logaddexp(a, b).to(input.dtype if dtype is None else dtype)


def norm(
    input: Tensor,  # noqa: A002
    ord: float | None = 2.0,  # noqa: A002
    dim: Dims = None,
    *,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The ``ord``-norm of the masked-in elements over ``dim`` (``linalg.vector_norm``)."""
    p = 2.0 if ord is None else ord
    if mask is None:
        masked = input
    else:
        fill = math.inf if p == -math.inf else 0
        masked = ops.where(_input_mask(input, mask), input, tensor(fill, dtype=input.dtype))
    dims = _dims(dim, input.ndim)
    dt = input.dtype if dtype is None else dtype
    return linalg.vector_norm(masked, p, _reduce_dims(dims), bool(keepdim), dtype=dt)


def _std_var(
    input: Tensor,  # noqa: A002
    dim: Dims,
    unbiased: bool | None,
    correction: float | None,
    keepdim: bool,
    dtype: Any,
    mask: Tensor | None,
) -> Tensor:
    if unbiased is not None and correction is not None:
        raise RuntimeError("masked var/std: give unbiased or correction, not both")
    c = 1.0 if unbiased is None else float(unbiased)
    c = c if correction is None else float(correction)
    dt = input.dtype if dtype is None else dtypes.to_dtype(dtype)
    dt = dt if dt.is_floating_point or dt.is_complex else dtypes.float32
    count = _count(input, dim, True, mask)
    centred = input - sum(input, dim, keepdim=True, dtype=dt, mask=mask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=dt, mask=mask)
    n = count.reshape(total.shape).to(dt)
    if c != 0:
        n = ops.maximum(n - c, zeros_like(n))
    return total / n


def var(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The variance of the masked-in elements over ``dim`` (``correction`` 1 unless given;
    nan where all are masked out)."""
    return _std_var(input, dim, unbiased, correction, bool(keepdim), dtype, mask)


def std(
    input: Tensor,  # noqa: A002
    dim: Dims = None,
    unbiased: bool | None = None,
    *,
    correction: float | None = None,
    keepdim: bool | None = False,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """The standard deviation of the masked-in elements over ``dim`` (the square root of
    :func:`var`)."""
    return ops.sqrt(_std_var(input, dim, unbiased, correction, bool(keepdim), dtype, mask))


def softmax(
    input: Tensor,  # noqa: A002
    dim: int,
    *,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Softmax along ``dim`` over the masked-in elements (0 at masked-out ones, nan where a
    whole slice is masked out)."""
    d = _dims(dim, input.ndim)[0]
    return ops.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(
    input: Tensor,  # noqa: A002
    dim: int,
    *,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Log-softmax along ``dim`` over the masked-in elements (-inf at masked-out ones)."""
    d = _dims(dim, input.ndim)[0]
    return ops.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(
    input: Tensor,  # noqa: A002
    dim: int,
    *,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """Softmin (the softmax of ``-input``) along ``dim`` over the masked-in elements."""
    d = _dims(dim, input.ndim)[0]
    return ops.softmax(-_combine("amin", input, mask), d, dtype=dtype)


def normalize(
    input: Tensor,  # noqa: A002
    ord: float,  # noqa: A002
    dim: int,
    *,
    eps: float = 1e-12,
    dtype: Any = None,
    mask: Tensor | None = None,
) -> Tensor:
    """``input`` divided by its masked ``ord``-norm along ``dim`` (at least ``eps``); masked-out
    elements are 0."""
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ops.maximum(nrm, full_like(nrm, eps))
    return _combine("sum", input, mask) / denom
