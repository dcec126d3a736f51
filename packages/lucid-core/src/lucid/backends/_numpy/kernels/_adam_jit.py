"""Adam/AdamW's step (no AMSGrad) as one compiled pass over a parameter (``lucid-core[numba]``).

Optional: ``adam`` uses it where numba is installed and enabled. lucid-optim's multi-tensor
update runs ~13 ufunc passes a parameter (in cache-sized pieces); here each element is read
once and written once. The arithmetic is the ufuncs', one rounding per operation in the array's
dtype, in their order (no fast-math, so no fused multiply-add): the same bits. NumPy's error
model (``jit_math``): a division check per element would keep LLVM from vectorising.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy._numba import U, jit_math


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
