"""erf, erfc and GELU (forward and gradient) for the NumPy backend (``kernels.ERF``,
``kernels.ERFC``, ``kernels.GELU``, ``kernels.GELU_GRAD``).

float32 only. With ``lucid-core[numba]``: one compiled pass per call (``_special_jit``).
Without it, float32 arrays take a float32 rational approximation in a few ufunc passes, where
the op's own code (fdlibm's four branches, evaluated over every element for branch-free
arrays) took ~25: erf as ``x P(x^2) / Q(x^2)`` on [-4, 4] (degree 5/5, fitted here for float32,
within 4e-7 relative of erf), erfc above 0.5 as ``exp(-x^2) P(x) / Q(x)`` (degree 4/5, within
4e-7 relative, the exponential in float64 so that the tail keeps its relative accuracy).
float64 (fdlibm's accuracy), float16/bfloat16 and other dtypes decline (None): the op's
reference code runs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled, _parallel

__all__ = [
    "ERFCX_P", "ERFCX_Q", "ERFC_HI", "ERFC_LO", "ERF_CLAMP", "ERF_P", "ERF_Q", "CpuErf",
    "CpuErfc", "CpuGelu", "CpuGeluGrad",
]  # fmt: skip

_JIT = "_special_jit"
_F32 = np.dtype(np.float32)

# erf(x) = x P(x^2) / Q(x^2) on |x| <= 4 (float32's erf is 1 from 3.92 on); lowest order first.
ERF_CLAMP = 4.0
ERF_P = (
    1.128379139941372, 0.19350760480183266, 0.053096048353368105, 0.0038815320788953373,
    0.00028449188288146135, 1.9866424212670786e-06,
)  # fmt: skip
ERF_Q = (
    1.0, 0.5048242162159257, 0.11533384523460843, 0.015203649942615262, 0.0011850693679601552,
    3.741482800874539e-05,
)  # fmt: skip
# erfc(x) exp(x^2) = P(x) / Q(x) on [0.5, 10.1] (float32's erfc is 0 past 10.06).
ERFC_LO, ERFC_HI = 0.5, 11.0
ERFCX_P = (
    1.0000099246872487, 1.31403537752246, 0.8181207652922099, 0.2734759782907012,
    0.04369193226673534,
)  # fmt: skip
ERFCX_Q = (
    1.0, 2.4425113965637015, 2.573768760747272, 1.4885831002657375, 0.48473548684144235,
    0.07744164959877436,
)  # fmt: skip
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_A = 0.044715
# Below this many elements NumPy's passes cost about what a compiled call does.
_SMALL_ELEMENTS = 256
# From this many elements GELU's compiled gradient and the ufunc code without numba run their
# 64K-element blocks on every thread (``_parallel.map_blocks``: the calling thread and the pool's
# take blocks in turn; NumPy's exp and the compiled pass release the GIL); 0 splits any size
# above one block, a huge value never (docs/performance.md, issue 30, GPT at two threads).
SPLIT_BLOCKS_ELEMENTS = 1 << 17


def _horner(coeffs: tuple[float, ...], z: Any) -> Any:
    acc = np.full_like(z, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc *= z
        acc += c
    return acc


def erf_f32(x: Any) -> Any:
    """erf of a float32 array in float32 ufunc passes (NaN in, NaN out; +-inf -> +-1)."""
    v = np.clip(x, -ERF_CLAMP, ERF_CLAMP)
    z = v * v
    r = _horner(ERF_P, z)
    r /= _horner(ERF_Q, z)
    r *= v
    return np.clip(r, -1.0, 1.0, out=r)


def erfc_f32(x: Any) -> Any:
    """erfc of a float32 array: ``1 - erf`` below 0.5, the scaled tail above it."""
    t = np.clip(x, ERFC_LO, ERFC_HI)
    tail = _horner(ERFCX_P, t)
    tail /= _horner(ERFCX_Q, t)
    x64 = x.astype(np.float64)
    tail *= np.exp(-(x64 * x64))
    near = 1.0 - erf_f32(x)
    return np.where(x >= ERFC_LO, tail, near)


def _flat(*arrays: Any) -> tuple[Any, ...] | None:
    """The arrays as 1-D C-ordered views (copies where not contiguous), or None where their
    shapes differ."""
    if any(a.shape != arrays[0].shape for a in arrays[1:]):
        return None
    return tuple(np.ascontiguousarray(a).reshape(-1) for a in arrays)


# From ``SPLIT_BLOCKS_ELEMENTS`` elements a compiled unary pass (GELU's forward) runs its 64K
# blocks on every thread through lucid's pool, as the gradient does, instead of splitting over
# numba's threads: those skip a split that the pool's work follows (their spin would hold its
# core), so a GPT step's (12, 64, 512) GELU ran on one thread (docs/performance.md, issue 30).
# False: numba's split, as before.
POOL_UNARY = True
# ... unless numba's threads ran the last parallel work: then numba's split (GELU's forward) or
# ``exp`` whole and numba's split (its gradient), as a GPT step's other passes run (issue 30,
# docs/performance.md, "Session 11"); False: the pool's blocks whatever ran last.
NUMBA_LEADS = True


def pool_blocks() -> bool:
    """Whether a big compiled pass runs as blocks on lucid's pool (``POOL_UNARY``), not split
    over numba's threads: not where numba's threads ran the last parallel work (they may spin
    still; one runtime for the step, as ``_gemm.NUMBA_KEEPS_BIG``)."""
    return POOL_UNARY and not (NUMBA_LEADS and _parallel.blas_threads.last == _parallel.NUMBA)


def _compiled_unary(name: str, x: Any) -> Any:
    """``name``'s compiled pass over ``x``, or None where numba is not in use (or failed)."""
    if x.size < _SMALL_ELEMENTS or _compiled.load(_JIT) is None:
        return None
    (xf,) = _flat(x) or (None,)
    out = np.empty(x.shape, dtype=x.dtype)
    of = out.reshape(-1)
    n = of.shape[0]
    if pool_blocks() and xf is not None and n >= max(SPLIT_BLOCKS_ELEMENTS, 2 * _BLOCK):

        def block(r: tuple[int, int]) -> bool:  # elementwise: the same bits in any blocks
            return _compiled.run(_JIT, "unary", name, xf[r[0] : r[1]], of[r[0] : r[1]])

        done = _parallel.map_blocks(block, _parallel.blocks(n, _BLOCK), n, SPLIT_BLOCKS_ELEMENTS)
        return out if all(done) else None
    ok = _compiled.run(_JIT, "unary", name, xf, of)
    return out if ok else None


def _compiled_binary(name: str, g: Any, x: Any) -> Any:
    if x.size < _SMALL_ELEMENTS or _compiled.load(_JIT) is None:
        return None
    flat = _flat(g, x)
    if flat is None:
        return None
    out = np.empty(x.shape, dtype=x.dtype)
    ok = _compiled.run(_JIT, "binary", name, *flat, out.reshape(-1))
    return out if ok else None


def _compiled_gelu_grad(g: Any, x: Any) -> Any:
    """The exact GELU's gradient as one compiled pass (``gelu_grad_rational``: its
    ``exp(-x^2 / 2)`` inside, ``_special_jit.exp32``)."""
    if x.size < _SMALL_ELEMENTS or _compiled.load(_JIT) is None:
        return None
    flat = _flat(g, x)
    if flat is None:
        return None
    gf, xf = flat
    out = np.empty(x.shape, dtype=x.dtype)
    of = out.reshape(-1)
    if not pool_blocks():  # split over numba's threads (the same bits)
        return out if _compiled.run(_JIT, "binary", "gelu_grad_rational", gf, xf, of) else None

    # by blocks on every thread for big arrays (the pool's, where it ran the last parallel work)
    def block(r: tuple[int, int]) -> bool:
        args = (gf[r[0] : r[1]], xf[r[0] : r[1]], of[r[0] : r[1]])
        return _compiled.run(_JIT, "binary", "gelu_grad_rational", *args)  # a block: serial

    n = xf.shape[0]
    done = _parallel.map_blocks(block, _parallel.blocks(n, _BLOCK), n, SPLIT_BLOCKS_ELEMENTS)
    return out if all(done) else None


def _float32(*arrays: Any) -> bool:
    """Whether every array is float32 (other dtypes take the op's own code)."""
    return all(a.dtype == _F32 for a in arrays)


class CpuErf:
    """``kernels.ERF`` for NumPy (float32): compiled, or the rational in ufunc passes."""

    @staticmethod
    def forward(backend: Any, x: Any) -> Any:
        if not _float32(x):
            return None
        out = _compiled_unary("erf_rational", x)
        return _by_blocks(erf_f32, x) if out is None else out


class CpuErfc:
    """``kernels.ERFC`` for NumPy (float32): compiled, or the rational in ufunc passes."""

    @staticmethod
    def forward(backend: Any, x: Any) -> Any:
        if not _float32(x):
            return None
        out = _compiled_unary("erfc_rational", x)
        return _by_blocks(erfc_f32, x) if out is None else out


class CpuGelu:
    """``kernels.GELU`` for NumPy (float32): compiled, or (exact form) through the rational erf
    in ufunc passes; the tanh form without numba is the op's own (one tanh ufunc)."""

    @staticmethod
    def forward(backend: Any, x: Any, approximate: str) -> Any:
        if not _float32(x):
            return None
        out = _compiled_unary("gelu_tanh" if approximate == "tanh" else "gelu_rational", x)
        if out is None and approximate != "tanh":
            out = _by_blocks(_gelu_f32, x)
        return out


def _gelu_f32(x: Any) -> Any:
    y = erf_f32(x * np.float32(_SQRT_HALF))
    y += 1.0
    y *= x
    y *= 0.5
    return y


class CpuGeluGrad:
    """``kernels.GELU_GRAD`` for NumPy: ``g * gelu'(x)`` for float32, compiled or in ufunc
    passes (the derivative's formula as arrays, without the recorded ops' overhead)."""

    @staticmethod
    def forward(backend: Any, g: Any, x: Any, approximate: str) -> Any:
        if not _float32(g, x) or g.shape != x.shape:
            return None
        if approximate == "tanh":
            out = _compiled_binary("gelu_grad_tanh", g, x)
        else:
            out = _compiled_gelu_grad(g, x)
        if out is not None:
            return out
        return _by_blocks(_gelu_grad_tanh_f32 if approximate == "tanh" else _gelu_grad_f32, g, x)


def _gelu_grad_tanh_f32(g: Any, x: Any) -> Any:
    t = np.tanh(_TANH_K * (x + _TANH_A * x * x * x))
    dt = (1.0 - t * t) * (_TANH_K * (1.0 + 3.0 * _TANH_A * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * dt)


def _gelu_grad_f32(g: Any, x: Any) -> Any:
    cdf = erf_f32(x * np.float32(_SQRT_HALF))
    cdf += 1.0
    cdf *= 0.5
    pdf = np.exp(-0.5 * x * x)
    pdf *= x
    pdf *= _INV_SQRT_2PI
    cdf += pdf
    cdf *= g
    return cdf


# Elements per block of the ufunc code: a block's ~25 passes stay in L2, where whole (12, 64,
# 512) arrays went to memory on every pass (GELU 4.7 -> 1.6 ms, docs/performance.md). The
# passes are elementwise, so the bits are the whole arrays'.
_BLOCK = 1 << 16


def _by_blocks(fn: Any, *arrays: Any) -> Any:
    """``fn(*arrays)`` (elementwise ufunc code) over flat blocks of ``_BLOCK`` elements where
    the arrays are C-contiguous and of one shape (on every thread from
    ``SPLIT_BLOCKS_ELEMENTS``), else on the whole arrays."""
    first = arrays[0]
    n = first.size
    if n <= _BLOCK or not all(a.flags.c_contiguous and a.shape == first.shape for a in arrays):
        return fn(*arrays)
    out = np.empty(first.shape, dtype=first.dtype)
    flat_out = out.reshape(-1)
    flats = [a.reshape(-1) for a in arrays]

    def block(r: tuple[int, int]) -> None:
        flat_out[r[0] : r[1]] = fn(*(f[r[0] : r[1]] for f in flats))

    _parallel.map_blocks(block, _parallel.blocks(n, _BLOCK), n, SPLIT_BLOCKS_ELEMENTS)
    return out
