"""Attention's scores made ready for ``exp`` for the NumPy backend (``kernels.ATTENTION_SHIFT``).

lucid-nn's attention keeps its scores transposed, ``(..., S, L)``, and before ``exp`` adds the
causal mask and subtracts each column's maximum: three ufunc passes, and NumPy's maximum down
the columns of a (64, 64) matrix makes one inner-loop call per row (9 of the 72 us of a
generated token's attention on (1, 4, 64, 32)). With ``lucid-core[numba]`` the three are one
compiled loop over each matrix, in cache: 5.5 against 18 us there, 29 against 91 us on a GPT
training step's (24, 64, 64) half (docs/performance.md, issue 30). The same adds, maximum and
subtractions, so the same values; without numba, or for other dtypes and layouts, it declines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _gemm
from lucid.backends._numpy._parallel import blas_threads

__all__ = ["CpuAttention", "CpuAttentionShift"]

_JIT = "_attention_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_NO_BIAS = {dt: np.empty((0, 0), dtype=dt) for dt in _FLOATS}
# False: always decline (the ufuncs' passes), for A/B timing.
COMPILED_SHIFT = True


class CpuAttentionShift:
    """``kernels.ATTENTION_SHIFT`` for NumPy: C-contiguous float32/float64 scores."""

    @staticmethod
    def forward(backend: Any, pt: Any, bias: Any) -> bool:
        dtype = pt.dtype
        if (
            not COMPILED_SHIFT
            or type(pt) is not np.ndarray
            or dtype not in _FLOATS
            or pt.ndim < 2
            or not pt.flags.c_contiguous
            or not pt.flags.writeable
            or pt.size == 0
            or _compiled.load(_JIT) is None
        ):
            return False
        rows, cols = pt.shape[-2], pt.shape[-1]
        if bias is None:
            bias = _NO_BIAS[dtype]
        elif (
            type(bias) is not np.ndarray
            or bias.dtype != dtype
            or bias.shape != (rows, cols)
            or not bias.flags.c_contiguous
        ):
            return False
        scratch = np.empty(cols, dtype=dtype)
        flat = pt.reshape(-1, rows, cols)
        return _compiled.run(_JIT, "column_shift", flat, bias, bias.size > 0, scratch)


_HEADS = "_sdpa_jit"
# False: always decline (lucid-nn's passes), for A/B timing.
COMPILED_HEADS = True
_F32 = np.dtype(np.float32)


def _rows_ok(a: Any) -> bool:
    """A float32 NumPy array whose rows BLAS can read in place: last dim contiguous, the other
    strides non-negative whole elements. (Loops, not generators: it runs four times a call,
    ~0.9 us each as generators; a generated token makes 4 calls: issue 30.)"""
    if type(a) is not np.ndarray or a.dtype != _F32:
        return False
    s: tuple[int, ...] = a.strides
    shape: tuple[int, ...] = a.shape
    if shape[-1] != 1 and s[-1] != 4:
        return False
    for x in s:
        if x < 0 or x & 3:
            return False
    return shape[-2] == 1 or s[-2] >= 4 * shape[-1]


def _heads_ok(q: Any, k: Any, v: Any, o: Any) -> bool:
    """``_rows_ok`` of the four arrays (no generator: the per-call cost, issue 30)."""
    return _rows_ok(q) and _rows_ok(k) and _rows_ok(v) and _rows_ok(o)


def _one_thread_anyway(q4: Any, k4: Any, v4: Any, p4: Any) -> bool:
    """Whether ``_sdpa_jit.forward`` runs its heads in this thread, one after another (fewer
    score elements than its ``SPLIT_ELEMENTS``, or one head), each head's two products small
    enough that OpenBLAS runs them on one thread by itself (``_gemm._TINY_FLOPS``, as
    ``matmul`` takes them): ``single_blas_thread`` then changes nothing but costs 1.4-1.8 us a
    call (a generated token's 4, issue 30)."""
    if p4.size >= _compiled.load(_HEADS).SPLIT_ELEMENTS and q4.shape[0] * q4.shape[1] >= 2:
        return False
    return bool(2 * q4.shape[2] * k4.shape[2] * max(q4.shape[3], v4.shape[3]) <= _gemm._TINY_FLOPS)


class CpuAttention:
    """``kernels.ATTENTION`` for NumPy with ``lucid-core[numba]``: ``_sdpa_jit``'s passes over
    whole heads, forward and backward, float32, up to two batch dims, rows contiguous (a
    split/transposed view of a fused ``qkv`` projection is read in place)."""

    @staticmethod
    def forward(backend: Any, q: Any, k: Any, v: Any, factor: float, causal: bool, out: Any,
                pt: Any) -> bool:  # fmt: skip
        if not COMPILED_HEADS or not 2 <= q.ndim <= 4 or not _heads_ok(q, k, v, out):
            return False
        qs, ks, vs = q.shape, k.shape, v.shape  # read once (per-call cost, issue 30)
        if (
            qs[:-2] != ks[:-2]
            or vs[:-1] != ks[:-1]
            or out.shape != (*qs[:-1], vs[-1])
            or type(pt) is not np.ndarray
            or pt.dtype != _F32
            or not pt.flags.c_contiguous
            or 0 in qs
            or 0 in ks
            or 0 in vs
            or _compiled.load(_HEADS) is None
        ):
            return False
        if len(qs) == 4:  # the usual (N, H, L, E): as they are
            q4, k4, v4, o4, p4 = q, k, v, out, pt
        else:
            lead = (None,) * (4 - q.ndim)  # (L, E) -> (1, 1, L, E): the kernel's 4-D form
            q4, k4, v4, o4 = q[lead], k[lead], v[lead], out[lead]
            p4 = pt.reshape(*q4.shape[:2], k.shape[-2], q.shape[-2])
        args = (q4, k4, v4, o4, p4, float(factor), bool(causal))
        if _one_thread_anyway(q4, k4, v4, p4):
            return _compiled.run(_HEADS, "forward", *args)
        with blas_threads.single_blas_thread():  # one BLAS thread per head's products
            return _compiled.run(_HEADS, "forward", *args)

    @staticmethod
    def backward(backend: Any, q: Any, k: Any, v: Any, g: Any, pt: Any, factor: float,
                 causal: bool, needs: Any) -> tuple[Any, Any, Any] | None:  # fmt: skip
        if (
            not COMPILED_HEADS
            or not 2 <= q.ndim <= 4
            or not _heads_ok(q, k, v, g)
            or g.shape != (*q.shape[:-1], v.shape[-1])
            or type(pt) is not np.ndarray
            or pt.dtype != _F32
            or not pt.flags.c_contiguous
            or pt.shape != (*q.shape[:-2], k.shape[-2], q.shape[-2])
            or _compiled.load(_HEADS) is None
        ):
            return None
        want = np.array([bool(n) for n in needs[:3]])
        # each gradient laid out as its input (a head split from a projection: its rows
        # interleaved as the input's, so the gradient's way back to the projection is views)
        grads = [np.empty_like(a) if w else None for a, w in zip((q, k, v), want)]
        lead = (None,) * (4 - q.ndim)
        q4, k4, v4, g4 = (a[lead] for a in (q, k, v, g))
        d4 = [q4 if d is None else d[lead] for d in grads]  # None: not made (q4 never written)
        p4 = pt.reshape(*q4.shape[:2], k.shape[-2], q.shape[-2])
        with blas_threads.single_blas_thread():
            done = _compiled.run(_HEADS, "backward", q4, k4, v4, g4, p4, *d4, float(factor),
                                 bool(causal), want)  # fmt: skip
        return (grads[0], grads[1], grads[2]) if done else None
