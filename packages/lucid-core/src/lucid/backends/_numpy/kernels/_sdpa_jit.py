"""Attention's forward over whole heads as one compiled pass (``kernels.ATTENTION`` on NumPy,
``lucid-core[numba]``): for each (batch, head) matrix, the scores ``k @ q^T * factor`` by one
BLAS call into a (S, L) block that stays in cache, the causal mask, each column's maximum,
``exp``, the column sums and the division in compiled loops over that block, and the result
``p^T @ v`` by a second BLAS call written straight into the output's layout.

Why: lucid-nn's NumPy passes over the whole (B, H, S, L) score array (a scaled copy of q^T, the
product, the shift, ``exp``, the sums, the division, the product) read and write ~10 arrays of
the scores' size, each pass leaving the cache; here each head's block is made and used in L1/L2
(a GPT block's (12, 4, 64, 32) attention: 470 against ~530 us of passes on one thread, and the
heads split over numba's threads in one fork-join, docs/performance.md, issue 30).

``exp`` is a float32 polynomial (Cephes' ``expf``: a range reduction by ln 2 and a degree-6
polynomial, relative error below 1e-7 over [-87, 0], exactly 1 at 0) that LLVM vectorises;
numba's own ``exp`` is libm's scalar call, ~6x slower than NumPy's SIMD loop. Its arguments
are ``score - column max`` <= 0, so no overflow; below -87 it gives 0 (NumPy's gives a
subnormal below 1.2e-38, which the division by a sum >= 1 makes no different). NaN stays NaN.
Float32 only (float64 declines: the ufuncs' passes run). The heads reach BLAS through
``_gemm_jit``'s binding of NumPy's own OpenBLAS (imported first: where it does not load, this
module does not either, and attention keeps its NumPy passes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from lucid.backends._numpy._numba import U, jit_math, run
from lucid.backends._numpy.kernels._gemm_jit import _NO_TRANS, _ROW_MAJOR, _SGEMM, _TRANS

_F = np.float32
_LOW = _F(-87.0)  # exp below this is under float32's smallest normal: 0 here
_LOG2E = _F(1.44269504)
_LN2_HI, _LN2_LO = _F(0.693359375), _F(-2.12194440e-4)
_P0, _P1, _P2 = _F(1.9875691500e-4), _F(1.3981999507e-3), _F(8.3334519073e-3)
_P3, _P4, _P5 = _F(4.1665795894e-2), _F(1.6666665459e-1), _F(5.0000001201e-1)

# The heads split over numba's threads from this many score elements (B * H * S * L) on.
SPLIT_ELEMENTS = 1 << 15
# A causal head of at least two blocks of queries runs block by block, each block of queries
# against the keys it may see only (key s for query j >= s): the scores, their softmax and the
# products skip the masked corner, a quarter of the work at two blocks, ~40% at four (torch's
# CPU flash attention skips it too). Blocks of a quarter of the queries, at least
# ``QUERY_BLOCK`` and at most ``4 * QUERY_BLOCK`` (fewer, bigger products ran faster from 256
# queries on; docs/performance.md, session 17); ``math.inf``: never blocked.
QUERY_BLOCK = 32


def query_block(length: int, causal: bool) -> int:
    """The block of queries a head of ``length`` queries runs in (``length``: one block)."""
    if not causal or length < 2 * QUERY_BLOCK:
        return length
    return int(min(4 * QUERY_BLOCK, max(QUERY_BLOCK, -(-length // 4))))


@jit_math
def _softmax_columns(pt: Any, j0: int, j1: int, kend: int, causal: bool, m: Any, tot: Any,
                     bits: Any) -> None:  # fmt: skip
    """Columns ``j0:j1`` of ``pt`` (scores, keys down the rows) over rows ``0:kend``: the
    softmax down each column in place (causal: key s masked for query j < s). ``m``, ``tot``
    (L,) float32 and ``bits`` (L,) int32 are scratch. Indices unsigned (``U``): numba's
    negative-index check on a loop from ``j0`` kept LLVM from vectorising it (3.5x slower)."""
    scale = bits.view(np.float32)
    ninf = _F(-np.inf)
    for j in range(U(j0), U(j1)):
        m[j] = pt[0, j]
        tot[j] = _F(0.0)
    for s in range(U(1), U(kend)):
        for j in range(U(j0), U(j1)):
            v = pt[s, j] if not (causal and j < s) else ninf
            w = m[j]
            m[j] = v if not (w >= v or w != w) else w  # NaN propagates, as np.maximum
    for s in range(U(kend)):
        for j in range(U(j0), U(j1)):
            x = pt[s, j] - m[j] if not (causal and j < s) else ninf
            c = max(x, _LOW)
            n = np.floor(c * _LOG2E + _F(0.5))
            r = c - n * _LN2_HI - n * _LN2_LO
            poly = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
            p = poly * (r * r) + r + _F(1.0)
            pt[s, j] = p if x >= _LOW else (_F(0.0) if x < _LOW else x)  # x NaN: NaN
            bits[j] = (np.int32(n) + np.int32(127)) << np.int32(23)  # 2^n's bits
        for j in range(U(j0), U(j1)):
            y = pt[s, j] * scale[j]
            pt[s, j] = y
            tot[j] += y
    for j in range(U(j0), U(j1)):
        tot[j] = _F(1.0) / tot[j]
    for s in range(U(kend)):
        for j in range(U(j0), U(j1)):
            pt[s, j] = pt[s, j] * tot[j]


@jit_math
def head(qa: int, lq: int, ka: int, lk: int, va: int, lv: int, oa: int, lo: int, length: int,
         source: int, e: int, ev: int, factor: float, causal: bool, block: int, pt: Any, m: Any,
         tot: Any, bits: Any) -> None:  # fmt: skip
    """One (batch, head): ``pt`` (S, L) = softmax over S of ``k q^T * factor`` (causal: key s
    masked for query j < s), and ``out`` (L, Ev) = ``pt^T v``, by blocks of ``block`` queries
    (causal: each against keys ``0:min(S, end of block)`` only, the masked rows below set to
    0). q, k, v and out are given by the address of their first element and their row stride
    in elements (rows contiguous); ``m``, ``tot`` (L,) float32 and ``bits`` (L,) int32 are
    scratch."""
    pa = pt.ctypes.data
    for j0 in range(0, length, block):
        j1 = min(length, j0 + block)
        kend = min(source, j1) if causal else source
        w = j1 - j0
        _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, kend, w, e, _F(factor), ka, lk, qa + 4 * j0 * lq,
               lq, _F(0.0), pa + 4 * j0, length)  # fmt: skip
        _softmax_columns(pt, j0, j1, kend, causal, m, tot, bits)
        for s in range(U(kend), U(source)):
            for j in range(U(j0), U(j1)):
                pt[s, j] = _F(0.0)
        _SGEMM(_ROW_MAJOR, _TRANS, _NO_TRANS, w, ev, kend, _F(1.0), pa + 4 * j0, length, va, lv,
               _F(0.0), oa + 4 * j0 * lo, lo)  # fmt: skip


@jit_math
def _address(a: Any, b: int, h: int) -> Any:
    """The address of matrix (b, h) of a 4-D array."""
    return a.ctypes.data + b * a.strides[0] + h * a.strides[1]


@jit_math
def _ld(a: Any, rows: int) -> Any:
    """The row stride of ``a``'s matrices in elements (their width where one row)."""
    return a.strides[2] // 4 if rows > 1 else a.shape[3]


@jit_math
def heads(q: Any, k: Any, v: Any, out: Any, pt: Any, factor: float, causal: bool, block: int,
          lo: int, hi: int) -> None:  # fmt: skip
    """``head`` for the (batch, head) matrices ``lo`` to ``hi`` (flat index over (B, H)) of
    4-D float32 arrays whose last dim is contiguous; ``pt`` (B, H, S, L) C-contiguous."""
    nh = q.shape[1]
    length, e = q.shape[2], q.shape[3]
    source, ev = k.shape[2], v.shape[3]
    m = np.empty(length, np.float32)
    tot = np.empty(length, np.float32)
    bits = np.empty(length, np.int32)
    for i in range(lo, hi):
        b, h = i // nh, i % nh
        head(_address(q, b, h), _ld(q, length), _address(k, b, h), _ld(k, source),
             _address(v, b, h), _ld(v, source), _address(out, b, h), _ld(out, length),
             length, source, e, ev, factor, causal, block, pt[b, h], m, tot, bits)  # fmt: skip


def forward(q: Any, k: Any, v: Any, out: Any, pt: Any, factor: float, causal: bool) -> None:
    """``heads`` over every matrix, split over numba's threads from ``SPLIT_ELEMENTS``."""
    n = q.shape[0] * q.shape[1]
    args = (q, k, v, out, pt, factor, causal, query_block(q.shape[2], causal), 0, n)
    if pt.size < SPLIT_ELEMENTS or n < 2:
        heads(*args)
    else:
        run("attention_heads", heads, _make_split, args, pt.size)


@jit_math
def head_grad(qa: int, lq: int, ka: int, lk: int, va: int, lv: int, ga: int, lg: int, dqa: int,
              ldq: int, dka: int, ldk: int, dva: int, ldv: int, length: int, source: int, e: int,
              ev: int, factor: float, causal: bool, block: int, pt: Any, ds: Any,
              rows: Any) -> None:  # fmt: skip
    """One (batch, head)'s gradients from ``g`` (L, Ev) and the forward's weights ``pt`` (S,
    L): ``dv = pt g``, ``ds = pt * (v g^T - rows) * factor`` with ``rows[j] = sum_s pt[s, j]
    (v g^T)[s, j]``, ``dq = ds^T k``, ``dk = ds q``; a gradient whose address is 0 is not
    made. By blocks of ``block`` queries, last block first: causal (with S <= L), each block
    against keys ``0:min(S, end of block)`` only (the weights of the others are 0), its ``dv``
    and ``dk`` added to the later blocks' (the last block's keys are all S). ``ds`` (S, L)
    and ``rows`` (L,) are float32 scratch."""
    pa, da = pt.ctypes.data, ds.ctypes.data
    if not causal or source > length:
        block = length
    f = _F(factor)
    nb = (length + block - 1) // block
    for bi in range(nb - 1, -1, -1):
        j0 = bi * block
        j1 = min(length, j0 + block)
        w = j1 - j0
        kend = min(source, j1) if block < length else source
        beta = _F(0.0) if bi == nb - 1 else _F(1.0)
        if dva != 0:
            _SGEMM(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, kend, ev, w, _F(1.0), pa + 4 * j0, length,
                   ga + 4 * j0 * lg, lg, beta, dva, ldv)  # fmt: skip
        if dqa == 0 and dka == 0:
            continue
        _SGEMM(_ROW_MAJOR, _NO_TRANS, _TRANS, kend, w, ev, _F(1.0), va, lv, ga + 4 * j0 * lg, lg,
               _F(0.0), da + 4 * j0, length)  # fmt: skip
        for j in range(U(j0), U(j1)):
            rows[j] = _F(0.0)
        for s in range(U(kend)):
            for j in range(U(j0), U(j1)):
                rows[j] += pt[s, j] * ds[s, j]
        for s in range(U(kend)):
            for j in range(U(j0), U(j1)):
                ds[s, j] = pt[s, j] * (ds[s, j] - rows[j]) * f
        if dqa != 0:
            _SGEMM(_ROW_MAJOR, _TRANS, _NO_TRANS, w, e, kend, _F(1.0), da + 4 * j0, length, ka,
                   lk, _F(0.0), dqa + 4 * j0 * ldq, ldq)  # fmt: skip
        if dka != 0:
            _SGEMM(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, kend, e, w, _F(1.0), da + 4 * j0, length,
                   qa + 4 * j0 * lq, lq, beta, dka, ldk)  # fmt: skip


@jit_math
def heads_grad(q: Any, k: Any, v: Any, g: Any, pt: Any, dq: Any, dk: Any, dv: Any,
               factor: float, causal: bool, block: int, want: Any, lo: int,
               hi: int) -> None:  # fmt: skip
    """``head_grad`` for the matrices ``lo`` to ``hi``; ``want`` (3,) bool: which of ``dq``,
    ``dk``, ``dv`` to make (the others may be any array)."""
    nh = q.shape[1]
    length, e = q.shape[2], q.shape[3]
    source, ev = k.shape[2], v.shape[3]
    ds = np.empty((source, length), np.float32)
    rows = np.empty(length, np.float32)
    for i in range(lo, hi):
        b, h = i // nh, i % nh
        head_grad(_address(q, b, h), _ld(q, length), _address(k, b, h), _ld(k, source),
                  _address(v, b, h), _ld(v, source), _address(g, b, h), _ld(g, length),
                  _address(dq, b, h) if want[0] else 0, _ld(dq, length),
                  _address(dk, b, h) if want[1] else 0, _ld(dk, source),
                  _address(dv, b, h) if want[2] else 0, _ld(dv, source),
                  length, source, e, ev, factor, causal, block, pt[b, h], ds,
                  rows)  # fmt: skip


def backward(q: Any, k: Any, v: Any, g: Any, pt: Any, dq: Any, dk: Any, dv: Any, factor: float,
             causal: bool, want: Any) -> None:  # fmt: skip
    """``heads_grad`` over every matrix, split over numba's threads from ``SPLIT_ELEMENTS``."""
    n = q.shape[0] * q.shape[1]
    args = (q, k, v, g, pt, dq, dk, dv, factor, causal, query_block(q.shape[2], causal), want,
            0, n)  # fmt: skip
    if pt.size < SPLIT_ELEMENTS or n < 2:
        heads_grad(*args)
    else:
        run("attention_heads_grad", heads_grad, _make_split_grad, args, pt.size)


inner: Any = None


def _make_split_grad() -> Any:
    def split(q: Any, k: Any, v: Any, g: Any, pt: Any, dq: Any, dk: Any, dv: Any, factor: float,
              causal: bool, block: int, want: Any, lo: int, hi: int, t: int) -> None:  # fmt: skip
        n = hi - lo
        for i in prange(t):
            inner(q, k, v, g, pt, dq, dk, dv, factor, causal, block, want, lo + n * i // t,
                  lo + n * (i + 1) // t)  # fmt: skip

    return split


def _make_split() -> Any:
    def split(q: Any, k: Any, v: Any, out: Any, pt: Any, factor: float, causal: bool, block: int,
              lo: int, hi: int, t: int) -> None:  # fmt: skip
        n = hi - lo
        for i in prange(t):
            inner(q, k, v, out, pt, factor, causal, block, lo + n * i // t,
                  lo + n * (i + 1) // t)  # fmt: skip

    return split
