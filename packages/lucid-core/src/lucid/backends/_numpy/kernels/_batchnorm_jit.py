"""Batch norm's passes over a channels-last block as compiled loops (``lucid-core[numba]``).

Optional: ``batchnorm`` uses these where numba is installed and enabled (``lucid.backends.cpu``),
for x laid out as ``_Layout``'s ``(rows, k * C)`` matrix (a convolution's output). Each pass is
one loop over a block without the GIL, so ``_parallel`` can hand blocks to every core. The two
elementwise passes (``normalize``, ``input_grad``) do NumPy's operations in NumPy's order and are
bit-identical to it; the two reductions accumulate in float64 straight from the block (NumPy's
path sums float32 GEMVs, then merges blocks in float64), so they agree to float32 rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy._numba import jit


@jit
def block_stats(blk: Any, c: int, mean: Any, m2: Any) -> None:
    """Per-channel mean and centred sum of squares (float64) of a ``(rows, k * c)`` block."""
    cols = blk.shape[1]
    acc = np.zeros(cols, dtype=np.float64)
    for i in range(blk.shape[0]):
        for j in range(cols):
            acc[j] += blk[i, j]
    count = blk.shape[0] * (cols // c)
    for ch in range(c):
        mean[ch] = 0.0
        m2[ch] = 0.0
    for j in range(cols):
        mean[j % c] += acc[j]
    for ch in range(c):
        mean[ch] /= count
    mt = np.empty(cols, dtype=np.float64)
    for j in range(cols):
        mt[j] = mean[j % c]
    acc[:] = 0.0
    for i in range(blk.shape[0]):
        for j in range(cols):
            d = blk[i, j] - mt[j]
            acc[j] += d * d
    for j in range(cols):
        m2[j % c] += acc[j]


@jit
def normalize(blk: Any, scale: Any, shift: Any, out: Any) -> None:
    """``out = blk * scale + shift`` (``scale``, ``shift`` tiled along a row)."""
    for i in range(blk.shape[0]):
        for j in range(blk.shape[1]):
            out[i, j] = blk[i, j] * scale[j] + shift[j]


@jit
def grad_sums(blk: Any, dy: Any, mean: Any, c: int, gb: Any, gc: Any) -> None:
    """Per-channel ``sum(dy)`` and ``sum(dy * (x - mean))`` (float64) of a block."""
    cols = blk.shape[1]
    sb = np.zeros(cols, dtype=np.float64)
    sc = np.zeros(cols, dtype=np.float64)
    for i in range(blk.shape[0]):
        for j in range(cols):
            g = dy[i, j]
            sb[j] += g
            sc[j] += (blk[i, j] - mean[j]) * g
    for ch in range(c):
        gb[ch] = 0.0
        gc[ch] = 0.0
    for j in range(cols):
        gb[j % c] += sb[j]
        gc[j % c] += sc[j]


@jit
def input_grad(blk: Any, dy: Any, a: Any, b: Any, c: Any, out: Any) -> None:
    """``out = (blk * b + c + dy) * a`` (vectors tiled along a row), in NumPy's order."""
    for i in range(blk.shape[0]):
        for j in range(blk.shape[1]):
            out[i, j] = (blk[i, j] * b[j] + c[j] + dy[i, j]) * a[j]
