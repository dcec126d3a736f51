"""2-D max pooling as compiled loops, with numba (``lucid-core[numba]``).

Optional: ``pool`` uses these where numba is installed and enabled (``lucid.backends.cpu``).
In NumPy a max pool is a few ufuncs per kernel tap over strided views (a pass over memory each,
in runs of a few values); here the forward is one pass that reads each window once and writes
its max and winning tap, the backward one pass that adds each gradient to its window's winner,
both without the GIL (``nogil``): several times faster (docs/performance.md).

The arrays are ``(B, H, W, C)``: a channels-last batch, or a channels-first one seen as ``B = N*C``
planes of one channel; the input comes padded (with -inf), so no window reads out of bounds.
The kernel size is a compile-time constant (``forward(kh, kw, ...)`` compiles, and caches on
disk, one function per size): with it LLVM unrolls the tap loops and keeps the running max, its tap
and the NaN state in registers, as selects; with the size as an argument the same loops were
no faster than NumPy (a loop-carried branch per tap, mispredicted on real data).

The semantics are NumPy's code's (``lucid.kernels.MaxPoolArrays``), exactly: taps in row-major
order, the first tap holding the max is its index, a NaN propagates as ``np.maximum`` does (the
first NaN of the window is the result) and no tap after it wins (``v > nan`` is false). The
backward adds in tap order where windows overlap, as NumPy's per-tap adds do.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import prange

from lucid.backends._numpy._numba import U, run, specialised

# The backward over planes of one channel (a channels-first batch, ``C == 1``) runs as 3-D
# arrays (B, H, W): the 4-D loop spent most of its time on the size-1 channel loop and its index
# arithmetic ((384, 12, 12): 210 -> 60 us on one thread; issue 30, docs/performance.md). The
# same adds in the same order: the same bits. (The forward measured the same either way, so it
# keeps its one 4-D loop.) False: 4-D always.
PLANES_3D = True


def _planes3(arrays: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The ``(B, H, W, 1)`` arrays as ``(B, H, W)`` views where every one is C-contiguous with
    one channel, else None."""
    if not PLANES_3D:
        return None
    for a in arrays:
        if a.shape[3] != 1 or not a.flags.c_contiguous:
            return None
    return tuple(a.reshape(a.shape[:3]) for a in arrays)


def forward(kh: int, kw: int, *args: Any) -> None:
    """Run the compiled ``(xpad, sh, sw, dh, dw, out, idx)`` pass of a ``kh x kw`` window, the
    batch split over numba's threads when big enough (``split_threads``)."""
    name = f"max_forward_{kh}x{kw}"
    run(name, specialised(name, _make_forward, kh, kw), _make_split_forward, args, args[0].size)


def backward(kh: int, kw: int, overlap: bool, *args: Any) -> None:
    """Run the compiled ``(g, idx, sh, sw, dh, dw, dxpad)`` pass of a ``kh x kw`` window, the
    batch split over numba's threads when big enough."""
    planes = _planes3((args[0], args[1], args[6]))
    kind = "planes_" if planes is not None else ""
    name = f"max_backward_{kind}{kh}x{kw}{'_overlap' if overlap else ''}"
    fn = specialised(name, _make_backward, kh, kw, overlap, planes is not None)
    if planes is not None:
        args = (planes[0], planes[1], *args[2:6], planes[2])
    run(name, fn, _make_split_backward, args, args[-1].size)


# Each pass's arrays have the batch first: a split gives each thread its share of the batch.
inner: Any = None


def _make_split_forward() -> Any:
    def forward_split(xpad: Any, sh: int, sw: int, dh: int, dw: int, out: Any, idx: Any,
                      k: int) -> None:  # fmt: skip
        n = out.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(xpad[s:e], sh, sw, dh, dw, out[s:e], idx[s:e])

    return forward_split


def _make_split_backward() -> Any:
    def backward_split(g: Any, idx: Any, sh: int, sw: int, dh: int, dw: int, dxpad: Any,
                       k: int) -> None:  # fmt: skip
        n = g.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(g[s:e], idx[s:e], sh, sw, dh, dw, dxpad[s:e])

    return backward_split


@numba.njit(inline="always", nogil=True, cache=True)
def max_tap(val: Any, t: int, best: Any, k: int, nan: bool, nan_value: Any) -> Any:
    """One tap ``val`` (the ``t``-th) of a window's running max, as selects: the new ``(best,
    k, nan, nan_value)``. A later tap wins only if greater (the first of equal maxima keeps
    the index) and no NaN came before; the first NaN is kept as the result. Inlined into each
    window loop (``max_forward``, ``_convpool_jit.conv_pool``): the same code, one place."""
    wins = (val > best) & ~nan
    k = t if wins else k
    best = val if wins else best
    first_nan = (val != val) & ~nan
    nan_value = val if first_nan else nan_value
    nan = nan | first_nan
    return best, k, nan, nan_value


@numba.njit(inline="always", nogil=True, cache=True)
def _tap(t: Any, kw: int) -> tuple[int, int]:
    """Tap ``t``'s row and column in a window ``kw`` wide, divided as unsigned integers (no
    sign fix-ups; a compile-time ``kw`` makes them a multiply and shifts)."""
    u = U(t)
    return np.int64(u // U(kw)), np.int64(u % U(kw))


def _make_forward(KH: int, KW: int) -> Any:  # noqa: N803 (compile-time constants)
    def max_forward(xpad: Any, sh: int, sw: int, dh: int, dw: int, out: Any, idx: Any) -> None:
        """``out[b, i, j, c]``: the max of the window at ``(i, j)``; ``idx``: its first tap."""
        for b in range(out.shape[0]):
            for i in range(out.shape[1]):
                for j in range(out.shape[2]):
                    for c in range(out.shape[3]):
                        best = xpad[U(b), U(i * sh), U(j * sw), U(c)]
                        nan = best != best
                        nan_value = best
                        k = 0
                        t = 0
                        for u in range(KH):
                            for v in range(KW):
                                val = xpad[U(b), U(i * sh + u * dh), U(j * sw + v * dw), U(c)]
                                best, k, nan, nan_value = max_tap(val, t, best, k, nan, nan_value)
                                t += 1
                        out[U(b), U(i), U(j), U(c)] = nan_value if nan else best
                        idx[U(b), U(i), U(j), U(c)] = k

    return max_forward


def _make_backward(KH: int, KW: int, OVERLAP: bool, PLANES: bool = False) -> Any:  # noqa: N803
    passes = KH * KW if OVERLAP else 1
    if PLANES:

        def max_backward_planes(g: Any, idx: Any, sh: int, sw: int, dh: int, dw: int,
                                dxpad: Any) -> None:  # fmt: skip
            """``max_backward`` over (B, H, W) planes."""
            for p in range(passes):
                for b in range(g.shape[0]):
                    for i in range(g.shape[1]):
                        for j in range(g.shape[2]):
                            t = idx[U(b), U(i), U(j)]
                            q, v = _tap(t, KW)
                            if OVERLAP and t != p:
                                continue
                            r = i * sh + q * dh
                            s = j * sw + v * dw
                            dxpad[U(b), U(r), U(s)] += g[U(b), U(i), U(j)]

        return max_backward_planes

    def max_backward(g: Any, idx: Any, sh: int, sw: int, dh: int, dw: int, dxpad: Any) -> None:
        """``dxpad`` (zeroed) ``+= g`` at each window's winner; tap by tap where windows
        overlap, so each position sums its terms in NumPy's order."""
        for p in range(passes):
            for b in range(g.shape[0]):
                for i in range(g.shape[1]):
                    for j in range(g.shape[2]):
                        for c in range(g.shape[3]):
                            t = idx[U(b), U(i), U(j), U(c)]
                            q, v = _tap(t, KW)
                            if OVERLAP and t != p:
                                continue
                            r = i * sh + q * dh
                            s = j * sw + v * dw
                            dxpad[U(b), U(r), U(s), U(c)] += g[U(b), U(i), U(j), U(c)]

    return max_backward
