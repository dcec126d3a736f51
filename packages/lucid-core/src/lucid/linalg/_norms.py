"""Norms: vector_norm, matrix_norm, norm (``torch.linalg`` semantics), matrix_rank."""

from __future__ import annotations

import math
from typing import Any

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._decomp import eigvalsh, svdvals
from lucid.ops._util import index_int, normalize_dim, normalize_dims, piecewise_constant


class VectorNorm(Function):
    """``(sum |x|^p)^(1/p)`` over ``dims``, with a zero gradient where the norm is 0."""

    _node_name = "LinalgVectorNormBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, p: float, dims: tuple[int, ...], keepdim: bool) -> Any:
        xp = ctx.xp
        ax = xp.abs(x)
        if p == math.inf:
            out = xp.max(ax, axis=dims, keepdims=True)
        elif p == -math.inf:
            out = xp.min(ax, axis=dims, keepdims=True)
        elif p == 0:
            out = xp.sum(ax != 0, axis=dims, keepdims=True).astype(ax.dtype)
        elif p == 1:
            out = xp.sum(ax, axis=dims, keepdims=True)
        elif p == 2:
            out = xp.sqrt(xp.sum(ax * ax, axis=dims, keepdims=True))
        else:
            out = xp.sum(ax**p, axis=dims, keepdims=True) ** (1.0 / p)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        result = out if keepdim else xp.squeeze(out, axis=dims)
        ctx.save_for_backward(x, result)  # the output itself, so double backward sees it
        return result

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: at x = 0 the norm has a kink; like PyTorch the gradient there is 0.
        x, norm = ctx.saved_tensors
        p = ctx.p
        if not ctx.keepdim:
            shape = list(x.shape)
            for d in ctx.dims:
                shape[d] = 1
            g, norm = g.reshape(tuple(shape)), norm.reshape(tuple(shape))
        if p == 0:
            return x * 0, None, None, None
        if p in (math.inf, -math.inf):
            hit = (x.abs() == norm).to(x.dtype)
            coef = x.sgn() * hit / hit.sum(dim=ctx.dims, keepdim=True)
        elif p == 1:
            coef = x.sgn()
        else:
            safe = norm.where(norm > 0, 1.0)
            mag = x.abs().where(x != 0, 1.0)  # 0^(p-1) is inf for p < 1; sgn(0) zeroes it
            coef = x.sgn() * (mag / safe) ** (p - 1)
            coef = coef.where(norm > 0, 0.0)
        return g * coef, None, None, None


def vector_norm(
    input: Tensor,
    ord: float = 2,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """The ``ord``-norm of ``input`` over ``dim`` (all entries when None), as a vector."""
    if not isinstance(input, Tensor):
        raise TypeError(f"linalg.vector_norm: expected a Tensor, got {type(input).__name__}")
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{input.dtype.name.capitalize()}"
        )
    given: Any = ord
    one = None if isinstance(given, (bool, float)) else index_int(given)
    if one is not None:
        ord = one  # a NumPy integer (or 0-d integer tensor): its int, as torch
    if not isinstance(ord, (int, float)):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    dims = normalize_dims(dim, input.ndim) if input.ndim else ()
    if input.ndim == 0:
        nonzero = (input != 0).to(input.dtype)
        return input.abs() if float(ord) != 0 else piecewise_constant(nonzero, input)
    if input.numel() == 0 and float(ord) < 0:
        raise RuntimeError("linalg.vector_norm cannot compute the negative norm of an empty tensor")
    return VectorNorm.apply(input, float(ord), dims, keepdim)


def matrix_norm(
    input: Tensor,  # noqa: N803
    ord: Any = "fro",  # noqa: A002
    dim: tuple[int, int] = (-2, -1),
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """Matrix norms: "fro", "nuc", inf, -inf, 1, -1, 2, -2 over the two dims ``dim``."""
    if input.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions, got {input.ndim}")  # fmt: skip
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    r, c = (normalize_dim(d, input.ndim) for d in dim)
    if r == c:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different, got {dim}")
    if ord == "fro":
        return vector_norm(input, 2, (r, c), keepdim)
    moved = input.movedim((r, c), (-2, -1))
    if ord in ("nuc", 2, -2):
        s = svdvals(moved)
        out: Tensor = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
    elif ord in (math.inf, -math.inf, 1, -1):
        sums = moved.abs().sum(-1 if ord in (math.inf, -math.inf) else -2)
        out = sums.amax(-1) if ord in (math.inf, 1) else sums.amin(-1)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        for d in sorted((r, c)):
            out = out.unsqueeze(d)
    return out


def norm(
    input: Tensor,  # noqa: N803
    ord: Any = None,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Tensor:
    """``torch.linalg.norm``: a vector norm over one dim, a matrix norm over two.

    With ``ord=None`` and ``dim=None`` the 2-norm of the flattened input; with ``ord`` set and
    ``dim=None`` the input must be 1-D or 2-D.
    """
    if (one := index_int(dim)) is not None:
        dim = (one,)
    if dim is None:
        if ord is None:
            return vector_norm(input, 2, None, keepdim, dtype=dtype)
        if input.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {input.ndim}D.")  # fmt: skip
        dim = tuple(range(input.ndim))
    if len(dim) == 1:
        return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(input, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {dim}")


def matrix_rank(
    input: Tensor,  # noqa: A002
    tol: float | None = None,
    hermitian: bool = False,
    *,
    atol: float | None = None,
    rtol: float | None = None,
) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (int64, no gradient).
    ``tol`` is torch's older positional form: ``atol=tol`` with ``rtol=0``."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.matrix_rank: tol cannot be given with atol or rtol")
        atol, rtol = tol, 0.0
    a = input.detach()
    s = eigvalsh(a).abs() if hermitian else svdvals(a)
    m, n = a.shape[-2], a.shape[-1]
    if rtol is None:
        eps = 2.220446049250313e-16 if a.dtype.itemsize >= 8 else 1.1920928955078125e-07
        rtol = 0.0 if atol is not None and atol > 0 else max(m, n) * eps
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s
    cutoff = (smax * rtol).clamp_min(atol or 0.0)
    rank: Tensor = (s > cutoff).sum(-1)
    return rank
