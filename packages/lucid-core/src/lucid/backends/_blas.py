"""BLAS threads and GEMM shapes for the NumPy backend: the one home of the BLAS policy.

OpenBLAS wakes all its threads for any GEMM past a tiny size. For the narrow GEMMs of small
models (LeNet's 64 x 400 x 120) one thread is faster than two, and on a loaded machine the
waiting threads make a 0.1 ms GEMM take tens of milliseconds. Big GEMMs (ResNet) gain from
every thread, but OpenBLAS's threads spin for a while after each threaded call, holding the
cores that the kernels' pool threads need next. So lucid never runs a GEMM on OpenBLAS's
threads: ``matmul`` runs every product on one BLAS thread (the switch costs about 3 us), and
splits big ones (``PARALLEL_FLOPS`` and up) into row or column blocks on the pool below.

The convolution kernels (``_numpy/kernels``) also copy (im2col, col2im), and NumPy copies run
on one core. So they cut the batch into cache-sized chunks and ``run_chunks`` runs them on a
small pool of Python threads (NumPy and BLAS release the GIL), each calling a one-thread BLAS:
every core then does copies and GEMMs alike. Small work runs inline on one BLAS thread, where
thread wake-ups would cost more than they save. A GEMM whose inner dimension is huge and whose
result is tiny (a weight gradient ``col^T @ dy`` with 50,000 rows and a 25 x 6 result) runs far
below peak in every BLAS; ``tn_matmul`` does it as one batched matmul over row blocks and a sum.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

# OpenBLAS runs products below about this many FLOPs on one thread by itself.
_TINY_FLOPS = 2 * 64**3
# Above this many FLOPs every BLAS thread pays for itself.
PARALLEL_FLOPS = 50e6
# Matrix products from this many FLOPs up to PARALLEL_FLOPS run on OpenBLAS's own threads while
# lucid's pool has been idle for POOL_IDLE_S: a small model's products (LeNet-5's are 2-30
# MFLOP, N = 6..150), where nothing of lucid's runs beside them for their threads' spin to slow
# down. A LeNet-5 train step at the defaults: 13.8 -> 11.6 ms (2 cores, medians of 9
# interleaved rounds; CPU time 13.8 -> 22.7 ms: the spin). While the pool is busy (ResNet's
# convolutions) they stay on one thread: the same rule without the pool test made a ResNet-18
# step 16% slower (its Winograd weight transforms, 2-9 MFLOP, left spinners on the pool's cores).
THREADED_FLOPS = 2e6
POOL_IDLE_S = 0.5
# How long OpenBLAS's threads spin after a threaded call (about 2^28 cycles): a compiled pass
# split over numba's threads (``_winograd_jit.split_threads``) waits that long after one, and a
# product stays on one BLAS thread for POOL_IDLE_S after such a pass. Either spinning while the
# other wants its core cost a whole scheduler time slice: ~8 ms for a 0.5 ms im2col + GEMM.
BLAS_SPIN_S = 0.2
_CPUS = os.cpu_count() or 1  # os.cpu_count() is a system call: once per process
# Row block for the batched form of a long, narrow ``a^T @ b``.
_BLOCK_ROWS = 1024
# Use the batched form when the result has at most this many elements.
_SMALL_RESULT = 64 * 64

T = TypeVar("T")
R = TypeVar("R")


class BlasThreads:
    """The BLAS libraries' thread settings (through threadpoolctl when installed) and a pool."""

    def __init__(self) -> None:
        self._libs: list[Any] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = os.getpid()
        self._users = 0
        self._saved: list[int] = []
        self._requested: int | None = None  # set by lucid.set_num_threads
        self._lock = threading.Lock()
        self._pool_used = -POOL_IDLE_S  # time.monotonic() of the last pool() call (or split)
        self._threaded_at = -BLAS_SPIN_S  # time.monotonic() of the last threaded BLAS call

    def libs(self) -> list[Any]:
        """The BLAS libraries threadpoolctl found in this process (empty without it)."""
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController

                ctl = ThreadpoolController().select(user_api="blas")
                self._libs = [lib for lib in ctl.lib_controllers if lib.num_threads]
            except Exception:  # noqa: BLE001  (no threadpoolctl, or a BLAS it can't drive)
                self._libs = []
        return self._libs

    def budget(self) -> int:
        """How many threads the user's setting allows: ``lucid.set_num_threads``, else the BLAS
        libraries' own setting (1 without threadpoolctl)."""
        if self._requested is not None:
            return max(1, min(self._requested, _CPUS))
        libs = self.libs()
        if not libs:
            return 1
        # Inside ``single_blas_thread`` the libraries say 1: the setting is the saved one.
        counts = self._saved if self._users and self._saved else [lib.num_threads for lib in libs]
        return max(1, min(int(min(counts)), _CPUS))

    def set_budget(self, n: int) -> None:
        """Run on ``n`` threads: every BLAS library's setting and the chunk workers' count."""
        with self._lock:
            self._requested = n
            if self._users:  # inside single_blas_thread: the last one out restores n
                self._saved = [n] * len(self._saved)
                return
            for lib in self.libs():
                lib.set_num_threads(n)

    def requested(self) -> int:
        """The thread count set by ``set_budget``, else what ``budget`` allows."""
        return self.budget() if self._requested is None else self._requested

    @contextlib.contextmanager
    def single_blas_thread(self) -> Iterator[None]:
        """One BLAS thread inside; the setting is restored when the last user leaves (several
        Python threads may be inside at once)."""
        libs = self.libs()
        with self._lock:
            if self._users == 0:
                self._saved = [lib.num_threads for lib in libs]
                for lib in libs:
                    if lib.num_threads != 1:
                        lib.set_num_threads(1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    for lib, n in zip(libs, self._saved):
                        if n != 1:
                            lib.set_num_threads(n)

    def pool_idle(self) -> bool:
        """Whether the kernels' pool has not been asked for in the last ``POOL_IDLE_S`` (and
        this is not one of its threads)."""
        return time.monotonic() - self._pool_used >= POOL_IDLE_S and not _in_worker()

    def busy(self) -> None:
        """lucid's own threads are in use (a pass split over numba's threads just ran)."""
        self._pool_used = time.monotonic()

    def threaded(self) -> None:
        """A product runs on OpenBLAS's own threads now (they spin for BLAS_SPIN_S after)."""
        self._threaded_at = time.monotonic()

    def blas_spinning(self) -> bool:
        """Whether OpenBLAS's threads may still be spinning after a threaded product."""
        return time.monotonic() - self._threaded_at < BLAS_SPIN_S

    def pool(self, workers: int) -> ThreadPoolExecutor:
        """The thread pool of ``workers`` threads for the kernels (new after a fork).

        Callers ask for the thread budget; a pool of another size replaces the old one, whose
        idle threads are told to exit (a pool per size would pile up threads).
        """
        self._pool_used = time.monotonic()
        with self._lock:
            # A forked child inherits the pool object but not its threads: make a new one.
            stale = self._pool_pid != os.getpid()
            if self._pool is None or stale or self._pool._max_workers != workers:
                if self._pool is not None and not stale:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(workers, thread_name_prefix="lucid-conv")
                self._pool_pid = os.getpid()
            return self._pool


blas_threads = BlasThreads()


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for lucid's CPU work (``torch.set_num_threads``): the BLAS libraries'
    threads (through threadpoolctl when installed) and the convolution kernels' workers."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    blas_threads.set_budget(n)


def get_num_threads() -> int:
    """The thread count lucid's CPU work uses (``torch.get_num_threads``)."""
    return blas_threads.requested()


# Dtypes BLAS has no GEMM for (float16; bfloat16 once ml_dtypes is loaded): their products run
# in float32 and are rounded back, as CPU half-precision GEMMs accumulate (NumPy's own float16
# loop is ~100x slower and ml_dtypes' bfloat16 matmul returns float32).
GEMM_IN_FLOAT32: set[Any] = {np.dtype(np.float16)}


def _product(a: Any, b: Any) -> tuple[int, int, float]:
    """``a @ b``'s rows, columns and FLOPs (a vector operand counts as one row or column)."""
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    return m, n, 2.0 * max(a.size * n, b.size * m)


def matmul(a: Any, b: Any, out: Any = None, **kwargs: Any) -> Any:
    """``numpy.matmul``: big products split on lucid's pool, mid-sized ones (from
    ``THREADED_FLOPS``) on OpenBLAS's threads outside the pool, the rest on one BLAS thread."""
    if a.dtype in GEMM_IN_FLOAT32 or b.dtype in GEMM_IN_FLOAT32:
        return _matmul_in_float32(a, b, out, **kwargs)
    if kwargs or a.ndim == 0 or b.ndim == 0:
        return np.matmul(a, b, out=out, **kwargs)
    if out is not None:
        if _in_worker():  # a chunk on the pool: one BLAS thread already (``run_chunks``)
            return np.matmul(a, b, out=out)
        np.copyto(out, matmul(a, b))  # the threads chosen as for any other product
        return out
    m, n, flops = _product(a, b)
    if flops <= _TINY_FLOPS:
        return np.matmul(a, b)
    budget = blas_threads.budget()
    if budget == 1:
        return np.matmul(a, b)
    if flops >= PARALLEL_FLOPS and not _in_worker():
        split = _split_matmul(a, b, m, n, budget)
        if split is not None:
            return split
    elif flops >= THREADED_FLOPS and m > 1 and n > 1:
        if blas_threads.pool_idle():
            blas_threads.threaded()
            return np.matmul(a, b)  # OpenBLAS's threads (one, inside single_blas_thread)
        split = _compiled_matmul(a, b, flops)
        if split is not None:
            return split
    with blas_threads.single_blas_thread():
        return np.matmul(a, b)


def pool_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for kernels whose next step runs on lucid's pool (a convolution's weight
    transform, its chunks next): big products split on the pool as ``matmul`` does, the rest on
    one BLAS thread, never on numba's or OpenBLAS's threads. After a parallel region numba's
    OpenMP threads spin for a while (GNU OpenMP's default wait policy) on the cores the pool's
    threads then wait for: a ResNet-18-CIFAR b128 step 1.50-1.70 -> 1.42-1.60 s with them
    made to sleep at once (OMP_WAIT_POLICY=PASSIVE, three alternating runs), the effect of its
    15 split weight transforms a step; the passive policy itself made LeNet-5 20% slower."""
    if _in_worker() or a.ndim < 2 or b.ndim < 2:
        return matmul(a, b)
    if _product(a, b)[2] < PARALLEL_FLOPS or blas_threads.budget() == 1:
        with blas_threads.single_blas_thread():
            return np.matmul(a, b)
    return matmul(a, b)


def _compiled_matmul(a: Any, b: Any, flops: float) -> Any:
    """``a @ b`` split over numba's threads (``kernels._gemm_jit``) where the compiled kernels
    are in use in this process (their passes just ran on those threads, so OpenBLAS's threads
    and lucid's pool would wait for them to let go of the cores); else None."""
    if a.ndim != 2 or b.ndim != 2:
        return None
    from lucid.backends._numpy.kernels import _compiled

    if not _compiled.in_use():
        return None
    gemm = _compiled.load("_gemm_jit")
    return None if gemm is None else gemm.matmul(a, b, flops)


def _in_worker() -> bool:
    return threading.current_thread().name.startswith("lucid-conv")


def _split_matmul(a: Any, b: Any, m: int, n: int, k: int) -> Any:
    """A big ``a @ b`` as ``k`` row (else column) blocks on the pool, one BLAS thread each.

    lucid never runs a GEMM on OpenBLAS's own threads: after a threaded call they spin for a
    while, holding the cores the kernels' pool threads need next (a ResNet-18 step spent
    ~12% more wall time, ~15% more CPU, with its few big GEMMs threaded by OpenBLAS).
    """
    if a.ndim < 2 or b.ndim < 2:
        return None  # matrix-vector products are memory-bound: one thread
    if m >= 2 * k:
        axis, size = -2, m
    elif n >= 2 * k:
        axis, size = -1, n
    else:
        return None
    shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), m, n)
    out = np.empty(shape, dtype=np.result_type(a.dtype, b.dtype))
    step = -(-size // k)
    cuts = [(s, min(size, s + step)) for s in range(0, size, step)]

    def part(r: tuple[int, int]) -> None:
        sl = slice(*r)
        if axis == -2:
            np.matmul(a[..., sl, :], b, out=out[..., sl, :])
        else:
            np.matmul(a, b[..., :, sl], out=out[..., :, sl])

    with blas_threads.single_blas_thread():
        pool = blas_threads.pool(k)
        futures = [pool.submit(part, r) for r in cuts[1:]]
        try:
            part(cuts[0])
        finally:
            for f in futures:
                f.result()
    return out


def _matmul_in_float32(a: Any, b: Any, out: Any = None, **kwargs: Any) -> Any:
    result = np.result_type(a.dtype, b.dtype)
    product = matmul(a.astype(np.float32), b.astype(np.float32), **kwargs).astype(result)
    if out is None:
        return product
    np.copyto(out, product)
    return out


def tn_matmul(a: Any, b: Any) -> Any:
    """``a.T @ b`` for ``a: (rows, K)``, ``b: (rows, M)``."""
    rows, k = a.shape
    m = b.shape[1]
    flops = 2.0 * rows * k * m
    if THREADED_FLOPS <= flops < PARALLEL_FLOPS:  # (split_threads says 1 in a pool worker)
        split = _compiled_matmul(a.T, b, flops)
        if split is not None:
            return split
    blocks = rows // _BLOCK_ROWS
    if k * m > _SMALL_RESULT or blocks < 2:
        return matmul(a.T, b)
    main = blocks * _BLOCK_ROWS
    ab = np.transpose(np.reshape(a[:main], (blocks, _BLOCK_ROWS, k)), (0, 2, 1))
    bb = np.reshape(b[:main], (blocks, _BLOCK_ROWS, m))
    out = np.sum(matmul(ab, bb), axis=0)
    if main < rows:
        out = out + matmul(a[main:].T, b[main:])
    return out


def workers() -> int:
    """How many chunk workers a big op uses: the BLAS thread setting (1 without threadpoolctl)."""
    return blas_threads.budget()


def batch_chunks(n: int, per: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ranges of about ``per`` (at least 1): as many as ``per`` asks for,
    rounded up to a multiple of the workers and near-equal in size, so that every worker gets
    the same share (128 samples in chunks of 28 were 28, 28, 28, 28, 16: one worker took three,
    the other two, and waited a sixth of the op). One range stays one."""
    count = -(-n // max(1, per))
    if count > 1:
        k = workers()
        count = min(n, -(-count // k) * k)
    return [(n * i // count, n * (i + 1) // count) for i in range(count)]


def run_chunks(work: Callable[[T], R], items: Sequence[T], flops: float) -> list[R]:
    """``[work(item) for item in items]``, on a thread per core with one-thread BLAS each.

    Small work (under ``PARALLEL_FLOPS``) runs inline, its products on the threads ``matmul``
    picks; a single big item runs inline with the BLAS threads as set.
    """
    if _in_worker():
        return [work(item) for item in items]  # already inside a worker
    if len(items) == 1 and flops >= PARALLEL_FLOPS:
        blas_threads.threaded()
        return [work(items[0])]
    budget = blas_threads.budget()
    if flops < PARALLEL_FLOPS:  # inline; its products choose their BLAS threads (``matmul``)
        return [work(item) for item in items]
    with blas_threads.single_blas_thread():
        if budget == 1 or len(items) == 1:
            return [work(item) for item in items]
        return list(blas_threads.pool(budget).map(work, items))
