"""``svd_lowrank`` and ``pca_lowrank``: randomized low-rank SVD and PCA (Halko, Martinsson and
Tropp 2009, Algorithms 4.4 and 5.1), as torch computes them, on lucid's ``qr``/``svd`` (so
they are differentiable). The random start draws from lucid's default generator: seed it with
``lucid.manual_seed`` for repeatable results.

``lobpcg``: the ``k`` extreme eigenpairs of a symmetric (generalized) eigenproblem, with
torch's signature and checks, solved exactly by a dense ``eigh`` (differentiable).
"""

from __future__ import annotations

from lucid._creation import randn
from lucid._tensor import Tensor
from lucid.linalg._decomp import cholesky, eigh, qr, svd
from lucid.linalg._inverse import solve_triangular


def get_approximate_basis(
    A: Tensor,  # noqa: N803
    q: int,
    niter: int | None = 2,
    M: Tensor | None = None,  # noqa: N803
) -> Tensor:
    """An orthonormal ``(*, m, q)`` basis ``Q`` with ``Q Q^H (A - M)`` close to ``A - M``."""
    niter = 2 if niter is None else niter
    r = randn(A.shape[-1], q, dtype=A.dtype, device=A.device)
    x = A @ r if M is None else A @ r - M @ r
    basis = qr(x).Q
    for _ in range(niter):
        x = A.mH @ basis if M is None else A.mH @ basis - M.mH @ basis
        basis = qr(x).Q
        x = A @ basis if M is None else A @ basis - M @ basis
        basis = qr(x).Q
    return basis


def svd_lowrank(
    A: Tensor,  # noqa: N803
    q: int | None = 6,
    niter: int | None = 2,
    M: Tensor | None = None,  # noqa: N803
) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` of a rank-``q`` approximation of ``A - M`` (``torch.svd_lowrank``):
    ``A - M ~ U diag(S) V^H``; exact when ``A - M`` has rank at most ``q``."""
    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)  # noqa: N806
    if m < n:  # work on the tall one
        A = A.mH  # noqa: N806
        M = None if M is None else M.mH  # noqa: N806
    basis = get_approximate_basis(A, q, niter=niter, M=M)
    b = basis.mH @ A if M is None else basis.mH @ A - basis.mH @ M
    u, s, vh = svd(b, full_matrices=False)
    v, u = vh.mH, basis @ u
    return (v, s, u) if m < n else (u, s, v)


def pca_lowrank(
    A: Tensor,  # noqa: N803
    q: int | None = None,
    center: bool = True,
    niter: int = 2,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` of the principal components of ``A``'s rows (``torch.pca_lowrank``): the
    low-rank SVD of ``A`` less its column means (with ``center``); ``q`` defaults to
    ``min(6, m, n)``."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter=niter)


def lobpcg(
    A: Tensor,  # noqa: N803
    k: int | None = None,
    B: Tensor | None = None,  # noqa: N803
    X: Tensor | None = None,  # noqa: N803
    n: int | None = None,
    iK: Tensor | None = None,  # noqa: N803
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: None = None,
    ortho_iparams: dict[str, int] | None = None,
    ortho_fparams: dict[str, float] | None = None,
    ortho_bparams: dict[str, bool] | None = None,
) -> tuple[Tensor, Tensor]:
    """``(E, X)``: the ``k`` largest (``largest``, the default) or smallest eigenvalues of the
    symmetric ``A`` (``A x = e B x`` with a symmetric positive definite ``B``) and their
    eigenvectors as columns, ``B``-orthonormal (``torch.lobpcg``).

    Lucid solves the problem exactly with a dense ``eigh`` (after a Cholesky reduction when
    ``B`` is given) instead of torch's iterations: the iteration controls (``X``, ``iK``,
    ``niter``, ``tol``, ``method``, ``tracker``, ``ortho_*``) are checked and otherwise unused.
    Eigenvectors are unique up to sign.
    """
    m = A.shape[-1]
    if A.ndim < 2 or A.shape[-2] != m:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and B.shape != A.shape:
        raise AssertionError(f"A and B must have the same shapes, got {A.shape} and {B.shape}")
    if X is not None and X.shape[-2] != m:
        raise ValueError(f"X must be a tensor with shape (*, {m}, n), got {X.shape}")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"method must be 'basic' or 'ortho', got {method!r}")
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if n is None:
        n = k if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LPBPCG algorithm is not applicable when the number of A rows (={m}) is smaller "
            f"than 3 x the number of requested eigenpairs (={n})"
        )
    if B is None:
        evals, evecs = eigh(A)
    else:  # B = L L^H: the standard problem L^-1 A L^-H y = e y, with x = L^-H y
        low = cholesky(B)
        left = solve_triangular(low, A, upper=False)
        evals, y = eigh(solve_triangular(low, left.mH, upper=False).mH)
        evecs = solve_triangular(low.mH, y, upper=True)
    if largest is None or largest:  # eigh's order is ascending; torch's is descending here
        return evals[..., m - k :].flip(-1), evecs[..., m - k :].flip(-1)
    return evals[..., :k], evecs[..., :k]
