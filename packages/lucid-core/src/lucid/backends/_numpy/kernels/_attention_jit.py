"""Attention's scaled, masked softmax (``softmax(where(mask, fill, x * scale))`` over the last
dim) as compiled passes for ``lucid.compile``'s fused op (``lucid.compiler._arrays``).

Optional (``lucid-core[numba]``). The eager ops make six passes each way, with a temporary per
op; here the forward is two compiled passes around NumPy's ``exp`` (numba's ``exp`` is ~6x
slower than NumPy's SIMD one) and the backward one pass. Row sums follow NumPy's pairwise
summation (``pairwise``), without fast-math: the results are the eager ops' bit for bit, where
tested so (``tests/test_nn_compile_fused.py``).
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import U, jit_math

# Rows up to this long: one block of NumPy's pairwise summation (longer rows recurse there,
# which numba compiles badly from inside another kernel; the caller takes NumPy's passes).
MAX_ROW = 128


@jit_math
def pairwise(a: Any, lo: int, n: int) -> Any:
    """``a[lo:lo + n].sum()`` for ``n <= MAX_ROW``, in NumPy's order (``pairwise_sum``: 8
    partial sums from 8 values on, else one running sum)."""
    if n < 8:  # NumPy starts from -0.0, and -0.0 + a = a for every a
        s = a[lo]
        for i in range(lo + 1, lo + n):
            s += a[i]
        return s
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    end = lo + n - n % 8
    for i in range(lo + 8, end, 8):
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(end, lo + n):
        s += a[i]
    return s


@jit_math
def shifted(x: Any, cond: Any, inv: bool, fill: Any, scale: Any, out: Any) -> None:
    """``out = s - max(s)`` per row, ``s = where(cond != inv, fill, x * scale)``; ``x`` and
    ``out`` ``(rows, n)``, ``cond`` ``(p, n)`` (row ``r`` reads ``cond[r % p]``). A row with a
    NaN gets NaN as its max, as ``np.maximum.reduce`` gives."""
    rows, n = x.shape
    p = cond.shape[0]
    for r in range(rows):
        m = cond[r % p]
        o = out[r]
        for j in range(n):
            o[j] = fill if m[j] != inv else x[r, j] * scale
        top = o[0]
        nan = False
        for j in range(n):  # branch-free: a select per value (twice the speed of an if)
            v = o[j]
            nan |= v != v
            top = v if v > top else top
        if nan:
            for j in range(n):
                if o[j] != o[j]:
                    top = o[j]
                    break
        for j in range(n):
            o[j] = o[j] - top


@jit_math
def normalize(e: Any) -> None:
    """``e /= e.sum(-1)`` per row (the sum in NumPy's order)."""
    rows, n = e.shape
    for r in range(rows):
        row = e[r]
        s = pairwise(row, 0, n)
        for j in range(n):
            row[j] = row[j] / s


@jit_math
def backward(g: Any, y: Any, cond: Any, inv: bool, scale: Any, out: Any) -> None:
    """``out = where(cond != inv, 0, g y - y sum(g y)) * scale`` per row."""
    rows, n = g.shape
    p = cond.shape[0]
    for r in range(rows):
        m = cond[r % p]
        o = out[r]
        for j in range(n):
            o[j] = g[r, j] * y[r, j]
        s = pairwise(o, 0, n)
        for j in range(n):
            o[j] = 0 if m[j] != inv else (o[j] - y[r, j] * s) * scale


@jit_math
def column_shift(pt: Any, bias: Any, masked: bool, m: Any) -> None:
    """``pt += bias`` (where ``masked``), then ``pt -= pt.max(axis=1, keepdims=True)``, in
    place over a C-contiguous ``pt`` (B, S, L) and ``bias`` (S, L); ``m`` is (L,) scratch.
    The maximum keeps the first of equal values and propagates NaN, as ``np.maximum``."""
    nb, ns, nl = pt.shape
    for b in range(nb):
        if masked:
            for s in range(ns):
                for j in range(nl):
                    pt[U(b), U(s), U(j)] = pt[U(b), U(s), U(j)] + bias[U(s), U(j)]
        for j in range(nl):
            m[U(j)] = pt[U(b), 0, U(j)]
        for s in range(1, ns):
            for j in range(nl):
                v = pt[U(b), U(s), U(j)]
                w = m[U(j)]
                if not (w >= v or w != w):
                    m[U(j)] = v
        for s in range(ns):
            for j in range(nl):
                pt[U(b), U(s), U(j)] = pt[U(b), U(s), U(j)] - m[U(j)]
