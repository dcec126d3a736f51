"""Tensors as the host buffers the engines read and write, and the check that every rank passed
a tensor of the same shape and dtype (a mismatch would otherwise hang or corrupt memory)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid
from lucid.distributed._group import ProcessGroup
from lucid.distributed._work import ReduceOp

Writeback = Callable[[], None]


def check_tensor(t: Any, what: str) -> lucid.Tensor:
    if not isinstance(t, lucid.Tensor):
        raise TypeError(f"{what} expects a lucid.Tensor, got {type(t).__name__}")
    return t


def host_view(t: lucid.Tensor) -> tuple[np.ndarray, Writeback | None]:
    """A contiguous NumPy array with ``t``'s values: ``t``'s own storage where it is one (the
    engine then writes into ``t`` directly), else a copy and the function that writes it back."""
    arr = t.array
    if isinstance(arr, np.ndarray) and arr.flags.c_contiguous and arr.flags.writeable:
        return arr, None
    buf = host_copy(t)
    return buf, lambda: write(t, buf)


def host_copy(t: lucid.Tensor) -> np.ndarray:
    """``t``'s values in a new contiguous NumPy array (a buffer only read, or a staging one)."""
    return np.array(t.backend.to_numpy(t.array), order="C", copy=True)


def write(t: lucid.Tensor, values: np.ndarray) -> None:
    """Write ``values`` into ``t`` in place (any device), outside autograd."""
    with lucid.no_grad():
        # np.array, not ascontiguousarray, which makes a 0-d array 1-d
        t.data.copy_(lucid.from_numpy(np.array(values, order="C")))


def divide(buf: np.ndarray, n: int) -> None:
    """``buf /= n`` in place (floor division for integers), for ``ReduceOp.AVG``."""
    if np.issubdtype(buf.dtype, np.inexact):
        buf /= buf.dtype.type(n)
    else:
        np.floor_divide(buf, n, out=buf)


def finisher(*steps: Callable[[], None] | None) -> Callable[[], None]:
    def finish() -> None:
        for step in steps:
            if step is not None:
                step()

    return finish


def averaging(buf: np.ndarray, op: ReduceOp, group: ProcessGroup) -> Callable[[], None] | None:
    return (lambda: divide(buf, group.size())) if op is ReduceOp.AVG else None


def describe(t: lucid.Tensor) -> str:
    return f"{t.dtype} tensor of shape {tuple(t.shape)}"


def agree(group: ProcessGroup, description: str, what: str) -> None:
    """Raise on every rank unless every rank of ``group`` passed the same ``description``. One
    16-byte all-reduce; the descriptions themselves travel only when they differ."""
    if group.size() == 1:
        return
    h = zlib.crc32(description.encode())
    probe = np.array([h, -h], dtype=np.int64)
    from lucid.distributed._work import wait_all

    wait_all([group.engine.allreduce(probe, ReduceOp.MAX)], group.timeout, what)
    if probe[0] == -probe[1]:
        return
    seen = [b.decode() for b in group.engine.allgather_bytes(description.encode())]
    lines = "; ".join(f"rank {group.ranks[i]}: {d}" for i, d in enumerate(seen))
    raise RuntimeError(f"{what}: the ranks passed different tensors, which must match: {lines}")


def same_as(tensors: Sequence[Any], ref: lucid.Tensor, what: str) -> None:
    """Each of ``tensors`` (a list argument) has ``ref``'s shape and dtype."""
    for i, t in enumerate(tensors):
        check_tensor(t, what)
        if tuple(t.shape) != tuple(ref.shape) or t.dtype != ref.dtype:
            raise ValueError(
                f"{what}: element {i} of the list is a {describe(t)}, expected a {describe(ref)} "
                "like the tensor argument"
            )


def check_count(tensors: Sequence[Any], group: ProcessGroup, what: str) -> None:
    if len(tensors) != group.size():
        raise ValueError(
            f"{what}: expected a list of {group.size()} tensors (one per rank), got {len(tensors)}"
        )


def check_numel(big: lucid.Tensor, small: lucid.Tensor, n: int, what: str) -> None:
    if big.numel() != n * small.numel() or big.dtype != small.dtype:
        raise ValueError(
            f"{what}: expected the larger tensor to hold {n} x {small.numel()} elements of "
            f"{small.dtype}, got a {describe(big)} and a {describe(small)}"
        )
