"""Arrays in shared memory that other processes can map: ``Tensor.share_memory_`` on "cpu".

An array made shared lives in a named POSIX shared-memory segment (``multiprocessing``'s
``SharedMemory``), so

- a process forked afterwards inherits the mapping (``MAP_SHARED``), and
- a process started by "spawn" or "forkserver", or one that receives the array through a
  ``multiprocessing`` queue or pipe, gets a *handle* (the segment's name, the array's offset,
  shape, strides and dtype) and maps the same memory: its in-place writes (an optimizer's step
  in Hogwild training) reach every other process, as torch's shared tensors do.

Lifetime: a process keeps every segment it created or mapped until it exits (a segment is a few
parameters' worth of memory, created once per tensor); the process that created a segment
removes its name at exit, after which no new process can map it.
"""

from __future__ import annotations

import atexit
import os
from multiprocessing import shared_memory
from typing import Any

import numpy as np

__all__ = ["attach", "handle", "is_shared", "share"]


class _Segment(shared_memory.SharedMemory):
    """A segment kept for the life of the process: its arrays may outlive any reference to it,
    so it is never closed (``SharedMemory.__del__`` would fail on their exported buffer)."""

    def __del__(self) -> None:
        pass


# The segments this process created or mapped, by name; and each one's byte view, whose
# identity marks an array as shared (arrays over it reach it through their ``base`` chain).
_SEGMENTS: dict[str, _Segment] = {}
_BYTES: dict[int, tuple[str, np.ndarray]] = {}  # id(byte view) -> (name, byte view)
_CREATED: list[tuple[int, str]] = []  # (pid, name) of the segments this process created


def _register(shm: _Segment) -> Any:
    raw = np.ndarray((shm.size,), dtype=np.uint8, buffer=shm.buf)
    _SEGMENTS[shm.name] = shm
    _BYTES[id(raw)] = (shm.name, raw)
    return raw


def share(arr: np.ndarray) -> Any:
    """A copy of ``arr`` (C-contiguous) in a new shared segment."""
    shm = _Segment(create=True, size=max(arr.nbytes, 1))
    _CREATED.append((os.getpid(), shm.name))
    raw = _register(shm)
    out = np.ndarray(arr.shape, dtype=arr.dtype, buffer=raw)
    out[...] = arr
    return out


def _segment(arr: np.ndarray) -> tuple[str, np.ndarray] | None:
    base: Any = arr
    while base is not None:
        found = _BYTES.get(id(base))
        if found is not None and found[1] is base:
            return found
        base = getattr(base, "base", None)
    return None


def is_shared(arr: Any) -> bool:
    """Whether ``arr`` is (a view of) an array in a shared segment."""
    return isinstance(arr, np.ndarray) and _segment(arr) is not None


def handle(arr: np.ndarray) -> tuple[Any, ...] | None:
    """What another process needs to map ``arr``: ``(name, offset, shape, strides, dtype)``;
    None where ``arr`` is not in a shared segment."""
    found = _segment(arr)
    if found is None:
        return None
    name, raw = found
    offset = arr.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    return (name, offset, arr.shape, arr.strides, arr.dtype.str)


def attach(h: tuple[Any, ...]) -> Any:
    """The array ``handle`` describes, over the same memory (the segment mapped once per
    process)."""
    name, offset, shape, strides, dtype = h
    shm = _SEGMENTS.get(name)
    if shm is None:
        try:
            shm = _Segment(name=name)
        except FileNotFoundError:
            raise RuntimeError(
                f"the shared memory segment {name!r} of a shared tensor no longer exists: the "
                f"process that shared the tensor has exited"
            ) from None
        _register(shm)
    raw = next(r for n, r in _BYTES.values() if n == name)
    return np.ndarray(shape, dtype=np.dtype(dtype), buffer=raw, offset=offset, strides=strides)


@atexit.register
def _unlink_created() -> None:
    """Remove the names of the segments this process created (the memory itself goes when
    the last process mapping it exits)."""
    pid = os.getpid()
    for owner, name in _CREATED:
        shm = _SEGMENTS.get(name)
        if owner == pid and shm is not None:
            try:
                shm.unlink()
            except FileNotFoundError:  # already removed (a tracker that cleaned up)
                pass
