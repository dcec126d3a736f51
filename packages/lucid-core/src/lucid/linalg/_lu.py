"""LU factorisation with partial pivoting (``lu_factor``, ``lu_solve``), ``cholesky_solve``,
and the complex-valued ``eig``/``eigvals`` that wait for complex tensors.

``lu_factor`` eliminates column by column in lucid ops (the pivot rows are chosen without a
graph, the arithmetic is recorded), so its gradient and double gradient come from those ops;
``lu_solve`` and ``cholesky_solve`` are triangular solves, differentiable in every input.
"""

from __future__ import annotations

from typing import NamedTuple

from lucid import dtypes
from lucid._creation import arange
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.linalg._common import check_matrix
from lucid.linalg._inverse import solve, solve_triangular
from lucid.ops.join import cat


class LUFactorResult(NamedTuple):
    LU: Tensor
    pivots: Tensor


def _swap_index(m: int, j: int, p: Tensor) -> Tensor:
    """Row order swapping row ``j`` with row ``p`` (one per batch entry): shape (..., m)."""
    rows = arange(m, device=p.device).expand(p.shape + (m,))
    at_j = rows == j
    at_p = rows == p.unsqueeze(-1)
    out: Tensor = rows.where(~at_j, p.unsqueeze(-1)).where(~at_p, rows.new_full((), j))
    return out


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """``(LU, pivots)``: ``P @ A = L @ U`` packed in one matrix (L's unit diagonal implied) and
    the 1-based row each step swapped with (int32, LAPACK's convention, as torch)."""
    if not pivot:
        raise NotImplementedError(
            "linalg.lu_factor: LU without pivoting is not implemented (torch supports it on "
            "CUDA only)"
        )
    a = check_matrix("lu_factor", A, square=False)
    m, n = a.shape[-2], a.shape[-1]
    batch = a.shape[:-2]
    pivots = []
    for j in range(min(m, n)):
        with grad_mode.no_grad():
            p = a[..., j:, j].abs().argmax(-1) + j
        pivots.append(p)
        order = _swap_index(m, j, p)
        a = a.gather(-2, order.unsqueeze(-1).expand(batch + (m, n)))
        if j + 1 >= m:
            continue
        head, top = a[..., : j + 1, :], a[..., j : j + 1, :]
        below = a[..., j + 1 :, :]
        scale = below[..., :, j : j + 1] / top[..., :, j : j + 1]
        rest = below[..., :, j + 1 :] - scale * top[..., :, j + 1 :]
        a = cat([head, cat([below[..., :, :j], scale, rest], -1)], -2)
    piv = (
        (cat([p.unsqueeze(-1) for p in pivots], -1) + 1).to(dtypes.int32)
        if pivots
        else arange(0, device=a.device).expand(batch + (0,)).to(dtypes.int32)
    )
    return LUFactorResult(a, piv)


def _permutation(pivots: Tensor, m: int) -> Tensor:
    """The row order ``P`` applies (``(P @ B)[i] = B[perm[i]]``) from LAPACK pivots."""
    piv = pivots.long() - 1
    order = arange(m, device=pivots.device).expand(pivots.shape[:-1] + (m,))
    for j in range(piv.shape[-1]):
        p = piv[..., j]
        swap = _swap_index(m, j, p)
        order = order.gather(-1, swap)
    return order


def lu_solve(
    LU: Tensor,  # noqa: N803
    pivots: Tensor,
    B: Tensor,  # noqa: N803
    *,
    left: bool = True,
    adjoint: bool = False,
) -> Tensor:
    """``X`` with ``A @ X = B`` from ``lu_factor(A)`` (``X @ A = B`` when ``left=False``;
    ``A^H`` in place of ``A`` with ``adjoint``)."""
    lu = check_matrix("lu_solve", LU)
    if pivots.dtype.category != dtypes.INT:
        raise RuntimeError(f"linalg.lu_solve: pivots should be int32, got {pivots.dtype}")
    m = lu.shape[-1]
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return lu_solve(lu, pivots, B.mT, adjoint=not adjoint).mT
    if B.shape[-2] != m:
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B "
            f"({m}x{m} and {B.shape[-2]}x{B.shape[-1]})"
        )
    with grad_mode.no_grad():
        order = _permutation(pivots, m)
    if not adjoint:  # A = P^T L U: X = U^-1 L^-1 P B
        pb = B.gather(-2, order.unsqueeze(-1).expand(order.shape + (B.shape[-1],)))
        y = solve_triangular(lu, pb, upper=False, unitriangular=True)
        return solve_triangular(lu, y, upper=True)
    # A^T = U^T L^T P: X = P^T L^-T U^-T B
    y = solve_triangular(lu.mT, B, upper=False)
    z = solve_triangular(lu.mT, y, upper=True, unitriangular=True)
    inverse = order.argsort(-1)
    return z.gather(-2, inverse.unsqueeze(-1).expand(inverse.shape + (B.shape[-1],)))


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """``X`` with ``A @ X = B`` for ``A = L @ L.mT`` (``U.mT @ U`` when ``upper``), given the
    Cholesky factor (``torch.cholesky_solve(B, L)``)."""
    factor = check_matrix("cholesky_solve", input2)
    if not factor.requires_grad:
        if upper:
            y = solve_triangular(factor.mT, input, upper=False)
            return solve_triangular(factor, y, upper=True)
        y = solve_triangular(factor, input, upper=False)
        return solve_triangular(factor.mT, y, upper=True)
    # torch's gradient for the factor, -(C + C^T) @ L with C = grad_B @ X^T, is that of
    # A = L @ L^T over the whole of L (the triangle the values ignore included): A's value is
    # the triangle's product, its gradient that of the full product.
    tri = factor.triu() if upper else factor.tril()
    full = factor.mT @ factor if upper else factor @ factor.mT
    exact = (tri.mT @ tri if upper else tri @ tri.mT).detach()
    return solve(full - (full.detach() - exact), input)
