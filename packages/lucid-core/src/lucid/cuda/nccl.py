"""``lucid.cuda.nccl``: NCCL's collectives. Lucid has no CUDA device: ``is_available`` is
False and each collective raises the class PyTorch's CPU build raises."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid.cuda._errors import NoCUDAAttributeError, refusal

__all__ = ["all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"]

SUM = 0  # ncclRedOp_t


def is_available(tensors: Any) -> bool:
    """Whether NCCL can run on ``tensors``: False (no CUDA device)."""
    return False


def version() -> tuple[int, ...]:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.version", NoCUDAAttributeError)


def unique_id() -> bytes:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.unique_id", NoCUDAAttributeError)


def init_rank(num_ranks: int, uid: bytes, rank: int) -> object:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.init_rank", NoCUDAAttributeError)


def all_reduce(
    inputs: Sequence[Any],
    outputs: Any = None,
    op: int = SUM,
    streams: Any = None,
    comms: Any = None,
) -> None:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.all_reduce", NoCUDAAttributeError)


def reduce(
    inputs: Sequence[Any],
    output: Any = None,
    root: int = 0,
    op: int = SUM,
    streams: Any = None,
    comms: Any = None,
    *,
    outputs: Any = None,
) -> None:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.reduce", NoCUDAAttributeError)


def broadcast(inputs: Sequence[Any], root: int = 0, streams: Any = None, comms: Any = None) -> None:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.broadcast", NoCUDAAttributeError)


def all_gather(
    inputs: Sequence[Any], outputs: Sequence[Any], streams: Any = None, comms: Any = None
) -> None:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.all_gather", NoCUDAAttributeError)


def reduce_scatter(
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    op: int = SUM,
    streams: Any = None,
    comms: Any = None,
) -> None:
    """Raises: lucid has no NCCL."""
    raise refusal("nccl.reduce_scatter", NoCUDAAttributeError)
