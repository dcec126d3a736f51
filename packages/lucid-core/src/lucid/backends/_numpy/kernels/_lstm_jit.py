"""The LSTM cell's elementwise gate math as one compiled pass a step (``lucid-core[numba]``).

Optional: ``kernels.lstm`` uses it where numba is installed and enabled (``lucid.backends.cpu``).
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
