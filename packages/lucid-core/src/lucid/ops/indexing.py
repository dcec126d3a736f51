"""``__getitem__`` / ``__setitem__`` with ints, slices, None, Ellipsis, masks and index arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from lucid import dtypes
from lucid._creation import from_data
from lucid._tensor import Tensor
from lucid.autograd import grad_mode, inplace
from lucid.autograd.function import Function, NodeName, unrecorded, unrecorded_view
from lucid.ops._registry import OpTable, op
from lucid.ops._util import normalize_dim, scalar_type_name, write_out
from lucid.ops.elementwise import where

_INDEXED = "takes index tensors: core_op_cases"
OPS = OpTable(
    op("getitem", method=False, untested="Tensor.__getitem__: core_op_cases' getitem cases"),
    op("setitem", method=False, untested="Tensor.__setitem__: core_op_cases' setitem cases"),
    *[op(n, untested=_INDEXED) for n in ("gather", "scatter", "scatter_add", "scatter_reduce",
                                         "index_select", "index_add", "take", "take_along_dim",
                                         "masked_fill", "masked_select", "index_fill",
                                         "index_copy", "index_put")],
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


_BASIC = frozenset({int, slice, type(None), type(Ellipsis)})


def _convert_index(
    index: Any, backend: Any, shape: tuple[int, ...] | None = None
) -> tuple[Any, bool]:
    """Backend-array form of an index, and whether it uses advanced (array) indexing; with
    the indexed tensor's ``shape``, a boolean mask whose shape does not match the dims it
    covers raises torch's IndexError (its nonzero() positions would index another shape)."""
    # Basic indexing (ints, slices, None, ...) is the common case: no per-item probing
    # (per-call cost, docs/performance.md, issue 30); the same result as the loop below.
    kind = type(index)
    if kind is int or kind is slice:
        return (index, Ellipsis), False
    if kind is tuple and _BASIC.issuperset(map(type, index)):
        if any(item is Ellipsis for item in index):
            return index, False
        return (*index, Ellipsis), False
    if kind is Tensor and index._backend is backend:
        m = index._data
        if type(m) is np.ndarray and m.dtype == np.bool_ and m.ndim and m.shape == shape:
            # a boolean mask of the indexed tensor's shape (generation's top-k filter,
            # ``x[x < v] = -inf``): the loop's result, its positions, in fewer steps (issue 30)
            found = m.nonzero()
            return (found if len(found) != 1 else found[0]), True
    items = index if isinstance(index, tuple) else (index,)
    out = []
    advanced = False
    masks = []  # (position among the items, mask shape)
    for pos, item in enumerate(items):
        if isinstance(item, np.integer):  # an integer for torch (a select), not an array
            item = int(item)
        if isinstance(item, Tensor):
            if item.backend is not backend:
                raise RuntimeError(
                    f"indices should be on the same device as the indexed tensor "
                    f"({backend.device}), got {item.device}"
                )
            item = item._data
            advanced = True
        elif isinstance(item, list):
            item = backend.asarray(item)
            advanced = True
        elif hasattr(item, "dtype") and hasattr(item, "shape"):
            advanced = True
        if _is_mask(item, backend):
            # A boolean mask means its nonzero() positions (as in NumPy); backends without
            # mask indexing (MLX) then see integer index arrays only.
            masks.append((pos, tuple(item.shape)))
            out.extend(backend.xp.nonzero(item))
            continue
        out.append(item)
    if masks and shape is not None:
        _check_masks(items, masks, tuple(shape), backend)
    if not isinstance(index, tuple) and len(out) != 1:
        return tuple(out), advanced
    if not advanced and not any(item is Ellipsis for item in out):
        # A trailing `...` makes numpy return a 0-d view instead of a scalar copy for x[i]
        # on a 1-D array, so in-place ops on the result write through as in torch.
        out.append(Ellipsis)
        return tuple(out), advanced
    return (tuple(out) if isinstance(index, tuple) else out[0]), advanced


def _check_masks(items: Any, masks: list[tuple[int, tuple[int, ...]]], shape: tuple[int, ...],
                 backend: Any) -> None:  # fmt: skip
    """Raise torch's IndexError where a boolean mask's size differs from a dim it covers."""
    widths: list[int | None] = []  # the dims of the indexed tensor each item consumes
    mask_at = dict(masks)
    for pos, item in enumerate(items):
        if item is None or type(item) is bool:
            widths.append(0)
        elif item is Ellipsis:
            widths.append(None)
        elif pos in mask_at:
            widths.append(len(mask_at[pos]))
        elif (
            hasattr(item, "shape")
            and not isinstance(item, list)
            and len(item.shape) == 0
            and (backend.dtype_of(item._data if isinstance(item, Tensor) else item) is dtypes.bool_)
        ):
            widths.append(0)  # a 0-d bool adds a dim, as True/False do
        else:
            widths.append(1)
    if None in widths:
        widths[widths.index(None)] = max(0, len(shape) - sum(w or 0 for w in widths))
    dim = 0
    for pos, width in enumerate(widths):
        if pos in mask_at:
            for k, size in enumerate(mask_at[pos]):
                if dim + k < len(shape) and size != shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(mask_at[pos])} at index {k} does not "
                        f"match the shape of the indexed tensor {list(shape)} at index {dim + k}"
                    )
        dim += width or 0


def _is_mask(item: Any, backend: Any) -> bool:
    if not (hasattr(item, "dtype") and hasattr(item, "shape")) or len(item.shape) == 0:
        return False
    return backend.dtype_of(item) is dtypes.bool_


class _IntSplit(NamedTuple):
    """An index whose integers torch and NumPy place differently (``_int_split``)."""

    ints: tuple[Any, ...]  # the integers alone, full slices elsewhere: torch's selects
    rest: tuple[Any, ...]  # the index without its integers, for what the selects leave
    at: int  # where torch puts the advanced dims (NumPy puts them first)
    basic: int  # how many dims the slices, None and ``...`` give


def _int_split(index: Any, a: Tensor) -> _IntSplit | None:
    """torch applies an index's integers (Python or NumPy ints, 0-d integer tensors) as
    selects before its advanced items (lists, index tensors, masks, bools) index what is
    left; NumPy counts an integer as one more advanced index. They differ where an integer
    stands apart from the advanced items that are together without it (``x[0, :, [1, 2]]``):
    NumPy then moves the advanced dims to the front, torch keeps them in place. For such an
    index its ``_IntSplit``; None for every other (NumPy's layout is torch's there)."""
    if type(index) is not tuple or len(index) < 3:  # an int, a slice and an advanced item
        return None
    if _BASIC.issuperset(map(type, index)):  # ints and slices alone: basic (the common case)
        return None
    kinds = "".join(_index_kind(item, a.backend) for item in index)
    if "a" not in kinds or "i" not in kinds:
        return None
    if "b" not in kinds.strip("b"):  # the integers and advanced items, and what lies between
        return None  # together for NumPy too: the same place
    if "b" in kinds.replace("i", "").strip("b"):
        return None  # apart for torch too: both put the advanced dims first
    first = kinds.index("a")
    consumed = [_index_width(item, k, a.backend) for item, k in zip(index, kinds)]
    ell = max(0, a.ndim - sum(w for w in consumed if w > 0))
    outs = [(ell if item is Ellipsis else 1) if k == "b" else 0 for item, k in zip(index, kinds)]
    ints: list[Any] = []
    for item, k, w in zip(index, kinds, consumed):
        if k == "i":
            ints.append(int(item) if isinstance(item, np.integer) else item)
        elif item is Ellipsis:
            ints.append(Ellipsis)
        else:
            ints.extend([slice(None)] * max(w, 0))
    rest = tuple(item for item, k in zip(index, kinds) if k != "i")
    trailing = 0 if any(item is Ellipsis for item in index) else ell  # dims no item names
    return _IntSplit(tuple(ints), rest, sum(outs[:first]), sum(outs) + trailing)


def _index_kind(item: Any, backend: Any) -> str:
    """The kind of an index item: "i" for one torch applies as a select (an integer, a 0-d
    integer tensor), "a" for an advanced one (a list, an index tensor or array, a mask, a
    bool), "b" else."""
    kind = type(item)
    if kind is slice or item is None or item is Ellipsis:
        return "b"
    if kind is int or isinstance(item, np.integer):
        return "i"
    if isinstance(item, Tensor):
        return "i" if item.ndim == 0 and item.dtype.category == dtypes.INT else "a"
    if hasattr(item, "dtype") and hasattr(item, "shape") and len(item.shape) == 0:
        return "i" if backend.dtype_of(item).category == dtypes.INT else "a"
    return "a"


def _index_width(item: Any, kind: str, backend: Any) -> int:
    """How many dims of the indexed tensor ``item`` takes (-1 for ``...``)."""
    if item is Ellipsis:
        return -1
    if item is None or type(item) is bool:
        return 0
    if kind != "a":
        return 1
    if isinstance(item, Tensor):
        return item.ndim if item.dtype is dtypes.bool_ else 1
    arr = backend.asarray(item) if isinstance(item, list) else item
    if backend.dtype_of(arr) is dtypes.bool_:
        return len(arr.shape)  # a mask takes its dims; a 0-d bool none
    return 1


class GetItem(Function):
    index: Any
    advanced: bool
    shape: tuple[int, ...]

    @staticmethod
    def forward(ctx: Any, a: Any, index: Any, advanced: bool) -> Any:
        ctx.index, ctx.advanced, ctx.shape = index, advanced, a.shape
        ctx.is_view = not advanced
        return ctx.backend.getitem(a, index)

    @property
    def name(self) -> NodeName:
        """torch's node for this index, worked out when asked (not on the forward's path):
        ``IndexBackward0`` for an advanced index, else ``_basic_index_name``'s."""
        n = self._node_name
        if n is None:
            n = "IndexBackward0" if self.advanced else _basic_index_name(self.index, self.shape)
        return NodeName(n)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return IndexAddInto.apply(g, ctx.shape, ctx.index, ctx.advanced), None, None

    def write_back(self, base: Any, value: Any) -> Any:
        return self.backend.setitem(self.backend.copy(base), self.index, value)

    def rebase(self, base: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """After ``base[index]`` was changed in place to ``value``: the base's new value as
        ``base[index] = value`` out of place, and the view taken again from it."""
        new_base = IndexPut.apply(base, value, self.index)
        return new_base, GetItem.apply(new_base, self.index, False)


def _basic_index_name(index: Any, shape: tuple[int, ...]) -> str:
    """torch's node for a basic index: it applies the items left to right as views (an int a
    ``select``, a slice that is not the whole dim a ``slice``, None an ``unsqueeze``; whole
    slices and ``...`` are skipped), and the last one made is the result's ``grad_fn``;
    ``AliasBackward0`` where none was (``x[:]``, ``x[...]``)."""
    items = index if type(index) is tuple else (index,)
    name = "AliasBackward0"
    dim = 0
    for i, item in enumerate(items):
        if item is None:
            name = "UnsqueezeBackward0"
        elif item is Ellipsis:
            dim = len(shape) - sum(1 for x in items[i + 1 :] if x is not None and x is not ...)
        elif type(item) is slice:
            if dim < len(shape) and item.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
        else:  # an integer
            name = "SelectBackward0"
            dim += 1
    return name


class IndexAddInto(Function):
    """Zeros of ``shape`` with ``values`` added at ``index`` (getitem's backward)."""

    @staticmethod
    def forward(ctx: Any, values: Any, shape: Any, index: Any, advanced: bool) -> Any:
        ctx.index, ctx.advanced = index, advanced
        zeros = ctx.xp.zeros(shape, dtype=values.dtype)
        if advanced:
            return ctx.backend.index_add_owned(zeros, index, values)
        return ctx.backend.setitem(zeros, index, values)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return GetItem.apply(g, ctx.index, ctx.advanced), None, None, None


class IndexPut(Function):
    """Out-of-place ``a[index] = v`` (used when autograd must see a __setitem__)."""

    @staticmethod
    def forward(ctx: Any, a: Any, v: Any, index: Any) -> Any:
        ctx.index, ctx.v_ndim = index, getattr(v, "ndim", 0)
        return ctx.backend.setitem(ctx.backend.copy(a), index, v)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = IndexPut.apply(g, 0.0, ctx.index)
        if ctx.needs_input_grad[1]:
            gv = GetItem.apply(g, ctx.index, True)
            if gv.ndim < ctx.v_ndim:  # a value with more leading 1s than a[index] has dims
                gv = gv.reshape((1,) * (ctx.v_ndim - gv.ndim) + tuple(gv.shape))
        return ga, gv, None


def getitem(a: Tensor, index: Any) -> Tensor:
    """``a[index]``: ints, slices, None, Ellipsis, bool masks and index tensors/lists."""
    try:
        return _getitem(a, index)
    except IndexError as exc:
        if not str(exc).startswith("too many indices"):
            raise
        raise IndexError(_too_many(a.ndim, index)) from None


def _too_many(ndim: int, index: Any) -> str:
    """torch's IndexError for more indices than ``ndim`` dims (NumPy's names arrays)."""
    items = index if type(index) is tuple else (index,)
    if ndim == 0 and len(items) == 1:
        if type(items[0]) is slice:
            return "slice() cannot be applied to a 0-dim tensor."
        if isinstance(items[0], int) and not isinstance(items[0], bool):
            return ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                    "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")  # fmt: skip
    return f"too many indices for tensor of dimension {ndim}"


def _getitem(a: Tensor, index: Any) -> Tensor:
    if type(index) is tuple and len(index) > 2 and not _BASIC.issuperset(map(type, index)):
        split = _int_split(index, a)
        if split is not None:  # torch's selects first, then the rest indexes what they leave
            return getitem(getitem(a, split.ints), split.rest)
    idx, advanced = _convert_index(index, a.backend, a._data.shape)
    arr = a._data
    if type(arr) is np.ndarray and unrecorded(a):  # no node to record: GetItem's own call
        # without its Function call (per-op cost of generation and data loops)
        try:
            out = a._backend.getitem(arr, idx)
        except ValueError:
            return GetItem.apply(a, idx, advanced)  # which raises as the op does
        if advanced:
            return Tensor.from_backend_array(out, a._backend)
        t = unrecorded_view(a, out)
        if a._base is None:  # a direct view keeps its node: an in-place write to the view
            t._view_src = (a, _getitem_node(a, idx))  # under autograd rebases through it
        return t
    out = GetItem.apply(a, idx, advanced)
    if type(index) is slice and type(out.grad_fn) is GetItem:
        out.grad_fn._node_name = "SliceBackward0"  # torch's one-slice index: always a slice
    return out


def _getitem_node(a: Tensor, idx: Any) -> GetItem:
    """The (unrecorded) node ``GetItem.apply`` makes for the basic index ``idx`` of ``a``."""
    ctx = GetItem.__new__(GetItem)
    be = a._backend
    ctx.backend = ctx.out_backend = be
    ctx.xp = be.xp
    ctx.needs_input_grad = (False, False, False)
    ctx.index, ctx.advanced, ctx.shape, ctx.is_view = idx, False, a._data.shape, True
    return ctx


def setitem(a: Tensor, index: Any, value: Any) -> None:
    """``a[index] = value``; recorded for autograd when ``a`` or ``value`` needs a grad."""
    split = _int_split(index, a)
    if split is not None:  # NumPy's rule for integers as 0-d arrays, which every backend
        index = _ints_as_arrays(index, a.backend)  # follows (MLX's writes do not for ints)
    idx, _ = _convert_index(index, a.backend, a._data.shape)
    needs_graph = grad_mode.is_grad_enabled() and (
        a.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
    )
    if isinstance(value, Tensor) and value.dtype is not a.dtype:
        value = value.to(a.dtype)
    if split is not None:  # the value in NumPy's layout of the same index
        value = _numpy_layout(a, idx, split, value)
    if needs_graph:
        v = value if isinstance(value, Tensor) else from_data(value, dtype=a.dtype, device=a.device)
        inplace.inplace_result(a, IndexPut.apply(a, v, idx))
        return
    raw = value._data if isinstance(value, Tensor) else value
    inplace.rebind_inplace(a, a.backend.setitem(a._data, idx, raw))
    a._counter().value += 1
    if a._base is not None and not a.backend.views_share_memory:
        inplace.write_back(a)


def _numpy_layout(a: Tensor, idx: Any, split: _IntSplit, value: Any) -> Any:
    """``value``, which broadcasts to torch's ``a[index]``, permuted to the layout NumPy's
    ``a[idx]`` has for the same index: its advanced dims first (``_int_split``)."""
    if not isinstance(value, Tensor):
        if not hasattr(value, "shape") and not isinstance(value, (list, tuple)):
            return value  # a number broadcasts in any layout
        value = from_data(value, dtype=a.dtype, device=a.device)
    if value.ndim == 0:
        return value
    be = a.backend
    stand_in = be.xp.broadcast_to(be.xp.zeros(()), a._data.shape)  # no allocation
    got = tuple(be.getitem(stand_in, idx).shape)  # NumPy's layout
    nb, at = len(got) - split.basic, split.at
    want = got[nb : nb + at] + got[:nb] + got[nb + at :]  # torch's
    v = value
    extra = v.ndim - len(want)
    if extra > 0 and all(n == 1 for n in v.shape[:extra]):  # leading 1s, as torch allows
        v = v.reshape(tuple(v.shape[extra:]))
    elif extra < 0:
        v = v.reshape((1,) * -extra + tuple(v.shape))
    if v.ndim != len(want) or any(n not in (1, w) for n, w in zip(v.shape, want)):
        raise ValueError(
            f"shape mismatch: value array of shape {_shape_str(value.shape)} could not be "
            f"broadcast to indexing result of shape {_shape_str(want)}"
        )
    return v.permute((*range(at, at + nb), *range(at), *range(at + nb, len(want))))


def _ints_as_arrays(index: tuple[Any, ...], backend: Any) -> tuple[Any, ...]:
    """``index`` with its Python and NumPy integers as 0-d integer arrays."""
    return tuple(
        backend.asarray(int(item), dtypes.int64)
        if type(item) is int or isinstance(item, np.integer)
        else item
        for item in index
    )


def _shape_str(shape: Any) -> str:
    """A shape as NumPy writes it in its errors: ``(3,)``, ``(2,3)``."""
    return f"({','.join(str(n) for n in shape)}{',' if len(shape) == 1 else ''})"


class Gather(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, index: Any) -> Any:
        ctx.dim, ctx.index, ctx.shape = dim, index, a.shape
        return ctx.xp.take_along_axis(a, index, axis=dim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return ScatterAdd.apply(g.new_zeros(ctx.shape), ctx.dim, ctx.index, g), None, None


class Scatter(Function):
    """``a`` with ``src`` written at ``index`` along ``dim`` (src already cut to index's shape);
    ``ScatterAdd`` adds it instead."""

    accumulate: ClassVar[bool] = False

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, index: Any, src: Any) -> Any:
        ctx.dim, ctx.index = dim, index
        write = ctx.backend.scatter_add if type(ctx).accumulate else ctx.backend.scatter
        return write(a, dim, index, src)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        ga = gs = None
        if ctx.needs_input_grad[0]:  # entries of ``a`` written over get no gradient
            zero = g.new_zeros(())
            ga = g if type(ctx).accumulate else Scatter.apply(g, ctx.dim, ctx.index, zero)
        if ctx.needs_input_grad[3]:
            gs = _gather_at(g, ctx.dim, ctx.index)
        return ga, None, None, gs


class ScatterAdd(Scatter):
    accumulate = True


def _gather_at(t: Tensor, dim: int, index: Any) -> Tensor:
    """``t``'s entries at ``index`` along ``dim`` (only ``index``'s extent of the other dims)."""
    return Gather.apply(_cut(t, tuple(index.shape), keep=dim), dim, index)


def _zero_at(t: Tensor, dim: int, index: Any) -> Tensor:
    """``t`` with zeros written at ``index`` along ``dim``."""
    return Scatter.apply(t, dim, index, t.new_zeros(()))


_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduce(Function):
    """``a`` with ``src`` combined in at ``index`` along ``dim`` by ``reduce`` (one of
    ``_SCATTER_REDUCTIONS``), with ``a``'s own value taking part where ``include_self``.
    The gradients are torch's: ties of amax/amin share the gradient equally."""

    @staticmethod
    def forward(ctx: Any, a: Any, dim: int, index: Any, src: Any, reduce: str, include: bool
                ) -> Any:  # fmt: skip
        ctx.dim, ctx.index, ctx.reduce, ctx.include = dim, index, reduce, include
        be, xp = ctx.backend, ctx.xp
        kind = "sum" if reduce == "mean" else reduce
        # without self: start from a value that does not change the result
        start = a if include else be.scatter(a, dim, index, {"sum": 0, "prod": 1}.get(kind, src))
        out = be.scatter_reduce(start, dim, index, src, kind)
        if kind in ("prod", "amax", "amin"):
            ctx.save_for_backward(a, src, out)
        if reduce == "mean":
            count = be.scatter_add(xp.ones_like(a) if include else xp.zeros_like(a), dim, index,
                                   xp.ones_like(src))  # fmt: skip
            ctx.count = xp.where(count == 0, 1, count)
            integer = be.dtype_of(out).category < dtypes.FLOAT
            out = xp.floor_divide(out, ctx.count) if integer else xp.true_divide(out, ctx.count)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        ga, gs = _SCATTER_GRADS[ctx.reduce](ctx, g)
        if not ctx.include:
            ga = _zero_at(ga, ctx.dim, ctx.index)
        return ga, None, None, gs, None, None


def _sum_grads(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    return g, _gather_at(g, ctx.dim, ctx.index)


def _mean_grads(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    ga = g / Tensor.from_backend_array(ctx.count, g.backend)
    return ga, _gather_at(ga, ctx.dim, ctx.index)


def _extreme_grads(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    a, src, out = ctx.saved_tensors
    dim, idx = ctx.dim, ctx.index
    # NOTE: with include_self=False a self entry that was written over does not count among
    # the ties (torch counts it, so its src gradients there sum to less than g).
    self_is = (a == out).to(g.dtype)
    if not ctx.include:
        self_is = _zero_at(self_is, dim, idx)
    src_is = (src == _gather_at(out, dim, idx)).to(g.dtype)
    share = g / ScatterAdd.apply(self_is, dim, idx, src_is)
    return self_is * share, src_is * _gather_at(share, dim, idx)


def _prod_grads(ctx: Any, g: Tensor) -> tuple[Tensor, Tensor]:
    """torch's: products without the entry itself, so single zeros get the right gradient."""
    a, src, out = ctx.saved_tensors
    dim, idx, include = ctx.dim, ctx.index, ctx.include
    one = g.new_ones(())
    a_nz = where(a == 0, one, a)
    ga = g * ScatterReduce.apply(a_nz, dim, idx, src, "prod", include) / a_nz
    src_zero = src == 0
    zeros_there = ScatterAdd.apply(a.new_zeros(a.shape), dim, idx, src_zero.to(a.dtype))
    single = src_zero & (_gather_at(zeros_there, dim, idx) == 1)
    without = ScatterReduce.apply(a, dim, idx, where(single, one, src), "prod", include)
    gs = where(single, _gather_at(g * without, dim, idx),
               _gather_at(g * out, dim, idx) / where(src_zero, one, src))  # fmt: skip
    return ga, gs


_SCATTER_GRADS = {"sum": _sum_grads, "mean": _mean_grads, "amax": _extreme_grads,
                  "amin": _extreme_grads, "prod": _prod_grads}  # fmt: skip


def _index_array(index: Any, a: Tensor, name: str) -> Any:
    if not isinstance(index, Tensor):
        index = from_data(index, device=a.device)
    if index.dtype.category != dtypes.INT:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index.dtype}")
    if index.backend is not a.backend:
        raise RuntimeError(
            f"{name}(): Expected index on the same device as input ({a.device}), got {index.device}"
        )
    return index._data


def _check_index_shape(name: str, a: Tensor, dim: int, index: Any, src: Any = None) -> None:
    if index.ndim != a.ndim:
        what = "input" if name == "gather" else "self"  # torch's wording for each
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {what} tensor "
            f"({name}: index {list(index.shape)}, input {list(a.shape)})"
        )
    if src is not None and src.ndim != index.ndim:
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as src tensor "
            f"({name}: index {list(index.shape)}, src {list(src.shape)})"
        )
    for d in range(a.ndim):
        if d != dim and index.shape[d] > a.shape[d]:
            bound = "no larger" if name == "gather" else "smaller"  # torch's wording for each
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                f"{bound} than self {list(a.shape)} apart from dimension {dim}"
            )
        if src is not None and index.shape[d] > src.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to be "
                f"smaller than src {list(src.shape)}"
            )
    size = a.shape[dim] if a.ndim else 1
    # torch's bound check, after the shapes' (NumPy would raise an IndexError, or wrap negatives)
    a.backend.check_index_range(
        index,
        0,
        size,
        lambda bad: RuntimeError(
            f"index {bad} is out of bounds for dimension {dim} with size {size}"
        ),
    )


def _cut(t: Tensor, shape: tuple[int, ...], keep: int | None = None) -> Tensor:
    """``t[:shape[0], :shape[1], ...]`` (``keep`` dim left whole)."""
    if t.shape == shape:
        return t
    idx = tuple(slice(None) if d == keep else slice(0, s) for d, s in enumerate(shape))
    return t[idx]


def _gather(input: Tensor, dim: int, index: Any) -> Tensor:  # noqa: A002
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and so on), as torch.gather."""
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:  # a 0-d input counts as 1-D of one entry, as a 0-d index does
        return gather(input.reshape(1), 0, _one_d(index)).reshape(getattr(index, "shape", ()))
    if input.ndim == 1 and isinstance(index, Tensor) and index.ndim == 0:
        return _gather(input, d, index.reshape(1)).reshape(())  # the result has index's shape
    idx = _index_array(index, input, "gather")
    if idx.size == 0:  # torch checks nothing more of an empty index: an empty result
        return input.reshape(-1)[:0].reshape(tuple(idx.shape))
    _check_index_shape("gather", input, d, idx)
    src = _cut(input, tuple(idx.shape), keep=d)
    return Gather.apply(src, d, idx)


def gather(
    input: Tensor, dim: int, index: Any, *, sparse_grad: bool = False, out: Any = None
) -> Tensor:  # noqa: A002
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and so on), as torch.gather.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = write_out("gather", _gather(input, dim, index), out, input, index)
    return result


def _flat(index: Any) -> Any:
    """A 0-d (or one-entry) index as a 1-entry 1-D one."""
    return index.reshape(1) if isinstance(index, Tensor) else index


def _one_d(t: Any) -> Any:
    """A 0-d tensor as 1-D of one entry, others as they are: torch's shape checks for gather
    and the scatters count a 0-d index or src as 1-D (``ensure_nonempty_dim``), so a 1-D input
    takes them (``zeros(10).scatter_(0, tensor(3), value=1)``)."""
    return t.reshape(1) if isinstance(t, Tensor) and t.ndim == 0 else t


def _scatter_src(input: Tensor, src: Any, idx: Any, name: str = "scatter") -> Any:
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        return _cut(src, tuple(idx.shape))
    return input.new_tensor(src)


def scatter(
    input: Tensor,  # noqa: A002
    dim: int,
    index: Any,
    src: Any = None,
    *,
    value: Any = None,
    reduce: str | None = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` (or ``value``) written at ``index`` along ``dim``."""
    if src is None:
        src = value
    if input.ndim == 0:  # one entry: the 1-element case, reshaped back
        flat_src = src.reshape(1) if isinstance(src, Tensor) else src
        out1 = scatter(input.reshape(1), 0, _flat(index), flat_src, reduce=reduce)
        return out1.reshape(())
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 1:
        index, src = _one_d(index), _one_d(src)
    idx = _index_array(index, input, "scatter")
    _check_index_shape("scatter", input, d, idx, src if isinstance(src, Tensor) else None)
    s = _scatter_src(input, src, idx)
    if reduce is None:
        return Scatter.apply(input, d, idx, s)
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce!r}")
    kind = "sum" if reduce == "add" else "prod"
    return ScatterReduce.apply(input, d, idx, s.expand(tuple(idx.shape)), kind, True)


def scatter_reduce(
    input: Tensor,  # noqa: A002
    dim: int,
    index: Any,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """A copy of ``input`` with every ``src`` entry combined into the entry ``index`` names
    along ``dim`` by ``reduce``: "sum", "prod", "mean", "amax" or "amin" (``input``'s own value
    takes part unless ``include_self=False``).

    >>> x = lucid.tensor([1.0, 2.0, 3.0])
    >>> x.scatter_reduce(0, lucid.tensor([0, 0, 2]), lucid.tensor([5.0, 7.0, 1.0]), "amax")
    tensor([7., 2., 3.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # torch takes these too
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    if input.ndim == 0:
        one = scatter_reduce(input.reshape(1), 0, _flat(index), src.reshape(1), reduce,
                             include_self=include_self)  # fmt: skip
        return one.reshape(())
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 1:
        index, src = _one_d(index), _one_d(src)
    idx = _index_array(index, input, "scatter_reduce")
    _check_index_shape("scatter_reduce", input, d, idx, src)
    s = _scatter_src(input, src, idx, "scatter_reduce")
    return ScatterReduce.apply(input, d, idx, s, reduce, include_self)


def scatter_add(input: Tensor, dim: int, index: Any, src: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (duplicates add up)."""
    if input.ndim == 0:
        return scatter_add(input.reshape(1), 0, _flat(index), src.reshape(1)).reshape(())
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 1:
        index, src = _one_d(index), _one_d(src)
    idx = _index_array(index, input, "scatter_add")
    _check_index_shape("scatter_add", input, d, idx, src)
    return ScatterAdd.apply(input, d, idx, _scatter_src(input, src, idx, "scatter_add"))


def _index_select(input: Tensor, dim: int, index: Any) -> Tensor:  # noqa: A002
    """The entries ``index`` (1-D) along ``dim``."""
    d = normalize_dim(dim, input.ndim)
    idx = index if isinstance(index, Tensor) else Tensor(index, device=input.device)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        if idx.numel() != 1:
            raise RuntimeError(
                f"index_select(): Index to scalar can have only 1 value, got {idx.numel()} value(s)"
            )
        return getitem(input.reshape(1), idx.reshape(1)).reshape(())
    return getitem(input, (slice(None),) * d + (idx.reshape(-1),))


def index_select(input: Tensor, dim: int, index: Any, *, out: Any = None) -> Tensor:  # noqa: A002
    """The entries ``index`` (1-D) along ``dim``.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = write_out("index_select", _index_select(input, dim, index), out, input, index)
    return result


def _wrapped(indices: Tensor, size: int) -> Tensor:
    """Negative indices counted from the end (take_along_dim takes them; gather does not)."""
    if indices.numel() and bool((indices < 0).any()):
        wrapped: Tensor = where(indices < 0, indices + size, indices)
        return wrapped
    return indices


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """``gather`` with broadcasting of ``input`` and ``indices`` outside ``dim``."""
    if dim is None:
        flat = input.reshape(-1)
        return gather(flat, 0, _wrapped(indices.reshape(-1), flat.shape[0]))
    d = normalize_dim(dim, input.ndim)
    indices = _wrapped(indices, input.shape[d] if input.ndim else 1)
    if indices.ndim != input.ndim:
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
            "dimensions for indices"
        )
    a_shape, i_shape = list(input.shape), list(indices.shape)
    for k in range(input.ndim):
        if k != d:
            m = max(a_shape[k], i_shape[k])
            a_shape[k] = i_shape[k] = m
    return gather(input.expand(tuple(a_shape)), d, indices.expand(tuple(i_shape)))


def _take(input: Tensor, index: Tensor) -> Tensor:  # noqa: A002
    """Elements at ``index`` in the flattened tensor."""
    return input.reshape(-1)[index]


def take(input: Tensor, index: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """Elements at ``index`` in the flattened tensor.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = write_out("take", _take(input, index), out, input, index)
    return result


def masked_fill(input: Tensor, mask: Any, value: Any) -> Tensor:  # noqa: A002
    """``value`` where ``mask`` is true, ``input`` elsewhere (mask broadcasts; keeps dtype)."""
    if isinstance(mask, Tensor) and mask.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        if value.dtype.is_complex and not input.dtype.is_complex:
            raise RuntimeError(
                f"value cannot be converted to type {input.dtype} without overflow: a "
                f"{value.dtype} value into a real tensor"
            )
        value = value if value.dtype is input.dtype else value.to(input.dtype)
    else:
        if isinstance(value, complex) and not input.dtype.is_complex:
            raise RuntimeError(
                f"value cannot be converted to type {input.dtype} without overflow: {value}"
            )
        value = input.new_tensor(value)
    out: Tensor = where(mask, value, input)  # input and mask broadcast, as torch's
    return out


def _masked_select(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The elements where ``mask`` is true, as a 1-D tensor (mask broadcasts)."""
    shape = _broadcast(input.shape, mask.shape)
    return getitem(input.expand(shape), mask.expand(shape))


def masked_select(input: Tensor, mask: Tensor, *, out: Any = None) -> Tensor:  # noqa: A002
    """The elements where ``mask`` is true, as a 1-D tensor (mask broadcasts).

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = write_out("masked_select", _masked_select(input, mask), out, input, mask)
    return result


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``."""
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:  # torch reads a 0-d input (and source) as one entry along dim 0
        one = source.reshape(1) if source.ndim == 0 else source
        return index_add(input.reshape(1), 0, index, one, alpha=alpha).reshape(())
    want = tuple(input.shape[:d]) + tuple(index.shape[:1] or (1,)) + tuple(input.shape[d + 1 :])
    if source.ndim != 0 and (source.ndim != input.ndim or tuple(source.shape) != want):
        raise RuntimeError(
            f"index_add_(): source tensor shape must match self tensor shape, excluding the "
            f"specified dimension. Got self.shape = {list(input.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    src = source * alpha if alpha != 1 else source
    full = (slice(None),) * d + (index._data,)
    return input + IndexAddInto.apply(src, input.shape, full, True)


def _dim_index(name: str, input: Tensor, dim: int, index: Any) -> tuple[int, Tensor]:  # noqa: A002
    """``dim`` normalised and ``index`` as a 1-D int64 tensor (a 0-d one is one entry)."""
    d = normalize_dim(dim, input.ndim)
    idx = index if isinstance(index, Tensor) else from_data(index, device=input.device)
    if idx.dtype.category != dtypes.INT:
        raise IndexError(f"{name}(): Expected a long tensor for index, but got {idx.dtype}")
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, got {idx.ndim} dims")
    return d, idx.reshape(-1)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` with the entries at ``index`` along ``dim`` set to ``value`` (a
    number or a 0-d tensor, which gets the gradient of the entries it fills)."""
    d, idx = _dim_index("index_fill", input, dim, index)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    size = input.shape[d] if input.ndim else 1
    hit = input.new_zeros((size,), dtype=dtypes.bool_)
    hit = setitem_copy(hit, idx, True)
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = size
    v = value.to(input.dtype) if isinstance(value, Tensor) else input.new_tensor(value)
    out: Tensor = where(hit.reshape(tuple(shape)), v, input)
    return out


def setitem_copy(a: Tensor, index: Any, value: Any) -> Tensor:
    """Out of place ``a[index] = value`` (no graph: for masks and other constants)."""
    idx, _ = _convert_index(index, a.backend, a._data.shape)
    raw = value._data if isinstance(value, Tensor) else value
    data = a.backend.setitem(a.backend.copy(a._data), idx, raw)
    return Tensor.from_backend_array(data, a.backend)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of ``input`` with ``source``'s slices along ``dim`` written at ``index``
    (``out[..., index[i], ...] = source[..., i, ...]``)."""
    d, idx = _dim_index("index_copy", input, dim, index)
    want = input.shape[:d] + (idx.shape[0],) + input.shape[d + 1 :] if input.ndim else (1,)
    src = source.reshape(want) if input.ndim == 0 else source
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(
            f"index_copy_(): Source/destination tensor must have same slice shapes. "
            f"Destination slice shape: {list(input.shape)} at dimension {d} and source slice "
            f"shape: {list(source.shape)} at dimension {d}; index has {idx.shape[0]} entries"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{scalar_type_name(input.dtype)} and (source) {scalar_type_name(source.dtype)}"
        )
    x = input.reshape(1) if input.ndim == 0 else input
    full = (slice(None),) * d + (idx._data,)
    out: Tensor = IndexPut.apply(x, src, full)
    return out.reshape(()) if input.ndim == 0 else out


def index_put(
    input: Tensor,  # noqa: A002
    indices: Any,
    values: Any,
    accumulate: bool = False,
) -> Tensor:
    """A copy of ``input`` with ``input[indices] = values`` (``indices`` a tuple of index or
    mask tensors); ``accumulate`` adds instead, duplicates included."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(
            f"index_put(): indices must be a tuple of tensors, got {type(indices).__name__}"
        )
    for t in indices:
        if isinstance(t, Tensor) and t.dtype.category != dtypes.INT and t.dtype is not dtypes.bool_:
            raise IndexError(
                f"tensors used as indices must be long, int, byte or bool tensors, got {t.dtype}"
            )
    idx, advanced = _convert_index(tuple(indices), input.backend, input._data.shape)
    v = values if isinstance(values, Tensor) else input.new_tensor(values)
    if v.dtype is not input.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got "
            f"{scalar_type_name(input.dtype)} for the destination and "
            f"{scalar_type_name(v.dtype)} for the source."
        )
    target = tuple(input.backend.getitem(input._data, idx).shape)
    if tuple(v.shape) != target:
        v = v.expand(target)
    if accumulate:
        return input + IndexAddInto.apply(v, input.shape, idx, advanced)
    out: Tensor = IndexPut.apply(input, v, idx)
    return out
