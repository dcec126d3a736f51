"""Winograd F(2x2, 3x3)'s transforms as compiled loops, with numba (``lucid-core[numba]``).

Optional: ``winograd`` loads this module (``_compiled.load``) only where numba is installed and
enabled (``lucid.backends.cpu.numba_enabled``). In NumPy the transforms are some forty adds of
strided views per chunk: they pass over memory several times, and at two threads each short call
contends for the GIL. Here each transform is one loop nest over a chunk that reads every input
once and writes every output once, compiled without the GIL (``_numba.jit``), so the kernels'
pool threads run their chunks side by side as before, each transform faster
(docs/performance.md). The arithmetic is the NumPy code's term for term (the same adds in the
same order, no fast-math), so the results are bit-identical (tested).
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import jit


@jit
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


@jit
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


@jit
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
