"""softmax and log_softmax over float32 rows, forward and gradient, as compiled passes per row
(``lucid-core[numba]``; ``kernels/softmax``'s ``COMPILED_ROWS``).

Why: the ufuncs' passes over a block of rows (max, subtract, ``exp``, sum, ``log``, subtract)
read and write the block six times and store ``exp``'s values. A row here is read three times
from cache and written once: its maximum, the sum of ``exp(x - max)`` (not stored), and the
result; the gradient sums ``g`` and writes ``g - exp(y) * sum`` in one pass. A word-level
language model's (700, 10,000) logits: 8.6 -> ~4 ms forward on one thread (torch 5.3;
docs/performance.md, issue 30).

- ``exp`` is Cephes' float32 polynomial (as ``_sdpa_jit``'s; relative error below 1e-7), which
  LLVM vectorises: 0 below -87.3 (NumPy's gives subnormals down to -103.3), inf above 88.7,
  NaN for NaN.
- Sums run in 16 float32 lanes over runs of 1,024 elements, each run's lanes added in float64
  (float32 rounding over ~64 terms a lane); products may fuse into FMAs (``contract``).
- The maximum ignores NaN: a row with a NaN has a NaN sum, so every value of it is NaN, as
  PyTorch's (and the ufuncs') results are. Rows of -inf, or with +inf, are NaN likewise.

So the values are within float32 rounding of the ufuncs' (not their bits: the tests hold them to
a float64 oracle). Float32 only; rows are C-contiguous ``(rows, n)`` arrays, split over numba's
threads by rows (or run in the pool's blocks: ``softmax.py``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import prange

from lucid.backends._numpy._numba import NoAliasCompiler, run

_F = np.float32
_LOW, _HIGH = _F(-87.33654), _F(88.72283)  # exp's result leaves float32's normal range
_LOG2E = _F(1.44269504)
_LN2_HI, _LN2_LO = _F(0.693359375), _F(-2.12194440e-4)
_P0, _P1, _P2 = _F(1.9875691500e-4), _F(1.3981999507e-3), _F(8.3334519073e-3)
_P3, _P4, _P5 = _F(4.1665795894e-2), _F(1.6666665459e-1), _F(5.0000001201e-1)
_INF = _F(np.inf)
_ZERO = _F(0.0)
_LANES = 16  # partial sums and maxima kept side by side: the loops over them vectorise
_RUN = 64 * _LANES  # elements summed in float32 before a run's lanes go into the float64 total

_jit = numba.njit(nogil=True, cache=True, fastmath={"contract"}, error_model="numpy",
                  pipeline_class=NoAliasCompiler)  # fmt: skip
_inline = numba.njit(inline="always", nogil=True, cache=True, fastmath={"contract"},
                     error_model="numpy")  # fmt: skip


@_inline
def _expf(x: Any) -> Any:
    """float32 ``exp(x)``: Cephes' range reduction by ln 2 and degree-6 polynomial; selects,
    not branches (LLVM vectorises the loops calling it)."""
    c = x if not (x < _LOW) else _LOW
    c = c if not (c > _HIGH) else _HIGH
    n = np.floor(c * _LOG2E + _F(0.5))
    r = c - n * _LN2_HI - n * _LN2_LO
    poly = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
    p = poly * (r * r) + r + _F(1.0)
    k = np.int32(n)
    top = k > np.int32(127)  # 2^128 is past float32: 2^127 * 2
    k = k - np.int32(1) if top else k
    e = p * np.int32((k + np.int32(127)) << np.int32(23)).view(np.float32)
    e = e * _F(2.0) if top else e
    e = e if not (x < _LOW) else _ZERO
    return e if not (x > _HIGH) else _INF


@_jit
def _row_max(row: Any, acc: Any) -> Any:
    """The row's largest value, NaN ignored (its caller's sum is NaN then); ``acc``: scratch
    of ``_LANES`` float32."""
    n = row.shape[0]
    full = n // _LANES * _LANES
    m = row[0]
    if full:
        for u in range(_LANES):
            acc[u] = row[u]
        for j in range(_LANES, full, _LANES):
            for u in range(_LANES):
                v = row[j + u]
                w = acc[u]
                acc[u] = v if v > w else w
        for u in range(_LANES):
            v = acc[u]
            m = v if v > m else m
    for j in range(full, n):
        v = row[j]
        m = v if v > m else m
    return m


@_jit
def _lanes_exp_sum(blk: Any, shift: Any, acc: Any) -> float:
    """``sum(exp(blk - shift))`` over ``blk``'s whole lanes (its length a multiple of
    ``_LANES``): float32 lanes (``acc``, the caller's scratch), added in float64."""
    acc[:] = 0
    full = blk.shape[0] // _LANES * _LANES  # (bounded by the length itself: not vectorised)
    for j in range(0, full, _LANES):
        for u in range(_LANES):
            acc[u] += _expf(blk[j + u] - shift)
    total = 0.0
    for u in range(_LANES):
        total += acc[u]
    return total


@_jit
def _lanes_exp_store_sum(blk: Any, shift: Any, o: Any, acc: Any) -> float:
    """``_lanes_exp_sum``, each ``exp`` written to ``o`` too."""
    acc[:] = 0
    full = blk.shape[0] // _LANES * _LANES  # (bounded by the length itself: not vectorised)
    for j in range(0, full, _LANES):
        for u in range(_LANES):
            e = _expf(blk[j + u] - shift)
            o[j + u] = e
            acc[u] += e
    total = 0.0
    for u in range(_LANES):
        total += acc[u]
    return total


@_jit
def _lanes_sum(blk: Any, acc: Any) -> float:
    """``sum(blk)`` over ``blk``'s whole lanes: float32 lanes (``acc``), added in float64."""
    acc[:] = 0
    full = blk.shape[0] // _LANES * _LANES  # (bounded by the length itself: not vectorised)
    for j in range(0, full, _LANES):
        for u in range(_LANES):
            acc[u] += blk[j + u]
    total = 0.0
    for u in range(_LANES):
        total += acc[u]
    return total


@_jit
def _exp_sum(row: Any, shift: Any, out: Any, store: bool, acc: Any) -> float:
    """``sum(exp(row - shift))`` (float64) in runs of ``_RUN`` elements (slices of a fixed
    length: a loop bounded by a run's start and stop does not vectorise), each ``exp`` written
    to ``out`` where ``store``."""
    n = row.shape[0]
    runs = n // _RUN
    full = n // _LANES * _LANES
    total = 0.0
    for r in range(runs + 1):
        a, b = r * _RUN, (r + 1) * _RUN if r < runs else full
        if store:
            total += _lanes_exp_store_sum(row[a:b], shift, out[a:b], acc)
        else:
            total += _lanes_exp_sum(row[a:b], shift, acc)
    for j in range(full, n):
        e = _expf(row[j] - shift)
        if store:
            out[j] = e
        total += e
    return total


@_jit
def _sum(row: Any, acc: Any) -> float:
    """``sum(row)`` (float64) in the lanes and runs of ``_exp_sum``."""
    n = row.shape[0]
    runs = n // _RUN
    full = n // _LANES * _LANES
    total = 0.0
    for r in range(runs + 1):
        total += _lanes_sum(row[r * _RUN : (r + 1) * _RUN if r < runs else full], acc)
    for j in range(full, n):
        total += row[j]
    return total


@_jit
def _softmax_rows(x: Any, out: Any, lo: int, hi: int, log: bool) -> None:
    """softmax (``log``: log_softmax) of rows ``lo`` to ``hi`` of ``x`` into ``out``."""
    n = x.shape[1]
    # The lanes' scratch, made once for all the rows, not per row in each pass (~35 ns a row:
    # (768, 65) 98 -> 81 us, (64, 10) 8.0 -> 6.6 us; the same bits; issue 30). The arguments do
    # not alias (``NoAliasCompiler``): the lane loops still vectorise.
    acc = np.empty(_LANES, np.float32)
    for i in range(lo, hi):
        row = x[i]
        o = out[i]
        m = _row_max(row, acc)
        if log:  # x - max - log(sum(exp(x - max)))
            ls = _F(np.log(_exp_sum(row, m, o, False, acc)))
            for j in range(n):
                o[j] = (row[j] - m) - ls
        else:  # exp(x - max) / sum(exp(x - max))
            s = _F(_exp_sum(row, m, o, True, acc))
            for j in range(n):
                o[j] = o[j] / s


@_jit
def log_softmax_rows(x: Any, out: Any, lo: int, hi: int) -> None:
    """log_softmax of rows ``lo`` to ``hi``."""
    _softmax_rows(x, out, lo, hi, True)


@_jit
def softmax_rows(x: Any, out: Any, lo: int, hi: int) -> None:
    """softmax of rows ``lo`` to ``hi``."""
    _softmax_rows(x, out, lo, hi, False)


@_jit
def log_softmax_grad_rows(g: Any, y: Any, out: Any, lo: int, hi: int) -> None:
    """``out[i] = g[i] - exp(y[i]) * sum(g[i])`` for rows ``lo`` to ``hi``."""
    n = g.shape[1]
    acc = np.empty(_LANES, np.float32)  # as _softmax_rows'
    for i in range(lo, hi):
        gi = g[i]
        yi = y[i]
        o = out[i]
        s = _F(_sum(gi, acc))
        for j in range(n):
            o[j] = gi[j] - _expf(yi[j]) * s


@_jit
def one_hot_grad_rows(y: Any, cols: Any, values: Any, sums: Any, out: Any, lo: int,
                      hi: int) -> None:  # fmt: skip
    """``log_softmax_grad_rows`` for a ``g`` zero but ``values[i]`` at column ``cols[i]`` of
    row i, whose sum is ``sums[i]`` (``values + 0``): the same expressions, without reading
    ``g`` (the zeros' ``0 - e s``)."""
    n = y.shape[1]
    for i in range(lo, hi):
        yi = y[i]
        o = out[i]
        s = sums[i]
        for j in range(n):
            o[j] = _ZERO - _expf(yi[j]) * s
        c = cols[i]
        c = c + n if c < 0 else c
        o[c] = values[i] - _expf(yi[c]) * s


# -- over all rows, split over numba's threads (each split calls the serial pass as ``inner``) --
inner: Any = None


def _make_split_2() -> Any:
    def split(a: Any, out: Any, lo: int, hi: int, k: int) -> None:
        n = hi - lo
        for t in prange(k):
            inner(a, out, lo + n * t // k, lo + n * (t + 1) // k)

    return split


def _make_split_3() -> Any:
    def split(g: Any, y: Any, out: Any, lo: int, hi: int, k: int) -> None:
        n = hi - lo
        for t in prange(k):
            inner(g, y, out, lo + n * t // k, lo + n * (t + 1) // k)

    return split


def _make_split_5() -> Any:
    def split(y: Any, cols: Any, values: Any, sums: Any, out: Any, lo: int, hi: int,
              k: int) -> None:  # fmt: skip
        n = hi - lo
        for t in prange(k):
            inner(y, cols, values, sums, out, lo + n * t // k, lo + n * (t + 1) // k)

    return split


_SERIAL: dict[str, tuple[Any, Any]] = {
    "log_softmax_rows": (log_softmax_rows, _make_split_2),
    "softmax_rows": (softmax_rows, _make_split_2),
    "log_softmax_grad_rows": (log_softmax_grad_rows, _make_split_3),
    "one_hot_grad_rows": (one_hot_grad_rows, _make_split_5),
}


def rows(name: str, *args: Any) -> None:
    """The pass ``name`` over rows ``args[-2]`` to ``args[-1]``: serial, or split over numba's
    threads where the rows hold enough elements (``_numba.run``)."""
    serial, make = _SERIAL[name]
    lo, hi = args[-2], args[-1]
    if hi - lo < 2:
        serial(*args)
    else:
        run(name, serial, make, args, (hi - lo) * args[-3].shape[1])
