"""The NumPy backend's threads: one pool, one thread budget shared with BLAS, one ``in_worker``.

Three runtimes can run lucid's CPU work in parallel: OpenBLAS's own threads (a GEMM), lucid's
pool of Python threads (chunks of a convolution, blocks of a big elementwise op, row blocks of
a big GEMM; NumPy and BLAS release the GIL) and numba's OpenMP threads (a compiled pass,
``_numba``). All of them take their thread count from the one budget here:
``set_num_threads`` (``torch.set_num_threads``), else the BLAS libraries' own setting.

After parallel work each runtime's threads spin on the cores for a while, and work handed to
another runtime then waits for them. So lucid remembers which runtime ran the last parallel
work (``blas_threads.last``) and sends the next work the same way: a mid-sized GEMM goes to
OpenBLAS's threads unless lucid's threads (the pool, numba's) ran last; a compiled pass splits
over numba's threads unless OpenBLAS's threads ran since numba's last split. The rules depend on
the order of the calls only, never on the clock (docs/performance.md, "One runtime at a time");
``set_num_threads`` starts them afresh.

Work inside the pool's threads (``in_worker``) runs inline on one BLAS thread: nothing nests.
The pool's threads are kept off the CPU of the thread that hands them work (``PLACE_WORKERS``),
which works beside them: a woken thread placed on its waker's CPU shared it for milliseconds.

A kernel that calls ``np.matmul`` itself in a loop of small products (a recurrent layer's
per-step ``h @ w``) runs the loop inside ``blas_threads.single_blas_thread()``: each product
would otherwise wake OpenBLAS's threads, which then spin through the rest of the step
(docs/performance.md, "Where the second core's time goes").
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

# Above this many FLOPs a GEMM or a chunked op pays for every thread (docs/performance.md).
# 20e6 was measured in session 15: LeNet-5 b64's step 0.91-0.96x at two threads with lucid
# alone in the process, but 1.35-1.49x torch's in tools/bench/train_step.py (torch loaded in
# the same process: lucid then used ~1.1 cores), so it stays 50e6.
PARALLEL_FLOPS = 50e6
# Elementwise ops (NumPy's ufuncs, which hold the GIL between blocks) split from this size on:
# below it, and on a loaded machine, the hand-off costs more than a second core saves
# (docs/performance.md, "BatchNorm and big elementwise ops on every core").
PARALLEL_ELEMENTS = 1 << 22
# Compiled passes (``lucid-core[numba]``) hold no GIL, so their blocks split from this size
# (docs/performance.md).
COMPILED_PARALLEL_ELEMENTS = 1 << 19

_CPUS = os.cpu_count() or 1  # a system call: once per process
_WORKER_PREFIX = "lucid-conv"  # the pool's thread names

Runtime = Literal["pool", "numba", "openblas"]
POOL: Runtime = "pool"  # lucid's pool of Python threads
NUMBA: Runtime = "numba"  # numba's threads (a compiled pass split by ``_numba.run_split``)
OPENBLAS: Runtime = "openblas"  # OpenBLAS's own threads

T = TypeVar("T")
R = TypeVar("R")


class _Local(threading.local):
    """Per thread: ``worker`` is True in the pool's threads (set as each starts) and in a caller
    while it takes chunks beside them (``run_chunks``)."""

    worker = False  # the class's value: every other thread reads False


_LOCAL = _Local()


def _mark_worker(owner: BlasThreads | None = None) -> None:
    """The pool's thread initializer: marks the thread as a worker and keeps it off the CPU the
    threads handing it work were last seen on (``BlasThreads.place_workers``)."""
    _LOCAL.worker = True
    if owner is not None:
        owner.add_worker(threading.get_native_id())


# The pool's threads are kept off the CPU of the thread that hands them work (its CPU when it
# last asked for the pool; the calling thread takes chunks itself, or runs a recurrence beside
# the pool's work). Linux may wake a thread on the CPU of the thread that woke it and move it
# to an idle one only at the next balancing tick: on the 2-vCPU VMs measured, the woken worker
# and the caller shared one CPU for 1-3 ms after most hand-offs (an LSTM layer's first step
# 2.6-2.9 ms instead of 0.1; a 0.37 ms compiled loop took 2.0 ms beside a 1.9 ms task handed
# just before it, 0.375 ms with the worker kept off the caller's CPU; docs/performance.md,
# issue 30). OpenMP's threads escape it by spinning between parallel regions. False: the
# threads go where the scheduler puts them.
PLACE_WORKERS = True


def _sched_getcpu() -> Callable[[], int] | None:
    """libc's ``sched_getcpu`` (None where there is none: not Linux, no ctypes)."""
    try:
        import ctypes

        f = ctypes.CDLL(None).sched_getcpu
        f.restype, f.argtypes = ctypes.c_int, []
        f()
    except (OSError, AttributeError, ImportError):
        return None
    return f


def in_worker() -> bool:
    """Whether this is one of the pool's threads, or a caller taking chunks beside them (whose
    work runs inline, on one BLAS thread). One thread-local read (the thread's name and a
    ``getattr`` were ~1.2 us, and products ask a few times each: issue 30)."""
    return _LOCAL.worker


class _SingleBlasThread:
    """``BlasThreads.single_blas_thread``'s context: one object, its state the owner's (a
    generator-made context cost ~3 us of the ~4.6 a use; products, attention heads and
    recurrent steps enter it thousands of times a step: issue 30)."""

    __slots__ = ("_owner",)

    def __init__(self, owner: BlasThreads) -> None:
        self._owner = owner

    def __enter__(self) -> None:
        o = self._owner
        knobs = o.knobs()
        with o._lock:
            if o._users == 0:
                o._saved = [get() for get, _ in knobs]
                for (_, set_), n in zip(knobs, o._saved):
                    if n != 1:
                        set_(1)
            o._users += 1

    def __exit__(self, *exc: object) -> None:
        o = self._owner
        knobs = o.knobs()
        with o._lock:
            o._users -= 1
            if o._users == 0:
                for (_, set_), n in zip(knobs, o._saved):
                    if n != 1:
                        set_(n)


class BlasThreads:
    """The thread budget, the BLAS libraries' thread settings (through threadpoolctl when
    installed), the pool, and which runtime ran the last parallel work."""

    def __init__(self) -> None:
        self._libs: list[Any] | None = None
        self._knobs: list[tuple[Callable[[], int], Callable[[int], Any]]] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = os.getpid()
        self._users = 0
        self._saved: list[int] = []
        self._requested: int | None = None  # set by set_num_threads
        self._lock = threading.Lock()
        self._tids: list[int] = []  # the pool's threads' native ids (``add_worker``)
        self._off: int | None = None  # the CPU the pool's threads are kept off (None: none)
        # libc's sched_getcpu (None: none, or no sched_setaffinity to act on what it says)
        self._getcpu = _sched_getcpu() if hasattr(os, "sched_setaffinity") else None
        self.last: Runtime | None = None  # the runtime of the last parallel work (None: none yet)
        self.openblas_after_numba = False  # OpenBLAS's threads ran since numba's last split
        # numba's OpenMP threads spin after a split: the runtime was started before lucid could
        # ask it to let them sleep (torch imported first, sharing the process's libgomp), or
        # the user asked for spinning (set by ``_numba``; docs/performance.md)
        self.omp_spins = False
        self.last_split: str | None = None  # the name of numba's last split (``_numba``)
        # Where numba's threads spin: the splits after which lucid's pool ran next (its threads
        # then wait for the spinners to let go of the cores), which run on one thread from then on
        self.pool_follows: set[str] = set()
        # Work left running on the pool past the call that started it (``_gemm.matmul_defer``):
        # while any is, numba's splits run on the calling thread (the pool's thread holds the
        # other core)
        self.in_flight: list[Any] = []
        self._single = _SingleBlasThread(self)

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

    def knobs(self) -> list[tuple[Callable[[], int], Callable[[int], Any]]]:
        """``(get, set)`` of each BLAS library's thread count: OpenBLAS's own C functions where
        it runs on pthreads (threadpoolctl's properties look the symbol up on every call, ~1 us
        each, and lucid asks a few dozen times a step: docs/performance.md), else
        threadpoolctl's."""
        if self._knobs is None:
            knobs = []
            for lib in self.libs():
                get = set_ = None
                symbol = getattr(lib, "_get_symbol", None)  # threadpoolctl's, not public
                pthreads = getattr(lib, "threading_layer", None) == "pthreads"
                if symbol is not None and lib.internal_api == "openblas" and pthreads:
                    get = symbol("openblas_get_num_threads")
                    set_ = symbol("openblas_set_num_threads")
                if get is None or set_ is None:
                    get, set_ = (lambda lib=lib: lib.num_threads), lib.set_num_threads
                knobs.append((get, set_))
            self._knobs = knobs
        return self._knobs

    def budget(self) -> int:
        """How many threads the user's setting allows: ``set_num_threads``, else the BLAS
        libraries' own setting (1 without threadpoolctl)."""
        if self._requested is not None:
            return max(1, min(self._requested, _CPUS))
        knobs = self._knobs if self._knobs is not None else self.knobs()
        if not knobs:
            return 1
        if self._users and self._saved:
            # Inside ``single_blas_thread`` the libraries say 1: the setting is the saved one.
            n = int(min(self._saved))
        elif len(knobs) == 1:
            n = int(knobs[0][0]())  # one library (the usual case): no list to build
        else:
            n = int(min(get() for get, _ in knobs))
        return 1 if n < 1 else (n if n < _CPUS else _CPUS)

    def set_budget(self, n: int) -> None:
        """Run on ``n`` threads: every BLAS library's setting and the pool's size."""
        with self._lock:
            self._requested = n
            self.last, self.openblas_after_numba = None, False  # the runtimes' rules afresh
            self.pool_follows.clear()
            if self._users:  # inside single_blas_thread: the last one out restores n
                self._saved = [n] * len(self._saved)
                return
            for _, set_ in self.knobs():
                set_(n)

    def requested(self) -> int:
        """The thread count set by ``set_budget``, else what ``budget`` allows."""
        return self.budget() if self._requested is None else self._requested

    def single_blas_thread(self) -> _SingleBlasThread:
        """One BLAS thread inside (``with blas_threads.single_blas_thread():``); the setting is
        restored when the last user leaves (several Python threads may be inside at once)."""
        return self._single

    def pool_busy(self) -> bool:
        """Whether work left running on the pool (``in_flight``) has not finished yet."""
        return any(not f.done() for f in self.in_flight)

    def ran(self, runtime: Runtime) -> None:
        """Parallel work just ran on ``runtime``'s threads (they may spin on the cores now)."""
        self.last = runtime
        if runtime != POOL:
            self.openblas_after_numba = runtime == OPENBLAS

    def openblas_may_run(self) -> bool:
        """Whether a product may go to OpenBLAS's own threads: lucid's threads (the pool,
        numba's) did not run the last parallel work, and this is not one of the pool's threads."""
        return self.last not in (POOL, NUMBA) and not in_worker()

    def numba_may_split(self) -> bool:
        """Whether a compiled pass may split over numba's threads: OpenBLAS's threads have not
        run parallel work since numba's last split (their spin would hold numba's cores)."""
        return not self.openblas_after_numba

    def threads_here(self) -> int:
        """How many threads work split from this thread may use: the budget, or 1 inside the
        pool's threads (nothing nests)."""
        return 1 if in_worker() else self.budget()

    def map_ranges(
        self, work: Callable[[tuple[int, int]], R], ranges: Sequence[tuple[int, int]]
    ) -> list[R]:
        """``[work(r) for r in ranges]``, the calling thread and the pool's taking the ranges in
        turn (``map_blocks`` at any size): for a few coarse parts of one op, e.g. an attention
        call's batch in halves (lucid-nn), whose NumPy calls release the GIL."""
        return map_blocks(work, ranges, 1, 0)

    def add_worker(self, tid: int) -> None:
        """A new pool thread ``tid`` (in its initializer): kept off the CPU the others are."""
        with self._lock:
            self._tids.append(tid)
            off = self._off
        if off is not None:
            self._keep_off([tid], off)

    @staticmethod
    def _keep_off(tids: list[int], cpu: int) -> bool:
        """Threads ``tids`` allowed on every CPU this process may use but ``cpu``; False where
        that leaves none or the system refuses (a thread that has exited is skipped)."""
        try:
            others = os.sched_getaffinity(0) - {cpu}
        except OSError:
            return False
        if not others:
            return False
        done = True
        for tid in tids:
            try:
                os.sched_setaffinity(tid, others)
            except OSError:  # the thread has exited, or a sandbox refuses
                done = False
        return done

    def place_workers(self) -> None:
        """Keep the pool's threads off the calling thread's CPU (``PLACE_WORKERS``): one libc
        call, and a system call per thread where that CPU changed since the last time."""
        getcpu = self._getcpu
        if getcpu is None or not PLACE_WORKERS:
            return
        cpu = getcpu()
        if cpu < 0 or cpu == self._off:
            return
        with self._lock:
            tids = list(self._tids)
            self._off = cpu
        self._keep_off(tids, cpu)

    def pool(self, workers: int) -> ThreadPoolExecutor:
        """The thread pool of ``workers`` threads (new after a fork); asking for it counts as
        parallel work on lucid's threads.

        Callers ask for the thread budget; a pool of another size replaces the old one, whose
        idle threads are told to exit (a pool per size would pile up threads).
        """
        if self.omp_spins and self.last == NUMBA and self.last_split is not None:
            self.pool_follows.add(self.last_split)
        self.last = POOL
        with self._lock:
            # A forked child inherits the pool object but not its threads: make a new one.
            stale = self._pool_pid != os.getpid()
            if self._pool is None or stale or self._pool._max_workers != workers:
                if self._pool is not None and not stale:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(
                    workers,
                    thread_name_prefix=_WORKER_PREFIX,
                    initializer=_mark_worker,
                    initargs=(self,),
                )
                self._pool_pid = os.getpid()
                self._tids, self._off = [], None
            pool = self._pool
        self.place_workers()
        return pool


blas_threads = BlasThreads()


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for lucid's CPU work (``torch.set_num_threads``): the BLAS libraries'
    threads (through threadpoolctl when installed), lucid's pool and numba's threads."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n}")
    blas_threads.set_budget(n)


def get_num_threads() -> int:
    """The thread count lucid's CPU work uses (``torch.get_num_threads``)."""
    return blas_threads.requested()


def workers() -> int:
    """How many threads a big op uses: the thread budget (1 without threadpoolctl)."""
    return blas_threads.budget()


def workers_for(elements: int, threshold: int | None = None) -> int:
    """How many threads an op over ``elements`` elements uses (1: run it inline); ``threshold``
    replaces ``PARALLEL_ELEMENTS`` (work that runs without the GIL splits at smaller sizes)."""
    if elements < (PARALLEL_ELEMENTS if threshold is None else threshold) or in_worker():
        return 1
    return workers()


def blocks(n: int, per: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(n)`` in steps of ``per`` (at least 1)."""
    step = max(1, per)
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def batch_chunks(n: int, per: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ranges of about ``per`` (at least 1): as many as ``per`` asks for,
    rounded up to a multiple of the workers and near-equal in size, so that every worker gets
    the same share (a worker with one chunk more than the others makes them wait). One range
    stays one."""
    count = -(-n // max(1, per))
    if count > 1:
        k = workers()
        count = min(n, -(-count // k) * k)
    return [(n * i // count, n * (i + 1) // count) for i in range(count)]


def run_chunks(work: Callable[[T], R], items: Sequence[T], flops: float) -> list[R]:
    """``[work(item) for item in items]``, on a thread per core with one-thread BLAS each (the
    caller one of them: ``CHUNKS_ON_CALLER``).

    Small work (under ``PARALLEL_FLOPS``) runs inline, its products on the threads
    ``_gemm.matmul`` picks; a single big item runs inline with the BLAS threads as set.
    """
    if in_worker():
        return [work(item) for item in items]  # already inside a worker
    if len(items) == 1 and flops >= PARALLEL_FLOPS:
        blas_threads.ran(OPENBLAS)
        return [work(items[0])]
    budget = blas_threads.budget()
    if flops < PARALLEL_FLOPS:  # inline; its products choose their BLAS threads
        return [work(item) for item in items]
    with blas_threads.single_blas_thread():
        if budget == 1 or len(items) == 1:
            return [work(item) for item in items]
        if CHUNKS_ON_CALLER:
            return _chunks_with_caller(work, items, budget)
        return list(blas_threads.pool(budget).map(work, items))


# The calling thread takes chunks beside ``budget - 1`` of the pool's threads, instead of
# waiting while ``budget`` of them work: one thread fewer to wake per convolution, and the
# caller is already on a core (docs/performance.md, "The ResNet step's serial part"). False:
# the pool's threads alone, as before.
CHUNKS_ON_CALLER = True


def _chunks_with_caller(work: Callable[[T], R], items: Sequence[T], budget: int) -> list[R]:
    """``[work(item) for item in items]``, the items taken in turn by the calling thread (as a
    worker: ``in_worker``) and ``budget - 1`` of the pool's threads."""
    results: list[Any] = [None] * len(items)
    counter = itertools.count()  # next() on it is atomic under the GIL

    def drain() -> None:
        i = next(counter)
        while i < len(items):
            results[i] = work(items[i])
            i = next(counter)

    pool = blas_threads.pool(budget)
    futures = [pool.submit(drain) for _ in range(min(budget, len(items)) - 1)]
    was = _LOCAL.worker
    _LOCAL.worker = True
    try:
        drain()
    finally:
        _LOCAL.worker = was
        for f in futures:
            f.result()  # re-raises a worker's error
    return results


def map_blocks(
    work: Callable[[tuple[int, int]], R],
    ranges: Sequence[tuple[int, int]],
    elements: int,
    threshold: int | None = None,
) -> list[R]:
    """``[work(r) for r in ranges]``; for ``elements`` past the threshold the calling thread and
    the pool's workers take the ranges in turn."""
    k = min(workers_for(elements, threshold), len(ranges))
    if k <= 1:
        return [work(r) for r in ranges]
    results: list[Any] = [None] * len(ranges)
    counter = itertools.count()  # next() on it is atomic under the GIL

    def drain() -> None:
        i = next(counter)
        while i < len(ranges):
            results[i] = work(ranges[i])
            i = next(counter)

    pool = blas_threads.pool(workers())
    futures = [pool.submit(drain) for _ in range(k - 1)]
    try:
        drain()
    finally:
        for f in futures:
            f.result()  # re-raises a worker's error
    return results
