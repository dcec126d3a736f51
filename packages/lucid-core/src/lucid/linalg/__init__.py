"""``lucid.linalg`` (``torch.linalg``): decompositions, inverses, determinants and norms.

Forwards run on the backend's ``xp.linalg``; gradients follow PyTorch's formulas and are
differentiable again. Cases PyTorch leaves undefined stay undefined here: the singular vectors
at repeated singular values, the eigenvectors at repeated eigenvalues, log|det| at a singular
matrix (see each function's docstring).
"""

from __future__ import annotations

from lucid._tensor import Tensor as _Tensor
from lucid.linalg._common import LinAlgError
from lucid.linalg._decomp import (
    EighResult,
    QRResult,
    SVDResult,
    cholesky,
    eigh,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from lucid.linalg._eig import EigResult, eig, eigvals
from lucid.linalg._exp import matrix_exp
from lucid.linalg._extra import (
    CholeskyExResult,
    InvExResult,
    LUFactorExResult,
    LUResult,
    SolveExResult,
    cholesky_ex,
    cond,
    diagonal,
    inv_ex,
    lu,
    lu_factor_ex,
    matmul,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
)
from lucid.linalg._householder import householder_product
from lucid.linalg._inverse import (
    LstsqResult,
    SlogdetResult,
    det,
    inv,
    logdet,
    lstsq,
    matrix_power,
    pinv,
    slogdet,
    solve,
    solve_triangular,
)
from lucid.linalg._ldl import (
    LDLFactorExResult,
    LDLFactorResult,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
)
from lucid.linalg._lu import LUFactorResult, lu_factor, lu_solve
from lucid.linalg._norms import matrix_norm, matrix_rank, norm, vector_norm
from lucid.ops._util import add_out as _add_out
from lucid.ops.blas import cross as _cross


def cross(input: _Tensor, other: _Tensor, *, dim: int = -1) -> _Tensor:  # noqa: A002
    """The cross product of 3-vectors along ``dim`` (default the last one)."""
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions., got "
            f"{input.ndim} and {other.ndim}"
        )
    if input.ndim and -input.ndim <= dim < input.ndim:
        n_in, n_other = input.shape[dim], other.shape[dim]
        if n_in != 3 or n_other != 3:
            raise RuntimeError(
                f"linalg.cross: inputs dimension {dim} must have length 3. Got {n_in} and {n_other}"
            )
    return _cross(input, other, dim=dim)


def multi_dot(tensors: list[_Tensor]) -> _Tensor:
    """The product of a chain of matrices (the first/last may be vectors), left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


__all__ = [
    "CholeskyExResult", "InvExResult", "LUFactorExResult", "LUResult", "SolveExResult",
    "cholesky_ex", "cond", "diagonal", "inv_ex", "lu", "lu_factor_ex", "matmul", "solve_ex",
    "tensorinv", "tensorsolve", "vander", "vecdot", "householder_product",
    "EigResult", "EighResult", "LUFactorResult", "LinAlgError", "LstsqResult", "QRResult",
    "SVDResult", "SlogdetResult", "cholesky", "cross", "det", "eig", "eigh", "eigvals",
    "eigvalsh", "inv",
    "logdet", "lstsq", "lu_factor", "lu_solve", "matrix_exp",
    "matrix_norm",
    "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
    "solve_triangular", "svd", "svdvals", "vector_norm", "LDLFactorResult", "LDLFactorExResult",
    "ldl_factor", "ldl_factor_ex", "ldl_solve",
]  # fmt: skip

# torch's out= on the functions that take it (lucid.ops._util.with_out)
_OUT = """
    cholesky cholesky_ex cross eig eigh eigvals eigvalsh inv inv_ex ldl_factor ldl_factor_ex
    ldl_solve lu lu_factor lu_factor_ex lu_solve matmul matrix_norm matrix_power multi_dot
    norm qr solve solve_ex svd svdvals vecdot vector_norm
"""
_add_out(globals(), _OUT)
