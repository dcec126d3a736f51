"""Adam/AdamW's step (no AMSGrad) as one compiled pass over a parameter (``lucid-core[numba]``).

Optional: ``adam`` uses it where numba is installed and enabled. lucid-optim's multi-tensor
update runs ~13 ufunc passes a parameter (in cache-sized pieces); here each element is read
once and written once. The arithmetic is the ufuncs', one rounding per operation in the array's
dtype, in their order (no fast-math, so no fused multiply-add): the same bits. NumPy's error
model (``jit_math``): a division check per element would keep LLVM from vectorising. A
parameter from ``SPLIT_ELEMENTS`` elements on splits over numba's threads (``step``): elementwise,
the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from lucid.backends._numpy._numba import U, jit_math, run

# Parameters from this many elements split over numba's threads (the GPT's Linear weights,
# 49K-65K elements: docs/performance.md, issue 30); a huge value: never.
SPLIT_ELEMENTS = 1 << 15


def step(p: Any, g: Any, m: Any, v: Any, c: Any, mode: int, maximize: bool, wd_one: bool,
         omb2_one: bool, value_one: bool) -> None:  # fmt: skip
    """``adam_step``, split over numba's threads from ``SPLIT_ELEMENTS``."""
    args = (p, g, m, v, c, mode, maximize, wd_one, omb2_one, value_one)
    if p.shape[0] < SPLIT_ELEMENTS:
        adam_step(*args)
    else:
        run("adam_step", adam_step, _make_split, args, p.shape[0])


@jit_math
def adam_step(p: Any, g: Any, m: Any, v: Any, c: Any, mode: int, maximize: bool,
              wd_one: bool, omb2_one: bool, value_one: bool) -> None:  # fmt: skip
    """One step over 1-D ``p``, ``g``, ``m``, ``v`` in place. ``c`` holds the constants in the
    arrays' dtype: ``(1 - lr wd, wd, 1 - beta1, beta2, 1 - beta2, sqrt(1 - beta2^t), eps,
    -lr / (1 - beta1^t))``; ``mode`` 0 without weight decay, 1 L2 (Adam), 2 decoupled (AdamW);
    the ``*_one`` flags skip a multiply by exactly 1, as the ufunc update does."""
    decay, wd, omb1, beta2, omb2, bc2, eps, value = c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
    for i in range(p.shape[0]):
        pi = p[U(i)]
        d = g[U(i)]
        if maximize:
            d = -d
        if mode == 2:
            pi = pi * decay
        elif mode == 1:
            d = d + (pi if wd_one else pi * wd)
        mi = m[U(i)]
        mi = mi + (d - mi) * omb1
        sq = d * d
        if not omb2_one:
            sq = sq * omb2
        vi = v[U(i)] * beta2 + sq
        u = mi / (np.sqrt(vi) / bc2 + eps)
        if not value_one:
            u = u * value
        p[U(i)] = pi + u
        m[U(i)] = mi
        v[U(i)] = vi


# -- the same pass split over numba's threads: each part calls the serial one as ``inner`` ----
inner: Any = None


def _make_split() -> Any:
    def split(p: Any, g: Any, m: Any, v: Any, c: Any, mode: int, maximize: bool, wd_one: bool,
              omb2_one: bool, value_one: bool, k: int) -> None:  # fmt: skip
        n = p.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(p[s:e], g[s:e], m[s:e], v[s:e], c, mode, maximize, wd_one, omb2_one, value_one)

    return split
