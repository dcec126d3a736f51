"""Householder reflectors in LAPACK's compact form: ``geqrf`` (the QR factorization as
reflectors), ``householder_product`` (``orgqr``: Q from them) and ``ormqr`` (Q applied to a
matrix without forming it); and torch's legacy ``triangular_solve``.

Reflector ``i`` is ``H_i = I - tau_i v_i v_i^T`` with ``v_i = (0, ..., 0, 1, A[i+1:, i])``
(LAPACK's ``dlarfg`` convention, so ``geqrf``'s output is LAPACK's), and ``Q = H_0 H_1 ...
H_{k-1}``. All three are lucid ops on every backend; ``householder_product`` and ``ormqr`` are
differentiable through them, ``geqrf`` is not (as in torch).
"""

from __future__ import annotations

from typing import NamedTuple

from lucid import dtypes
from lucid._creation import eye, ones, zeros
from lucid._tensor import Tensor
from lucid.autograd.grad_mode import no_grad
from lucid.linalg._common import check_matrix, warn_once
from lucid.linalg._inverse import solve_triangular
from lucid.ops import cat, copysign, sqrt, where


class GeqrfResult(NamedTuple):
    a: Tensor
    tau: Tensor


class TriangularSolveResult(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


def _reflector(a: Tensor, i: int) -> Tensor:
    """``v_i`` of column ``i`` of ``a`` (batched), of length ``a.shape[-2]``."""
    batch = a.shape[:-2]
    head = zeros(*batch, i, dtype=a.dtype, device=a.device)
    one = ones(*batch, 1, dtype=a.dtype, device=a.device)
    return cat([head, one, a[..., i + 1 :, i]], -1)


def geqrf(input: Tensor) -> GeqrfResult:  # noqa: A002
    """The QR factorization as LAPACK's ``geqrf`` stores it (``torch.geqrf``): ``a`` holds R on
    and above its diagonal and the reflectors ``v_i`` below, ``tau`` their scales."""
    a = check_matrix("geqrf", input, square=False)
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    with no_grad():
        a = a.clone()
        taus = []
        for j in range(k):
            alpha = a[..., j, j]
            rest = a[..., j + 1 :, j]
            xnorm2 = (rest * rest).sum(-1)
            beta = -copysign(sqrt(alpha * alpha + xnorm2), alpha)
            still = xnorm2 == 0  # H = I: nothing below the diagonal to zero (tau = 0)
            one = ones(beta.shape, dtype=a.dtype, device=a.device)
            tau = where(still, one * 0, (beta - alpha) / where(still, one, beta))
            scale = where(still, one, alpha - beta)
            a[..., j + 1 :, j] = rest / scale.unsqueeze(-1)
            a[..., j, j] = where(still, alpha, beta)
            if j + 1 < n:
                v = _reflector(a, j)[..., j:]
                block = a[..., j:, j + 1 :]
                proj = (v.unsqueeze(-1) * block).sum(-2, keepdim=True)
                a[..., j:, j + 1 :] = block - tau[..., None, None] * v.unsqueeze(-1) * proj
            taus.append(tau)
        tau_t = zeros(*a.shape[:-2], 0, dtype=a.dtype, device=a.device)
        if taus:
            tau_t = cat([t.unsqueeze(-1) for t in taus], -1)
    return GeqrfResult(a, tau_t)


def _check_tau(name: str, a: Tensor, tau: Tensor, k_max: int) -> None:
    if tau.ndim != a.ndim - 1 or tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError(
            f"torch.{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], "
            f"but got input {list(a.shape)} and tau {list(tau.shape)}"
        )
    if tau.shape[-1] > k_max:
        raise RuntimeError(
            f"torch.{name}: input.shape[-1] must be greater than or equal to tau.shape[-1], "
            f"got input {list(a.shape)} and tau {list(tau.shape)}"
        )


def householder_product(input: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}`` for the reflectors stored in ``A``'s
    columns (``torch.linalg.householder_product``, LAPACK's ``orgqr``); differentiable."""
    if out is not None:
        raise TypeError("householder_product(): lucid has no out= (assign the result instead)")
    a = check_matrix("householder_product", input, square=False)
    m, n = a.shape[-2], a.shape[-1]
    if m < n:
        raise RuntimeError(
            "torch.linalg.householder_product: input.shape[-2] must be greater than or equal "
            f"to input.shape[-1], got input {list(a.shape)}"
        )
    _check_tau("linalg.householder_product", a, tau, n)
    q = eye(m, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], m, m)
    for i in range(tau.shape[-1]):
        v = _reflector(a, i)
        qv = (q * v.unsqueeze(-2)).sum(-1, keepdim=True)  # Q v
        q = q - (tau[..., i, None, None] * qv) * v.unsqueeze(-2)  # Q H_i = Q - tau (Q v) v^T
    if tau.shape[-1] == 0:  # Q = I: still a function of A (zero gradient), as torch's
        never = zeros(a.shape, dtype=dtypes.bool_, device=a.device)
        return where(never, a, q[..., :, :n])  # type: ignore[no-any-return]
    return q[..., :, :n]


def orgqr(input: Tensor, input2: Tensor) -> Tensor:  # noqa: A002
    """:func:`householder_product` (``torch.orgqr``)."""
    return householder_product(input, input2)


def ormqr(
    input: Tensor,  # noqa: A002
    input2: Tensor,
    input3: Tensor,
    left: bool = True,
    transpose: bool = False,
) -> Tensor:
    """``op(Q) @ other`` (``left``) or ``other @ op(Q)``, ``op`` the transpose with
    ``transpose``, for the Q of the reflectors in ``input`` (``torch.ormqr``); differentiable."""
    if isinstance(input, Tensor) and isinstance(input3, Tensor) and isinstance(input2, Tensor):
        # torch's checks, in its order, before the dtype and batch checks below
        for what, t in (("input", input), ("other", input3)):
            if t.ndim < 2:
                raise RuntimeError(f"torch.ormqr: {what} must have at least 2 dimensions.")
        side = -2 if left else -1
        if input3.shape[side] != input.shape[-2]:
            raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
        if input2.ndim and input2.shape[-1] != min(input3.shape[side], input.shape[-1]):
            raise RuntimeError(
                f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                f"input.shape[-1])"
            )
    a = check_matrix("ormqr", input, square=False)
    c = check_matrix("ormqr", input3, square=False)
    _check_tau("ormqr", a, input2, a.shape[-1])
    size = c.shape[-2] if left else c.shape[-1]
    if a.shape[-2] != size:
        where = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(
            f"torch.ormqr: input.shape[-2] must be equal to {where}, got input "
            f"{list(a.shape)} and other {list(c.shape)}"
        )
    order = list(range(input2.shape[-1]))
    if left != transpose:  # Q C = H_0 (... (H_{k-1} C)); C Q^T likewise: the last one first
        order.reverse()
    for i in order:
        v = _reflector(a, i)
        t = input2[..., i, None, None]
        if left:  # H C = C - tau v (v^T C)
            c = c - t * v.unsqueeze(-1) * (v.unsqueeze(-1) * c).sum(-2, keepdim=True)
        else:  # C H = C - tau (C v) v^T
            c = c - t * (c * v.unsqueeze(-2)).sum(-1, keepdim=True) * v.unsqueeze(-2)
    return c


def triangular_solve(
    input: Tensor,
    A: Tensor,  # noqa: N803
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
) -> TriangularSolveResult:
    """``(X, A.clone())`` with ``op(A) X = b`` for a triangular ``A`` (``torch.triangular_solve``,
    deprecated there for :func:`lucid.linalg.solve_triangular`: the first call in a process
    warns, in torch's words)."""
    warn_once(
        "triangular_solve",
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\n"
        "torch.linalg.solve_triangular has its arguments reversed and does not return a copy of "
        "one of the inputs.\n"
        "X = torch.triangular_solve(B, A).solution\n"
        "should be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).",
    )
    a = check_matrix("triangular_solve", A)
    coeff = a.mT if transpose else a
    x = solve_triangular(coeff, input, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, a.clone())
