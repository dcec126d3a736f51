"""Moving elements around: flip, roll, tril/triu, diagonal, diag."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim, normalize_dims
from lucid.ops.indexing import IndexAddInto, IndexPut

OPS = OpTable(
    op("flip", sample((3, 2), args=((0,),)), sample((3, 2), args=([0, 1],), tag="list")),
    op("fliplr", sample((3, 2), ref="fliplr")),
    op("flipud", sample((3, 2), ref="flipud")),
    op("roll", sample((2, 3), args=(1, 1), ref="roll"), sample((2, 3), args=(2,), tag="flat")),
    op("tril", sample((3, 3), ref="tril")),
    op("triu", sample((3, 4), args=(1,), ref="triu")),
    op("diagonal", sample((3, 4)), sample((2, 3, 3), args=(-1, 1, 2), ref="diagonal",
       tag="offset")),
    op("diag", sample((3,), args=(1,), ref="diag", tag="vec"), sample((3, 3), tag="mat")),
    op("diag_embed", sample((2, 3))),
    op("trace", sample((3, 3), ref="trace")),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class Flip(Function):
    """torch's flip copies (NumPy's ``flip`` is a view: a write into the result would change
    the input, and lucid gave that view out until 7 December 2026)."""

    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        return ctx.backend.copy(ctx.xp.flip(a, axis=dims))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return Flip.apply(g, ctx.dims), None


class Roll(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
        ctx.shifts, ctx.dims = shifts, dims
        return ctx.xp.roll(a, shifts, axis=dims)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.dims), None, None


class Triangle(Function):
    """tril / triu on the last two dims."""

    @staticmethod
    def forward(ctx: Any, a: Any, k: int, name: str) -> Any:
        ctx._node_name = name.capitalize() + "Backward0"  # torch's: TrilBackward0
        ctx.k, ctx.kind = k, name
        return getattr(ctx.xp, name)(a, k)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return Triangle.apply(g, ctx.k, ctx.kind), None, None


def flip(input: Tensor, dims: Any = None, *dim_args: Any) -> Tensor:  # noqa: A002
    """Reverse the order of elements along ``dims`` (``x.flip(0)``, ``x.flip(0, 1)``,
    ``lucid.flip(x, [0])`` or torch's keyword ``lucid.flip(x, dims=[0])``)."""
    dims = () if dims is None else (dims, *dim_args)
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if not dims or input.ndim == 0:
        return input.clone()
    d = normalize_dims(tuple(int(x) for x in dims), input.ndim)
    if len(set(d)) != len(d):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(d)}")
    return Flip.apply(input, d)


def fliplr(input: Tensor) -> Tensor:  # noqa: A002
    """Reverse dim 1."""
    if input.ndim < 2:
        raise RuntimeError("fliplr: Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:  # noqa: A002
    """Reverse dim 0."""
    if input.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d.")
    return flip(input, 0)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """Shift elements cyclically; without ``dims`` the tensor is flattened first."""
    sh = tuple(shifts) if isinstance(shifts, (tuple, list)) else (int(shifts),)
    if not sh:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims: 0")
        return roll(input.reshape(-1), sh, 0).reshape(input.shape)
    ds = tuple(dims) if isinstance(dims, (tuple, list)) else (int(dims),)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    nd = tuple(normalize_dim(d, input.ndim) for d in ds)
    return Roll.apply(input, tuple(int(s) for s in sh), nd)


def _check_2d(name: str, a: Tensor) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions, got {a.ndim}")


def tril(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """Keep the lower triangle (``j <= i + diagonal``) of the last two dims, zero the rest."""
    _check_2d("tril", input)
    return Triangle.apply(input, int(diagonal), "tril")


def triu(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """Keep the upper triangle (``j >= i + diagonal``) of the last two dims, zero the rest."""
    _check_2d("triu", input)
    return Triangle.apply(input, int(diagonal), "triu")


def _diag_index(n: int, m: int, offset: int, backend: Any) -> tuple[Any, Any]:
    xp = backend.xp
    if offset >= 0:
        k = max(min(n, m - offset), 0)
        rows = xp.arange(k)
        return rows, rows + offset
    k = max(min(n + offset, m), 0)
    cols = xp.arange(k)
    return cols - offset, cols


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """The diagonal of the (dim1, dim2) planes, as a new last dim (``torch.diagonal``)."""
    d1, d2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    moved = input.movedim((d1, d2), (-2, -1))
    return Diagonal.apply(moved, int(offset))


class Diagonal(Function):
    """The diagonal ``offset`` of the last two dims as a new last dim: a view of the input, as
    torch's (``x.diagonal().fill_(0)`` writes into ``x``; it was an indexed copy until 7
    December 2026). On NumPy a writable strided view; on a backend whose views are copies
    the diagonal's values, written back into the base by ``write_back``."""

    is_view = True
    index: tuple[Any, ...]
    offset: int
    shape: tuple[int, ...]

    @staticmethod
    def forward(ctx: Any, a: Any, offset: int) -> Any:
        n, m = a.shape[-2], a.shape[-1]
        rows, cols = _diag_index(n, m, offset, ctx.backend)
        ctx.shape, ctx.offset = a.shape, offset
        ctx.index = (Ellipsis, rows, cols)
        if type(a) is np.ndarray:
            k = len(rows)
            start = a[..., int(rows[0]) :, int(cols[0]) :] if k else a[..., :0, :0]
            s = a.strides
            # (ml_dtypes' float8_e5m2 has an array-interface type NumPy can't read back: as
            # bytes, viewed back)
            e5m2 = start.dtype.itemsize == 1 and start.dtype.kind == "f"
            out = np.lib.stride_tricks.as_strided(
                start.view(np.uint8) if e5m2 else start,
                a.shape[:-2] + (k,), s[:-2] + (s[-2] + s[-1],), writeable=a.flags.writeable,
            )  # fmt: skip
            return out.view(start.dtype) if e5m2 else out
        return ctx.backend.getitem(a, ctx.index)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return IndexAddInto.apply(g, ctx.shape, ctx.index, True), None

    def write_back(self, base: Any, value: Any) -> Any:
        return self.backend.setitem(self.backend.copy(base), self.index, value)

    def rebase(self, base: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """After the diagonal of ``base`` was changed in place to ``value``: ``base`` with
        ``value`` on that diagonal (out of place), and its diagonal taken again."""
        new_base = IndexPut.apply(base, value, self.index)
        return new_base, Diagonal.apply(new_base, self.offset)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """1-D input: a square matrix with it on a diagonal; 2-D input: that diagonal."""
    if input.ndim == 2:
        return input.diagonal(diagonal)
    if input.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    n = input.shape[0] + abs(int(diagonal))
    rows, cols = _diag_index(n, n, int(diagonal), input.backend)
    return IndexAddInto.apply(input, (n, n), (rows, cols), True)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """Put the last dim on the diagonal (``offset``) of two new dims ``dim1`` and ``dim2`` of
    the result (default: its last two)."""
    ndim = input.ndim + 1
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] + abs(int(offset))
    rows, cols = _diag_index(n, n, int(offset), input.backend)
    shape = input.shape[:-1] + (n, n)
    out = IndexAddInto.apply(input, shape, (Ellipsis, rows, cols), True)
    if (d1, d2) == (ndim - 2, ndim - 1):
        return out
    return out.movedim((ndim - 2, ndim - 1), (d1, d2))


def trace(input: Tensor) -> Tensor:  # noqa: A002
    """Sum of the main diagonal of a matrix."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return diagonal(input).sum()
