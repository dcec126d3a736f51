"""The rest of ``torch.linalg`` that composes from what lucid has: ``lu`` (P, L, U), the
``*_ex`` forms (a result and an ``info`` of zeros; failures raise, as without ``_ex`` and
``check_errors=True``), ``cond``, ``diagonal``, ``matmul``, ``vecdot``, ``vander``,
``tensorinv`` and ``tensorsolve``. Each is differentiable through the functions it calls."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from lucid import dtypes
from lucid._creation import arange, eye, zeros
from lucid._tensor import Tensor
from lucid.linalg._common import check_matrix
from lucid.linalg._decomp import cholesky, svdvals
from lucid.linalg._inverse import inv, solve
from lucid.linalg._lu import _permutation, lu_factor
from lucid.linalg._norms import matrix_norm
from lucid.ops.join import cat
from lucid.ops.matmul import matmul as _matmul


class LUResult(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


class LUFactorExResult(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class InvExResult(NamedTuple):
    inverse: Tensor
    info: Tensor


class CholeskyExResult(NamedTuple):
    L: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    result: Tensor
    info: Tensor


def _info(a: Tensor) -> Tensor:
    out: Tensor = zeros(*a.shape[:-2], dtype=dtypes.int32, device=a.device)
    return out


def lu(A: Tensor, *, pivot: bool = True) -> LUResult:  # noqa: N803
    """``(P, L, U)`` with ``A = P @ L @ U``: P a permutation, L unit lower (m x k), U upper
    (k x n), k = min(m, n)."""
    return unpack(*lu_factor(A, pivot=pivot))


def unpack(lu_: Tensor, pivots: Tensor) -> LUResult:
    """``(P, L, U)`` from ``lu_factor``'s packed ``LU`` and its pivots."""
    m, n = lu_.shape[-2], lu_.shape[-1]
    k = min(m, n)
    lower = lu_[..., :, :k].tril(-1) + eye(m, k, dtype=lu_.dtype, device=lu_.device)
    upper = lu_[..., :k, :].triu()
    order = _permutation(pivots, m)  # (P^T A)[i] = A[order[i]]: P[order[i], i] = 1
    rows = arange(m, device=lu_.device)
    p = (order.unsqueeze(-1) == rows).mT.to(lu_.dtype)
    return LUResult(p, lower, upper)


def lu_factor_ex(
    A: Tensor,  # noqa: N803
    *,
    pivot: bool = True,
    check_errors: bool = False,
) -> LUFactorExResult:
    """``lu_factor`` with an ``info`` of zeros (int32)."""
    out, pivots = lu_factor(A, pivot=pivot)
    return LUFactorExResult(out, pivots, _info(out))


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:  # noqa: N803
    """``inv`` with an ``info`` of zeros (a singular matrix raises)."""
    out = inv(A)
    return InvExResult(out, _info(out))


def cholesky_ex(
    input: Tensor,
    *,
    upper: bool = False,
    check_errors: bool = False,  # noqa: A002
) -> CholeskyExResult:
    """``cholesky`` with an ``info`` of zeros (a matrix that is not positive-definite raises)."""
    out = cholesky(input, upper=upper)
    return CholeskyExResult(out, _info(out))


def solve_ex(
    A: Tensor,  # noqa: N803
    B: Tensor,  # noqa: N803
    *,
    left: bool = True,
    check_errors: bool = False,
) -> SolveExResult:
    """``solve`` with an ``info`` of zeros (a singular matrix raises)."""
    out = solve(A, B, left=left)
    return SolveExResult(out, _info(check_matrix("solve_ex", A)))


def cond(input: Tensor, p: Any = None) -> Tensor:  # noqa: N803
    """The condition number: ``s_max / s_min`` for ``p`` None/2 (``s_min / s_max`` for -2),
    else ``norm(A, p) * norm(inv(A), p)`` (p in "fro", "nuc", inf, -inf, 1, -1)."""
    a = check_matrix("cond", input, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(a)
        ratio: Tensor = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return ratio
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    out: Tensor = matrix_norm(a, p) * matrix_norm(inv(a), p)
    return out


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonal ``offset`` of the matrices in dims ``dim1``, ``dim2`` (the last two)."""
    return A.diagonal(offset, dim1, dim2)


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``input @ other`` (``lucid.matmul``)."""
    return _matmul(input, other)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of the vectors along ``dim`` (broadcast)."""
    out: Tensor = (x * y).sum(dim)
    return out


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrices of the vectors in ``x``'s last dim: increasing powers
    ``1, x, ..., x**(N-1)`` (N defaults to the vector length)."""
    if x.ndim == 0:  # torch takes a 0-d tensor as a vector of one
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    base = x.to(dtypes.int64) if x.dtype.category < dtypes.FLOAT else x
    ones = base.new_ones(x.shape + (1,))
    reps = base.unsqueeze(-1).expand(x.shape + (n - 1,))
    out: Tensor = cat([ones, reps], -1).cumprod(-1)
    return out


def tensorinv(input: Tensor, ind: int = 2) -> Tensor:  # noqa: N803
    """The inverse of ``A`` as a map from its last dims to its first ``ind`` dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    left, right = input.shape[:ind], input.shape[ind:]
    rows = math.prod(left)
    if rows != math.prod(right):
        raise RuntimeError(
            f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {math.prod(right)} != {rows}"
        )
    return inv(input.reshape(rows, rows)).reshape(right + left)


def tensorsolve(input: Tensor, other: Tensor, dims: Any = None) -> Tensor:  # noqa: N803
    """``X`` with ``tensordot(A, X, X.ndim) = B`` (``dims`` of A moved to the end first)."""
    a = input
    if dims is not None:
        moved = [d % input.ndim for d in dims]
        a = input.movedim(moved, list(range(input.ndim - len(moved), input.ndim)))
    out_shape = a.shape[other.ndim :]
    rows = math.prod(other.shape)
    x = solve(a.reshape(rows, math.prod(out_shape)), other.reshape(rows, 1))
    return x.reshape(out_shape)
