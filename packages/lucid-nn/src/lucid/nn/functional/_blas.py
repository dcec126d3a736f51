"""How the convolution kernels use the CPU: GEMM shapes BLAS handles badly, and threads.

PERF.md items 2 and 3:

- A GEMM whose inner dimension is huge and whose result is tiny (a weight gradient
  ``col^T @ dy`` with 50,000 rows and a 25 x 6 result) runs far below peak in every BLAS; as one
  batched matmul over row blocks followed by a sum it is several times faster.
- BLAS threads help big GEMMs, but an im2col convolution also copies (im2col, col2im), and
  NumPy copies run on one core. So the batch is cut into cache-sized chunks and the chunks are
  run on a small pool of Python threads (NumPy and BLAS release the GIL), each calling a
  one-thread BLAS: every core then does copies and GEMMs alike. Small work runs inline on one
  BLAS thread, where thread wake-ups would cost more than they save.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lucid.backends import PARALLEL_FLOPS, blas_threads

T = TypeVar("T")
R = TypeVar("R")

# Row block for the batched form of a long, narrow ``a^T @ b``.
_BLOCK_ROWS = 1024
# Use the batched form when the result has at most this many elements.
_SMALL_RESULT = 64 * 64
# Below this many FLOPs per call, one thread does the whole op (no pool, one BLAS thread).
_PARALLEL_FLOPS = PARALLEL_FLOPS


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


# -- threads: lucid-core's BLAS thread controller (one place for the BLAS settings) ----------
_threads = blas_threads


def workers() -> int:
    """How many chunk workers a big op uses: the BLAS thread setting (1 without threadpoolctl)."""
    return _threads.budget()


def run_chunks(work: Callable[[T], R], items: Sequence[T], flops: float) -> list[R]:
    """``[work(item) for item in items]``, on a thread per core with one-thread BLAS each.

    Small work (under ``_PARALLEL_FLOPS``) runs inline on one BLAS thread; a single big item
    runs inline with the BLAS threads as set.
    """
    if threading.current_thread().name.startswith("lucid-conv"):
        return [work(item) for item in items]  # already inside a worker
    if len(items) == 1 and flops >= _PARALLEL_FLOPS:
        return [work(items[0])]
    budget = _threads.budget()
    with _threads.single_blas_thread():
        if budget == 1 or flops < _PARALLEL_FLOPS or len(items) == 1:
            return [work(item) for item in items]
        return list(_threads.pool(min(budget, len(items))).map(work, items))
