"""erf, erfc and GELU (forward and gradient) as compiled elementwise passes (``lucid-core[numba]``).

Optional: ``special`` uses these where numba is installed and enabled (``lucid.backends.cpu``).
NumPy has no erf: its code evaluates a rational approximation in several ufunc passes (and the
op's float64 reference, fdlibm, in four branches over every element). Here each is one vectorised
pass without the GIL (split over numba's threads from 128K elements, ``SPLIT_ELEMENTS``), for
float32: ``special``'s rational approximations evaluated in float64 (erf within 1 ulp of the
correctly rounded float32 value), written with selects, not branches, and compiled with NumPy's
error model (``_numba.jit_math``), so that LLVM vectorises the loop. GELU and its gradient
evaluate that rational in float32 (as PyTorch's float32 GELU does): within 2.3 ulp of the
output near x = 5 and 1.1e-6 absolute over [-12, 12] against float64 (the gradient 2.5e-7).
numba's ``math.erf`` and ``math.tanh`` are scalar calls, 20-100x slower than these loops
(docs/performance.md): not used; float64 takes the op's own code. So is its float32 ``math.exp``:
GELU's gradient and the tanh form take ``exp32``, a float32 exp LLVM vectorises (within 1.5
ulp of the correctly rounded value, against NumPy's 3.3 here), so that each is one pass instead
of NumPy's ``exp`` passes and a compiled one.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import prange, types
from numba.extending import intrinsic

from lucid.backends._numpy._numba import U, jit_math, run
from lucid.backends._numpy._parallel import NUMBA, blas_threads
from lucid.backends._numpy.kernels.special import (
    ERF_CLAMP,
    ERF_P,
    ERF_Q,
    ERFC_HI,
    ERFC_LO,
    ERFCX_P,
    ERFCX_Q,
)  # fmt: skip

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_A = 0.044715
_P0, _P1, _P2, _P3, _P4, _P5 = ERF_P
_Q0, _Q1, _Q2, _Q3, _Q4, _Q5 = ERF_Q
_R0, _R1, _R2, _R3, _R4 = ERFCX_P
_S0, _S1, _S2, _S3, _S4, _S5 = ERFCX_Q
# GELU's float32 evaluation (``_phi32``): the same rational's coefficients as float32
_P0f, _P1f, _P2f, _P3f, _P4f, _P5f = (np.float32(c) for c in ERF_P)
_Q0f, _Q1f, _Q2f, _Q3f, _Q4f, _Q5f = (np.float32(c) for c in ERF_Q)
_SQRT_HALF32 = np.float32(_SQRT_HALF)
_INV_SQRT_2PI32 = np.float32(_INV_SQRT_2PI)
_CLAMP32 = np.float32(ERF_CLAMP)
_ONE32, _HALF32 = np.float32(1.0), np.float32(0.5)
# ``exp32``: Cody and Waite's reduction by ln 2 in two parts, Cephes' expf polynomial, 2^n
# made from its bits; its argument clamped to where float32's exp is a normal number.
_LOG2E32 = np.float32(1.4426950408889634)
_LN2_HI32, _LN2_LO32 = np.float32(0.693359375), np.float32(-2.12194440e-4)
_ROUND32 = np.float32(12582912.0)  # 1.5 * 2^23: adding it and taking it away rounds to integers
_EXP_LO32, _EXP_HI32 = np.float32(-87.33654), np.float32(88.72284)  # ln of float32's range
_E1, _E2, _E3, _E4, _E5, _E6 = (np.float32(c) for c in (
    1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
    5.0000001201e-1))  # fmt: skip
_ZERO32, _INF32 = np.float32(0.0), np.float32(np.inf)


def _bitcast_int32_float32(typingctx: Any, bits: Any) -> Any:
    """The float32 whose bits are the int32 ``bits`` (a bitcast: vectorises, unlike a view)."""
    sig = types.float32(types.int32)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


# (the intrinsic as a value: mypy then sees ``Any``, not numba's call signature)
_float32_of_bits: Any = intrinsic(_bitcast_int32_float32)


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _exp32_reduced(c: Any) -> Any:
    """``(m, n)`` with ``exp(c) = m * 2^n`` for a float32 ``c`` already clamped to
    ``[_EXP_LO32, _EXP_HI32]``: ``exp32``'s reduction and polynomial, shared by both forms."""
    f = (c * _LOG2E32 + _ROUND32) - _ROUND32  # the nearest integer to c / ln 2
    r = c - f * _LN2_HI32
    r = r - f * _LN2_LO32
    p = ((((_E1 * r + _E2) * r + _E3) * r + _E4) * r + _E5) * r + _E6
    return p * r * r + r + _ONE32, np.int32(f)


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def exp32(t: Any) -> Any:
    """``exp(t)`` of a float32 ``t`` in float32, with selects only, so that LLVM vectorises the
    loops that call it: 0 below ~-87.34 (where float32's exp leaves the normal numbers), inf
    past float32's range, NaN for NaN; within 1.5 ulp of the float64 value elsewhere."""
    c = t if t > _EXP_LO32 else _EXP_LO32
    c = c if c < _EXP_HI32 else _EXP_HI32
    y, n = _exp32_reduced(c)
    half = n >> np.int32(1)  # 2^n in two factors: each a normal number for n in [-126, 128]
    y = y * _float32_of_bits((half + np.int32(127)) << np.int32(23))
    y = y * _float32_of_bits((n - half + np.int32(127)) << np.int32(23))
    y = y if t >= _EXP_LO32 else _ZERO32
    y = y if t <= _EXP_HI32 else _INF32
    return y if t == t else t


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def exp32_nonpositive(t: Any) -> Any:
    """``exp32(t)`` for ``t <= 0`` (or NaN): the same bits, fewer operations (one clamp, 2^n in
    one factor), for GELU's ``exp(-x^2 / 2)``. Wrong for ``t > 0``."""
    c = t if t > _EXP_LO32 else _EXP_LO32
    y, n = _exp32_reduced(c)
    y = y * _float32_of_bits((n + np.int32(127)) << np.int32(23))
    y = y if t >= _EXP_LO32 else _ZERO32
    return y if t == t else t


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _erf_rational(v: float) -> float:
    """float32-accurate erf of a float64 ``v``: ``v * P(v^2) / Q(v^2)`` on [-4, 4], +-1 past,
    NaN for NaN. Selects, not branches (numba's min/max branch): LLVM vectorises the loops."""
    c = v if v < ERF_CLAMP else ERF_CLAMP
    c = c if c > -ERF_CLAMP else -ERF_CLAMP
    z = c * c
    p = _P0 + z * (_P1 + z * (_P2 + z * (_P3 + z * (_P4 + z * _P5))))
    q = _Q0 + z * (_Q1 + z * (_Q2 + z * (_Q3 + z * (_Q4 + z * _Q5))))
    r = c * p / q
    r = r if r < 1.0 else 1.0
    r = r if r > -1.0 else -1.0
    return r if v == v else v


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _erfc_rational(v: float) -> float:
    """float32-accurate erfc of a float64 ``v``: ``1 - erf`` below 0.5, ``exp(-v^2) P(v) /
    Q(v)`` above."""
    t = v if v > ERFC_LO else ERFC_LO
    t = t if t < ERFC_HI else ERFC_HI
    p = _R0 + t * (_R1 + t * (_R2 + t * (_R3 + t * _R4)))
    q = _S0 + t * (_S1 + t * (_S2 + t * (_S3 + t * (_S4 + t * _S5))))
    tail = math.exp(-v * v) * p / q
    return tail if v >= ERFC_LO else 1.0 - _erf_rational(v)


@jit_math
def erf_rational(x: Any, out: Any) -> None:
    """``out = erf(x)`` for float32 1-D arrays."""
    for i in range(x.shape[0]):
        out[U(i)] = _erf_rational(numba.float64(x[U(i)]))


@jit_math
def erfc_rational(x: Any, out: Any) -> None:
    """``out = erfc(x)`` for float32 1-D arrays."""
    for i in range(x.shape[0]):
        out[U(i)] = _erfc_rational(numba.float64(x[U(i)]))


@numba.njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _phi32(v: Any) -> Any:
    """Phi(v) = (1 + erf(v / sqrt 2)) / 2 of a float32 ``v`` in float32 arithmetic (GELU's cdf:
    16 lanes a vector and a float32 divide, ~1.7x the float64 evaluation's speed); its
    absolute error, ~1e-7, is what GELU's tolerances allow (``special``'s docstring)."""
    w = v * _SQRT_HALF32
    c = w if w < _CLAMP32 else _CLAMP32
    c = c if c > -_CLAMP32 else -_CLAMP32
    z = c * c
    p = _P0f + z * (_P1f + z * (_P2f + z * (_P3f + z * (_P4f + z * _P5f))))
    q = _Q0f + z * (_Q1f + z * (_Q2f + z * (_Q3f + z * (_Q4f + z * _Q5f))))
    r = c * p / q
    r = r if r < _ONE32 else _ONE32
    r = r if r > -_ONE32 else -_ONE32
    r = r if w == w else w
    return _HALF32 * (_ONE32 + r)


@jit_math
def gelu_rational(x: Any, out: Any) -> None:
    """``out = x * Phi(x)`` for float32, in float32 (``_phi32``)."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        out[U(i)] = v * _phi32(v)


@jit_math
def gelu_tanh(x: Any, out: Any) -> None:
    """``out = 0.5 x (1 + tanh(u))``, ``u = sqrt(2/pi) (x + 0.044715 x^3)``, as the equal
    ``x * sigmoid(2u)`` (one float32 ``exp32``; numba's tanh and exp are slow scalar calls)."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        u = numba.float32(_TANH_K) * (v + numba.float32(_TANH_A) * v * v * v)
        out[U(i)] = v / (numba.float32(1.0) + exp32(numba.float32(-2.0) * u))


@jit_math
def gelu_grad_rational(g: Any, x: Any, out: Any) -> None:
    """``out = g * (Phi(x) + x phi(x))`` for float32, in float32 (``_phi32``, and
    ``exp32_nonpositive`` for ``exp(-x^2 / 2)``): one pass."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        e = exp32_nonpositive(numba.float32(-0.5) * v * v)
        out[U(i)] = g[U(i)] * (_phi32(v) + v * _INV_SQRT_2PI32 * e)


@jit_math
def gelu_grad_tanh(g: Any, x: Any, out: Any) -> None:
    """The tanh approximation's gradient times ``g``: with ``s = sigmoid(2u)``,
    ``s + 2 x s (1 - s) u'``, in float32."""
    for i in range(x.shape[0]):
        v = x[U(i)]
        u = numba.float32(_TANH_K) * (v + numba.float32(_TANH_A) * v * v * v)
        du = numba.float32(_TANH_K) * (numba.float32(1.0) + numba.float32(3.0 * _TANH_A) * v * v)
        s = numba.float32(1.0) / (numba.float32(1.0) + exp32(numba.float32(-2.0) * u))
        out[U(i)] = g[U(i)] * (s + numba.float32(2.0) * v * s * (numba.float32(1.0) - s) * du)


UNARY = {
    "erf_rational": erf_rational,
    "erfc_rational": erfc_rational,
    "gelu_rational": gelu_rational,
    "gelu_tanh": gelu_tanh,
}
BINARY = {"gelu_grad_tanh": gelu_grad_tanh, "gelu_grad_rational": gelu_grad_rational}


# Passes over fewer elements stay on the calling thread: the fork-join (~10-20 us with sleeping
# threads) costs more than half a pass saves. The GPT step's GELU (393K elements) at two threads:
# 45.3 ms at 4M, 43.2 at 128K, 42.9 at 32K on a quiet machine (docs/performance.md, issue 30).
SPLIT_ELEMENTS = 1 << 17


# From this many elements a pass splits where numba's threads ran the last parallel work (a
# product's column split just before: GELU after ``c_fc``) and spin after a split, so they are
# awake still: a generated token's GELU, (64, 512), 24 -> ~15 us; the forward at 64 tokens 2-4%
# faster, alternated call by call (docs/performance.md, session 24). Sleeping threads (the
# passive policy of a loaded machine) would cost a wake-up of 25-40 us.
HOT_SPLIT_ELEMENTS = 1 << 15


def _numba_awake() -> bool:
    """Whether numba's threads ran the last parallel work and spin after a split."""
    return blas_threads.last == NUMBA and blas_threads.omp_spins


def unary(name: str, x: Any, out: Any) -> None:
    """``UNARY[name](x, out)`` over 1-D arrays, split over numba's threads when very big, or
    big and numba's threads are awake (``_numba_awake``)."""
    n = x.shape[0]
    if n < SPLIT_ELEMENTS and (n < HOT_SPLIT_ELEMENTS or not _numba_awake()):
        UNARY[name](x, out)
    else:
        run(name, UNARY[name], _make_split_unary, (x, out), x.shape[0])


def binary(name: str, g: Any, x: Any, out: Any) -> None:
    """``BINARY[name](g, x, out)`` over 1-D arrays, split over numba's threads when very big."""
    if x.shape[0] < SPLIT_ELEMENTS:
        BINARY[name](g, x, out)
    else:
        run(name, BINARY[name], _make_split_binary, (g, x, out), x.shape[0])


# -- the same passes split over numba's threads: each calls the serial one as ``inner`` -------
inner: Any = None


def _make_split_unary() -> Any:
    def split(x: Any, out: Any, k: int) -> None:
        n = x.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(x[s:e], out[s:e])

    return split


def _make_split_binary() -> Any:
    def split(g: Any, x: Any, out: Any, k: int) -> None:
        n = x.shape[0]
        for t in prange(k):
            s, e = n * t // k, n * (t + 1) // k
            inner(g[s:e], x[s:e], out[s:e])

    return split
