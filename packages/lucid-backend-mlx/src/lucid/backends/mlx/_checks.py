"""What MLX does not check itself, checked the way the NumPy backend's errors read.

- Index bounds. An index given as a Python int is checked at once (its axis size is known).
  An index array's bounds are a reduction added to the lazy graph; its result is read at the
  backend's next sync point (``to_numpy``, ``evaluate``), before the arrays asked for, so a
  check costs no sync of its own, and the error is raised there (as PyTorch reports a CUDA
  device-side index error at the next synchronisation).
- Allocations larger than the device's memory, refused before MLX is asked for them (MLX
  kills the process with SIGSEGV when such an array is evaluated).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import mlx.core as mx


def out_of_bounds(axis: int | None, size: int) -> Callable[[int], IndexError]:
    """NumPy's error for an index outside ``[-size, size)``."""
    where = "for size" if axis is None else f"for axis {axis} with size"

    def error(index: int) -> IndexError:
        return IndexError(f"index {index} is out of bounds {where} {size}")

    return error


class PendingChecks:
    """Bounds checks of index arrays, read at the next sync point."""

    def __init__(self) -> None:
        self._pending: list[tuple[Any, int, int, Callable[[int], Exception]]] = []

    def add(self, arr: Any, low: int, high: int, error: Callable[[int], Exception]) -> None:
        if arr.size:
            self._pending.append((mx.stack([mx.min(arr), mx.max(arr)]), low, high, error))

    def index_tuple(self, shape: tuple[int, ...], index: Any) -> None:
        """Check ``arr[index]`` for an array of ``shape``: ints now, index arrays later."""
        items = index if isinstance(index, tuple) else (index,)
        consumed = sum(1 for item in items if item is not None and item is not Ellipsis)
        axis = 0
        for item in items:
            if item is Ellipsis:
                axis += len(shape) - consumed
                continue
            if item is None:
                continue
            if axis >= len(shape):
                return  # too many indices: MLX says so
            self._one(item, axis, shape[axis])
            axis += 1

    def _one(self, item: Any, axis: int, size: int) -> None:
        if isinstance(item, mx.array):
            self.add(item, -size, size, out_of_bounds(axis, size))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            if not -size <= int(item) < size:
                raise out_of_bounds(axis, size)(int(item))

    def raise_failed(self) -> None:
        """Evaluate the pending checks and raise the first that failed (all are cleared)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        mx.eval(*[bounds for bounds, *_ in pending])
        for bounds, low, high, error in pending:
            lo, hi = (int(v) for v in np.array(bounds).tolist())
            if hi >= high or lo < low:
                raise error(hi if hi >= high else lo)


@functools.cache
def device_memory(on_gpu: bool) -> int | None:
    """Bytes of memory of the device (the GPU's as MLX reports it, else the host's RAM)."""
    info = getattr(mx, "device_info", None) or getattr(getattr(mx, "metal", None), "device_info")
    size = info().get("memory_size") if on_gpu else None
    if isinstance(size, int) and size > 0:
        return size
    try:
        import psutil  # type: ignore[import-untyped]

        return int(psutil.virtual_memory().total)
    except ImportError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_allocation(shape: Any, dtype: Any, device: str, on_gpu: bool) -> None:
    """Refuse an array of ``shape`` and MLX ``dtype`` larger than the device's memory."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = math.prod(int(d) for d in dims) * (dtype.size if dtype is not None else 4)
    limit = device_memory(on_gpu)
    if limit is not None and nbytes > limit:
        raise MemoryError(
            f"Unable to allocate {_gib(nbytes)} for an array with shape {dims} and data type "
            f"{str(dtype).removeprefix('mlx.core.')} on device {device!r}: it has "
            f"{_gib(limit)} of memory"
        )


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:,.2f} GiB"
