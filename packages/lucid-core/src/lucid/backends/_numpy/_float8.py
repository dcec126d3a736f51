"""Conversions to the float8 types (ml_dtypes' arrays) that give torch's CPU bits.

torch converts any value to a float8 type through float32 (a float64 is rounded to float32
first) and then rounds to nearest-even, as ml_dtypes does, except where their special values
differ: torch's ``float8_e4m3fn`` saturates (a finite overflow and +-inf give +-448, only NaN
gives NaN: ml_dtypes gives NaN for all three), its ``float8_e5m2`` NaN is ``0x7F`` (ml_dtypes'
``0x7E``), and its ``float8_e8m0fnu`` keeps the exponent of the value's magnitude, rounded to
nearest-even on the mantissa (c10's ``fp8e8m0fnu_from_fp32_value``; zero gives 2**-127,
NaN and +-inf give NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def cast(arr: Any, name: str, native: Any) -> Any:
    """``arr`` (any NumPy array) as the float8 type ``name`` (NumPy dtype ``native``), rounded
    as torch's CPU rounds it. Always a new array."""
    src = np.asarray(arr)
    if src.dtype.name.startswith("float8_"):
        src = widen(src)
    elif src.dtype.kind == "c":  # torch keeps the real part (with its warning)
        src = src.real
    f32 = src.astype(np.float32)
    if name == "float8_e8m0fnu":
        return _e8m0(f32).view(native)
    if name == "float8_e4m3fn":
        out = np.clip(f32, -448.0, 448.0).astype(native)  # NaN stays NaN
    else:
        out = f32.astype(native)
    if name == "float8_e5m2":
        nan = np.isnan(f32)
        if nan.any():
            bits = out.view(np.uint8)
            bits[nan] = np.where(np.signbit(f32[nan]), 0xFF, 0x7F)
    return out


def widen(arr: Any) -> Any:
    """A float8 array as float32 (exact), as torch reads float8 values: the NaN of the
    ``fnuz`` types (bits ``0x80``) is a positive NaN there."""
    f32 = np.asarray(arr).astype(np.float32)
    if arr.dtype.name.endswith("fnuz"):
        nan = np.isnan(f32)
        if nan.any():
            f32[nan] = np.nan
    return f32


def _e8m0(f32: Any) -> Any:
    """c10's float32 -> float8_e8m0fnu bits: the biased exponent, rounded up where the
    mantissa is past half (or exactly half on an odd exponent, counting the implied bit)."""
    bits = f32.view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    g = (bits & 0x400000) != 0
    r = (bits & 0x200000) != 0
    s = (bits & 0x1FFFFF) != 0
    up = g & (r | s | (exponent > 0)) & (exponent != 0xFF)
    return (exponent + up).astype(np.uint8)
