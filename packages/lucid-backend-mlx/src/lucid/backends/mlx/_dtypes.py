"""Mapping between lucid dtypes and MLX dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np

import mlx.core as mx
from lucid import dtypes

TO_MLX: dict[dtypes.dtype, Any] = {
    dtypes.bool_: mx.bool_,
    dtypes.uint8: mx.uint8,
    dtypes.int8: mx.int8,
    dtypes.int16: mx.int16,
    dtypes.int32: mx.int32,
    dtypes.int64: mx.int64,
    dtypes.float16: mx.float16,
    dtypes.bfloat16: mx.bfloat16,
    dtypes.float32: mx.float32,
    dtypes.float64: mx.float64,
    dtypes.complex64: mx.complex64,
}
FROM_MLX: dict[Any, dtypes.dtype] = {v: k for k, v in TO_MLX.items()}
# Index results MLX makes unsigned (argmax, argsort): lucid, like torch, has only int64.
INDEX_DTYPES = (mx.uint32, mx.uint64, mx.uint16)


def from_any(native: Any) -> dtypes.dtype:
    """The lucid dtype of an MLX dtype, a NumPy dtype or a dtype name."""
    found = FROM_MLX.get(native) if isinstance(native, mx.Dtype) else None
    if found is not None:
        return found
    if isinstance(native, mx.Dtype):
        raise TypeError(f"MLX dtype {native} has no lucid equivalent")
    name = "bfloat16" if str(native) == "bfloat16" else np.dtype(native).name
    try:
        return dtypes.BY_NAME[name]
    except KeyError:
        raise TypeError(f"dtype {native} has no lucid equivalent") from None
