"""A first convolution layer and the max pooling after it as one compiled pass each way, with
numba (``lucid-core[numba]``), for ``lucid.compile``'s fused programs.

``conv_pool``: a stride-1 convolution of one input channel (``_im2col_jit.conv_one_channel``'s
loop, the same sums in the same order), each sample's output planes kept in a scratch buffer
instead of the ``(N, OH, OW, C)`` array, and a non-overlapping max pooling (window = stride,
no padding or dilation) taken from that buffer: the convolution's output is never written to
memory or read back. The maxima and winning taps are ``_pool_jit.max_forward``'s (the first
tap wins ties, NaN propagates).

``conv_pool_weight``: the weight and bias gradients from the pooled gradient and the winning
taps: each sample's gradient planes are laid out over the padded width (the winner of each
window gets its gradient, the other taps zero) and the taps' sums are
``_im2col_jit.weight_one_channel``'s loop (a kernel row's taps in one pass: the same bits);
exact: the convolution's output gradient is written too, for eager code's bias sum.

Layouts: ``xflat`` the padded input ``(N, Hp * Wp)``, ``w`` ``(C, KH * KW)``, pooled output,
taps and gradient channels-last ``(N, PH, PW, C)``.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba import prange

from lucid.backends._numpy._numba import NoAliasCompiler, U, run_split, specialised, split_threads
from lucid.backends._numpy.kernels._im2col_jit import weight_taps
from lucid.backends._numpy.kernels._pool_jit import max_tap

# ``weight_taps`` and ``max_tap`` are inlined here: numba keys a cached function on its own
# file only, so after an edit to them touch this file (or clear its __pycache__).

# The weight gradient's sums as ``_im2col_jit``'s (reassociated float32 runs, added up in
# float64): LLVM vectorises a float reduction only when it may reorder it.
_jit_fast = numba.njit(
    nogil=True, cache=True, fastmath={"reassoc", "contract"}, pipeline_class=NoAliasCompiler
)
inner: Any = None  # the serial pass, for the split versions (``specialised(inner=)``)


def conv_pool(kh: int, kw: int, ph: int, pw: int, xflat: Any, wp: int, w: Any, bias: Any,
              out: Any, idx: Any) -> None:  # fmt: skip
    """``out``/``idx`` ``(N, PH, PW, C)``: the ``ph x pw`` max pooling (stride = window) of
    the stride-1 ``kh x kw`` convolution of ``xflat`` with ``w`` and ``bias``."""
    n, cout = xflat.shape[0], w.shape[0]
    oh, ow = (xflat.shape[1] // wp) - kh + 1, wp - kw + 1
    length = (oh - 1) * wp + ow
    k = split_threads(n * cout * length)
    planes = np.empty((k, cout, length), dtype=out.dtype)
    name = f"conv_pool_{kh}x{kw}_{ph}x{pw}"
    fn = specialised(name, _make_conv_pool, kh, kw, ph, pw)
    if k == 1:
        fn(xflat, wp, w, bias, planes[0], out, idx)
    else:
        args = (xflat, wp, w, bias, planes, out, idx)
        run_split(name + "_split", _make_split_conv_pool, fn, args, k,
                  lambda: fn(xflat, wp, w, bias, planes[0], out, idx))  # fmt: skip


def conv_pool_weight(kh: int, kw: int, ph: int, pw: int, exact: bool, xflat: Any, wp: int,
                     g: Any, idx: Any, dw: Any, db: Any, dy: Any) -> None:  # fmt: skip
    """Into ``dw`` ``(C, KH * KW)`` and ``db`` ``(C,)`` (float64): the weight and bias
    gradients of ``conv_pool``'s convolution for the pooled gradient ``g`` (``(N, PH, PW,
    C)``, winning taps ``idx``); ``dw`` is ``_im2col_jit.weight_one_channel``'s bits.
    ``exact``: the convolution's output gradient is also written into ``dy`` (``(N, OH, OW,
    C)``, every position a window covers; the rest stays as given) for eager code's bias
    sum; else ``dy`` (``(N, 0, 0, C)``) is untouched."""
    n, cout = xflat.shape[0], g.shape[3]
    oh, ow = (xflat.shape[1] // wp) - kh + 1, wp - kw + 1
    length = (oh - 1) * wp + ow
    k = split_threads(n * oh * ow * cout)  # weight_one_channel's split: the same partial sums
    planes = np.zeros((k, cout, length), dtype=g.dtype)  # positions no window covers stay 0
    parts = np.zeros((k, cout, kh * kw))
    bparts = np.zeros((k, cout))
    name = f"conv_pool_weight_{kh}x{kw}_{ph}x{pw}_{'exact' if exact else 'pooled'}"
    fn = specialised(name, _make_conv_pool_weight, kh, kw, ph, pw, exact, decorator=_jit_fast)
    if k == 1:
        fn(xflat, wp, g, idx, planes[0], parts[0], bparts[0], dy)
    else:
        args = (xflat, wp, g, idx, planes, parts, bparts, dy)
        run_split(name + "_split", _make_split_weight, fn, args, k,
                  lambda: fn(xflat, wp, g, idx, planes[0], parts[0], bparts[0], dy))  # fmt: skip
    np.sum(parts, axis=0, out=dw)
    np.sum(bparts, axis=0, out=db)


def _make_conv_pool(KH: int, KW: int, PH: int, PW: int) -> Any:  # noqa: N803 (constants)
    def conv_pool(xflat: Any, wp: int, w: Any, bias: Any, plane: Any, out: Any,
                  idx: Any) -> None:  # fmt: skip
        length = plane.shape[1]
        for n in range(xflat.shape[0]):
            for o in range(plane.shape[0]):
                for q in range(length):  # _im2col_jit's conv_one_channel: bias, then the taps
                    acc = bias[U(o)]
                    for u in range(KH):
                        for v in range(KW):
                            acc += w[U(o), U(u * KW + v)] * xflat[U(n), U(u * wp + v + q)]
                    plane[U(o), U(q)] = acc
            for i in range(out.shape[1]):
                for j in range(out.shape[2]):
                    for o in range(out.shape[3]):  # _pool_jit's max_forward over the window
                        at = i * PH * wp + j * PW
                        best = plane[U(o), U(at)]
                        nan = best != best
                        nan_value = best
                        k = 0
                        t = 0
                        for a in range(PH):
                            for b in range(PW):
                                val = plane[U(o), U(at + a * wp + b)]
                                best, k, nan, nan_value = max_tap(val, t, best, k, nan, nan_value)
                                t += 1
                        out[U(n), U(i), U(j), U(o)] = nan_value if nan else best
                        idx[U(n), U(i), U(j), U(o)] = k

    return conv_pool


def _make_conv_pool_weight(KH: int, KW: int, PH: int, PW: int, EXACT: bool) -> Any:  # noqa: N803
    def conv_pool_weight(xflat: Any, wp: int, g: Any, idx: Any, plane: Any, acc: Any,
                         bacc: Any, dy: Any) -> None:  # fmt: skip
        length, cout = plane.shape[1], g.shape[3]
        for n in range(g.shape[0]):
            for i in range(g.shape[1]):
                for j in range(g.shape[2]):
                    for o in range(cout):
                        gv = g[U(n), U(i), U(j), U(o)]
                        win = idx[U(n), U(i), U(j), U(o)]
                        bacc[U(o)] += gv
                        at = i * PH * wp + j * PW
                        t = 0
                        for a in range(PH):
                            for b in range(PW):
                                val = gv if t == win else gv * 0
                                plane[U(o), U(at + a * wp + b)] = val
                                if EXACT:
                                    dy[U(n), U(i * PH + a), U(j * PW + b), U(o)] = val
                                t += 1
            # weight_one_channel's loop, the same bits
            weight_taps(KH, KW, xflat, n, wp, plane, acc, cout, length)

    return conv_pool_weight


def _make_split_conv_pool() -> Any:
    def conv_pool_split(xflat: Any, wp: int, w: Any, bias: Any, planes: Any, out: Any, idx: Any,
                        k: int) -> None:  # fmt: skip
        n = xflat.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(xflat[s:e], wp, w, bias, planes[t], out[s:e], idx[s:e])

    return conv_pool_split


def _make_split_weight() -> Any:
    def weight_split(xflat: Any, wp: int, g: Any, idx: Any, planes: Any, parts: Any,
                     bparts: Any, dy: Any, k: int) -> None:  # fmt: skip
        n = xflat.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(xflat[s:e], wp, g[s:e], idx[s:e], planes[t], parts[t], bparts[t], dy[s:e])

    return weight_split
