"""matrix_exp: scaling and squaring with a [13/13] Pade approximant (Higham 2005)."""

from __future__ import annotations

import math
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._common import check_matrix, lapack
from lucid.ops.join import cat

_B = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
      129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
      40840800.0, 960960.0, 16380.0, 182.0, 1.0)  # fmt: skip
_THETA13 = 5.371920351148152


def _expm(xp: Any, a: Any) -> Any:
    n = a.shape[-1]
    norm1 = float(xp.max(xp.sum(xp.abs(a), axis=-2))) if a.size else 0.0
    s = max(0, math.ceil(math.log2(norm1 / _THETA13))) if norm1 > _THETA13 else 0
    a = a / (2.0**s)
    eye = xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape)
    a2 = xp.matmul(a, a)
    a4 = xp.matmul(a2, a2)
    a6 = xp.matmul(a4, a2)
    b = _B
    u_inner = xp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
    u = xp.matmul(a, u_inner + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = xp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
    v = v + b[0] * eye
    r = lapack("matrix_exp", xp.linalg.solve, v - u, v + u)
    for _ in range(s):
        r = xp.matmul(r, r)
    return r


class MatrixExp(Function):
    _node_name = "LinalgMatrixExpBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.save_for_backward(a)
        return _expm(ctx.xp, a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # The adjoint of the Frechet derivative: the top-right block of
        # exp([[A^T, G], [0, A^T]]) (as PyTorch); differentiable again through matrix_exp.
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        at = a.mT
        top = cat([at, g], -1)
        bottom = cat([at.new_zeros(at.shape), at], -1)
        big: Tensor = MatrixExp.apply(cat([top, bottom], -2))
        return big[..., :n, n:]


def matrix_exp(input: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    return MatrixExp.apply(check_matrix("matrix_exp", input))
