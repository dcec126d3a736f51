"""The Tensor methods that call ``lucid.linalg`` (``x.det()``, ``x.svd()``, ...): attached by
``lucid/__init__.py`` (linalg sits above the binder), declared for type checkers by hand in
``lucid/_tensor_methods.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid._tensor import Tensor
from lucid.linalg._exp import matrix_exp
from lucid.linalg._householder import geqrf, orgqr, ormqr, triangular_solve
from lucid.linalg._inverse import det, inv, logdet, matrix_power, pinv, slogdet
from lucid.linalg._legacy import cholesky, cholesky_inverse, lu, lu_solve_legacy, qr, svd
from lucid.linalg._lu import cholesky_solve


def _pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse (``torch.Tensor.pinverse``; singular values below ``rcond`` times
    the largest count as zero)."""
    return pinv(self, rtol=rcond)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inv, "pinverse": _pinverse,
    "matrix_power": matrix_power, "matrix_exp": matrix_exp, "svd": svd, "qr": qr,
    "cholesky": cholesky, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "lu": lu, "lu_solve": lu_solve_legacy, "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
    "triangular_solve": triangular_solve,
}  # fmt: skip
