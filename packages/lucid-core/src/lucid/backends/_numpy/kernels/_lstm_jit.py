"""The LSTM cell's elementwise gate math as one compiled pass a step (``lucid-core[numba]``),
and the GRU cell's (``gru_*``: three passes forward between NumPy's tanh passes, one backward).

Optional: ``kernels.lstm`` and ``kernels.gru`` use it where numba is installed and enabled
(``lucid.backends.cpu``).
NumPy runs a step's gate math as ~8 ufunc calls forward and ~16 backward on (20, 200) blocks,
each ~2-4 us of call overhead for a few us of work; here each is one call. The tanh passes stay
NumPy's (numba has no vectorised tanh without SVML: a scalar tanh per element is slower than the
ufunc calls it would save). Every product and sum is rounded to the array dtype as the NumPy
code's ufuncs round it (no fast-math, the constants passed in the array dtype): the same bits.
"""

from __future__ import annotations

from typing import Any

from lucid.backends._numpy._numba import jit


@jit
def gates_forward(acts: Any, c_prev: Any, c: Any, k: Any) -> None:
    """``acts`` (N, 4H) holds ``tanh`` of the scaled pre-activations: make it the gates'
    activations (``t * 0.5 + 0.5`` for i, f, o; ``t * 1 + 0`` for g, as the NumPy code's
    scale and shift) and write ``c = f * c_prev + i * g``. ``k`` is ``[0.5, 1, 0]``."""
    half, one, zero = k[0], k[1], k[2]
    n, h = c.shape
    for r in range(n):
        for j in range(h):
            i = acts[r, j] * half + half
            f = acts[r, h + j] * half + half
            g = acts[r, 2 * h + j] * one + zero
            acts[r, j] = i
            acts[r, h + j] = f
            acts[r, 2 * h + j] = g
            acts[r, 3 * h + j] = acts[r, 3 * h + j] * half + half
            c[r, j] = f * c_prev[r, j] + i * g


@jit
def gates_backward(acts: Any, tc: Any, c_prev: Any, dh: Any, dc: Any, dgates: Any, k: Any) -> None:
    """From the activations, ``tanh(c)`` and the state gradients: the pre-activation gradients
    ``dgates``; ``dc`` becomes the previous cell state's gradient (``_cell_backward``'s
    arithmetic, in its order). ``k`` is ``[0.5, 1, 0]``."""
    one = k[1]
    n, h = tc.shape
    for r in range(n):
        for j in range(h):
            i = acts[r, j]
            f = acts[r, h + j]
            g = acts[r, 2 * h + j]
            o = acts[r, 3 * h + j]
            t = tc[r, j]
            d = dh[r, j]
            dgates[r, 3 * h + j] = (d * t) * ((one - o) * o)
            full = dc[r, j] + ((one - t * t) * o) * d
            dgates[r, j] = (full * g) * ((one - i) * i)
            dgates[r, h + j] = (full * c_prev[r, j]) * ((one - f) * f)
            dgates[r, 2 * h + j] = (full * i) * (one - g * g)
            dc[r, j] = full * f


# The GRU cell (``kernels/gru.py``), as its ufuncs compute it, in their order: forward in three
# passes around NumPy's two tanh passes, backward in one. ``k`` is ``[0.5, 1, 0]``.


@jit
def gru_pre(a: Any, hh: Any, hn: Any, k: Any) -> None:
    """``a[:, :2H] = (a + hh) * 0.5`` (r and z before their tanh) and ``hn = hh[:, 2H:]``."""
    half = k[0]
    n, h = hn.shape
    for r in range(n):
        for j in range(2 * h):
            a[r, j] = (a[r, j] + hh[r, j]) * half
        for j in range(h):
            hn[r, j] = hh[r, 2 * h + j]


@jit
def gru_mid(a: Any, hn: Any, k: Any) -> None:
    """r and z from their tanh (``t * 0.5 + 0.5``), then ``g += r * hn`` (before its tanh)."""
    half = k[0]
    n, h = hn.shape
    for r in range(n):
        for j in range(2 * h):
            a[r, j] = a[r, j] * half + half
        for j in range(h):
            a[r, 2 * h + j] = a[r, 2 * h + j] + a[r, j] * hn[r, j]


@jit
def gru_out(a: Any, h_prev: Any, y: Any) -> None:
    """``y = (h - n) * z + n``."""
    n, h = y.shape
    for r in range(n):
        for j in range(h):
            g = a[r, 2 * h + j]
            y[r, j] = (h_prev[r, j] - g) * a[r, h + j] + g


@jit
def gru_backward(a: Any, hn: Any, h_prev: Any, dh: Any, d_x: Any, d_h: Any, k: Any) -> None:
    """From the activations ``a`` (r, z, n), ``hn`` and the state gradient ``dh``: the input
    projection's pre-activation gradients ``d_x``, the recurrent one's ``d_h`` (r and z the
    same, n times r), and ``dh`` times z (the direct path)."""
    one = k[1]
    n, h = dh.shape
    for i in range(n):
        for j in range(h):
            r = a[i, j]
            z = a[i, h + j]
            g = a[i, 2 * h + j]
            d = dh[i, j]
            dn = ((one - z) * d) * (one - g * g)
            dz = (((h_prev[i, j] - g) * d) * z) * (one - z)
            dr = ((dn * hn[i, j]) * r) * (one - r)
            d_x[i, j] = dr
            d_x[i, h + j] = dz
            d_x[i, 2 * h + j] = dn
            d_h[i, j] = dr
            d_h[i, h + j] = dz
            d_h[i, 2 * h + j] = dn * r
            dh[i, j] = d * z
