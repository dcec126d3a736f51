"""Matrix products for the NumPy backend: which threads run each GEMM, by its shape.

OpenBLAS wakes all its threads for any GEMM past a tiny size. For the narrow GEMMs of small
models (LeNet's 64 x 400 x 120) one thread is often faster than two, and on a loaded machine
the waiting threads make a short GEMM take many times longer. Big GEMMs (ResNet) gain from
every thread, but OpenBLAS's threads spin for a while after each threaded call, holding the
cores that the pool's threads need next. So ``matmul`` runs

- tiny products (``_TINY_FLOPS``) as NumPy does;
- big ones (``_parallel.PARALLEL_FLOPS`` and up) as row or column blocks on lucid's pool, one
  BLAS thread each;
- mid-sized ones (``THREADED_FLOPS`` and up) on OpenBLAS's threads where the last parallel work
  was not lucid's (``_parallel``), else split over numba's threads where the compiled kernels
  are in use and the pool did not run the last parallel work, else on one BLAS thread;
- the rest on one BLAS thread (switching the setting is cheap: docs/performance.md).

A GEMM whose inner dimension is huge and whose result is tiny (a weight gradient ``col^T @ dy``
with 50,000 rows and a 25 x 6 result) runs far below peak in every BLAS; ``tn_matmul`` does it
as one batched matmul over row blocks and a sum. Figures: docs/performance.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _parallel
from lucid.backends._numpy._parallel import NUMBA, OPENBLAS, POOL, blas_threads, in_worker

# OpenBLAS runs products below about this many FLOPs on one thread by itself.
_TINY_FLOPS = 2 * 64**3
# From this many FLOPs a product gains from a few threads (a small model's GEMMs;
# docs/performance.md, "One runtime at a time").
THREADED_FLOPS = 2e6
# Row block for the batched form of a long, narrow ``a^T @ b``, which every BLAS runs far below
# peak as one GEMM (docs/performance.md). 256, not 1024: each block's product then sums over
# one inner block of OpenBLAS's (its sgemm inner block is 384 here), and LeNet-5's conv2 weight
# gradient ((6400, 150)^T (6400, 16)) takes 289 against 430 us at one thread; 0.66-0.74x the
# time for the other narrow shapes measured (docs/performance.md, session 15).
_BLOCK_ROWS = 256
# Use the batched form when the result has at most this many elements.
_SMALL_RESULT = 64 * 64

# ``matmul(a, b, out=)`` outside the pool writes NumPy's product into ``out`` where its route
# is NumPy's own call, instead of computing a new array and copying it (the caller's part of
# the GPT step's attention, issue 30); False: always compute and copy (``ab_threads.py``).
DIRECT_OUT = True
# ``matmul_pair`` runs two independent products of at least this many FLOPs each at once, one
# a thread, where two threads are free (a Linear's input and weight gradients: one hand-off
# instead of one per split product, and the mid-sized ones no longer serial; issue 30);
# ``math.inf``: each product as ``matmul`` runs it (``ab_threads.py``). 4 MFLOP, not 2: the
# hand-off to the pool's sleeping thread costs more than a 2 MFLOP product (pytorch/examples'
# time_sequence_prediction, LSTMCell(51, 51) at batch 97: its 2.02 MFLOP gradients paired made
# 100 unrolled steps 1.1-1.5x slower, float32 and float64); LeNet-5's fc1 (6.1 MFLOP) gains
# from the pair (docs/performance.md, session 16).
PAIR_FLOPS = 4e6
# ``matmul_defer`` leaves a Linear's weight gradient running on the pool while the backward
# pass goes on (the engine waits before it reads it); False: ``matmul_pair`` waits for both
# (``ab_threads.py``; issue 30, docs/performance.md).
DEFER = True
# An outer product (inner dimension 1) with a result of this many elements and more runs as one
# compiled loop where numba is in use (``_outer``); ``math.inf``: NumPy's broadcast multiply.
COMPILED_OUTER = 1 << 11
# A big product (``PARALLEL_FLOPS`` and up) right after numba's threads ran parallel work splits
# over them too (``_gemm_jit``), not as row blocks on lucid's pool: a GPT step then runs every
# parallel pass on one runtime and each of them splits (issue 30: 47 -> 40 ms, docs/
# performance.md, "Session 11"); False: always the pool's blocks, as before.
NUMBA_KEEPS_BIG = True
# Dtypes BLAS has no GEMM for (float16; bfloat16 once ml_dtypes is loaded): their products run
# in float32 and are rounded back, as CPU half-precision GEMMs accumulate (NumPy's own float16
# loop is ~100x slower and ml_dtypes' bfloat16 matmul returns float32).
GEMM_IN_FLOAT32: set[Any] = {np.dtype(np.float16)}
# The dtypes whose tiny products ``matmul`` hands straight to NumPy (the singletons NumPy's
# float32 and float64 arrays carry).
_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _product(a: Any, b: Any) -> tuple[int, int, float]:
    """``a @ b``'s rows, columns and FLOPs (a vector operand counts as one row or column)."""
    m = a.shape[-2] if a.ndim > 1 else 1
    n = b.shape[-1] if b.ndim > 1 else 1
    return m, n, 2.0 * max(a.size * n, b.size * m)


def matmul(a: Any, b: Any, out: Any = None, **kwargs: Any) -> Any:
    """``numpy.matmul`` on the threads its size calls for (the module's docstring)."""
    if out is None and not kwargs and len(a.shape) == 2 and len(b.shape) == 2:
        # Two matrices, a tiny product (a batch-1 model's Linears and their gradients): the
        # route the checks below take, NumPy's own call, decided in one test (~0.9 us a call
        # of a char-RNN step's ~40; issue 30). An inner dimension of 1 is an outer product.
        m, k = a.shape
        dt = a.dtype
        if dt in _BLAS_FLOATS and b.dtype is dt:
            if k != 1:
                if 2 * m * k * b.shape[1] <= _TINY_FLOPS:
                    return np.matmul(a, b)
            elif b.shape[0] == 1:  # an outer product (the route below takes, without its tests)
                return _outer(a, b)
    if a.dtype in GEMM_IN_FLOAT32 or b.dtype in GEMM_IN_FLOAT32:
        return _matmul_in_float32(a, b, out, **kwargs)
    if kwargs or a.ndim == 0 or b.ndim == 0:
        return np.matmul(a, b, out=out, **kwargs)
    if out is not None:
        if in_worker():  # a chunk on the pool: one BLAS thread already (``run_chunks``)
            return np.matmul(a, b, out=out)
        if DIRECT_OUT:
            done = _matmul_into(a, b, out)
            if done is not None:
                return done
        np.copyto(out, matmul(a, b))  # the threads chosen as for any other product
        return out
    if a.ndim > 1 and b.ndim > 1 and a.shape[-1] == 1 and b.shape[-2] == 1:
        # An outer product (a batch-1 Linear's weight gradient): NumPy's matmul takes its
        # non-BLAS loop for an inner dimension of 1, ~3x slower than the broadcast multiply,
        # and a compiled loop is faster still; both give the same bits (one product per
        # element, docs/performance.md).
        return _outer(a, b)
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        # A stack of matrices times one matrix is one GEMM over all the rows: NumPy runs one
        # GEMM per matrix of the stack (a Linear on (12, 64, 128): 1.6x slower).
        rows = math.prod(a.shape[:-1])  # not -1: a (.., 0) stack has no size to infer it
        flat = matmul(a.reshape(rows, a.shape[-1]), b)
        return flat.reshape(*a.shape[:-1], b.shape[-1])
    m, n, flops = _product(a, b)
    if flops <= _TINY_FLOPS:
        return np.matmul(a, b)
    budget = blas_threads.budget()
    if budget == 1:
        return np.matmul(a, b)
    if flops >= _parallel.PARALLEL_FLOPS and not in_worker():
        if NUMBA_KEEPS_BIG and blas_threads.last == NUMBA:
            # numba's threads ran the last parallel work: the product splits over them too,
            # one runtime for the step (the pool's threads would wait for theirs to let go of
            # the cores, and their next split be refused, ``_numba.run_split``)
            split = _compiled_matmul(a, b, flops)
            if split is not None:
                return split
        split = _split_matmul(a, b, m, n, budget)
        if split is not None:
            return split
    elif flops >= THREADED_FLOPS and m > 1 and n > 1:
        if blas_threads.openblas_may_run():
            blas_threads.ran(OPENBLAS)
            return np.matmul(a, b)  # OpenBLAS's threads (one, inside single_blas_thread)
        if blas_threads.last != POOL:
            # Not after the pool: numba's spinning threads would hold the core its next split
            # needs (a GPT step: ~100 ms of CPU a step in spin, docs/performance.md).
            split = _compiled_matmul(a, b, flops)
            if split is not None:
                return split
    with blas_threads.single_blas_thread():
        return np.matmul(a, b)


def _outer(a: Any, b: Any) -> Any:
    """``a @ b`` for ``a`` of shape (m, 1) and ``b`` of (1, n): one compiled loop
    (``kernels._outer_jit``, one product per element: the same bits) for float matrices of
    ``COMPILED_OUTER`` elements and more where numba is in use, else NumPy's broadcast multiply
    (one inner-loop call per row: 3.7x slower for a (128, 1) @ (1, 185) weight gradient)."""
    dtype = a.dtype
    if (
        a.ndim == 2
        and b.ndim == 2
        and dtype == b.dtype
        and dtype.char in "fd"
        and a.shape[0] * b.shape[1] >= COMPILED_OUTER
    ):
        if _compiled.load("_outer_jit") is not None:
            out = np.empty((a.shape[0], b.shape[1]), dtype=dtype)
            if _compiled.run("_outer_jit", "outer", a.reshape(-1), b.reshape(-1), out):
                return out
    return np.multiply(a, b)


def _matmul_into(a: Any, b: Any, out: Any) -> Any:
    """``np.matmul(a, b, out=out)`` on the threads ``matmul`` picks for ``a @ b``, where that
    route is NumPy's own call on ``a`` and ``b`` (the same GEMMs, the same bits) and ``out`` is
    exactly the result's array type; else None (the caller computes and copies)."""
    if a.ndim < 2 or b.ndim != a.ndim or a.dtype != b.dtype or out.dtype != a.dtype:
        return None  # vectors, a stack times a matrix (one flattened GEMM), casts: as before
    m, n = a.shape[-2], b.shape[-1]
    if out.shape[-2:] != (m, n) or not (out.shape[:-2] == a.shape[:-2] == b.shape[:-2]):
        return None  # broadcasting batch dims or a result broadcast into ``out``
    if a.shape[-1] == 1 and b.shape[-2] == 1:
        return None  # the outer product's multiply
    flops = 2.0 * a.size * n
    if flops <= _TINY_FLOPS or blas_threads.budget() == 1:
        return np.matmul(a, b, out=out)
    if flops >= _parallel.PARALLEL_FLOPS:
        return None  # the pool's row blocks
    if flops >= THREADED_FLOPS and m > 1 and n > 1:
        if blas_threads.openblas_may_run():
            blas_threads.ran(OPENBLAS)
            return np.matmul(a, b, out=out)
        if blas_threads.last != POOL and a.ndim == 2 and _compiled.in_use():
            return None  # numba's split
    with blas_threads.single_blas_thread():
        return np.matmul(a, b, out=out)


# ``linear``: a Linear's ``x @ w.T + b`` as one compiled call where ``matmul`` would hand the
# product to NumPy's own call (the same GEMM and the same float adds: the same bits), without
# NumPy's matmul and add dispatch and the bias's second pass over the result (a generated
# token's 17 Linears: 3-13 us each; issue 30, docs/performance.md); False: ``matmul`` and an add.
FUSED_LINEAR = True
# ``linear`` runs a float32 product of few rows as column blocks on OpenBLAS's small-matrix
# kernels where its cores have them (``_gemm_jit.small_blocks``): another order of float32 sums
# than one GEMM (the recorded and the no-grad forward alike), 0.24-0.84x the time; False: as
# one GEMM.
SMALL_KERNELS = True


def linear(x: Any, w: Any, b: Any, transposed: bool = False) -> Any:
    """``x @ w.T`` (``+ b`` where ``b`` is not None) for a row-major float32 or float64 ``x``
    (its rows: all dims but the last), a row-major 2-D ``w`` and a contiguous 1-D ``b`` of the
    same dtype, in one compiled call (``kernels._gemm_jit.linear``; ``transposed``: as ``(w @
    x^T)^T`` copied row-major); a float32 product of few rows as column blocks on OpenBLAS's
    small-matrix kernels instead (``linear_small``, split by whole blocks over numba's threads
    from ``THREADED_FLOPS``; ``transposed`` then makes no difference). None where it does not
    apply or ``matmul`` would take another route (the pool's or numba's splits, vectors, an
    outer product)."""
    dt = x.dtype
    shape = x.shape
    if not FUSED_LINEAR or dt not in _BLAS_FLOATS or w.dtype != dt or len(shape) < 2:
        return None
    k = shape[-1]
    n = w.shape[0]
    if k < 2 or n < 2 or not (x.flags.c_contiguous and w.flags.c_contiguous):
        return None
    m = x.size // k
    if m < 2:
        return None
    if b is not None and not (b.dtype == dt and b.shape == (n,) and b.flags.c_contiguous):
        return None
    jit = _compiled.load("_gemm_jit")
    if jit is None:
        return None
    flops = 2.0 * m * k * n
    x2 = x.reshape(m, k)
    nb = jit.small_blocks(m, k) if dt.char == "f" and SMALL_KERNELS else 0
    if nb:  # few rows: blocks on OpenBLAS's small-matrix kernels (``_gemm_jit``)
        out = np.empty((m, n), dtype=dt)
        threads = flops >= THREADED_FLOPS and not in_worker() and blas_threads.budget() > 1
        small = (x2, w, w[0] if b is None else b, out, b is not None, nb, flops, threads)
        if _compiled.run("_gemm_jit", "linear_small", *small):
            return out if len(shape) == 2 else out.reshape(*shape[:-1], n)
        return None
    route = _direct_route(m, n, flops)
    if not route:
        return None
    out = np.empty((m, n), dtype=dt)
    scratch = np.empty((n, m), dtype=dt) if transposed else out
    args = (x2, w, w[0] if b is None else b, out, scratch, b is not None, transposed)
    if route == 2:
        with blas_threads.single_blas_thread():
            ok = _compiled.run("_gemm_jit", "linear", *args)
    else:
        ok = _compiled.run("_gemm_jit", "linear", *args)
    if not ok:
        return None
    return out if len(shape) == 2 else out.reshape(*shape[:-1], n)


def _direct_route(m: int, n: int, flops: float) -> int:
    """How ``matmul`` runs an (m, k) @ (k, n) product (m, n > 1) of ``flops`` where that is
    NumPy's own call: 1 on OpenBLAS's threads as they are set, 2 inside ``single_blas_thread``;
    0 where it takes another route (the pool's or numba's splits). ``matmul``'s decisions, in
    its order."""
    if flops <= _TINY_FLOPS:
        return 1
    if in_worker():
        return 0
    if blas_threads.budget() == 1:
        return 1
    if flops >= _parallel.PARALLEL_FLOPS:
        return 0
    if flops >= THREADED_FLOPS:
        if blas_threads.openblas_may_run():
            blas_threads.ran(OPENBLAS)
            return 1
        if blas_threads.last != POOL:
            return 0  # numba's split, where the compiled kernels are in use
    return 2


def matmul_pair(a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any]:
    """``(a @ b, c @ d)``: at two threads or more, two float products of ``PAIR_FLOPS`` and up
    each run on one BLAS thread at the same time, ``c @ d`` on the pool (the bits of one
    thread's ``matmul``: one GEMM each, a stack times a matrix flattened); else ``matmul``
    each."""
    budget = _pair_budget(a, b, c, d)
    if not budget:
        return matmul(a, b), matmul(c, d)
    with blas_threads.single_blas_thread():
        future = blas_threads.pool(budget).submit(_one_gemm, c, d)
        try:
            first = _one_gemm(a, b)
        finally:
            second = future.result()  # waited for (and its error raised) either way
    return first, second


def matmul_defer(a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any, Callable[[], None]] | None:
    """``matmul_pair``'s products with ``c @ d`` still running: ``(a @ b, out, wait)``, where
    ``out`` holds ``c @ d`` once ``wait()`` has returned (and raised its error, if any). ``c @
    d`` runs on the pool (one GEMM on one BLAS thread, the bits ``matmul_pair`` gives) while
    this thread computes ``a @ b`` and then goes on with the caller's work. None where
    ``matmul_pair`` would not run the two at once, or ``DEFER`` is off: the caller calls it."""
    budget = _pair_budget(a, b, c, d) if DEFER else 0
    if not budget:
        return None
    rows = math.prod(c.shape[:-1])
    out = np.empty((rows, d.shape[1]), dtype=c.dtype)
    c2 = c if c.ndim == 2 else c.reshape(rows, c.shape[-1])

    def job() -> None:
        with blas_threads.single_blas_thread():
            np.matmul(c2, d, out=out)

    with blas_threads.single_blas_thread():
        future = blas_threads.pool(budget).submit(job)
        blas_threads.in_flight.append(future)
        try:
            first = _one_gemm(a, b)
        except BaseException:
            future.result()
            raise

    def wait() -> None:
        try:
            future.result()
        finally:
            in_flight = blas_threads.in_flight
            if future in in_flight:
                in_flight.remove(future)

    return first, (out if c.ndim == 2 else out.reshape(*c.shape[:-1], d.shape[1])), wait


def _pair_budget(a: Any, b: Any, c: Any, d: Any) -> int:
    """The pool size for running ``a @ b`` and ``c @ d`` at once (``matmul_pair``,
    ``matmul_defer``), or 0 where they run one after the other as ``matmul`` runs them."""
    if not _pairs(a, b) or not _pairs(c, d) or in_worker():
        return 0
    if blas_threads.omp_spins and blas_threads.last == NUMBA:
        # numba's threads spin after their split: the pool's thread would wait for a core (and
        # the split be blamed, ``_numba.run_split``); ``matmul`` keeps to numba's threads
        return 0
    budget = blas_threads.budget()
    return budget if budget >= 2 else 0


def _pairs(a: Any, b: Any) -> bool:
    """Whether ``a @ b`` may run as one GEMM beside another (``matmul_pair``)."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and b.ndim == 2
        and 2.0 * a.size * b.shape[1] >= PAIR_FLOPS  # first: most products are too small
        and (a.ndim == 2 or (a.ndim > 2 and a.flags.c_contiguous))
        and a.dtype == b.dtype
        and a.dtype.kind == "f"
        and a.dtype not in GEMM_IN_FLOAT32
        and a.shape[-1] == b.shape[0] > 1
    )


def _one_gemm(a: Any, b: Any) -> Any:
    """``a @ b`` as one GEMM on the calling thread (a stack flattened, as ``matmul`` does)."""
    if a.ndim == 2:
        return np.matmul(a, b)
    flat = np.matmul(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]), b)
    return flat.reshape(*a.shape[:-1], b.shape[-1])


def pool_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for kernels whose next step runs on lucid's pool (a convolution's weight
    transform, its chunks next): big products split on the pool as ``matmul`` does, the rest on
    one BLAS thread, never on numba's or OpenBLAS's threads, whose spinning after a parallel
    region would hold the cores the pool's threads wait for (docs/performance.md)."""
    if in_worker() or a.ndim < 2 or b.ndim < 2:
        return matmul(a, b)
    if _product(a, b)[2] < _parallel.PARALLEL_FLOPS or blas_threads.budget() == 1:
        with blas_threads.single_blas_thread():
            return np.matmul(a, b)
    return matmul(a, b)


def _compiled_matmul(a: Any, b: Any, flops: float) -> Any:
    """``a @ b`` split over numba's threads (``kernels._gemm_jit``) where the compiled kernels
    are in use in this process (their passes run on those threads, so OpenBLAS's threads and
    lucid's pool would wait for them to let go of the cores); else None."""
    if a.ndim != 2 or b.ndim != 2 or not _compiled.in_use():
        return None
    gemm = _compiled.load("_gemm_jit")
    return None if gemm is None else gemm.matmul(a, b, flops)


def _split_matmul(a: Any, b: Any, m: int, n: int, k: int) -> Any:
    """A big ``a @ b`` as ``k`` row (else column) blocks on the pool, one BLAS thread each:
    never on OpenBLAS's own threads, whose spinning after the call would hold the cores the
    pool's threads need next (docs/performance.md)."""
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
    if THREADED_FLOPS <= flops < _parallel.PARALLEL_FLOPS:  # (one numba thread in a worker)
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
