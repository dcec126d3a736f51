"""The outer product ``a[:, None] * b[None, :]`` as one compiled loop (``lucid-core[numba]``).

Optional: ``_gemm.matmul`` uses it for a product whose inner dimension is 1, a batch-1
Linear's weight gradient ``g.T @ x`` (the char-RNN's (128, 1) @ (1, 185)). NumPy's matmul
takes a non-BLAS loop there, and the broadcast multiply that replaces it makes one inner-loop
call per row: 7.9 us for that shape, against 2.1 us here (docs/performance.md, issue 30). One
product per element, rounded to the dtype, as the multiply: the same bits.
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import U, jit_math


@jit_math
def outer(a: Any, b: Any, out: Any) -> None:
    """``out[i, j] = a[i] * b[j]`` for 1-D ``a`` and ``b`` and a fresh C-contiguous ``out`` of
    shape ``(a.size, b.size)``, all of one dtype."""
    m, n = a.shape[0], b.shape[0]
    for i in range(m):
        ai = a[U(i)]
        for j in range(n):
            out[U(i), U(j)] = ai * b[U(j)]
