"""Mapping between lucid dtypes and MLX dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

import mlx.core as mx
from lucid import _dtype

TO_MLX: dict[_dtype.dtype, Any] = {
    _dtype.bool_: mx.bool_,
    _dtype.uint8: mx.uint8,
    _dtype.int8: mx.int8,
    _dtype.int16: mx.int16,
    _dtype.int32: mx.int32,
    _dtype.int64: mx.int64,
    _dtype.float16: mx.float16,
    _dtype.bfloat16: mx.bfloat16,
    _dtype.float32: mx.float32,
    _dtype.float64: mx.float64,
    _dtype.complex64: mx.complex64,
}
FROM_MLX: dict[Any, _dtype.dtype] = {v: k for k, v in TO_MLX.items()}
# Index results MLX makes unsigned (argmax, argsort): lucid, like torch, has only int64.
INDEX_DTYPES = (mx.uint32, mx.uint64, mx.uint16)


def from_any(native: Any) -> _dtype.dtype:
    """The lucid dtype of an MLX dtype, a NumPy dtype or a dtype name."""
    found = FROM_MLX.get(native) if isinstance(native, mx.Dtype) else None
    if found is not None:
        return found
    if isinstance(native, mx.Dtype):
        raise TypeError(f"MLX dtype {native} has no lucid equivalent")
    name = "bfloat16" if str(native) == "bfloat16" else np.dtype(native).name
    try:
        return _dtype.BY_NAME[name]
    except KeyError:
        raise TypeError(f"dtype {native} has no lucid equivalent") from None
