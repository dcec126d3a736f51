"""Layer norm forward and backward as one compiled pass over the rows (``lucid-core[numba]``).

Optional: ``layernorm`` uses these where numba is installed and enabled. NumPy's code is ~6
passes forward (mean, centre, square, mean, scale, affine) and ~10 backward over the whole
array; here each row (the normalised dims, a few hundred values: in L1) is read twice and
written once, its sums in float64.
"""

from __future__ import annotations

import math
from typing import Any

import numba

from lucid.backends._numpy._numba import NoAliasCompiler, U

# jit_math with reassociation only: the row sums vectorise (a float64 add chain is ~4 cycles an
# element serially); no other fast-math flag, so inf and NaN keep their meaning
# (docs/performance.md, issue 30).
jit_sums = numba.njit(nogil=True, cache=True, fastmath={"reassoc"}, error_model="numpy",
                      pipeline_class=NoAliasCompiler)  # fmt: skip


@jit_sums
def forward(x: Any, w: Any, b: Any, eps: float, y: Any, mean: Any, rstd: Any) -> None:
    """Rows of ``x`` (R, D) normalised into ``y``, times ``w``, plus ``b`` (length-0 arrays:
    none); each row's mean and 1/std into ``mean``/``rstd`` (float64)."""
    rows, d = x.shape
    has_w, has_b = w.shape[0] > 0, b.shape[0] > 0
    for r in range(rows):
        s = 0.0
        for j in range(d):
            s += numba.float64(x[U(r), U(j)])
        mu = s / d
        q = 0.0
        for j in range(d):
            c = numba.float64(x[U(r), U(j)]) - mu
            q += c * c
        inv = 1.0 / math.sqrt(q / d + eps)
        mean[U(r)] = mu
        rstd[U(r)] = inv
        for j in range(d):
            v = (numba.float64(x[U(r), U(j)]) - mu) * inv
            if has_w:
                v *= w[U(j)]
            if has_b:
                v += b[U(j)]
            y[U(r), U(j)] = v


@jit_sums
def backward(x: Any, g: Any, w: Any, mean: Any, rstd: Any, dx: Any, dw: Any, db: Any,
             want_dx: bool) -> None:  # fmt: skip
    """``dx`` (if ``want_dx``) and the float64 sums ``dw``, ``db`` (length D, zeroed by the
    caller) from the output gradient ``g``."""
    rows, d = x.shape
    has_w = w.shape[0] > 0
    for r in range(rows):
        mu, inv = mean[U(r)], rstd[U(r)]
        m1 = 0.0
        m2 = 0.0
        for j in range(d):
            xh = (numba.float64(x[U(r), U(j)]) - mu) * inv
            gj = numba.float64(g[U(r), U(j)])
            dw[U(j)] += gj * xh
            db[U(j)] += gj
            gx = gj * w[U(j)] if has_w else gj
            m1 += gx
            m2 += gx * xh
        if want_dx:
            m1 /= d
            m2 /= d
            for j in range(d):
                xh = (numba.float64(x[U(r), U(j)]) - mu) * inv
                gj = numba.float64(g[U(r), U(j)])
                gx = gj * w[U(j)] if has_w else gj
                dx[U(r), U(j)] = inv * (gx - m1 - xh * m2)
