"""torch's top-level decompositions (``torch.svd``, ``torch.qr``, ``torch.cholesky``), with
their older conventions, on top of ``lucid.linalg``."""

from __future__ import annotations

from typing import NamedTuple

from lucid._creation import zeros
from lucid._tensor import Tensor
from lucid.linalg._common import check_matrix
from lucid.linalg._decomp import QRResult
from lucid.linalg._decomp import cholesky as _cholesky
from lucid.linalg._decomp import qr as _qr
from lucid.linalg._decomp import svd as _svd


class SVDLegacyResult(NamedTuple):
    """``(U, S, V)``: what ``torch.svd`` returns (V itself, not its adjoint)."""

    U: Tensor
    S: Tensor
    V: Tensor


def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDLegacyResult:  # noqa: A002
    """``(U, S, V)`` with ``input = U @ diag(S) @ V.mT`` (``torch.svd``): reduced with
    ``some`` (the default), complete otherwise; with ``compute_uv=False`` U and V are zeros of
    shape (m, m) and (n, n)."""
    a = check_matrix("svd", input, square=False)
    if not compute_uv:
        s = _svd(a, full_matrices=False).S
        m, n = a.shape[-2], a.shape[-1]
        batch = a.shape[:-2]
        u0 = zeros(*batch, m, m, dtype=a.dtype, device=a.device)
        v0 = zeros(*batch, n, n, dtype=a.dtype, device=a.device)
        return SVDLegacyResult(u0, s, v0)
    u, s, vh = _svd(a, full_matrices=not some)
    return SVDLegacyResult(u, s, vh.mT)


def qr(input: Tensor, some: bool = True) -> QRResult:  # noqa: A002
    """``(Q, R)`` with ``input = Q @ R`` (``torch.qr``): reduced with ``some``, complete
    otherwise."""
    return _qr(input, "reduced" if some else "complete")


def cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The Cholesky factor of a symmetric positive-definite matrix (``torch.cholesky``): lower
    (``A = L @ L.mT``), or upper (``A = U.mT @ U``) with ``upper``."""
    return _cholesky(input, upper=upper)
