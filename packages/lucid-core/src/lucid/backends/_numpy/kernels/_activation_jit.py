"""sigmoid, silu, logsigmoid and hardswish as compiled loops (``lucid-core[numba]``), for
``activation`` (``kernels.ACTIVATION``/``ACTIVATION_GRAD``).

Each loop is the arithmetic of torch's formula after NumPy's SIMD ``exp``/``log1p`` pass
(numba's ``math.exp`` is a scalar libm call, ~5x slower than NumPy's), so an activation is two
or three passes over the array instead of four to ten NumPy ufunc passes and temporaries; the
float operations are those of the NumPy code in lucid-nn (the same bits). Except float32's SiLU
(``silu32``, ``silu_grad32``): one pass each way, with ``_special_jit.exp32`` inside (within 1.5
ulp of the float64 exp, where NumPy's is within 3.3: the results differ from the NumPy code's in
the last bits), split over numba's threads from ``_special_jit.SPLIT_ELEMENTS`` elements
(``silu_split``, ``silu_grad_split``). Sigmoid keeps NumPy's exp: ``lucid.compile``'s
elementwise fuser gives eager code's sigmoid bit for bit with it. Selects, not
branches (``x if c else y`` on floats vectorises): a branch over a random sign mispredicts
once an element. The constants come in ``c``, a tuple ``(0, 1, 3, 6, 0.5)`` of the arrays'
float type (a literal ``1`` would make numba compute in float64).
"""

from __future__ import annotations

from typing import Any

import numba

from lucid.backends._numpy._numba import U, jit_math, run
from lucid.backends._numpy.kernels._special_jit import (
    SPLIT_ELEMENTS,
    _make_split_binary,
    _make_split_unary,
    exp32,
)

_ONE32 = numba.float32(1.0)


@jit_math
def negate(x: Any, out: Any) -> None:
    """``out = -x`` (then NumPy's exp in place)."""
    for i in range(x.shape[0]):
        out[U(i)] = -x[U(i)]


@jit_math
def neg_abs(x: Any, out: Any) -> None:
    """``out = -|x|``."""
    for i in range(x.shape[0]):
        out[U(i)] = -abs(x[U(i)])


@jit_math
def sigmoid_from(e: Any, c: Any) -> None:
    """``e = 1 / (e + 1)`` in place, ``e = exp(-x)``."""
    one = c[1]
    for i in range(e.shape[0]):
        e[U(i)] = one / (e[U(i)] + one)


@jit_math
def silu_from(x: Any, e: Any, c: Any) -> None:
    """``e = x / (e + 1)`` in place, ``e = exp(-x)``."""
    one = c[1]
    for i in range(e.shape[0]):
        e[U(i)] = x[U(i)] / (e[U(i)] + one)


@jit_math
def sigmoid_grad(g: Any, y: Any, out: Any, c: Any) -> None:
    """``out = g * (1 - y) * y``."""
    one = c[1]
    for i in range(y.shape[0]):
        v = y[U(i)]
        out[U(i)] = g[U(i)] * (one - v) * v


@jit_math
def silu_grad(g: Any, x: Any, e: Any, c: Any) -> None:
    """``e = g * s * (1 + x * (1 - s))`` in place, ``s = 1 / (e + 1)``, ``e = exp(-x)``."""
    one = c[1]
    for i in range(e.shape[0]):
        s = one / (e[U(i)] + one)
        e[U(i)] = g[U(i)] * s * (one + x[U(i)] * (one - s))


@jit_math
def logsigmoid_from(x: Any, lg: Any, c: Any) -> None:
    """``lg = min(x, 0) - lg`` in place, ``lg = log1p(exp(-|x|))``."""
    zero = c[0]
    for i in range(lg.shape[0]):
        v = x[U(i)]
        m = v if (v <= zero or v != v) else zero
        lg[U(i)] = m - lg[U(i)]


@jit_math
def logsigmoid_grad(g: Any, e: Any, c: Any) -> None:
    """``e = g / (e + 1)`` in place, ``e = exp(x)``."""
    one = c[1]
    for i in range(e.shape[0]):
        e[U(i)] = g[U(i)] / (e[U(i)] + one)


@jit_math
def hardswish(x: Any, out: Any, c: Any) -> None:
    """``out = x * min(max(x + 3, 0), 6) / 6`` (NaN kept, as NumPy's ``clip``)."""
    zero, three, six = c[0], c[2], c[3]
    for i in range(x.shape[0]):
        v = x[U(i)]
        t = v + three
        t = t if (t >= zero or t != t) else zero
        t = t if (t <= six or t != t) else six
        out[U(i)] = v * t / six


@jit_math
def hardswish_grad(g: Any, x: Any, out: Any, c: Any) -> None:
    """``out = g * slope``: 0 up to -3, ``x / 3 + 1/2`` between, 1 from 3 (torch's)."""
    zero, one, three, half = c[0], c[1], c[2], c[4]
    for i in range(x.shape[0]):
        v = x[U(i)]
        s = v / three + half if v < three else one  # NaN: 1, as torch's
        s = zero if v <= -three else s
        out[U(i)] = g[U(i)] * s


@jit_math
def relu(x: Any, out: Any, c: Any) -> None:
    """``np.maximum(x, 0)``: ``x`` where above 0 or NaN, else ``+0`` (-0 included, as NumPy's
    maximum gives it); selects, so LLVM vectorises the loop (NumPy's maximum against a scalar
    does not: 83 against ~20 us for LeNet-5's (64, 6, 24, 24), issue 30)."""
    zero = c[0]
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v if (v > zero) | (v != v) else zero


@jit_math
def silu32(x: Any, out: Any) -> None:
    """``out = x / (1 + exp(-x))`` for float32, one pass (``exp32``)."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        out[U(i)] = v / (_ONE32 + exp32(-v))


@jit_math
def silu_grad32(g: Any, x: Any, out: Any) -> None:
    """``out = g * s * (1 + x * (1 - s))``, ``s = 1 / (1 + exp(-x))``, for float32, one pass."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        s = _ONE32 / (exp32(-v) + _ONE32)
        out[U(i)] = g[U(i)] * s * (_ONE32 + v * (_ONE32 - s))


def silu_split(x: Any, out: Any) -> None:
    """``silu32`` over 1-D float32 arrays, split over numba's threads from ``SPLIT_ELEMENTS``."""
    if x.shape[0] < SPLIT_ELEMENTS:
        silu32(x, out)
    else:
        run("silu32", silu32, _make_split_unary, (x, out), x.shape[0])


def silu_grad_split(g: Any, x: Any, out: Any) -> None:
    """``silu_grad32`` likewise."""
    if x.shape[0] < SPLIT_ELEMENTS:
        silu_grad32(g, x, out)
    else:
        run("silu_grad32", silu_grad32, _make_split_binary, (g, x, out), x.shape[0])
