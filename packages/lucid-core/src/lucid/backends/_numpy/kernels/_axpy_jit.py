"""``a += b * alpha`` / ``a -= b * alpha`` in place as one compiled pass (``lucid-core[numba]``).

Optional: ``kernels.scaled_add`` uses it where numba is installed and enabled. The ufunc path
(``Tensor.add_(other, alpha=)`` on arrays outside autograd) runs two ufuncs over cache-sized
pieces; here each element of ``a`` and ``b`` is read once and ``a`` written once. The product
is rounded to the dtype and then summed, as the two ufuncs do (no fast-math, so no fused
multiply-add): the same bits. From ``SPLIT_ELEMENTS`` elements the pass splits over numba's
threads (``update``): elementwise, the same bits.
"""

from __future__ import annotations

from typing import Any

from numba import prange

from lucid.backends._numpy._numba import U, jit_math, run

# Arrays from this many elements split over numba's threads (the word_language_model's
# embedding and decoder weights, 2M elements: a pass bound by memory, docs/performance.md).
SPLIT_ELEMENTS = 1 << 18


def update(a: Any, b: Any, alpha: Any, subtract: bool) -> None:
    """``scaled_add``, split over numba's threads from ``SPLIT_ELEMENTS``."""
    args = (a, b, alpha, subtract)
    if a.shape[0] < SPLIT_ELEMENTS:
        scaled_add(*args)
    else:
        run("scaled_add", scaled_add, _make_split, args, a.shape[0])


@jit_math
def scaled_add(a: Any, b: Any, alpha: Any, subtract: bool) -> None:
    """``a[i] += b[i] * alpha`` (``subtract``: ``-=``) over 1-D ``a`` and ``b``; ``alpha`` a
    scalar of their dtype."""
    if subtract:
        for i in range(a.shape[0]):
            a[U(i)] = a[U(i)] - b[U(i)] * alpha
    else:
        for i in range(a.shape[0]):
            a[U(i)] = a[U(i)] + b[U(i)] * alpha


# -- the same pass split over numba's threads: each part calls the serial one as ``inner`` ----
inner: Any = None


def _make_split() -> Any:
    def split(a: Any, b: Any, alpha: Any, subtract: bool, k: int) -> None:
        n = a.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(a[s:e], b[s:e], alpha, subtract)

    return split
