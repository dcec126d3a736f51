"""Collectives of small Python values, as JSON: no pickle, so no rank can make another run code
(PyTorch pickles). Values come back as JSON gives them (tuples as lists, dict keys as str)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from lucid.distributed._group import resolve
from lucid.distributed._work import wait_all

__all__ = ["all_gather_object", "broadcast_object_list"]


def _encode(obj: Any, what: str) -> bytes:
    try:
        return json.dumps(obj).encode()
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"{what} sends JSON-serialisable values only (dict, list, str, int, float, bool, "
            f"None), not pickles, so that no rank can run code on another: {e}"
        ) from None


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Every rank's ``obj`` into ``object_list`` (one slot per rank, in rank order)."""
    g = resolve(group)
    if len(object_list) != g.size():
        raise ValueError(
            f"all_gather_object: expected object_list of {g.size()} slots (one per rank), "
            f"got {len(object_list)}"
        )
    parts = g.engine.allgather_bytes(_encode(obj, "all_gather_object"))
    object_list[:] = [json.loads(p.decode()) for p in parts]


def broadcast_object_list(
    object_list: list[Any], src: int = 0, group: Any = None, device: Any = None
) -> None:
    """Replace every rank's ``object_list`` contents by rank ``src``'s (the lists have the same
    length on every rank, as in PyTorch)."""
    g = resolve(group)
    root = g.group_rank(src, "src")
    data = _encode(list(object_list), "broadcast_object_list") if g.rank() == root else b""
    size = np.array([len(data)], dtype=np.int64)
    wait_all([g.engine.broadcast(size, root)], g.timeout, "broadcast_object_list")
    buf = np.frombuffer(data, dtype=np.uint8).copy() if data else np.empty(int(size[0]), np.uint8)
    wait_all([g.engine.broadcast(buf, root)], g.timeout, "broadcast_object_list")
    values = json.loads(buf.tobytes().decode())
    if len(values) != len(object_list):
        raise ValueError(
            f"broadcast_object_list: rank {src} sent {len(values)} objects but this rank's "
            f"object_list has {len(object_list)} slots"
        )
    object_list[:] = values
