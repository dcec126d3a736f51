"""Decompositions: cholesky, qr, svd / svdvals, eigh / eigvalsh, with PyTorch's gradients.

Each forward calls the backend's ``xp.linalg``; each backward is written with lucid ops on
the saved inputs/outputs, so second derivatives work too. Where the decomposition is not
unique the derivative is undefined, as in PyTorch: repeated singular values (svd with U/V
used) and repeated eigenvalues (eigh with the eigenvectors used) give inf/nan gradients.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lucid._creation import zeros
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._common import Solve, check_matrix, eye_like, lapack_saved, off_diagonal_quotient
from lucid.ops.join import cat


def _solve(a: Tensor, b: Tensor) -> Tensor:
    return Solve.apply(a, b)


class Cholesky(Function):
    _node_name = "LinalgCholeskyExBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return lapack_saved(ctx, "cholesky", ctx.xp.linalg.cholesky, a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # gA = L^-T Phi(L^T gL) L^-1, symmetrised (Murray 2016; PyTorch's cholesky_backward).
        (l,) = ctx.saved_tensors
        ga = (l.mT @ g).tril()
        ga = 0.5 * (ga + ga.tril(-1).mT)
        ga = _solve(l.mT, ga)
        return _solve(l.mT, ga.mT).mT


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """``L`` (lower) with ``A = L @ L.mT`` for symmetric positive-definite ``A``.

    Only the lower triangle of ``A`` is read; the gradient returned is symmetric. A matrix
    that is not positive-definite raises :class:`LinAlgError`.
    """
    out: Tensor = Cholesky.apply(check_matrix("cholesky", input))
    return out.mT if upper else out


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class QR(Function):
    _node_name = "LinalgQrBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, mode: str) -> Any:
        ctx.mode, ctx.shape = mode, a.shape
        return lapack_saved(ctx, "qr", ctx.xp.linalg.qr, a, mode=mode)

    @staticmethod
    def backward(ctx: Any, gq: Tensor, gr: Tensor) -> Any:
        m, n = ctx.shape[-2], ctx.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                "linalg.qr: the derivative of mode='complete' is only implemented for inputs "
                f"with m <= n; got {m}x{n}"
            )
        q, r = ctx.saved_tensors
        if m < n:
            # A = [X | Y] with X = Q U square, Y = Q V (R = [U | V]): X's part is the square
            # case with gQ + Y gV^T, Y's is Q gV (torch's linalg_qr_backward).
            u, v = r.narrow(-1, 0, m), r.narrow(-1, m, n - m)
            gu, gv = gr.narrow(-1, 0, m), gr.narrow(-1, m, n - m)
            gx = _qr_square_backward(q, u, gq + (q @ v) @ gv.mT, gu)
            return cat([gx, q @ gv], -1), None
        return _qr_square_backward(q, r, gq, gr), None


def _qr_square_backward(q: Tensor, r: Tensor, gq: Tensor, gr: Tensor) -> Tensor:
    """Liao et al. 2019 for m >= n: M = R gR^T - gQ^T Q; gA = (gQ + Q copyltu(M)) R^-T."""
    mm = r @ gr.mT - gq.mT @ q
    sym = mm.tril(-1) + mm.tril(-1).mT + mm * eye_like(mm)
    b = gq + q @ sym
    out: Tensor = _solve(r, b.mT).mT
    return out


def qr(A: Tensor, mode: str = "reduced") -> QRResult:  # noqa: N803
    """``(Q, R)`` with ``A = Q @ R``; ``mode`` is "reduced", "complete" or "r" (Q empty).

    Gradients are implemented for mode "reduced" (any shape) and "complete" with m <= n.
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")  # fmt: skip
    a = check_matrix("qr", A, square=False)
    if mode == "r":
        _, r = QR.apply(a.detach(), "reduced")
        return QRResult(zeros(0, dtype=a.dtype, device=a.device), r)
    q, r = QR.apply(a, mode)
    return QRResult(q, r)


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class SVD(Function):
    _node_name = "LinalgSvdBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, full_matrices: bool) -> Any:
        ctx.full, ctx.shape = full_matrices, a.shape
        return lapack_saved(ctx, "svd", ctx.xp.linalg.svd, a, full_matrices=full_matrices)

    @staticmethod
    def backward(ctx: Any, gu: Tensor, gs: Tensor, gvh: Tensor) -> Any:
        m, n = ctx.shape[-2], ctx.shape[-1]
        u, s, vh = ctx.saved_tensors
        if ctx.full and m != n:
            k = min(m, n)
            if bool(gu.narrow(-1, k, m - k).abs().sum() > 0) if m > k else False:
                raise RuntimeError(_FULL_MSG)
            if bool(gvh.narrow(-2, k, n - k).abs().sum() > 0) if n > k else False:
                raise RuntimeError(_FULL_MSG)
            u, gu = u.narrow(-1, 0, k), gu.narrow(-1, 0, k)
            vh, gvh = vh.narrow(-2, 0, k), gvh.narrow(-2, 0, k)
        return _svd_backward(u, s, vh, gu, gs, gvh, m, n), None


_FULL_MSG = (
    "linalg.svd: the gradient of the extra singular vectors of full_matrices=True is not "
    "defined; use full_matrices=False"
)


def _svd_backward(
    u: Tensor, s: Tensor, vh: Tensor, gu: Tensor, gs: Tensor, gvh: Tensor, m: int, n: int
) -> Tensor:
    """PyTorch's svd_backward for the reduced SVD (real inputs)."""
    if not (bool(gu.any()) or bool(gvh.any())):  # only S used: defined even when S repeats
        only_s: Tensor = (u * gs.unsqueeze(-2)) @ vh
        return only_s
    uhgu = u.mT @ gu
    vhgv = vh @ gvh.mT
    uhgu = uhgu - uhgu.mT
    vhgv = vhgv - vhgv.mT
    s2 = s * s
    inner = off_diagonal_quotient(uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv, s2)
    inner = inner + gs.diag_embed()
    if m > n:
        gus = gu / s.unsqueeze(-2)
        tall: Tensor = (u @ inner + gus - u @ (u.mT @ gus)) @ vh
        return tall
    if m < n:
        sgvh = gvh / s.unsqueeze(-1)
        wide: Tensor = u @ (inner @ vh + sgvh - (sgvh @ vh.mT) @ vh)
        return wide
    square: Tensor = u @ inner @ vh
    return square


def _check_driver(driver: str | None) -> None:
    if driver is not None:  # torch: cuSOLVER's drivers; lucid has no CUDA backend
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs "
            f"with cuSOLVER backend (got driver={driver!r})"
        )


def svd(
    A: Tensor,  # noqa: N803
    full_matrices: bool = True,
    *,
    driver: str | None = None,
) -> SVDResult:
    """``(U, S, Vh)`` with ``A = U @ diag(S) @ Vh`` and S descending.

    The singular vectors are unique only up to sign, so only functions invariant to that
    (``U @ Vh``, ``S``, projections) have well-defined gradients; repeated singular values
    make the vectors' gradient undefined (inf/nan), as in PyTorch.
    """
    _check_driver(driver)
    u, s, vh = SVD.apply(check_matrix("svd", A, square=False), full_matrices)
    return SVDResult(u, s, vh)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:  # noqa: N803
    """The singular values, descending (differentiable, also when they repeat)."""
    _check_driver(driver)
    return svd(A, full_matrices=False).S


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class Eigh(Function):
    _node_name = "LinalgEighBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, uplo: str) -> Any:
        return lapack_saved(ctx, "eigh", ctx.xp.linalg.eigh, a, UPLO=uplo)

    @staticmethod
    def backward(ctx: Any, gw: Tensor, gq: Tensor) -> Any:
        # gA = Q (diag(gw) + skew(Q^T gQ) / (w_j - w_i)) Q^T (PyTorch's linalg_eig_backward).
        w, q = ctx.saved_tensors
        if not bool(gq.any()):  # only eigenvalues used: defined even when they repeat
            return (q * gw.unsqueeze(-2)) @ q.mT, None
        qgq = q.mT @ gq
        inner = off_diagonal_quotient(0.5 * (qgq - qgq.mT), w) + gw.diag_embed()
        return q @ inner @ q.mT, None


def eigh(input: Tensor, UPLO: str = "L") -> EighResult:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (one triangle is read).

    Repeated eigenvalues make the eigenvectors' gradient undefined (inf/nan), as in PyTorch.
    """
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    w, q = Eigh.apply(check_matrix("eigh", input), UPLO)
    return EighResult(w, q)


def eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of symmetric matrices, ascending (differentiable, also when repeated)."""
    return eigh(input, UPLO).eigenvalues
