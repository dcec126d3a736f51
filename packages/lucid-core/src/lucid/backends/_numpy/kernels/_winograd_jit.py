"""Winograd F(2x2, 3x3)'s transforms as compiled loops, with numba (``lucid-core[numba]``).

Optional: ``winograd`` imports this module only where numba is installed and ``LUCID_NUMBA`` is
not ``0``. In NumPy the transforms are some forty adds of strided views per chunk: they pass
over memory several times, and at two threads each short call contends for the GIL. Here each
transform is one loop nest over a chunk that reads every input once and writes every output
once, compiled without the GIL (``nogil``), so the kernels' pool threads run their chunks side
by side as before, each transform about 3x faster. The arithmetic is the NumPy code's term for
term (the same adds in the same order, no fast-math), so the results are bit-identical (tested).
Compiled on first use per dtype and layout, then cached on disk (``cache=True``).

The arrays are compiled as not aliasing each other (``_NoAliasCompiler``: numba's own flag,
which it sets for its parallel loops): without it LLVM must assume a store to ``out`` may change
the input and does not vectorise the channel loop, which made the same loops 3x *slower* than
NumPy. Every caller passes a freshly allocated ``out``.
"""

from __future__ import annotations

import os
import threading
import types
from typing import Any

import numba
import numpy as np
from numba.core.compiler import CompilerBase, DefaultPassBuilder


class _NoAliasCompiler(CompilerBase):
    """numba's nopython pipeline with the ``noalias`` flag on (array arguments never overlap)."""

    def define_pipelines(self) -> list[Any]:
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]  # type: ignore[no-untyped-call]


_jit = numba.njit(nogil=True, cache=True, fastmath=False, pipeline_class=_NoAliasCompiler)


# Indices cast to unsigned: numba then skips its negative-index wraparound, a branch per access
# that keeps LLVM from vectorising a copy (the compiled im2col was 3-13x faster with it).
U = np.uint64


# The same, with ``numba.prange`` loops run on numba's threads (``parallel``).
_jit_parallel = numba.njit(
    nogil=True, cache=True, fastmath=False, parallel=True, pipeline_class=_NoAliasCompiler
)

_specialised: dict[str, Any] = {}
_specialise_lock = threading.Lock()


def specialised(
    name: str,
    make: Any,
    *constants: Any,
    parallel: bool = False,
    inner: Any = None,
    jit: Any = None,
) -> Any:
    """The function ``make(*constants)`` returns, compiled as ``_jit`` does under ``name``, made
    once per process (a lock: the pool's threads may ask at once). For loops whose sizes are
    compile-time constants in their closure; numba caches each on disk under its qualified
    name, keyed by its closure's values too. ``parallel``: compiled as ``_jit_parallel`` (its
    ``numba.prange`` loops on numba's threads). ``inner``: a compiled function the made one
    calls as its global ``inner`` (a global, not a closure value: numba keys its disk cache on
    the pickled closure, and a pickled dispatcher differs from process to process). ``jit``: another
    numba decorator to compile with (fast-math reductions)."""
    fn = _specialised.get(name)
    if fn is None:
        with _specialise_lock:
            fn = _specialised.get(name)
            if fn is None:
                py = make(*constants)
                if inner is not None:
                    py = types.FunctionType(py.__code__, {**py.__globals__, "inner": inner},
                                            name, py.__defaults__, py.__closure__)  # fmt: skip
                py.__name__ = py.__qualname__ = name
                fn = _specialised[name] = (jit or (_jit_parallel if parallel else _jit))(py)
    return fn


# -- splitting a compiled pass over the cores, on numba's own threads -----------------------
# A compiled loop over the batch can run its samples on numba's threads (``prange``): one call
# from Python, a fork-join in native code (~6 us with numba's OpenMP layer on 2 cores, against
# ~40 us and the GIL for a hand-off to lucid's Python pool). Only with a thread-safe layer
# (OpenMP or TBB; numba's own "workqueue" takes ~400 us a call here and must not be entered
# from two threads at once), in the process that first used it (GNU OpenMP is not fork-safe:
# a DataLoader worker forked after a parallel call runs its kernels on one thread), from
# outside lucid's pool and only for passes of ``SPLIT_ELEMENTS`` and more.
SPLIT_ELEMENTS = 1 << 15
_split: dict[str, Any] = {"pid": None, "ok": None}


def split_threads(elements: int) -> int:
    """How many of numba's threads a compiled pass over ``elements`` elements should use (1:
    run the serial version)."""
    if elements < SPLIT_ELEMENTS or _split["ok"] is False:
        return 1
    from lucid.backends import _blas

    k = _blas.workers()
    if k <= 1 or _blas._in_worker() or _blas.blas_threads.blas_spinning():
        return 1
    pid = os.getpid()
    if _split["pid"] is None:
        _split["pid"] = pid
    elif _split["pid"] != pid:
        return 1
    k = min(k, int(getattr(numba.config, "NUMBA_NUM_THREADS", 1)))
    if numba.get_num_threads() != k:  # a per-thread setting in numba
        numba.set_num_threads(k)
    return k


def run(name: str, serial: Any, make_split: Any, args: Any, elements: int) -> None:
    """``serial(*args)``, a compiled pass over ``elements`` elements, split over numba's threads
    (``make_split``, compiled under ``name + "_split"``) where ``split_threads`` says so."""
    k = split_threads(elements)
    if k == 1:
        serial(*args)
    else:
        run_split(name + "_split", make_split, serial, args, k)


def run_split(name: str, make: Any, serial: Any, args: Any, k: int, fallback: Any = None) -> None:
    """``serial(*args)`` on ``k`` of numba's threads: the parallel ``make()`` (compiled under
    ``name``, calling ``serial`` as ``inner``) with ``k`` as its last argument; ``serial`` alone
    (or ``fallback()``) where the parallel build fails (no threading layer), and from then on.
    Products then stay off OpenBLAS's threads for a while (``_blas``); after the first call,
    splitting goes on only on a thread-safe layer."""
    from lucid.backends import _blas

    try:
        specialised(name, make, parallel=True, inner=serial)(*args, k)
    except Exception:  # noqa: BLE001  (numba found no threading layer it can load)
        _split["ok"] = False
        fallback() if fallback is not None else serial(*args)
        return
    _blas.blas_threads.busy()
    if _split["ok"] is None:
        try:
            _split["ok"] = numba.np.ufunc.parallel.threading_layer() in ("omp", "tbb")  # type: ignore[no-untyped-call]
        except ValueError:
            _split["ok"] = False


@_jit
def input_transform(xpad: Any, th: int, tw: int, out: Any) -> None:
    """``out[p, q, b, i, j, c] = (B^T d B)[p, q]`` of the 4x4 tile at (2i, 2j) of sample b."""
    for b in range(xpad.shape[0]):
        for i in range(th):
            for j in range(tw):
                for c in range(xpad.shape[3]):
                    d00 = xpad[b, 2 * i, 2 * j, c]
                    d01 = xpad[b, 2 * i, 2 * j + 1, c]
                    d02 = xpad[b, 2 * i, 2 * j + 2, c]
                    d03 = xpad[b, 2 * i, 2 * j + 3, c]
                    d10 = xpad[b, 2 * i + 1, 2 * j, c]
                    d11 = xpad[b, 2 * i + 1, 2 * j + 1, c]
                    d12 = xpad[b, 2 * i + 1, 2 * j + 2, c]
                    d13 = xpad[b, 2 * i + 1, 2 * j + 3, c]
                    d20 = xpad[b, 2 * i + 2, 2 * j, c]
                    d21 = xpad[b, 2 * i + 2, 2 * j + 1, c]
                    d22 = xpad[b, 2 * i + 2, 2 * j + 2, c]
                    d23 = xpad[b, 2 * i + 2, 2 * j + 3, c]
                    d30 = xpad[b, 2 * i + 3, 2 * j, c]
                    d31 = xpad[b, 2 * i + 3, 2 * j + 1, c]
                    d32 = xpad[b, 2 * i + 3, 2 * j + 2, c]
                    d33 = xpad[b, 2 * i + 3, 2 * j + 3, c]
                    t00 = d00 - d20
                    t01 = d01 - d21
                    t02 = d02 - d22
                    t03 = d03 - d23
                    t10 = d10 + d20
                    t11 = d11 + d21
                    t12 = d12 + d22
                    t13 = d13 + d23
                    t20 = -d10 + d20
                    t21 = -d11 + d21
                    t22 = -d12 + d22
                    t23 = -d13 + d23
                    t30 = d10 - d30
                    t31 = d11 - d31
                    t32 = d12 - d32
                    t33 = d13 - d33
                    out[0, 0, b, i, j, c] = t00 - t02
                    out[0, 1, b, i, j, c] = t01 + t02
                    out[0, 2, b, i, j, c] = -t01 + t02
                    out[0, 3, b, i, j, c] = t01 - t03
                    out[1, 0, b, i, j, c] = t10 - t12
                    out[1, 1, b, i, j, c] = t11 + t12
                    out[1, 2, b, i, j, c] = -t11 + t12
                    out[1, 3, b, i, j, c] = t11 - t13
                    out[2, 0, b, i, j, c] = t20 - t22
                    out[2, 1, b, i, j, c] = t21 + t22
                    out[2, 2, b, i, j, c] = -t21 + t22
                    out[2, 3, b, i, j, c] = t21 - t23
                    out[3, 0, b, i, j, c] = t30 - t32
                    out[3, 1, b, i, j, c] = t31 + t32
                    out[3, 2, b, i, j, c] = -t31 + t32
                    out[3, 3, b, i, j, c] = t31 - t33


@_jit
def output_transform(prod: Any, out: Any) -> None:
    """``out[b, i, r, j, s, k] = (A^T M A)[r, s]`` of tile (i, j) of sample b."""
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[3]):
                for k in range(out.shape[5]):
                    p00 = prod[0, 0, b, i, j, k]
                    p01 = prod[0, 1, b, i, j, k]
                    p02 = prod[0, 2, b, i, j, k]
                    p03 = prod[0, 3, b, i, j, k]
                    p10 = prod[1, 0, b, i, j, k]
                    p11 = prod[1, 1, b, i, j, k]
                    p12 = prod[1, 2, b, i, j, k]
                    p13 = prod[1, 3, b, i, j, k]
                    p20 = prod[2, 0, b, i, j, k]
                    p21 = prod[2, 1, b, i, j, k]
                    p22 = prod[2, 2, b, i, j, k]
                    p23 = prod[2, 3, b, i, j, k]
                    p30 = prod[3, 0, b, i, j, k]
                    p31 = prod[3, 1, b, i, j, k]
                    p32 = prod[3, 2, b, i, j, k]
                    p33 = prod[3, 3, b, i, j, k]
                    h00 = p00 + p10 + p20
                    h01 = p01 + p11 + p21
                    h02 = p02 + p12 + p22
                    h03 = p03 + p13 + p23
                    h10 = p10 - p20 - p30
                    h11 = p11 - p21 - p31
                    h12 = p12 - p22 - p32
                    h13 = p13 - p23 - p33
                    out[b, i, 0, j, 0, k] = h00 + h01 + h02
                    out[b, i, 0, j, 1, k] = h01 - h02 - h03
                    out[b, i, 1, j, 0, k] = h10 + h11 + h12
                    out[b, i, 1, j, 1, k] = h11 - h12 - h13


@_jit
def output_grad_transform(dy: Any, th: int, tw: int, out: Any) -> None:
    """``out[p, q, b, i, j, k] = (A dY A^T)[p, q]`` of the 2x2 tile at (2i, 2j) of dy."""
    for b in range(dy.shape[0]):
        for i in range(th):
            for j in range(tw):
                for k in range(dy.shape[3]):
                    y00 = dy[b, 2 * i, 2 * j, k]
                    y01 = dy[b, 2 * i, 2 * j + 1, k]
                    y10 = dy[b, 2 * i + 1, 2 * j, k]
                    y11 = dy[b, 2 * i + 1, 2 * j + 1, k]
                    h00 = y00
                    h01 = y01
                    h10 = y00 + y10
                    h11 = y01 + y11
                    h20 = y00 - y10
                    h21 = y01 - y11
                    h30 = -y10
                    h31 = -y11
                    out[0, 0, b, i, j, k] = h00
                    out[0, 1, b, i, j, k] = h00 + h01
                    out[0, 2, b, i, j, k] = h00 - h01
                    out[0, 3, b, i, j, k] = -h01
                    out[1, 0, b, i, j, k] = h10
                    out[1, 1, b, i, j, k] = h10 + h11
                    out[1, 2, b, i, j, k] = h10 - h11
                    out[1, 3, b, i, j, k] = -h11
                    out[2, 0, b, i, j, k] = h20
                    out[2, 1, b, i, j, k] = h20 + h21
                    out[2, 2, b, i, j, k] = h20 - h21
                    out[2, 3, b, i, j, k] = -h21
                    out[3, 0, b, i, j, k] = h30
                    out[3, 1, b, i, j, k] = h30 + h31
                    out[3, 2, b, i, j, k] = h30 - h31
                    out[3, 3, b, i, j, k] = -h31
