"""More of torch's top-level ops, each a composition of other ops (so differentiable through
theirs): msort, diagflat, vander, combinations, unravel_index, addr, dist, renorm, heaviside,
gcd/lcm, ldexp, isposinf/isneginf/isreal, positive, chain_matmul, the ``*_scatter`` family and
masked_scatter; and the predicates ``is_tensor``, ``numel``, ``is_floating_point``,
``is_complex``, ``is_nonzero``, ``is_same_size``, ``result_type``, ``can_cast``.
"""

from __future__ import annotations

import itertools
import warnings
from typing import TYPE_CHECKING, Any

from lucid import dtypes
from lucid._creation import from_data
from lucid._tensor import Tensor
from lucid.autograd.function import composite
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int, normalize_dim, promote, require_tensors, scaled_sum, to_float
from lucid.ops.elementwise import where
from lucid.ops.indexing import IndexPut, _convert_index
from lucid.ops.join import cat
from lucid.ops.matmul import matmul, outer
from lucid.ops.movement import diag

_PRED = "a predicate on tensors or dtypes: test_core_ops_added"
_INT = "integer result"
OPS = OpTable(
    op("msort", sample((4, 3), domain="away")),
    op("diagflat", sample((2, 2)), sample((3,), args=(-1,), tag="offset")),
    op("vander", sample((4,)), sample((3,), N=4, increasing=True, tag="increasing"),
       method=False),
    op("combinations", sample((4,)), sample((3,), r=3, with_replacement=True, tag="repl"),
       method=False),
    op("unravel_index", method=False, untested="takes a shape: test_core_ops_added"),
    op("addr", sample((3, 4), (3,), (4,), gg=True), sample((3, 4), (3,), (4,), beta=0.5,
       alpha=2.0, tag="scaled")),
    op("dist", sample((3, 4), (3, 4)), sample((3, 4), (4,), domain="away", p=1, tag="p1")),
    op("renorm", sample((3, 4), args=(2, 0, 1.0)), sample((2, 3, 2), args=(1, 1, 2.0),
       tag="p1")),
    op("heaviside", sample((3, 4), (4,), domain="away"), nograd="a step (torch: none)"),
    op("gcd", sample((8,), (8,), domain="int", high=30), nograd=_INT),
    op("lcm", sample((8,), (8,), domain="int", high=12), nograd=_INT),
    op("ldexp", sample((3, 4), (3, 4))),
    op("isposinf", sample((3, 4)), nograd="boolean result"),
    op("isneginf", sample((3, 4)), nograd="boolean result"),
    op("isreal", sample((3, 4)), nograd="boolean result"),
    op("positive", sample((3, 4))),
    op("chain_matmul", sample((2, 3), (3, 4), (4, 2)), method=False),
    op("select_scatter", sample((3, 4), (4,), args=(0, 1)), sample((3, 4), (3,), args=(1, -1),
       tag="dim1")),
    op("slice_scatter", sample((5, 4), (2, 4), start=1, end=5, step=2),
       sample((3, 6), (3, 2), dim=1, start=4, tag="dim1")),
    op("diagonal_scatter", sample((3, 4), (3,)), sample((2, 3, 4), (2, 3), offset=1, dim1=1,
       dim2=2, tag="batched")),
    op("masked_scatter", untested="takes a mask: core_op_cases"),
    op("index_reduce", untested="takes an index: core_op_cases"),
    op("put", untested="takes an index: core_op_cases"),
    *[op(n, method=False, untested=_PRED) for n in ("is_tensor", "result_type", "can_cast")],
    *[op(n, untested=_PRED) for n in ("numel", "is_floating_point", "is_complex", "is_nonzero",
                                      "is_same_size")],
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def msort(input: Tensor) -> Tensor:  # noqa: A002
    """The values sorted along dim 0 (``sort(input, 0).values``)."""
    out: Tensor = input.sort(0).values
    return out


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """A square matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag(input.reshape(-1), offset)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (reversed with
    ``increasing``); built by a running product, so zeros in ``x`` have a gradient."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    base = x.to(dtypes.int64) if x.dtype.category < dtypes.FLOAT else x
    if n == 0:
        return base.new_zeros((x.shape[0], 0))
    ones = base.new_ones((x.shape[0], 1))
    cols = cat([ones, base.unsqueeze(1).expand((x.shape[0], n - 1))], 1).cumprod(1)
    return cols if increasing else cols.flip(1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The length-``r`` combinations of the entries of 1-D ``input`` (as
    ``itertools.combinations``), one per row."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_zeros((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return input.new_zeros((0, r))
    idx = from_data(rows, dtype=dtypes.int64, device=input.device)
    out: Tensor = input[idx.reshape(-1)].reshape(len(rows), r)
    return out


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of flat ``indices`` (one tensor per dim)."""
    sizes = (int(shape),) if index_int(shape) is not None else tuple(int(s) for s in shape)
    if not isinstance(indices, Tensor):
        indices = from_data(indices, dtype=dtypes.int64)
    if indices.dtype.category != dtypes.INT:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if any(s < 0 for s in sizes):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(sizes)))
    total = 1
    for s in sizes:
        total *= s
    flat = indices.to(dtypes.int64)
    if bool(((flat < -total) | (flat >= total)).any()):
        raise RuntimeError("'indices' must be in range [-prod(shape), prod(shape) - 1]")
    flat = where(flat < 0, flat + total, flat)
    coords = []
    for s in reversed(sizes):
        coords.append(flat % s if s else flat)
        flat = flat // s if s else flat
    return tuple(reversed(coords))


def addr(
    input: Tensor,  # noqa: A002
    vec1: Tensor,
    vec2: Tensor,
    *,
    beta: Any = 1,
    alpha: Any = 1,
) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)`` (``beta == 0`` ignores input, NaN too)."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(
            f"addr: Expected 1-D argument vec1 and vec2, but got {vec1.ndim}-D and {vec2.ndim}-D"
        )
    out = scaled_sum(input, outer(vec1, vec2), beta, alpha)
    return out.expand(input.shape) if out.shape != input.shape and beta == 0 else out


def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:  # noqa: A002
    """The ``p``-norm of ``input - other`` (broadcast)."""
    out: Tensor = (input - other).norm(p)
    if out.grad_fn is not None:  # a node this call made: torch's name of the op
        out.grad_fn._node_name = "DistBackward0"
    return out


def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:  # noqa: A002
    """Each slice along ``dim`` scaled down to p-norm ``maxnorm`` where its norm exceeds it (as
    torch, by ``maxnorm / (norm + 1e-7)``)."""
    if input.ndim < 2:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions"
        )
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = normalize_dim(dim, input.ndim)
    others = tuple(k for k in range(input.ndim) if k != d)
    norms = input.norm(p, others, keepdim=True) if others else input.abs()
    factor = where(norms > maxnorm, maxnorm / (norms + 1e-7), norms.new_ones(()))
    out: Tensor = input * factor
    return out


def heaviside(input: Tensor, values: Tensor) -> Tensor:  # noqa: A002
    """The step function: 0 below 0, 1 above, ``values`` at 0 (broadcast)."""
    require_tensors("heaviside", input, values, "values")
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    a, v = promote(input, values)
    assert isinstance(a, Tensor)
    step = (a > 0).to(a.dtype)
    out: Tensor = where(a == 0, v, step)
    return out


def _int_pair(name: str, a: Tensor, b: Any) -> tuple[Tensor, Tensor]:
    require_tensors(name, a, b)
    x, y = promote(a, b)
    if not isinstance(y, Tensor):
        y = from_data(y, dtype=x.dtype, device=a.device)  # type: ignore[union-attr,unused-ignore]
    assert isinstance(x, Tensor)
    if x.dtype.category != dtypes.INT:
        raise RuntimeError(f"\"{name}_cpu\" not implemented for '{x.dtype}'")
    return x, y


@composite
def gcd(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The greatest common divisor (non-negative; gcd(0, 0) = 0), elementwise on integers."""
    a, b = _int_pair("gcd", input, other)
    a, b = a.abs(), b.abs()
    shape = tuple(y if x == 1 else x for x, y in zip((1,) * (b.ndim - a.ndim) + a.shape,
                                             (1,) * (a.ndim - b.ndim) + b.shape))  # fmt: skip
    a, b = a.expand(shape), b.expand(shape)
    while bool((b != 0).any()):  # Euclid's steps, all entries at once
        safe = where(b == 0, b.new_ones(()), b)
        a, b = where(b == 0, a, b), where(b == 0, b, a % safe)
    return a


def lcm(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The least common multiple (non-negative; 0 where either is 0), on integers."""
    a, b = _int_pair("lcm", input, other)
    g = gcd(a, b)
    safe = where(g == 0, g.new_ones(()), g)
    out: Tensor = (a // safe * b).abs()
    return out


def ldexp(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``input * 2**other`` (a float result)."""
    require_tensors("ldexp", input, other)
    x = to_float(input)
    e = to_float(other) if isinstance(other, Tensor) else float(other)
    out: Tensor = x * (2.0**e if not isinstance(e, Tensor) else e.exp2())
    return out


def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """True where the entry is +inf."""
    if not input.dtype.is_floating_point:
        return input.new_zeros(input.shape, dtype=dtypes.bool_)
    out: Tensor = input.isinf() & (input > 0)
    return out


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """True where the entry is -inf."""
    if not input.dtype.is_floating_point:
        return input.new_zeros(input.shape, dtype=dtypes.bool_)
    out: Tensor = input.isinf() & (input < 0)
    return out


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """True where the imaginary part is 0: everywhere, for lucid's real tensors."""
    return input.new_ones(input.shape, dtype=dtypes.bool_)


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself (``+x``); bool tensors are refused, as in torch."""
    if input.dtype is dtypes.bool_:
        raise RuntimeError(
            "The `+` operator, on a bool tensor is not supported. If you are trying to invert "
            "a mask, use the `~` or `logical_not()` operator instead."
        )
    return input


_chain_matmul_warned: list[bool] = []


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of 2-D matrices, left to right (``linalg.multi_dot``). Deprecated in torch:
    the first call in a process warns, in torch's words (its ``TORCH_WARN_ONCE``)."""
    if not _chain_matmul_warned:
        _chain_matmul_warned.append(True)
        warnings.warn(
            "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
            "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors "
            "rather than multiple parameters.",
            UserWarning,
            stacklevel=2,
        )
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for k, m in enumerate(matrices):
        if m.ndim != 2:
            raise RuntimeError(
                f"Tensor dimension is {m.ndim}, expected 2 instead (matrix {k} of chain_matmul)"
            )
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out


def _scatter_into(input: Tensor, src: Tensor, index: Any, name: str) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``input[index] = src`` (a basic or array index), recorded."""
    idx, _ = _convert_index(index, input.backend)
    target = tuple(input.backend.getitem(input._data, idx).shape)
    if tuple(src.shape) != target:
        raise RuntimeError(
            f"{name}: expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(target)}"
        )
    out: Tensor = IndexPut.apply(input, src.to(input.dtype), idx)
    return out


@composite
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim``."""
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
            f"dimension {d}"
        )
    return _scatter_into(input, src, (slice(None),) * d + (index % size,), "select_scatter")


@composite
def slice_scatter(
    input: Tensor,  # noqa: A002
    src: Tensor,
    dim: int = 0,
    start: int | None = None,
    end: int | None = None,
    step: int = 1,
) -> Tensor:
    """A copy of ``input`` with ``src`` written at ``start:end:step`` along ``dim``."""
    d = normalize_dim(dim, input.ndim)
    index = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, index, "slice_scatter")


@composite
def diagonal_scatter(
    input: Tensor,  # noqa: A002
    src: Tensor,
    offset: int = 0,
    dim1: int = 0,
    dim2: int = 1,
) -> Tensor:
    """A copy of ``input`` with ``src`` written on the diagonal ``offset`` of dims ``dim1``,
    ``dim2`` (``src`` shaped as ``input.diagonal(offset, dim1, dim2)``)."""
    d1, d2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    moved = input.movedim((d1, d2), (-2, -1))
    n, m = moved.shape[-2], moved.shape[-1]
    rows = [i for i in range(n) if 0 <= i + offset < m]
    xp = input.backend.xp
    r = input.backend.asarray(rows, dtypes.int64) if rows else xp.zeros((0,), dtype=xp.int64)
    c = r + offset
    out = _scatter_into(moved, src, (Ellipsis, r, c), "diagonal_scatter")
    return out.movedim((-2, -1), (d1, d2))


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the entries where ``mask`` (broadcast) is true taken, in
    order, from the start of ``source``."""
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype}")  # fmt: skip
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got "
            f"{input.dtype} and {source.dtype}"
        )
    if mask.shape != input.shape:  # the out-of-place op broadcasts input and mask, as torch's
        n = max(input.ndim, mask.ndim)
        a, b = (1,) * (n - input.ndim) + input.shape, (1,) * (n - mask.ndim) + mask.shape
        shape = tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))
        input = input.expand(shape) if input.shape != shape else input
        mask = mask.expand(shape) if mask.shape != shape else mask
    m = mask
    count = int(m.sum().item())
    if count > source.numel():
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           f"as ones in mask ({count}), got {source.numel()}")  # fmt: skip
    vals = source.reshape(-1)[:count]
    idx, _ = _convert_index(m, input.backend)
    out: Tensor = IndexPut.apply(input, vals, idx)
    return out


def index_reduce(
    input: Tensor,  # noqa: A002
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """A copy of ``input`` with each slice ``source[..., i, ...]`` along ``dim`` combined into
    slice ``index[i]`` by ``reduce`` ("prod", "mean", "amax" or "amin")."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1 or index.dtype.category != dtypes.INT:
        raise IndexError("index_reduce_(): Index is supposed to be a vector of integers")
    if source.ndim and source.shape[d] != index.numel():
        raise IndexError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
            f"source.size(dim) ({source.shape[d]})"
        )
    shape = [1] * max(source.ndim, 1)
    shape[d] = index.numel()
    full = index.reshape(tuple(shape)).expand(source.shape if source.ndim else (1,))
    out: Tensor = input.scatter_reduce(d, full, source, reduce, include_self=include_self)
    return out


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``source``'s entries written (or added, with ``accumulate``)
    at the flat positions ``index`` (negative ones count from the end)."""
    if index.numel() != source.numel():
        raise RuntimeError(
            f"put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {source.numel()}, index.numel() = {index.numel()}"
        )
    n = input.numel()
    flat = index.reshape(-1).to(dtypes.int64)
    if n and bool(((flat < -n) | (flat >= n)).any()):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    flat = where(flat < 0, flat + n, flat)
    out: Tensor = input.reshape(-1).index_put((flat,), source.reshape(-1), accumulate)
    return out.reshape(input.shape)


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a lucid Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements."""
    n = 1
    for s in input.shape:
        n *= s
    return n


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether the dtype is a floating point type."""
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """Whether the dtype is a complex type."""
    return input.dtype.is_complex


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """The truth of a one-element tensor (an error for any other size)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def result_type(tensor: Any = None, other: Any = None, *, scalar: Any = None) -> dtypes.dtype:
    """The dtype an arithmetic op of the two (tensors or Python numbers) gives: torch's
    overloads ``(tensor, other)`` and ``(scalar, tensor)``."""
    dims: list[dtypes.dtype] = []
    zero: list[dtypes.dtype] = []
    scalars: list[Any] = []
    pair = (tensor, other) if scalar is None else (scalar, tensor)
    if pair[0] is None or pair[1] is None:
        raise TypeError("result_type() takes (tensor, other) or (scalar=, tensor=)")
    for t in pair:
        if isinstance(t, Tensor):
            (dims if t.ndim else zero).append(t.dtype)
        else:
            scalars.append(t)
    return dtypes.result_type(dims, zero, scalars)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether torch's casting rules allow ``from_`` to ``to`` in an in-place op (no step down
    in kind: bool < integer < floating < complex)."""
    src, dst = dtypes.to_dtype(from_), dtypes.to_dtype(to)
    return bool(src.category <= dst.category)
