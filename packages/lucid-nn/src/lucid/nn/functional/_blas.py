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

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Row block for the batched form of a long, narrow ``a^T @ b``.
_BLOCK_ROWS = 1024
# Use the batched form when the result has at most this many elements.
_SMALL_RESULT = 64 * 64
# Below this many FLOPs per call, one thread does the whole op (no pool, one BLAS thread).
_PARALLEL_FLOPS = 50e6


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


# -- threads -------------------------------------------------------------------------------------
class _Threads:
    """The BLAS libraries' thread settings (through threadpoolctl when installed) and a pool."""

    def __init__(self) -> None:
        self._libs: list[Any] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = os.getpid()
        self._users = 0
        self._saved: list[int] = []
        self._lock = threading.Lock()

    def libs(self) -> list[Any]:
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController

                ctl = ThreadpoolController().select(user_api="blas")
                self._libs = [lib for lib in ctl.lib_controllers if lib.num_threads]
            except Exception:  # noqa: BLE001  (no threadpoolctl, or a BLAS it can't drive)
                self._libs = []
        return self._libs

    def budget(self) -> int:
        """How many threads the user's BLAS setting allows (1 without threadpoolctl)."""
        libs = self.libs()
        if not libs:
            return 1
        return max(1, min(int(min(lib.num_threads for lib in libs)), os.cpu_count() or 1))

    @contextlib.contextmanager
    def single_blas_thread(self) -> Iterator[None]:
        """One BLAS thread inside; the setting is restored when the last user leaves (several
        Python threads may run convolutions at once)."""
        libs = self.libs()
        with self._lock:
            if self._users == 0:
                self._saved = [lib.num_threads for lib in libs]
                for lib in libs:
                    lib.set_num_threads(1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    for lib, n in zip(libs, self._saved):
                        lib.set_num_threads(n)

    def pool(self, workers: int) -> ThreadPoolExecutor:
        with self._lock:
            # A forked child inherits the pool object but not its threads: make a new one.
            stale = self._pool_pid != os.getpid()
            if self._pool is None or stale or self._pool._max_workers != workers:
                self._pool = ThreadPoolExecutor(workers, thread_name_prefix="lucid-conv")
                self._pool_pid = os.getpid()
            return self._pool


_threads = _Threads()


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
