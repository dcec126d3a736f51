"""Sorting and searching: sort, argsort, topk, kthvalue, median, unique, nonzero, searchsorted.

Indices are computed on arrays (not differentiable); the values are ``gather(input, dim,
indices)``, so gradients flow to the selected elements through gather's own backward (and
double backward) without a hand-written rule here. Sorting is stable everywhere, so ties
keep their original order (PyTorch's ``stable=True``); NaN sorts as the largest value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import dtypes
from lucid._creation import from_data
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import composite, ops_watched
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim
from lucid.ops.reduction import ValuesIndices, _values_indices_out

OPS = OpTable(
    op("sort", sample((3, 4), domain="away", dim=1)),
    op("argsort", sample((3, 4), domain="away", dim=1), nograd="integer (index) result"),
    op("topk", sample((3, 4), domain="away", args=(2,), dim=1)),
    op("kthvalue", sample((3, 5), domain="away", args=(2,), dim=1)),
    op("median", sample((3, 5), domain="away"), sample((3, 5), domain="away", dim=1, tag="dim")),
    op("nanmedian", sample((3, 5), domain="away", dim=0)),
    op("unique", sample((12,), domain="int", high=5), nograd="integer input"),
    op("nonzero", sample((3, 4), domain="bool"), nograd="integer (index) result"),
    op("searchsorted", method=False, untested="needs sorted boundaries: test_core_sorting"),
    op("bucketize", method=False, untested="needs sorted boundaries: test_core_sorting"),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _int64(t: Tensor, arr: Any) -> Tensor:
    return Tensor.from_backend_array(t.backend.astype(arr, dtypes.int64), t.backend)


def _stable_argsort(xp: Any, a: Any, axis: int) -> Any:
    if type(a) is np.ndarray:  # the method: np.argsort's Python wrapper costs ~1 us a call
        return a.argsort(axis=axis, kind="stable")
    try:
        return xp.argsort(a, axis=axis, kind="stable")
    except TypeError:  # namespaces without `kind` (MLX) sort stably already
        return xp.argsort(a, axis=axis)


def _sort_indices(a: Tensor, dim: int, descending: bool) -> Any:
    """Stable order along ``dim``; descending keeps ties in order and puts NaN first."""
    xp, arr = a.backend.xp, a._data
    if not descending:
        return _stable_argsort(xp, arr, dim)
    n = arr.shape[dim]
    if type(arr) is np.ndarray:  # the same reversal as a slice (np.flip's wrapper: ~2 us)
        back = (slice(None),) * dim + (slice(None, None, -1),)
        rev = _stable_argsort(xp, arr[back], dim)
        return np.subtract(n - 1, rev[back])
    rev = _stable_argsort(xp, xp.flip(arr, axis=dim), dim)
    return (n - 1) - xp.flip(rev, axis=dim)


def _picked(input: Tensor, d: int, idx: Tensor) -> Tensor:
    """``input.gather(d, idx)`` for indices a sort made (in range, of the right shape): on the
    arrays where no graph is recorded and no op observer or interceptor must see the gather
    (the same ``take_along_axis`` call, so the same values: generation's per-token top-k)."""
    if ops_watched() or (input.requires_grad and grad_mode._state.enabled):
        return input.gather(d, idx)
    be = input.backend
    a, i = input._data, idx._data
    if type(a) is np.ndarray and type(i) is np.ndarray and a.ndim == 2 and d == 1:
        # the fancy index take_along_axis builds, without its Python wrapper (~2 us of a
        # generated token's top-k; a gather: the same values); one row: ``take`` over the
        # flat row, the same elements (~1 us less)
        if a.shape[0] == 1:
            return Tensor.from_backend_array(a.take(i), be)
        rows = np.arange(a.shape[0]).reshape(-1, 1)
        return Tensor.from_backend_array(a[rows, i], be)
    return Tensor.from_backend_array(be.xp.take_along_axis(a, i, axis=d), be)


def _check_tensor(name: str, x: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")


@composite
def sort(
    input: Tensor,  # noqa: A002
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
    *,
    out: Any = None,
) -> ValuesIndices:
    """``(values, indices)`` sorted along ``dim`` (always stable, so ``stable`` is accepted)."""
    result: ValuesIndices = _values_indices_out("sort", _sort(input, dim, descending), out, input)
    return result


def _sort(input: Tensor, dim: int, descending: bool) -> ValuesIndices:  # noqa: A002
    _check_tensor("sort", input)
    if input.ndim == 0:
        return ValuesIndices(input, input.new_zeros((), dtype=dtypes.int64))
    d = normalize_dim(dim, input.ndim)
    idx = _int64(input, _sort_indices(input, d, descending))
    return ValuesIndices(_picked(input, d, idx), idx)


def argsort(
    input: Tensor,  # noqa: A002
    dim: int = -1,
    descending: bool = False,
    stable: bool = False,
) -> Tensor:
    """The indices that sort ``input`` along ``dim``."""
    return sort(input, dim, descending, stable).indices


@composite
def topk(
    input: Tensor,  # noqa: A002
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
    *,
    out: Any = None,
) -> ValuesIndices:
    """The ``k`` largest (or smallest) entries along ``dim``, as ``(values, indices)``."""
    result: ValuesIndices = _values_indices_out("topk", _topk(input, k, dim, largest), out, input)
    return result


def _topk(input: Tensor, k: int, dim: int, largest: bool) -> ValuesIndices:  # noqa: A002
    _check_tensor("topk", input)
    arr = input._data
    if (
        type(arr) is np.ndarray
        and arr.ndim == 2
        and (dim == -1 or dim == 1)
        and type(dim) is int
        and type(k) is int
        and 0 <= k <= arr.shape[1]
        and largest
    ):  # the rows of generation's logits: the steps below, fewer calls (issue 30)
        back = (slice(None), slice(None, None, -1))
        order = np.subtract(arr.shape[1] - 1, _stable_argsort(np, arr[back], 1)[back])
        idx = _int64(input, order[:, :k])
        return ValuesIndices(_picked(input, 1, idx), idx)
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k={k}, size of dim {dim} is {n})")
    if input.ndim == 0:
        return sort(input)
    order = _sort_indices(input, d, largest)
    idx = _int64(input, order[(slice(None),) * d + (slice(0, k),)])
    return ValuesIndices(_picked(input, d, idx), idx)


def _kthvalue(
    input: Tensor,  # noqa: A002
    k: int,
    dim: int = -1,
    keepdim: bool = False,
) -> ValuesIndices:
    """The ``k``-th smallest entry (1-based) along ``dim``, as ``(values, indices)``."""
    _check_tensor("kthvalue", input)
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {d} (k={k}, size {n})"
        )
    if input.ndim == 0:
        return sort(input)
    order = _sort_indices(input, d, False)
    return _pick(input, order, d, input.backend.xp.full(_kept(input.shape, d), k - 1), keepdim)


@composite
def kthvalue(
    input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None
) -> ValuesIndices:  # noqa: A002
    """The ``k``-th smallest entry (1-based) along ``dim``, as ``(values, indices)``; ``out=``
    takes ``(values, indices)`` with torch's rules."""
    result: ValuesIndices = _values_indices_out(
        "kthvalue", _kthvalue(input, k, dim, keepdim), out, input
    )
    return result


def _kept(shape: tuple[int, ...], d: int) -> tuple[int, ...]:
    return shape[:d] + (1,) + shape[d + 1 :]


def _pick(a: Tensor, order: Any, d: int, pos: Any, keepdim: bool) -> ValuesIndices:
    """Entries at sorted position ``pos`` (one per slice, shaped like a keepdim reduction)."""
    xp = a.backend.xp
    idx = _int64(a, xp.take_along_axis(order, a.backend.astype(pos, dtypes.int64), axis=d))
    values = a.gather(d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return ValuesIndices(values, idx)


def _median(name: str, a: Tensor, dim: int | None, keepdim: bool, skip_nan: bool) -> Any:
    _check_tensor(name, a)
    if a.numel() == 0:
        raise RuntimeError(f"{name}() input tensor cannot be empty")
    if dim is None:
        flat = a.reshape(-1)
        return _median(name, flat, 0, False, skip_nan).values
    d = normalize_dim(dim, a.ndim)
    if a.ndim == 0:
        return ValuesIndices(a, a.new_zeros((), dtype=dtypes.int64))
    xp = a.backend.xp
    n = a.shape[d]
    order = _sort_indices(a, d, False)
    if a.dtype.is_floating_point:
        nans = xp.sum(xp.isnan(a._data), axis=d, keepdims=True)
        if skip_nan:  # the lower median of the non-NaN entries (NaN if all are NaN)
            pos = xp.maximum(xp.floor_divide(n - nans - 1, 2), 0)
        else:  # any NaN makes the median NaN (NaNs sort last: take the first one)
            pos = xp.where(nans > 0, n - nans, (n - 1) // 2)
    else:
        pos = xp.full(_kept(a.shape, d), (n - 1) // 2)
    return _pick(a, order, d, pos, keepdim)


@composite
def median(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
           out: Any = None) -> Any:  # fmt: skip
    """The lower median (not the mean of the two middle values, as PyTorch); NaN propagates.

    Without ``dim`` a 0-d tensor; with ``dim`` ``(values, indices)`` (``out=`` takes those
    two, as in torch). The gradient goes to the selected element only.
    """
    _need_dim("median", dim, out)
    return _values_indices_out("median", _median("median", input, dim, keepdim, False), out, input)


def _need_dim(name: str, dim: Any, out: Any) -> None:
    if out is not None and dim is None:  # torch's out= overload is the one with dim
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


@composite
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
              out: Any = None) -> Any:  # fmt: skip
    """:func:`median` ignoring NaN (NaN only where a slice is all NaN)."""
    _need_dim("nanmedian", dim, out)
    return _values_indices_out(
        "nanmedian", _median("nanmedian", input, dim, keepdim, True), out, input
    )


@composite
def unique(
    input: Tensor,  # noqa: A002
    sorted: bool = True,  # noqa: A002
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """Distinct values (sorted), optionally with the inverse mapping and the counts."""
    _check_tensor("unique", input)
    xp, backend = input.backend.xp, input.backend
    d = None if dim is None else normalize_dim(dim, input.ndim)
    vals, inverse, counts = xp.unique(input._data, return_inverse=True, return_counts=True, axis=d)
    out = Tensor.from_backend_array(vals, backend)
    if not (return_inverse or return_counts):
        return out
    result = [out]
    if return_inverse:
        inv_shape = input.shape if d is None else (input.shape[d],)
        result.append(_int64(input, xp.reshape(inverse, inv_shape)))
    if return_counts:
        result.append(_int64(input, counts))
    return tuple(result)


@composite
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """Indices of the non-zero entries: an ``(n, ndim)`` int64 tensor, or one 1-D per dim."""
    _check_tensor("nonzero", input)
    xp = input.backend.xp
    arr = input._data if input.ndim else xp.reshape(input._data, (1,))
    coords = xp.nonzero(arr)
    if as_tuple:
        return tuple(_int64(input, c) for c in coords)
    if input.ndim == 0:
        return _int64(input, xp.zeros((coords[0].shape[0], 0), dtype=coords[0].dtype))
    return _int64(input, xp.stack(coords, axis=1))


def searchsorted(
    sorted_sequence: Tensor,
    input: Any,  # noqa: A002
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Insertion points of ``values`` into the innermost dim of ``sorted_sequence``.

    A 1-D sequence searches all of ``values``; an N-D one searches row by row, with
    ``values`` having the same leading dims.
    """
    _check_tensor("searchsorted", sorted_sequence)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    vals = from_data(input, device=seq.device) if scalar else input
    xp = seq.backend.xp
    how = "right" if right else "left"
    if seq.ndim <= 1:
        out = xp.searchsorted(seq._data, vals._data, side=how)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError(
                f"searchsorted(): boundaries and input should have the same leading dims, got "
                f"{list(seq.shape)} and {list(vals.shape)}"
            )
        rows_s = xp.reshape(seq._data, (-1, seq.shape[-1]))
        rows_v = xp.reshape(vals._data, (-1, vals.shape[-1]))
        found = [xp.searchsorted(rows_s[i], rows_v[i], side=how) for i in range(rows_s.shape[0])]
        out = xp.reshape(xp.stack(found), vals.shape)
    dt = dtypes.int32 if out_int32 else dtypes.int64
    return Tensor.from_backend_array(seq.backend.astype(out, dt), seq.backend)


def bucketize(
    input: Any,  # noqa: A002
    boundaries: Tensor,
    *,
    out_int32: bool = False,
    right: bool = False,
) -> Tensor:
    """The bucket of each entry of ``input`` given 1-D ``boundaries`` (``torch.bucketize``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
