"""Layer norm forward and backward as one compiled pass over the rows (``lucid-core[numba]``).

Optional: ``layernorm`` uses these where numba is installed and enabled. NumPy's code is ~6
passes forward (mean, centre, square, mean, scale, affine) and ~10 backward over the whole
array; here each row (the normalised dims, a few hundred values: in L1) is read twice and
written once, its sums in float64. From ``SPLIT_ELEMENTS`` on, the rows split over numba's
threads (``forward``/``backward``; ``_numba.run``): the forward and ``dx`` are per row, the same
bits; the weight and bias gradients add each thread's float64 partial sums in order.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import prange

from lucid.backends._numpy._numba import NoAliasCompiler, U, run

# jit_math with reassociation only: the row sums vectorise (a float64 add chain is ~4 cycles an
# element serially); no other fast-math flag, so inf and NaN keep their meaning
# (docs/performance.md, issue 30).
jit_sums = numba.njit(nogil=True, cache=True, fastmath={"reassoc"}, error_model="numpy",
                      pipeline_class=NoAliasCompiler)  # fmt: skip


# Arrays from this many elements split their rows over numba's threads (a GPT block's (768,
# 128): docs/performance.md, issue 30); a huge value: never.
SPLIT_ELEMENTS = 1 << 15


def forward(x: Any, w: Any, b: Any, eps: float, y: Any, mean: Any, rstd: Any) -> None:
    """``forward_rows``, its rows split over numba's threads from ``SPLIT_ELEMENTS``."""
    if x.size < SPLIT_ELEMENTS or x.shape[0] < 2:
        forward_rows(x, w, b, eps, y, mean, rstd)
    else:
        run("layernorm_forward", forward_rows, _make_split_forward,
            (x, w, b, eps, y, mean, rstd), x.size)  # fmt: skip


def backward(x: Any, g: Any, w: Any, mean: Any, rstd: Any, dx: Any, dw: Any, db: Any,
             want_dx: bool) -> None:  # fmt: skip
    """``backward_rows``, its rows split over numba's threads from ``SPLIT_ELEMENTS``."""
    args = (x, g, w, mean, rstd, dx, dw, db, want_dx)
    if x.size < SPLIT_ELEMENTS or x.shape[0] < 2:
        backward_rows(*args)
    else:
        run("layernorm_backward", backward_rows, _make_split_backward, args, x.size)


@jit_sums
def forward_rows(x: Any, w: Any, b: Any, eps: float, y: Any, mean: Any, rstd: Any) -> None:
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
def backward_rows(x: Any, g: Any, w: Any, mean: Any, rstd: Any, dx: Any, dw: Any, db: Any,
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


# -- the same passes split over numba's threads: each calls the serial one as ``inner`` -------
inner: Any = None


def _make_split_forward() -> Any:
    def split(x: Any, w: Any, b: Any, eps: float, y: Any, mean: Any, rstd: Any, k: int) -> None:
        n = x.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(x[s:e], w, b, eps, y[s:e], mean[s:e], rstd[s:e])

    return split


def _make_split_backward() -> Any:
    def split(x: Any, g: Any, w: Any, mean: Any, rstd: Any, dx: Any, dw: Any, db: Any,
              want_dx: bool, k: int) -> None:  # fmt: skip
        n, d = x.shape
        dws = np.zeros((k, d))  # each thread's partial sums, added in order below
        dbs = np.zeros((k, d))
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(x[s:e], g[s:e], w, mean[s:e], rstd[s:e], dx[s:e] if want_dx else dx, dws[t],
                  dbs[t], want_dx)  # fmt: skip
        for t in range(k):
            for j in range(d):
                dw[j] += dws[t, j]
                db[j] += dbs[t, j]

    return split
