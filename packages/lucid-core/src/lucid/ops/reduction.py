"""Reductions over dims: sum, mean (the rest of the family builds on the same helpers)."""

from __future__ import annotations

from typing import Any

from lucid import _dtype
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._util import normalize_dims


def restore_dims(g: Tensor, dims: tuple[int, ...], keepdim: bool, shape: tuple[int, ...]) -> Tensor:
    """Reshape a reduced gradient so it broadcasts against the input's ``shape``."""
    if not keepdim and dims:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g


class Sum(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
        ctx.shape, ctx.dims, ctx.keepdim = a.shape, dims, keepdim
        return ctx.xp.sum(a, axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        g = restore_dims(g, ctx.dims, ctx.keepdim, ctx.shape)
        return g.expand(ctx.shape), None, None


def sum(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    if dtype is not None:
        a = a.to(dtype)
    elif a.dtype.category < _dtype.FLOAT:
        a = a.to(_dtype.int64)
    dims = normalize_dims(dim, a.ndim)
    return Sum.apply(a, dims, keepdim)  # type: ignore[no-any-return]


def mean(a: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if dtype is not None:
        a = a.to(dtype)
    if a.dtype.category < _dtype.FLOAT:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {a.dtype.name.capitalize()}"
        )
    dims = normalize_dims(dim, a.ndim)
    n = 1
    for d in dims:
        n *= a.shape[d]
    return sum(a, dims, keepdim) / n
