"""``svd_lowrank`` and ``pca_lowrank``: randomized low-rank SVD and PCA (Halko, Martinsson and
Tropp 2009, Algorithms 4.4 and 5.1), as torch computes them, on lucid's ``qr``/``svd`` (so
they are differentiable). The random start draws from lucid's default generator: seed it with
``lucid.manual_seed`` for repeatable results.
"""

from __future__ import annotations

from lucid._creation import randn
from lucid._tensor import Tensor
from lucid.linalg._decomp import qr, svd


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
