"""relu, sigmoid, silu, logsigmoid and hardswish for the NumPy backend (``kernels.ACTIVATION``,
``kernels.ACTIVATION_GRAD``): with ``lucid-core[numba]``, NumPy's SIMD ``exp``/``log1p`` pass
and one compiled loop (``_activation_jit``), in place on one new array; without it, or for
other dtypes, they decline and the op's NumPy formulas run (the same bits: the same float
operations). float32 SiLU is one compiled pass with its own exp instead (within the last bits
of the NumPy formula's, ``_activation_jit``); sigmoid keeps NumPy's exp, whose bits
``lucid.compile``'s elementwise fuser reproduces."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends._numpy import _compiled
from lucid.backends._numpy.kernels.relu import memory_order

__all__ = ["CpuActivation", "CpuActivationGrad"]

_JIT = "_activation_jit"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = np.dtype(np.float32)
# ReLU over fewer elements declines (the op's ``maximum(x, 0)``): the compiled call's fixed cost
# (layout checks, dispatch: ~8 us) is more than NumPy's whole pass below ~16K float32 (a (64,
# 120) Linear output: 8.7 against 3.9 us; from 32K the compiled pass is faster). The same bits.
_SMALL_RELU = 1 << 14


def _flat(*arrays: Any) -> list[Any] | None:
    """The arrays as 1-D C-ordered ones (copies where not), or None where the loops do not take
    them (no numba, another dtype, different shapes, nothing to do)."""
    a = arrays[0]
    if a.dtype not in _FLOATS or a.size == 0 or _compiled.load(_JIT) is None:
        return None
    if any(b.dtype != a.dtype or b.shape != a.shape for b in arrays[1:]):
        return None
    return [np.ascontiguousarray(b).reshape(-1) for b in arrays]


def _consts(a: Any) -> tuple[Any, ...]:
    """The loops' constants in ``a``'s float type (``_activation_jit``)."""
    t = a.dtype.type
    return (t(0), t(1), t(3), t(6), t(0.5))


def _run(fn: str, *args: Any) -> bool:
    return _compiled.run(_JIT, fn, *args)


def _relu(x: Any) -> Any:
    """``np.maximum(x, 0)`` as one compiled pass over ``x``'s memory into an array of its
    layout (a channels-last conv output stays channels-last, as NumPy's maximum keeps it), or
    None where ``x``'s elements are not one dense block."""
    if x.dtype not in _FLOATS or x.size < _SMALL_RELU or _compiled.load(_JIT) is None:
        return None
    xf = memory_order(x)
    if xf is None:
        return None
    out = np.empty_like(x)  # a dense array's strides
    of = memory_order(out)
    if of is None or out.strides != x.strides:
        return None
    return out if _run("relu", xf, of, _consts(x)) else None


class CpuActivation:
    """``kernels.ACTIVATION`` for NumPy (the module's docstring)."""

    @staticmethod
    def forward(backend: Any, name: str, x: Any) -> Any:
        if name == "relu":
            return _relu(x)
        flat = _flat(x)
        if flat is None:
            return None
        (xf,) = flat
        out, c = np.empty_like(xf), _consts(xf)
        if name == "hardswish":
            ok = _run("hardswish", xf, out, c)
        elif name == "silu" and xf.dtype == _F32:  # one pass (_activation_jit)
            ok = _run("silu_split", xf, out)
        elif name in ("sigmoid", "silu"):
            ok = _run("negate", xf, out)
            if ok:
                np.exp(out, out=out)
                ok = (_run("sigmoid_from", out, c) if name == "sigmoid"
                      else _run("silu_from", xf, out, c))  # fmt: skip
        elif name == "logsigmoid":
            ok = _run("neg_abs", xf, out)
            if ok:
                np.exp(out, out=out)
                np.log1p(out, out=out)
                ok = _run("logsigmoid_from", xf, out, c)
        else:
            return None
        return out.reshape(x.shape) if ok else None


class CpuActivationGrad:
    """``kernels.ACTIVATION_GRAD`` for NumPy (the module's docstring)."""

    @staticmethod
    def forward(backend: Any, name: str, g: Any, s: Any) -> Any:
        flat = _flat(s, g)
        if flat is None:
            return None
        sf, gf = flat
        out, c = np.empty_like(sf), _consts(sf)
        if name == "sigmoid":
            ok = _run("sigmoid_grad", gf, sf, out, c)
        elif name == "hardswish":
            ok = _run("hardswish_grad", gf, sf, out, c)
        elif name == "silu" and sf.dtype == _F32:
            ok = _run("silu_grad_split", gf, sf, out)
        elif name == "silu":
            ok = _run("negate", sf, out)
            if ok:
                np.exp(out, out=out)
                ok = _run("silu_grad", gf, sf, out, c)
        elif name == "logsigmoid":
            np.exp(sf, out=out)
            ok = _run("logsigmoid_grad", gf, out, c)
        else:
            return None
        return out.reshape(s.shape) if ok else None
