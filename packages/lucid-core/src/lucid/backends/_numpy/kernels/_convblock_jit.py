"""A 2-D convolution's weight gradient without a whole column matrix, with numba
(``lucid-core[numba]``): im2col of a few samples at a time into a block that stays in L2, and
that block's ``col^T @ dy`` added into the gradient by one BLAS call, float32.

Why: the weight gradient ``col^T @ dy`` read the column matrix the forward kept (LeNet-5's conv2
at batch 64: 6,400 x 150, 3.8 MB). By the time the backward reaches it the matrix has left the
caches, and on these VMs reading it back costs more than the product: 0.47-0.95 ms in the step
against 0.30 ms with it in cache (a cold read alone: 0.9-1.5 ms). Building the columns again a
block at a time reads only the input (300 KB) and keeps every write in L2 (docs/performance.md,
session 17). The samples split over numba's threads, each summing its blocks into its own
``(K, C_out)`` partial (BLAS with beta 1), the partials added at the end.

The im2col is ``_im2col_jit``'s loop (the same column values); the sums run in another order than
one GEMM over all rows: float32 rounding apart. The GEMM is NumPy's OpenBLAS through
``_gemm_jit``'s binding (imported first: where it does not load, neither does this module, and
the weight gradient keeps its column matrix).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
from numba import prange

from lucid.backends._numpy._numba import run_split, specialised, split_threads
from lucid.backends._numpy.kernels._gemm_jit import _NO_TRANS, _ROW_MAJOR, _SGEMM, _TRANS
from lucid.backends._numpy.kernels._im2col_jit import _make_move

_F = np.float32


# The serial im2col of the kernel size a made ``weight_blocks`` calls: a global of the made
# function, not a closure value (numba keys its disk cache on the pickled closure; see
# ``specialised``'s ``inner``).
im2col_block: Any = None


def _make_weight_blocks(KH: int, KW: int) -> Any:  # noqa: N803 (compile-time constants)
    def weight_blocks(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int, dy: Any,
                      block: int, col: Any, acc: Any) -> None:  # fmt: skip
        """``acc`` (K, C_out) ``+=`` ``col^T @ dy`` over the samples of ``grid`` (padded,
        channels-last ``(N, Hp, Wp * C)``), ``block`` samples at a time: their columns built in
        ``col`` (at least ``block * OH * OW`` rows of K), then one GEMM; ``dy`` ``(N * OH *
        OW, C_out)`` C-contiguous."""
        rows = oh * ow
        kk, cout = col.shape[1], dy.shape[1]
        n = grid.shape[0]
        for s in range(0, n, block):
            e = min(n, s + block)
            r = (e - s) * rows
            im2col_block(grid[s:e], sh, sw, dh, dw, oh, ow, col[:r])
            _SGEMM(_ROW_MAJOR, _TRANS, _NO_TRANS, kk, cout, r, _F(1.0), col.ctypes.data, kk,
                   dy.ctypes.data + 4 * s * rows * cout, cout, _F(1.0), acc.ctypes.data,
                   cout)  # fmt: skip

    move = _im2col(KH, KW)  # made already (``weight_grad``): no second take of the lock
    return types.FunctionType(weight_blocks.__code__,
                              {**weight_blocks.__globals__, "im2col_block": move},
                              weight_blocks.__name__)  # fmt: skip


inner: Any = None


def _make_split_weight_blocks() -> Any:
    def weight_blocks_split(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int,
                            dy: Any, block: int, cols: Any, accs: Any, k: int) -> None:  # fmt: skip
        n, rows = grid.shape[0], oh * ow
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(grid[s:e], sh, sw, dh, dw, oh, ow, dy[s * rows : e * rows], block, cols[t],
                  accs[t])  # fmt: skip

    return weight_blocks_split


def _im2col(kh: int, kw: int) -> Any:
    """``_im2col_jit``'s compiled im2col of a ``kh x kw`` kernel."""
    return specialised(f"im2col_{kh}x{kw}", _make_move, kh, kw, False)


def weight_grad(kh: int, kw: int, grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int,
                ow: int, dy: Any, block: int, out: Any) -> None:  # fmt: skip
    """Into ``out`` (K, C_out) float32: ``col^T @ dy`` of the ``kh x kw`` convolution of
    ``grid`` (``weight_blocks``), its samples split over numba's threads where
    ``split_threads`` says so (each with its own column block and partial sum)."""
    n = grid.shape[0]
    kk, cout = out.shape
    k = min(n, split_threads(n * oh * ow * kk))
    name = f"weight_blocks_{kh}x{kw}"
    _im2col(kh, kw)  # before ``specialised`` holds its lock to make the function calling it
    serial = specialised(name, _make_weight_blocks, kh, kw)
    if k <= 1:
        out.fill(0.0)
        serial(grid, sh, sw, dh, dw, oh, ow, dy, block, np.empty((block * oh * ow, kk), _F), out)
        return
    cols = np.empty((k, block * oh * ow, kk), _F)
    accs = np.zeros((k, kk, cout), _F)

    def alone() -> None:
        accs[0].fill(0.0)
        serial(grid, sh, sw, dh, dw, oh, ow, dy, block, cols[0], accs[0])
        accs[1:].fill(0.0)

    run_split(name + "_split", _make_split_weight_blocks, serial,
              (grid, sh, sw, dh, dw, oh, ow, dy, block, cols, accs), k, alone)  # fmt: skip
    np.sum(accs, axis=0, out=out)


# -- the forward and the input gradient by the same blocks --------------------------------------
# Each block's rows are its samples' own: the forward writes its rows of the output, the input
# gradient adds its column gradient into its samples of the padded gradient, so the blocks need
# no sum after and give the bits of one GEMM and one col2im over the whole batch.
col2im_block: Any = None


def _make_forward_blocks(KH: int, KW: int) -> Any:  # noqa: N803 (compile-time constants)
    def forward_blocks(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int,
                       wrows: Any, block: int, col: Any, out: Any) -> None:  # fmt: skip
        """``out`` ``(N * OH * OW, C_out)`` ``= col @ wrows^T`` over the samples of ``grid``,
        ``block`` samples at a time, their columns built in ``col``; ``wrows`` ``(C_out, K)``
        C-contiguous (``im2col._weight_rows``)."""
        rows = oh * ow
        kk, cout = col.shape[1], wrows.shape[0]
        n = grid.shape[0]
        for s in range(0, n, block):
            e = min(n, s + block)
            r = (e - s) * rows
            im2col_block(grid[s:e], sh, sw, dh, dw, oh, ow, col[:r])
            _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, r, cout, kk, _F(1.0), col.ctypes.data, kk,
                   wrows.ctypes.data, kk, _F(0.0), out.ctypes.data + 4 * s * rows * cout,
                   cout)  # fmt: skip

    return types.FunctionType(forward_blocks.__code__,
                              {**forward_blocks.__globals__, "im2col_block": _im2col(KH, KW)},
                              forward_blocks.__name__)  # fmt: skip


def _make_input_blocks(KH: int, KW: int) -> Any:  # noqa: N803 (compile-time constants)
    def input_blocks(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int, dy: Any,
                     wrows: Any, block: int, col: Any) -> None:  # fmt: skip
        """The column gradient ``dy @ wrows`` of ``block`` samples at a time into ``col``,
        added back into their samples of ``grid`` (the zeroed, padded, channels-last input
        gradient ``(N, Hp, Wp * C)``): col2im."""
        rows = oh * ow
        kk, cout = col.shape[1], wrows.shape[0]
        n = grid.shape[0]
        for s in range(0, n, block):
            e = min(n, s + block)
            r = (e - s) * rows
            _SGEMM(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, r, kk, cout, _F(1.0),
                   dy.ctypes.data + 4 * s * rows * cout, cout, wrows.ctypes.data, kk, _F(0.0),
                   col.ctypes.data, kk)  # fmt: skip
            col2im_block(grid[s:e], sh, sw, dh, dw, oh, ow, col[:r])

    return types.FunctionType(input_blocks.__code__,
                              {**input_blocks.__globals__, "col2im_block": _col2im(KH, KW)},
                              input_blocks.__name__)  # fmt: skip


def _make_split_forward_blocks() -> Any:
    def forward_blocks_split(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int,
                             wrows: Any, block: int, cols: Any, out: Any,
                             k: int) -> None:  # fmt: skip
        n, rows = grid.shape[0], oh * ow
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(grid[s:e], sh, sw, dh, dw, oh, ow, wrows, block, cols[t],
                  out[s * rows : e * rows])  # fmt: skip

    return forward_blocks_split


def _make_split_input_blocks() -> Any:
    def input_blocks_split(grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int,
                           dy: Any, wrows: Any, block: int, cols: Any, k: int) -> None:  # fmt: skip
        n, rows = grid.shape[0], oh * ow
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(grid[s:e], sh, sw, dh, dw, oh, ow, dy[s * rows : e * rows], wrows, block,
                  cols[t])  # fmt: skip

    return input_blocks_split


def _col2im(kh: int, kw: int) -> Any:
    """``_im2col_jit``'s compiled col2im (adds) of a ``kh x kw`` kernel."""
    return specialised(f"col2im_{kh}x{kw}", _make_move, kh, kw, True)


def _by_sample_blocks(name: str, make: Any, make_split: Any, kh: int, kw: int, n: int,
                      rows: int, kk: int, block: int, args: Any) -> None:  # fmt: skip
    """Run the made ``name`` (``make``) over ``n`` samples of ``rows`` output positions each,
    its samples split over numba's threads (``make_split``) where ``split_threads`` says so:
    ``args(cols)`` gives its arguments with ``cols``, the column blocks (one ``(block * rows,
    kk)`` block, or one a thread). Nothing to sum after: each block writes its own samples."""
    k = min(n, split_threads(n * rows * kk))
    serial = specialised(name, make, kh, kw)
    cols = np.empty((max(k, 1), block * rows, kk), _F)
    if k <= 1:
        serial(*args(cols[0]))
        return
    run_split(name + "_split", make_split, serial, args(cols), k,
              lambda: serial(*args(cols[0])))  # fmt: skip


def forward(kh: int, kw: int, grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int,
            wrows: Any, block: int, out: Any) -> None:  # fmt: skip
    """Into ``out`` ``(N * OH * OW, C_out)`` float32: the ``kh x kw`` convolution of ``grid``
    (``forward_blocks``), its samples split over numba's threads where ``split_threads`` says
    so."""
    _im2col(kh, kw)  # before ``specialised`` holds its lock (``weight_grad``)
    _by_sample_blocks(f"forward_blocks_{kh}x{kw}", _make_forward_blocks,
                      _make_split_forward_blocks, kh, kw, grid.shape[0], oh * ow, wrows.shape[1],
                      block, lambda cols: (grid, sh, sw, dh, dw, oh, ow, wrows, block, cols,
                                           out))  # fmt: skip


def input_grad(kh: int, kw: int, grid: Any, sh: int, sw: int, dh: int, dw: int, oh: int,
               ow: int, dy: Any, wrows: Any, block: int) -> None:  # fmt: skip
    """Into ``grid`` (zeroed): the input gradient of the ``kh x kw`` convolution
    (``input_blocks``), its samples split over numba's threads where ``split_threads`` says
    so."""
    _col2im(kh, kw)  # before ``specialised`` holds its lock (``weight_grad``)
    _by_sample_blocks(f"input_blocks_{kh}x{kw}", _make_input_blocks, _make_split_input_blocks,
                      kh, kw, grid.shape[0], oh * ow, wrows.shape[1], block,
                      lambda cols: (grid, sh, sw, dh, dw, oh, ow, dy, wrows, block,
                                    cols))  # fmt: skip
