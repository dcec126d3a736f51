"""Index grids and counting: triu/tril_indices, meshgrid, cartesian_prod, histc, bincount."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.backends import get_backend
from lucid.ops._registry import OpTable, op, sample
from lucid.ops.join import stack

_SIZES = "builds indices from sizes: test_core_batched_matmul_grids and the MLX list"
OPS = OpTable(
    op("tril_indices", method=False, untested=_SIZES),
    op("triu_indices", method=False, untested=_SIZES),
    op("meshgrid", sample((3,), (2,), indexing="ij"), method=False),
    op("cartesian_prod", sample((3,), (2,)), method=False),
    op("histc", sample((20,), bins=5, min=-2, max=2), nograd="counts"),
    op("bincount", sample((20,), domain="int", high=6), nograd="counts"),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _index_pairs(rows: Any, cols: Any, dtype: Any, device: Any) -> Tensor:
    # Index construction, like arange: built once on the host, then moved to the device.
    backend = get_backend(device)
    dt = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    return Tensor.from_backend_array(backend.asarray(np.stack([rows, cols]), dt), backend)


def triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """``(2, N)`` coordinates of the upper triangle (diagonal ``offset``) of a row x col matrix."""
    r, c = np.triu_indices(row, k=offset, m=col)
    return _index_pairs(r, c, dtype, device)


def tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """``(2, N)`` coordinates of the lower triangle (diagonal ``offset``) of a row x col matrix."""
    r, c = np.tril_indices(row, k=offset, m=col)
    return _index_pairs(r, c, dtype, device)


_meshgrid_warned: list[bool] = []


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors (``indexing="ij"``, the default as in PyTorch, or
    ``"xy"``). Without ``indexing`` the first call in a process warns, in torch's words (its
    ``TORCH_WARN_ONCE``)."""
    if indexing is None and not _meshgrid_warned:
        _meshgrid_warned.append(True)
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
            UserWarning,
            stacklevel=2,
        )
    indexing = "ij" if indexing is None else indexing
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if not isinstance(t, Tensor) or t.ndim > 1:
            got = f"{t.ndim}D tensor" if isinstance(t, Tensor) else type(t).__name__
            raise RuntimeError(f"meshgrid expects 0D or 1D tensors, got a {got}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    n = len(flat)
    grids = [t.reshape((1,) * i + (-1,) + (1,) * (n - i - 1)).expand(shape) for i, t in
             enumerate(flat)]  # fmt: skip
    if swap:  # "xy": built as "ij" over (y, x, ...), then handed back in the given order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of the entries of 1-D tensors, one per row."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """Counts of ``input`` in ``bins`` equal bins over [min, max] (the data range if equal).

    Entries outside the range are ignored; the result has ``input``'s float dtype.
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same "
                           f"dtype, but got input {input.dtype}")  # fmt: skip
    if bins <= 0:
        raise RuntimeError(f"torch.histc: bins must be > 0, but got {bins} for bins")
    backend, xp = input.backend, input.backend.xp
    data = xp.reshape(input._data, (-1,))
    lo, hi = float(min), float(max)
    if lo == hi and data.shape[0]:
        lo, hi = float(xp.min(data)), float(xp.max(data))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min, got min={lo}, max={hi}")
    inside = xp.logical_and(data >= lo, data <= hi)
    pos = xp.floor((data - lo) * (bins / (hi - lo)))
    idx = xp.minimum(xp.where(inside, pos, 0), bins - 1)
    idx = backend.astype(idx, dtypes.int64)
    counts = backend.index_add(xp.zeros((bins,), dtype=data.dtype), idx,
                               backend.astype(inside, input.dtype))  # fmt: skip
    return Tensor.from_backend_array(counts, backend)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """Occurrences of each value of a 1-D non-negative integer tensor (or sums of ``weights``)."""
    if input.ndim != 1 or input.dtype.category != dtypes.INT:
        raise RuntimeError(
            f"bincount only supports 1-d non-negative integral inputs, got a {input.ndim}-d "
            f"{input.dtype} tensor"
        )
    backend, xp = input.backend, input.backend.xp
    n = input.shape[0]
    if n and int(backend.to_numpy(xp.min(input._data))) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError(f"minlength should be >= 0, got {minlength}")
    length = max(int(backend.to_numpy(xp.max(input._data))) + 1 if n else 0, minlength)
    if weights is None:
        vals = xp.ones((n,), dtype=backend.native_dtype(dtypes.int64))
        dt = dtypes.int64
    else:
        if weights.shape != input.shape:
            raise RuntimeError(f"weights should be 1-d and have the same length as input, got "
                               f"{list(weights.shape)} for input {list(input.shape)}")  # fmt: skip
        dt = weights.dtype if weights.dtype.is_floating_point else dtypes.float64
        vals = backend.astype(weights._data, dt)
    out = backend.index_add(xp.zeros((length,), dtype=backend.native_dtype(dt)), input._data, vals)
    return Tensor.from_backend_array(out, backend)
