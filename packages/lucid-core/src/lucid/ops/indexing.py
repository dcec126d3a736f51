"""``__getitem__`` / ``__setitem__`` with ints, slices, None, Ellipsis, masks and index arrays."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import Function


def _convert_index(index: Any, backend: Any) -> tuple[Any, bool]:
    """Backend-array form of an index, and whether it uses advanced (array) indexing."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    advanced = False
    for item in items:
        if isinstance(item, Tensor):
            if item.backend is not backend:
                raise RuntimeError(
                    f"indices should be on the same device as the indexed tensor "
                    f"({backend.device}), got {item.device}"
                )
            item = item.data
            advanced = True
        elif isinstance(item, list):
            item = backend.asarray(item)
            advanced = True
        elif hasattr(item, "dtype") and hasattr(item, "shape"):
            advanced = True
        out.append(item)
    return (tuple(out) if isinstance(index, tuple) else out[0]), advanced


class GetItem(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, index: Any, advanced: bool) -> Any:
        ctx.index, ctx.advanced, ctx.shape = index, advanced, a.shape
        return a[index]

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return IndexAddInto.apply(g, ctx.shape, ctx.index, ctx.advanced), None, None


class IndexAddInto(Function):
    """Zeros of ``shape`` with ``values`` added at ``index`` (getitem's backward)."""

    @staticmethod
    def forward(ctx: Any, values: Any, shape: Any, index: Any, advanced: bool) -> Any:
        ctx.index, ctx.advanced = index, advanced
        zeros = ctx.xp.zeros(shape, dtype=values.dtype)
        if advanced:
            return ctx.backend.index_add(zeros, index, values)
        return ctx.backend.setitem(zeros, index, values)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return GetItem.apply(g, ctx.index, ctx.advanced), None, None, None


class IndexPut(Function):
    """Out-of-place ``a[index] = v`` (used when autograd must see a __setitem__)."""

    @staticmethod
    def forward(ctx: Any, a: Any, v: Any, index: Any) -> Any:
        ctx.index = index
        out = ctx.backend.copy(a) if ctx.backend.name == "numpy" else a
        return ctx.backend.setitem(out, index, v)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = IndexPut.apply(g, 0.0, ctx.index)
        if ctx.needs_input_grad[1]:
            gv = GetItem.apply(g, ctx.index, True)
        return ga, gv, None


def getitem(a: Tensor, index: Any) -> Tensor:
    idx, advanced = _convert_index(index, a.backend)
    return GetItem.apply(a, idx, advanced)  # type: ignore[no-any-return]


def setitem(a: Tensor, index: Any, value: Any) -> None:
    idx, _ = _convert_index(index, a.backend)
    needs_graph = grad_mode.is_grad_enabled() and (
        a.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
    )
    if isinstance(value, Tensor) and value.dtype is not a.dtype:
        value = value.to(a.dtype)
    if needs_graph:
        v = value if isinstance(value, Tensor) else Tensor(value, dtype=a.dtype, device=a.device)
        a._inplace_result(IndexPut.apply(a, v, idx))
        return
    raw = value.data if isinstance(value, Tensor) else value
    a._data = a.backend.setitem(a._data, idx, raw)
    a._vc.value += 1
