"""The arguments of ``Tensor.to`` and ``Module.to``, read in one place."""

from __future__ import annotations

from typing import Any, NamedTuple

import lucid._tensor as _tensor
from lucid import _memory_format, dtypes

__all__ = ["ToArgs", "parse_to"]


class ToArgs(NamedTuple):
    """What a ``to(...)`` call asked for; ``None`` where it did not say."""

    device: Any
    dtype: dtypes.dtype | None
    non_blocking: bool
    copy: bool
    memory_format: _memory_format.memory_format = _memory_format.preserve_format


def parse_to(*args: Any, **kwargs: Any) -> ToArgs:
    """Read ``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``.

    Keywords: ``device``, ``dtype``, ``non_blocking``, ``copy``, ``memory_format`` (a
    ``lucid.memory_format``, default ``lucid.preserve_format``). A tensor argument gives both
    its device and its dtype; any other non-dtype positional is the device.

    >>> parse_to("cpu", lucid.float64)[:4]
    ('cpu', lucid.float64, False, False)
    """
    device = dtype = None
    non_blocking = copy = False
    fmt = _memory_format.preserve_format
    if kwargs:
        fmt = _memory_format.check(kwargs.pop("memory_format", None), "to")
        device, dtype, non_blocking, copy = _keywords(kwargs)
    flags: list[bool] = []
    for a in args:
        if isinstance(a, bool):
            # torch's overloads: to(dtype|device|tensor, ..., non_blocking=False, copy=False)
            flags.append(a)
            continue
        if flags:
            raise TypeError(
                "to() takes non_blocking and copy after the device, dtype or tensor; got "
                f"{type(a).__name__} after a bool"
            )
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, _tensor.Tensor):
            device, dtype = a.device, a.dtype
        elif a is not None:
            device = a
    if len(flags) > 2:
        raise TypeError(f"to() takes at most 2 flags (non_blocking, copy), got {len(flags)}")
    if flags:
        non_blocking = non_blocking or flags[0]
        copy = copy or (len(flags) > 1 and flags[1])
    if dtype is not None and type(dtype) is not dtypes.dtype:
        dtype = dtypes.to_dtype(dtype)
    return ToArgs(device, dtype, non_blocking, copy, fmt)


def _keywords(kwargs: dict[str, Any]) -> tuple[Any, Any, bool, bool]:
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = bool(kwargs.pop("non_blocking", False))
    copy = bool(kwargs.pop("copy", False))
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    return device, dtype, non_blocking, copy
