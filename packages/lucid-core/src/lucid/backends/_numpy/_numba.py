"""The numba runtime of the compiled kernels (``lucid-core[numba]``): how they are compiled and
on which threads they run. Imported only by the ``kernels/_*_jit.py`` modules, which
``_compiled.load`` imports where numba is installed and enabled (``lucid.backends.cpu``).

Compiling: ``jit`` (serial loops) and ``jit_parallel`` (``numba.prange`` loops on numba's
threads) compile without the GIL (``nogil``), so the pool's threads run compiled passes side by
side, without fast-math (the results are the NumPy code's, bit for bit, where tested so), cached
on disk. The arrays are compiled as not aliasing each other (``NoAliasCompiler``: numba's own
flag, which it sets for its parallel loops): without it LLVM must assume a store to ``out`` may
change the input and does not vectorise the channel loop (docs/performance.md). Every caller
passes a freshly allocated ``out``. ``specialised`` compiles loops whose sizes are compile-time
constants, once per process.

Threads: a compiled pass over the batch may split over numba's threads (``run``): one call from
Python, a fork-join in native code, far cheaper than a hand-off to lucid's Python pool. Only
with a thread-safe layer (OpenMP or TBB; numba's own "workqueue" is slow and must not be entered
from two threads at once), in the process that first used it (GNU OpenMP is not fork-safe), from
outside lucid's pool, on the thread budget of ``_parallel``, unless OpenBLAS's threads ran
parallel work since numba's last split (``_parallel``), and only for passes of
``SPLIT_ELEMENTS`` and more (``split_threads``; the state is ``thread_layer``).
"""

from __future__ import annotations

import ctypes
import os
import threading
import types
from typing import Any

import numba
import numpy as np
from numba.core.compiler import CompilerBase, DefaultPassBuilder

from lucid.backends._numpy import _parallel
from lucid.backends._numpy._parallel import NUMBA, blas_threads


class NoAliasCompiler(CompilerBase):
    """numba's nopython pipeline with the ``noalias`` flag on (array arguments never overlap)."""

    def define_pipelines(self) -> list[Any]:
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]  # type: ignore[no-untyped-call]


# Serial loops: no GIL, no fast-math, cached on disk, arrays not aliasing.
jit = numba.njit(nogil=True, cache=True, fastmath=False, pipeline_class=NoAliasCompiler)

# The same with NumPy's error model: a division by zero gives inf/NaN instead of Python's check,
# a branch per division that keeps LLVM from vectorising an elementwise loop (docs/performance.md).
jit_math = numba.njit(
    nogil=True, cache=True, fastmath=False, error_model="numpy", pipeline_class=NoAliasCompiler
)

# The same, with ``numba.prange`` loops run on numba's threads.
jit_parallel = numba.njit(
    nogil=True, cache=True, fastmath=False, parallel=True, pipeline_class=NoAliasCompiler
)

# Indices cast to unsigned: numba then skips its negative-index wraparound, a branch per access
# that keeps LLVM from vectorising a copy (docs/performance.md).
U = np.uint64

compiled: dict[str, Any] = {}  # name -> the function ``specialised`` compiled under that name
_compile_lock = threading.Lock()


def specialised(
    name: str,
    make: Any,
    *constants: Any,
    parallel: bool = False,
    inner: Any = None,
    decorator: Any = None,
) -> Any:
    """The function ``make(*constants)`` returns, compiled as ``jit`` does under ``name``, made
    once per process (a lock: the pool's threads may ask at once). For loops whose sizes are
    compile-time constants in their closure; numba caches each on disk under its qualified
    name, keyed by its closure's values too. ``parallel``: compiled as ``jit_parallel`` (its
    ``numba.prange`` loops on numba's threads). ``inner``: a compiled function the made one
    calls as its global ``inner`` (a global, not a closure value: numba keys its disk cache on
    the pickled closure, and a pickled dispatcher differs from process to process).
    ``decorator``: another numba decorator to compile with (fast-math reductions)."""
    fn = compiled.get(name)
    if fn is None:
        with _compile_lock:
            fn = compiled.get(name)
            if fn is None:
                py = make(*constants)
                if inner is not None:
                    py = types.FunctionType(py.__code__, {**py.__globals__, "inner": inner},
                                            name, py.__defaults__, py.__closure__)  # fmt: skip
                py.__name__ = py.__qualname__ = name
                fn = compiled[name] = (decorator or (jit_parallel if parallel else jit))(py)
    return fn


# Passes over fewer elements run serially: the fork-join costs more than it saves
# (docs/performance.md).
SPLIT_ELEMENTS = 1 << 15


class ThreadLayer:
    """numba's threading layer as lucid uses it: ``ok`` (None until the first split, then
    whether the layer is thread-safe) and ``pid`` (the process that first split: the only one
    that splits)."""

    __slots__ = ("ok", "pid")

    def __init__(self) -> None:
        self.ok: bool | None = None
        self.pid: int | None = None


thread_layer = ThreadLayer()
_numba_threads = threading.local()  # .k: the count ``split_threads`` last set on this thread


def split_threads(elements: int) -> int:
    """How many of numba's threads a compiled pass over ``elements`` elements should use (1:
    run the serial version)."""
    if elements < SPLIT_ELEMENTS or thread_layer.ok is False:
        return 1
    k = _parallel.workers()
    if k <= 1 or _parallel.in_worker() or not blas_threads.numba_may_split():
        return 1
    pid = os.getpid()
    if thread_layer.pid is None:
        thread_layer.pid = pid
    elif thread_layer.pid != pid:
        return 1
    k = min(k, int(getattr(numba.config, "NUMBA_NUM_THREADS", 1)))
    if thread_layer.ok is None:
        _sleeping_omp_threads()  # before get_num_threads starts the threading layer
    # numba's count is a per-thread setting; asking numba costs ~1 us, so lucid remembers the
    # count it set on this thread (docs/performance.md)
    if getattr(_numba_threads, "k", 0) != k:
        if numba.get_num_threads() != k:
            numba.set_num_threads(k)
        _numba_threads.k = k
    return k


def run(name: str, serial: Any, make_split: Any, args: Any, elements: int) -> None:
    """``serial(*args)``, a compiled pass over ``elements`` elements, split over numba's threads
    (``make_split``, compiled under ``name + "_split"``) where ``split_threads`` says so."""
    k = split_threads(elements)
    if k == 1:
        serial(*args)
    else:
        run_split(name + "_split", make_split, serial, args, k)


# Where lucid picks the policy on a machine that is not loaded (below), numba's OpenMP threads
# spin this many times after a split before they sleep (GNU's ``GOMP_SPINCOUNT``: ~0.1-0.5 ms):
# a sleeping thread's wake-up cost more than a small split saved (LeNet-5 b64 at two threads:
# 7.0 -> 4.7 ms a step, the GPT -9%, the LSTM -3..6%; at load 5, +25%: docs/performance.md,
# issue 30). 0: always the passive policy.
SPIN_COUNT = 10_000
# The variables lucid set for GNU OpenMP to read when it loads, taken out again once numba's
# threads have started (so that child processes decide for themselves).
_set_for_openmp: list[str] = []


# Set in the processes of a multi-process job (MPI's launchers, torchrun): its ranks share the
# cores, where spinning threads of one take the core another's next pass needs.
_RANK_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS",
                   "SLURM_NTASKS", "WORLD_SIZE", "LOCAL_WORLD_SIZE")  # fmt: skip


def _machine_quiet() -> bool:
    """Whether this process looks like the only busy one: the 1-minute load average is below
    the cores it may use, no other task is running right now (``/proc/loadavg``'s running
    count), and it is neither a ``multiprocessing`` child nor a rank of a multi-process job
    (two processes whose threads spin on two cores took twice as long a LeNet-5 step as with
    sleeping threads: docs/performance.md)."""
    import multiprocessing  # noqa: PLC0415  (only here: the decision is made once)

    if multiprocessing.parent_process() is not None or any(
        v in os.environ for v in _RANK_VARIABLES
    ):
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        if os.getloadavg()[0] >= cores:
            return False
        with open("/proc/loadavg") as f:  # "0.52 0.61 0.70 2/345 6789": running/all tasks
            running = int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return False
    return running <= 1  # this thread itself


def _sleeping_omp_threads() -> None:
    """Before numba's threading layer first starts (its OpenMP runtime reads the variables when
    it loads), unless the user chose a policy or a spin count: on a machine that is not loaded
    (``_machine_quiet``) its threads spin ``SPIN_COUNT`` times after a pass before they sleep
    (``OMP_WAIT_POLICY=ACTIVE``, ``GOMP_SPINCOUNT``), else they sleep at once
    (``OMP_WAIT_POLICY=PASSIVE``). Spinning threads on a loaded machine take the cores the next
    pass needs: a LeNet-5 step took 25x longer at load 9 on 2 cores with GNU's default 300,000
    spins, 1.25x at load 5 with 10,000 (docs/performance.md).

    GNU OpenMP reads the policy once, when the library loads: where another library of the
    process loaded it first (torch does), or the user asked for spinning, numba's threads will
    spin after each split; ``omp_threads.spins`` says so, for ``run_split`` to tell
    ``_parallel`` once the layer is known to be OpenMP: from then on a split after which lucid's
    pool ran next runs on one thread (``_parallel.BlasThreads.pool_follows``)."""
    if omp_threads.spins is None:  # decided once, before the setting below
        omp_threads.spins = _openmp_will_spin()
        unset = "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ
        if not omp_threads.spins and unset and SPIN_COUNT > 0 and _machine_quiet():
            os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
            os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
            _set_for_openmp[:] = ["OMP_WAIT_POLICY", "GOMP_SPINCOUNT"]
            omp_threads.spins = True
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        _set_for_openmp[:] = ["OMP_WAIT_POLICY"]


def _openmp_started() -> None:
    """numba's threads have started (GNU OpenMP has read its variables): the ones lucid set
    for it are taken out of the environment again, for child processes to decide afresh."""
    for name in _set_for_openmp:
        os.environ.pop(name, None)
    _set_for_openmp.clear()


def _openmp_will_spin() -> bool:
    """Whether GNU OpenMP's threads will spin after a parallel region, from the environment
    as it is before lucid's default: a policy or spin count the user set, else whether the
    library was loaded (and read the environment) before lucid could set its policy."""
    policy = os.environ.get("OMP_WAIT_POLICY")
    if os.environ.get("GOMP_SPINCOUNT", "").strip() not in ("", "0"):
        return True
    if policy is not None:
        return policy.strip().upper() == "ACTIVE"
    return _gnu_openmp_loaded()


class _OmpThreads:
    """Whether numba's OpenMP threads will spin after a split (``_sleeping_omp_threads``; None
    until it has run)."""

    __slots__ = ("spins",)

    def __init__(self) -> None:
        self.spins: bool | None = None


omp_threads = _OmpThreads()


def _gnu_openmp_loaded() -> bool:
    """Whether GNU OpenMP (``libgomp.so.1``) is already loaded in this process (Linux)."""
    noload = getattr(os, "RTLD_NOLOAD", None)
    if noload is None:
        return False
    try:
        ctypes.CDLL("libgomp.so.1", mode=noload | os.RTLD_LAZY)
    except OSError:
        return False
    return True


def run_split(name: str, make: Any, serial: Any, args: Any, k: int, fallback: Any = None) -> None:
    """``serial(*args)`` on ``k`` of numba's threads: the parallel ``make()`` (compiled under
    ``name``, calling ``serial`` as ``inner``) with ``k`` as its last argument; ``serial`` alone
    (or ``fallback()``) where the parallel build fails (no threading layer), and from then on.
    The split counts as parallel work on numba's threads (``_parallel``); after the first call,
    splitting goes on only on a thread-safe layer."""
    if thread_layer.ok is None:
        _sleeping_omp_threads()
    elif (blas_threads.omp_spins and name in blas_threads.pool_follows) or (
        blas_threads.in_flight and blas_threads.pool_busy()
    ):
        # numba's threads spin, and lucid's pool ran right after this split before: its
        # threads would wait for the spinners again; or the pool's thread is still computing
        # work left running (a weight gradient): numba's would wait for its core (the same
        # bits on one thread)
        fallback() if fallback is not None else serial(*args)
        return
    try:
        specialised(name, make, parallel=True, inner=serial)(*args, k)
    except Exception:  # noqa: BLE001  (numba found no threading layer it can load)
        thread_layer.ok = False
        fallback() if fallback is not None else serial(*args)
        return
    blas_threads.ran(NUMBA)
    blas_threads.last_split = name
    if thread_layer.ok is None:
        _openmp_started()
        try:
            layer = numba.np.ufunc.parallel.threading_layer()  # type: ignore[no-untyped-call]
            thread_layer.ok = layer in ("omp", "tbb")
            blas_threads.omp_spins = layer == "omp" and bool(omp_threads.spins)
        except ValueError:
            thread_layer.ok = False
