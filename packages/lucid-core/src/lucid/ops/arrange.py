"""Arranging tensors, built from views, joins and products: broadcast_tensors/shapes, select,
rot90, the h/v/d splits and stacks, atleast_3d, block_diag, kron; and isin, argwhere,
unique_consecutive, sinc and the degree conversions.

All are compositions of differentiable ops, so their gradients come from those ops'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import dtypes
from lucid._creation import from_data
from lucid._tensor import Tensor
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int, normalize_dim, one_of, promote, to_float
from lucid.ops.elementwise import where
from lucid.ops.join import cat, hstack, pad, tensor_split, vstack
from lucid.ops.sorting import nonzero, searchsorted

_LIST = "takes a list of tensors: core_op_cases"
OPS = OpTable(
    op("broadcast_tensors", sample((3, 1), (1, 4)), sample((2, 3), (), tag="0d"),
       method=False),
    op("broadcast_shapes", method=False, untested="takes shapes: test_core_ops_added"),
    op("select", sample((3, 4), args=(1, -2)), sample((3,), args=(0, 2), tag="1d")),
    op("rot90", sample((3, 4)), sample((2, 3, 4), args=(2, [1, 2]), tag="k2"),
       sample((3, 4), args=(-1,), tag="k-1")),
    op("hsplit", sample((3, 4), args=(2,)), sample((6,), args=([1, 4],), tag="1d")),
    op("vsplit", sample((4, 3), args=([1, 3],))),
    op("dsplit", sample((2, 3, 4), args=(2,))),
    *[op(n, method=False, untested=_LIST) for n in ("dstack", "column_stack")],
    op("row_stack", alias="vstack", method=False),
    op("atleast_3d", sample((3,)), sample((2, 3), tag="2d"), sample((), tag="0d"),
       method=False),
    op("block_diag", sample((2, 3), (1, 2), (3,)), sample((2, 2), (), tag="0d"),
       method=False),
    op("kron", sample((2, 3), (3, 2), gg=True), sample((2,), (2, 3), tag="ranks")),
    op("isin", sample((4, 5), (6,), domain="int", high=8),
       sample((5,), (3,), domain="int", high=4, invert=True, tag="invert"),
       nograd="boolean result"),
    op("argwhere", sample((3, 4), domain="bool"), nograd="integer (index) result"),
    op("unique_consecutive", sample((12,), domain="int", high=3),
       sample((12,), domain="int", high=3, return_inverse=True, return_counts=True, tag="all"),
       sample((4, 3), domain="int", high=2, dim=0, return_counts=True, tag="dim"),
       nograd="integer input"),
    op("sinc", sample((3, 4), gg=True)),
    op("deg2rad", sample((3, 4))),
    op("rad2deg", sample((3, 4))),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape tensors of ``shapes`` broadcast to (an int is a 1-D shape)."""
    sizes = [(int(s),) if index_int(s) is not None else tuple(int(k) for k in s) for s in shapes]
    n = max((len(s) for s in sizes), default=0)
    out = [1] * n
    for s in sizes:
        for k, size in enumerate(s, n - len(s)):
            if size < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {size}: {list(s)}"
                )
            if out[k] == 1:
                out[k] = size
            elif size not in (1, out[k]):
                raise RuntimeError(
                    f"Shape mismatch: objects cannot be broadcast to a single shape: "
                    f"{[list(t) for t in sizes]}"
                )
    return tuple(out)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views)."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.expand(shape) for t in tensors)


def select(input: Tensor, dim: int, index: int) -> Tensor:  # noqa: A002
    """The slice at ``index`` along ``dim`` (that dim removed): ``input[..., index, ...]``."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    i = int(index)
    if not -size <= i < size:
        raise IndexError(
            f"select(): index {i} out of range for tensor of size {list(input.shape)} at "
            f"dimension {d}"
        )
    return input[(slice(None),) * d + (i % size,)]


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first axis toward
    the second (as ``numpy.rot90``)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = normalize_dim(dims[0], input.ndim), normalize_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def _split_along(
    name: str, input: Tensor, sections: Any, dim: int, need: int
) -> tuple[Tensor, ...]:  # noqa: A002
    if input.ndim < need:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor "
            f"with {input.ndim} dimensions!"
        )
    if not isinstance(sections, (int, np.integer, list, tuple, Tensor)) or isinstance(
        sections, bool
    ):
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (Tensor, "
            f"{type(sections).__name__}), but expected one of: (Tensor input, int sections) or "
            "(Tensor input, tuple of ints indices)"
        )
    if (count := index_int(sections)) is not None:
        sections = count
        size = input.shape[dim]
        if sections <= 0 or size % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 1 (dim 0 of a 1-D tensor): equal ``sections`` or at the given
    ``indices`` (torch's two overloads; either may be passed positionally)."""
    dim = 0 if input.ndim == 1 else 1
    chosen = one_of("hsplit", sections=sections, indices=indices)
    return _split_along("hsplit", input, chosen, dim, 1)


def vsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 0 (at least 2-D): equal ``sections`` or at the given ``indices``."""
    chosen = one_of("vsplit", sections=sections, indices=indices)
    return _split_along("vsplit", input, chosen, 0, 2)


def dsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple[Tensor, ...]:  # noqa: A002
    """Split along dim 2 (at least 3-D): equal ``sections`` or at the given ``indices``."""
    chosen = one_of("dsplit", sections=sections, indices=indices)
    return _split_along("dsplit", input, chosen, 2, 3)


def _at_least_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.reshape(1, t.shape[0], 1)
    if t.ndim == 2:
        return t.unsqueeze(-1)
    return t


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1); one tensor
    in, one out; several (or a list) in, a tuple out."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _at_least_3d(tensors[0])
    items = tensors[0] if len(tensors) == 1 else tensors
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"atleast_3d(): expected Tensors, got {type(t).__name__} at position {i}"
            )
    return tuple(_at_least_3d(t) for t in items)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Stack along dim 2 after :func:`atleast_3d`."""
    if not len(tensors):
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat([_at_least_3d(t) for t in tensors], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors as columns: 0-d and 1-d ones become (n, 1), then joined along dim 1."""
    return hstack([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors])


row_stack = vstack


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as one row, or 2-d) as blocks on the diagonal of a zero matrix."""
    blocks = []
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} "
                f"has {t.ndim} dimensions"
            )
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return from_data([], dtype=dtypes.get_default_dtype()).reshape(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = dtypes.promote_types(dtype, b.dtype)
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        c = b.shape[1]
        rows.append(pad(b.to(dtype), (left, width - left - c)))
        left += c
    return cat(rows, 0)


def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product: blocks ``input[i, j] * other`` (the shorter shape padded with
    leading 1s)."""
    n = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (n - input.ndim) + input.shape)
    b = other.reshape((1,) * (n - other.ndim) + other.shape)
    a_shape = tuple(s for k in a.shape for s in (k, 1))
    b_shape = tuple(s for k in b.shape for s in (1, k))
    out: Tensor = a.reshape(a_shape) * b.reshape(b_shape)
    return out.reshape(tuple(x * y for x, y in zip(a.shape, b.shape)))


def isin(
    elements: Any = None,
    test_elements: Any = None,
    *,
    assume_unique: bool = False,
    invert: bool = False,
    element: Any = None,
    test_element: Any = None,
) -> Tensor:
    """True where an entry of ``elements`` is in ``test_elements`` (either may be a number;
    torch's overloads name a number ``element`` / ``test_element``)."""
    elements = one_of("isin", elements=elements, element=element)
    test_elements = one_of("isin", test_elements=test_elements, test_element=test_element)
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() expects at least one tensor argument, got {type(elements).__name__} and "
            f"{type(test_elements).__name__}"
        )
    e, t = promote(elements, test_elements)
    et = e if isinstance(e, Tensor) else from_data(e, dtype=t.dtype, device=t.device)  # type: ignore[union-attr,unused-ignore]
    tt = t if isinstance(t, Tensor) else from_data(t, dtype=et.dtype, device=et.device)
    table = tt.detach().reshape(-1).sort().values
    flat = et.detach().reshape(-1)
    if table.numel() == 0:
        found = flat.new_zeros(flat.shape, dtype=dtypes.bool_)
    else:
        pos = searchsorted(table, flat).clamp(max=table.numel() - 1)
        found = table[pos] == flat
    found = found.reshape(et.shape)
    return ~found if invert else found


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """The indices of the nonzero entries, one row each (``nonzero``'s ``(n, ndim)`` form)."""
    out: Tensor = nonzero(input)
    return out


def unique_consecutive(
    input: Tensor,  # noqa: A002
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The entries (or slices along ``dim``) with consecutive repeats collapsed to one,
    optionally with each input entry's group (``inverse``) and each group's length."""
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = normalize_dim(dim, input.ndim)
        x = input
    n = x.shape[d] if x.ndim else 1
    if x.ndim == 0:
        x = x.reshape(1)
    if n == 0:
        keep = x.new_zeros((0,), dtype=dtypes.bool_)
    else:
        m = x.movedim(d, 0).reshape(n, -1)
        change = (
            (m[1:] != m[:-1]).any(1) if m.shape[1] else m.new_zeros((n - 1,), dtype=dtypes.bool_)
        )
        keep = cat([change.new_ones((1,)), change], 0)
    out = x.movedim(d, 0)[keep].movedim(0, d) if dim is not None else x[keep]
    if not (return_inverse or return_counts):
        return out
    result = [out]
    if return_inverse:
        inverse = keep.long().cumsum(0) - 1
        result.append(inverse.reshape(input.shape) if dim is None else inverse)
    if return_counts:
        starts = nonzero(keep).reshape(-1)
        ends = cat([starts[1:], starts.new_tensor([n])], 0)
        result.append(ends - starts)
    return tuple(result)


def sinc(input: Tensor) -> Tensor:  # noqa: A002
    """``sin(pi x) / (pi x)``, 1 at 0 (integer inputs give the default float)."""
    x = to_float(input)
    zero = x == 0
    safe = where(zero, x.new_ones(()), x) * math.pi
    out: Tensor = where(zero, x.new_ones(()), safe.sin() / safe)
    return out


def deg2rad(input: Tensor) -> Tensor:  # noqa: A002
    """Degrees to radians (integer inputs give the default float)."""
    out: Tensor = to_float(input) * (math.pi / 180)
    return out


def rad2deg(input: Tensor) -> Tensor:  # noqa: A002
    """Radians to degrees (integer inputs give the default float)."""
    out: Tensor = to_float(input) * (180 / math.pi)
    return out
