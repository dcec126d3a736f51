"""GEMM helpers for the convolution kernels: shapes that BLAS handles badly, routed around.

PERF.md item 3: a GEMM whose inner dimension is huge and whose output is tiny (a weight
gradient ``col^T @ dy`` with 50,000 rows and a 25 x 6 result) runs far below peak in every BLAS;
as one batched matmul over row blocks followed by a sum it is several times faster.
"""

from __future__ import annotations

from typing import Any

# Row block for the batched form of a long, narrow ``a^T @ b``.
_BLOCK_ROWS = 1024
# Use the batched form when the result has at most this many elements.
_SMALL_RESULT = 64 * 64


def matmul(a: Any, b: Any, xp: Any) -> Any:
    return xp.matmul(a, b)


def tn_matmul(a: Any, b: Any, xp: Any) -> Any:
    """``a.T @ b`` for ``a: (rows, K)``, ``b: (rows, M)``."""
    rows, k = a.shape
    m = b.shape[1]
    blocks = rows // _BLOCK_ROWS
    if k * m > _SMALL_RESULT or blocks < 2:
        return xp.matmul(xp.transpose(a), b)
    main = blocks * _BLOCK_ROWS
    ab = xp.transpose(xp.reshape(a[:main], (blocks, _BLOCK_ROWS, k)), (0, 2, 1))
    bb = xp.reshape(b[:main], (blocks, _BLOCK_ROWS, m))
    out = xp.sum(xp.matmul(ab, bb), axis=0)
    if main < rows:
        out = out + xp.matmul(xp.transpose(a[main:]), b[main:])
    return out
