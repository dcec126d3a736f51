"""torch's top-level decompositions (``torch.svd``, ``torch.qr``, ``torch.cholesky``), with
their older conventions, on top of ``lucid.linalg``."""

from __future__ import annotations

from typing import NamedTuple

from lucid import dtypes
from lucid._creation import eye, zeros
from lucid._tensor import Tensor
from lucid.linalg._common import check_matrix, warn_once
from lucid.linalg._decomp import QRResult
from lucid.linalg._decomp import cholesky as _cholesky
from lucid.linalg._decomp import qr as _qr
from lucid.linalg._decomp import svd as _svd
from lucid.linalg._extra import LUResult, unpack
from lucid.linalg._inverse import SlogdetResult
from lucid.linalg._inverse import det as _det
from lucid.linalg._inverse import inv as _inv
from lucid.linalg._inverse import pinv as _pinv
from lucid.linalg._inverse import slogdet as _slogdet
from lucid.linalg._lu import cholesky_solve, lu_factor, lu_solve


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
    otherwise. Deprecated in torch: the first call in a process warns, in torch's words."""
    warn_once("qr", _QR_DEPRECATION)
    return _qr(input, "reduced" if some else "complete")


def cholesky(input: Tensor, upper: bool = False) -> Tensor:  # noqa: A002
    """The Cholesky factor of a symmetric positive-definite matrix (``torch.cholesky``): lower
    (``A = L @ L.mT``), or upper (``A = U.mT @ U``) with ``upper``. Deprecated in torch: the
    first call in a process warns, in torch's words."""
    warn_once("cholesky", _CHOLESKY_DEPRECATION)
    return _cholesky(input, upper=upper)


_LU_DEPRECATION = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\n"
    "LU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\n"
    "and\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
    "should be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"
)
_QR_DEPRECATION = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\n"
    "should be replaced with\n"
    "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"
)
_CHOLESKY_DEPRECATION = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\n"
    "L = torch.cholesky(A)\n"
    "should be replaced with\n"
    "L = torch.linalg.cholesky(A)\n"
    "and\n"
    "U = torch.cholesky(A, upper=True)\n"
    "should be replaced with\n"
    "U = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) "
    "inputs."
)
_LU_SOLVE_DEPRECATION = (  # torch's words, its missing space ("lu_solveand") included
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\n"
    "Note that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)"
)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:  # noqa: N803
    """``(LU, pivots)`` (and ``infos`` of zeros with ``get_infos``): ``torch.lu``, the older
    name of ``linalg.lu_factor``. Deprecated in torch: the first call in a process warns, in
    torch's words (torch's ``TORCH_WARN_ONCE``)."""
    warn_once("lu", _LU_DEPRECATION)
    out, pivots = lu_factor(A, pivot=pivot)
    if get_infos:
        return out, pivots, zeros(*out.shape[:-2], dtype=dtypes.int32, device=out.device)
    return out, pivots


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> LUResult:  # fmt: skip
    """``(P, L, U)`` from ``lu_factor``'s packed result (``torch.lu_unpack``)."""
    return unpack(LU_data, LU_pivots)


def lu_solve_legacy(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """``X`` with ``A @ X = b`` from ``torch.lu(A)`` (``torch.lu_solve``'s argument order).
    Deprecated in torch: the first call in a process warns, in torch's words."""
    warn_once("lu_solve", _LU_SOLVE_DEPRECATION)
    return lu_solve(LU_data, LU_pivots, input)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:  # noqa: N803
    """The inverse of ``A = L @ L.mT`` (``U.mT @ U`` with ``upper``) from its Cholesky factor."""
    factor = check_matrix("cholesky_inverse", input)
    ident = eye(factor.shape[-1], dtype=factor.dtype, device=factor.device)
    return cholesky_solve(ident.expand(factor.shape), factor, upper)


# torch's top-level names take `input` where torch.linalg's take `A`


def det(input: Tensor) -> Tensor:  # noqa: A002
    """The determinant of each square matrix (``torch.det``, ``linalg.det`` by another name)."""
    return _det(input)


def slogdet(input: Tensor) -> SlogdetResult:  # noqa: A002
    """``(sign, logabsdet)`` of each square matrix (``torch.slogdet``; see ``linalg.slogdet``)."""
    return _slogdet(input)


def inverse(input: Tensor) -> Tensor:  # noqa: A002
    """The inverse of each square matrix (``torch.inverse``, ``linalg.inv`` by another name)."""
    return _inv(input)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """The pseudo-inverse with singular values below ``rcond * s_max`` dropped
    (``torch.pinverse``; see ``linalg.pinv``)."""
    return _pinv(input, rtol=rcond)
