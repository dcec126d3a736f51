"""Mid-sized matrix products on numba's threads (``lucid-core[numba]``): NumPy's own OpenBLAS
GEMM, one call per thread on a block of the result's rows, from a compiled parallel loop.

Why: once the compiled passes split over numba's OpenMP threads (pooling, im2col, col2im), a
product cannot use OpenBLAS's threads nor lucid's Python pool next to them without waiting a
scheduler time slice for the other runtime's spinning threads to let go of the cores
(``_parallel``, docs/performance.md). So such products ran on one core: LeNet-5's conv2 forward,
input and weight gradients (6400 x 150 x 16 each). Here the same BLAS kernel runs
on the same threads as the passes around it: one threading runtime for every op of a step,
as in PyTorch, each block on one BLAS thread (``single_blas_thread``).

The GEMM is reached through its C symbol: llvmlite learns its address (``add_symbol``) and
the compiled loops call it by name, so they are cached on disk like the other kernels. Only
the 64-bit-integer (ILP64) CBLAS of NumPy's wheels is used (``scipy_cblas_sgemm64_`` since
NumPy 2, ``cblas_sgemm64_`` before); elsewhere (Accelerate, a system BLAS) importing this
module fails and products stay as ``_gemm.matmul`` runs them.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm  # type: ignore[import-untyped]
import numpy as np
from numba import prange, types
from threadpoolctl import threadpool_info

from lucid.backends._numpy._numba import jit, run_split, split_threads
from lucid.backends._numpy._parallel import blas_threads

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _numpy_openblas() -> Any:
    """NumPy's OpenBLAS as a ``ctypes.CDLL`` (the one threadpoolctl finds in numpy's folder or
    its wheel's ``numpy.libs``, else the only OpenBLAS loaded)."""
    libs = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    pkg = Path(np.__file__).resolve().parent
    roots = (str(pkg) + os.sep, str(pkg.parent / "numpy.libs") + os.sep)
    own = [i for i in libs if str(Path(i["filepath"]).resolve()).startswith(roots)]
    pick = own or (libs if len(libs) == 1 else [])
    if not pick:
        raise ImportError("no OpenBLAS of NumPy's found")
    return ctypes.CDLL(pick[0]["filepath"])


def _openblas_architecture() -> str:
    """The core type NumPy's OpenBLAS runs its kernels for (threadpoolctl's reading)."""
    libs = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
    return str(libs[0].get("architecture", "")) if len(libs) == 1 else ""


def _register() -> None:
    """Tell llvmlite where NumPy's ``cblas_sgemm``/``dgemm`` are; ImportError where it can't
    (``_compiled.load`` then keeps products as they were)."""
    try:
        lib = _numpy_openblas()
    except OSError as exc:  # a library threadpoolctl listed that ctypes cannot open
        raise ImportError(f"NumPy's OpenBLAS cannot be opened: {exc}") from exc
    for prec in "sd":
        for symbol in (f"scipy_cblas_{prec}gemm64_", f"cblas_{prec}gemm64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                llvm.add_symbol(f"lucid_cblas_{prec}gemm64", ctypes.cast(fn, ctypes.c_void_p).value)
                break
        else:
            raise ImportError(f"NumPy's OpenBLAS has no ILP64 cblas_{prec}gemm")


_register()

# cblas_?gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc), pointers
# passed as 64-bit integers (the same registers in the C calling convention).
_i32, _i64 = types.int32, types.int64
_SGEMM: Any = types.ExternalFunction(
    "lucid_cblas_sgemm64",
    types.void(_i32, _i32, _i32, _i64, _i64, _i64, types.float32, _i64, _i64, _i64, _i64,
               types.float32, _i64, _i64),
)  # fmt: skip
_DGEMM: Any = types.ExternalFunction(
    "lucid_cblas_dgemm64",
    types.void(_i32, _i32, _i32, _i64, _i64, _i64, types.float64, _i64, _i64, _i64, _i64,
               types.float64, _i64, _i64),
)  # fmt: skip


@jit
def _sgemm(ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
           c: int, ldc: int) -> None:  # fmt: skip
    """``c = op(a) @ op(b)`` (float32, row-major, addresses as integers)."""
    _SGEMM(_ROW_MAJOR, ta, tb, m, n, k, np.float32(1.0), a, lda, b, ldb, np.float32(0.0), c, ldc)


@jit
def _dgemm(ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
           c: int, ldc: int) -> None:  # fmt: skip
    """``c = op(a) @ op(b)`` (float64)."""
    _DGEMM(_ROW_MAJOR, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)


inner: Any = None


def _make_split() -> Any:
    def gemm_split(ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, b: int, ldb: int,
                   c: int, ldc: int, a_step: int, c_step: int, t: int) -> None:  # fmt: skip
        for i in prange(t):
            s, e = m * i // t, m * (i + 1) // t
            inner(ta, tb, e - s, n, k, a + s * a_step, lda, b, ldb, c + s * c_step, ldc)

    return gemm_split


def _make_split_columns() -> Any:
    def gemm_split_columns(ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, b: int,
                           ldb: int, c: int, ldc: int, b_step: int, c_step: int,
                           t: int) -> None:  # fmt: skip
        for i in prange(t):
            s, e = n * i // t, n * (i + 1) // t
            inner(ta, tb, m, e - s, k, a, lda, b + s * b_step, ldb, c + s * c_step, ldc)

    return gemm_split_columns


# Products of fewer rows than this split by columns: each thread's GEMM keeps every row, where
# halving few rows leaves OpenBLAS's kernels far below peak (a generated token's (64, 128) x
# (128, 384) at two threads: 57 against 88 us by rows, 111 on one thread; (12, 128) x
# (128, 512): 30 against 56; by rows from ~768 rows on; issue 30, docs/performance.md).
COLUMN_ROWS = 512
# ... and at least this many columns a thread.
_MIN_COLUMNS = 16


def _operand(x: Any) -> tuple[int, int, int] | None:
    """``(trans, ld, bytes from one row of op(x) to the next)`` of a 2-D operand stored
    row-major (C-like) or as the transpose of a row-major matrix (F-like); None otherwise."""
    size = x.itemsize
    r, c = x.strides
    if c == size and r >= x.shape[1] * size and r % size == 0:
        return _NO_TRANS, r // size, r
    if r == size and c >= x.shape[0] * size and c % size == 0:
        return _TRANS, c // size, size
    return None


def matmul(a: Any, b: Any, flops: float) -> Any:
    """``a @ b`` of 2-D float32 or float64 arrays (same dtype, each row-major or a transposed
    row-major view) with its rows (fewer than ``COLUMN_ROWS`` rows: its columns) split over
    numba's threads; None where it does not apply (other layouts, or ``split_threads`` says
    one thread)."""
    if a.dtype != b.dtype or a.dtype.char not in "fd" or min(*a.shape, b.shape[1]) < 2:
        return None
    opa, opb = _operand(a), _operand(b)
    if opa is None or opb is None:
        return None
    t = split_threads(int(flops))
    if t == 1:
        return None
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=a.dtype)
    (ta, lda, a_step), (tb, ldb, _) = opa, opb
    serial = _sgemm if a.dtype.char == "f" else _dgemm
    name = f"{'s' if a.dtype.char == 'f' else 'd'}gemm_split"
    if m < COLUMN_ROWS and n >= _MIN_COLUMNS * t:
        # op(b)'s column j: element j of a row-major b's row, row j of a transposed one's
        b_step = b.itemsize if tb == _NO_TRANS else ldb * b.itemsize
        args = (ta, tb, m, n, k, a.ctypes.data, lda, b.ctypes.data, ldb, out.ctypes.data, n,
                b_step, out.itemsize)  # fmt: skip
        name, make = name + "_columns", _make_split_columns
    else:
        args = (ta, tb, m, n, k, a.ctypes.data, lda, b.ctypes.data, ldb, out.ctypes.data, n,
                a_step, n * out.itemsize)  # fmt: skip
        make = _make_split
    with blas_threads.single_blas_thread():
        run_split(name, make, serial, args, t, lambda: np.matmul(a, b, out=out))
    return out


# A Linear's forward in one compiled call (``_gemm.linear``): the GEMM NumPy's ``matmul`` calls
# for ``x @ w.T`` (or ``w @ x^T`` then its transpose copied row-major), then ``b`` added to each
# row, one float add per element as NumPy's ``add``: the same bits as ``x @ w.T + b``, without
# NumPy's matmul and add dispatch and the separate pass of the bias (issue 30).
_TILE = 16


@jit
def linear(x: Any, w: Any, b: Any, out: Any, scratch: Any, bias: bool, transposed: bool) -> None:
    """``out = x @ w.T (+ b)`` for row-major 2-D ``x`` (m, k) and ``w`` (n, k) of float32 or
    float64; ``transposed``: as ``(w @ x^T)^T`` through ``scratch`` (n, m)."""
    m, k = x.shape
    n = w.shape[0]
    single = x.itemsize == 4
    if transposed:  # scratch = w @ x^T, then its transpose in tiles (and the bias)
        if single:
            _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, n, m, k, np.float32(1.0), w.ctypes.data, k,
                   x.ctypes.data, k, np.float32(0.0), scratch.ctypes.data, m)  # fmt: skip
        else:
            _DGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, n, m, k, 1.0, w.ctypes.data, k,
                   x.ctypes.data, k, 0.0, scratch.ctypes.data, m)  # fmt: skip
        for i0 in range(0, m, _TILE):
            i1 = min(i0 + _TILE, m)
            for j0 in range(0, n, _TILE):
                j1 = min(j0 + _TILE, n)
                for i in range(i0, i1):
                    for j in range(j0, j1):
                        out[i, j] = scratch[j, i]
                if bias:
                    for i in range(i0, i1):
                        for j in range(j0, j1):
                            out[i, j] += b[j]
        return
    if single:
        _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, m, n, k, np.float32(1.0), x.ctypes.data, k,
               w.ctypes.data, k, np.float32(0.0), out.ctypes.data, n)  # fmt: skip
    else:
        _DGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, m, n, k, 1.0, x.ctypes.data, k, w.ctypes.data, k,
               0.0, out.ctypes.data, n)  # fmt: skip
    if bias:
        for i in range(m):
            for j in range(n):
                out[i, j] += b[j]


# OpenBLAS's small-matrix sgemm kernels (no packing of the operands) serve a product whose
# m * n * k is at most 100^3 and, for the transposed-A kernel a row-major ``x @ w.T`` reaches,
# whose result has at most 1,200 elements and k >= 32 (``sgemm_small_kernel_permit_skylakex``):
# its AVX-512 cores only. A Linear's product of few rows then runs as blocks of that many
# columns, each on the small kernel: 0.24-0.84x the time of one packed GEMM for 2-100 rows of
# 128-512 features at one thread (a generated token's (64, 128) x (128, 384): 64 against 84 us;
# issue 30, docs/performance.md). Other cores: no small kernels, the blocks would only add
# calls.
SMALL_KERNEL_CORES = ("skylakex", "cooperlake", "sapphirerapids")
SMALL_KERNELS = _openblas_architecture().lower() in SMALL_KERNEL_CORES
_SMALL_RESULT = 1200
_SMALL_MNK = 100**3


# The block is a whole number of AVX-512 float32 vectors where it can be: a ragged block's last
# columns run on the kernel's tail code (64 rows: blocks of 16 columns 0.95-0.97x the time of
# blocks of 18, 0.94-0.99x from 16 to 100 rows), and the usual widths (128, 384, 512) then split
# into equal blocks, so the two threads of ``linear_blocks_split`` get equal columns (128 at
# 64 rows: 64 and 64 where blocks of 18 gave 72 and 56) (docs/performance.md, session 24).
_VECTOR = 16


def small_blocks(m: int, k: int) -> int:
    """The column block whose products OpenBLAS runs on its small-matrix kernels for an (m, k)
    float32 ``x @ w.T``, where that measured faster than one GEMM here (k >= 32 and m <= 24,
    or k >= 128 and m <= 100), rounded down to a multiple of 16 columns from 16 on; 0
    otherwise."""
    if not SMALL_KERNELS or k < 32 or not (m <= 24 or (k >= 128 and m <= 100)):
        return 0
    nb = min(_SMALL_RESULT // m, _SMALL_MNK // (m * k))
    return nb if nb < _VECTOR else nb // _VECTOR * _VECTOR


@jit
def _column_blocks(x: Any, w: Any, out: Any, nb: int, j0: int, j1: int, beta: Any) -> None:
    """Columns ``j0:j1`` of ``out = x @ w.T + beta * out`` (float32, row-major; ``beta`` 0:
    the product, 1: added into ``out`` by the GEMM itself) as one GEMM per ``nb`` columns on
    OpenBLAS's small-matrix kernels (``linear_blocks``, ``add_blocks``)."""
    m, k = x.shape
    n = w.shape[0]
    for s in range(j0, j1, nb):
        e = min(s + nb, j1)
        wa, oa = w.ctypes.data + s * k * 4, out.ctypes.data + s * 4
        _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, m, e - s, k, np.float32(1.0), x.ctypes.data, k,
               wa, k, beta, oa, n)  # fmt: skip


@jit
def linear_blocks(x: Any, w: Any, b: Any, out: Any, bias: bool, nb: int, j0: int,
                  j1: int) -> None:  # fmt: skip
    """Columns ``j0:j1`` of ``out = x @ w.T (+ b)`` (float32, row-major) as products of ``nb``
    columns each (``small_blocks``), then the bias over those columns, row by row (one add an
    element after its product: the bits of NumPy's add)."""
    m = x.shape[0]
    _column_blocks(x, w, out, nb, j0, j1, np.float32(0.0))
    if bias:
        bb = b[j0:j1]
        for i in range(m):
            row = out[i, j0:j1]
            for j in range(j1 - j0):
                row[j] += bb[j]


def _make_linear_blocks_split() -> Any:
    def linear_blocks_split(x: Any, w: Any, b: Any, out: Any, bias: bool, nb: int, j0: int,
                            j1: int, t: int) -> None:  # fmt: skip
        blocks = (j1 - j0 + nb - 1) // nb
        for i in prange(t):  # whole blocks a thread: the same calls, the same bits
            s = j0 + (blocks * i // t) * nb
            e = min(j0 + (blocks * (i + 1) // t) * nb, j1)
            inner(x, w, b, out, bias, nb, s, e)

    return linear_blocks_split


def linear_small(x: Any, w: Any, b: Any, out: Any, bias: bool, nb: int, flops: float,
                 threads: bool) -> None:  # fmt: skip
    """``linear_blocks`` over all columns, split by whole blocks over numba's threads where
    ``threads`` and ``split_threads`` says so (mid-sized products at two threads)."""
    n = w.shape[0]
    t = min(split_threads(int(flops)), (n + nb - 1) // nb) if threads else 1
    if t > 1:
        args = (x, w, b, out, bias, nb, 0, n)
        run_split("linear_blocks_split", _make_linear_blocks_split, linear_blocks, args, t)
    else:
        linear_blocks(x, w, b, out, bias, nb, 0, n)


# A recurrent layer's per-step product accumulated into the step's pre-activations (``acts[t]
# += h @ w_hh^T``, kernels/lstm.py and gru.py): the column blocks of ``linear_blocks`` on
# OpenBLAS's small-matrix kernels, each GEMM adding into ``out`` itself (CBLAS ``beta = 1``):
# no temporary product and no separate pass of the add. The add is the kernel's one float add
# an element after its product (``C = alpha * AB + beta * C`` with alpha = beta = 1: the bits
# of the product added by NumPy's ``add``).


@jit
def add_blocks(x: Any, w: Any, out: Any, nb: int, j0: int, j1: int) -> None:
    """Columns ``j0:j1`` of ``out += x @ w.T`` (float32; ``x`` (m, k), ``w`` (n, k) and ``out``
    (m, n) C-contiguous) as products of ``nb`` columns each (``small_blocks``)."""
    _column_blocks(x, w, out, nb, j0, j1, np.float32(1.0))


def _make_add_blocks_split() -> Any:
    def add_blocks_split(x: Any, w: Any, out: Any, nb: int, j0: int, j1: int,
                         t: int) -> None:  # fmt: skip
        blocks = (j1 - j0 + nb - 1) // nb
        for i in prange(t):  # whole blocks a thread: the same calls, the same bits
            s = j0 + (blocks * i // t) * nb
            e = min(j0 + (blocks * (i + 1) // t) * nb, j1)
            inner(x, w, out, nb, s, e)

    return add_blocks_split


def add_small(x: Any, w: Any, out: Any, nb: int, threads: bool) -> None:
    """``add_blocks`` over all columns, split by whole blocks over numba's threads where
    ``threads`` and ``split_threads`` says so (the same bits at any thread count)."""
    m, k = x.shape
    n = w.shape[0]
    t = min(split_threads(2 * m * k * n), (n + nb - 1) // nb) if threads else 1
    if t > 1:
        run_split("add_blocks_split", _make_add_blocks_split, add_blocks, (x, w, out, nb, 0, n), t)
    else:
        add_blocks(x, w, out, nb, 0, n)
