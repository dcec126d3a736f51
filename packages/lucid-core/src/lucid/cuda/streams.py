"""``lucid.cuda.streams``: ``Stream``, ``ExternalStream`` and ``Event``. Lucid has no CUDA
device, so making one raises the class PyTorch's CPU build raises; the names exist for code
that only mentions them (annotations, ``isinstance`` checks)."""

from __future__ import annotations

from typing import Any

from lucid.cuda._errors import refusal

__all__ = ["Stream", "ExternalStream", "Event"]


class Stream:
    """A CUDA stream: making one raises RuntimeError, as on PyTorch's CPU build."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        raise refusal("Stream", RuntimeError)


class ExternalStream(Stream):
    """A CUDA stream made elsewhere: making one raises TypeError, as on PyTorch's CPU build."""

    def __init__(self, stream_ptr: int, device: Any = None, **kwargs: Any) -> None:
        raise refusal("ExternalStream", TypeError)


class Event:
    """A CUDA event: making one raises RuntimeError, as on PyTorch's CPU build."""

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ) -> None:
        raise refusal("Event", RuntimeError)
