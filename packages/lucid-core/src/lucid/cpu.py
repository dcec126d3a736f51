"""``lucid.cpu``: PyTorch's ``torch.cpu`` for device-agnostic code.

Programs written against ``torch.get_device_module(device)`` call ``is_available``,
``synchronize``, ``current_stream`` and friends on whatever module comes back; on the CPU
these do nothing or answer the obvious (one device, always available). Streams and events are
placeholders, as in torch: CPU work runs in program order.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "device_count",
    "get_capabilities",
    "is_available",
    "is_initialized",
    "set_device",
    "stream",
    "synchronize",
]


def is_available() -> bool:
    """Whether the CPU can be used: always True."""
    return True


def is_initialized() -> bool:
    """Whether the CPU device is initialized: always True."""
    return True


def synchronize(device: Any = None) -> None:
    """Waits for nothing: CPU work has finished when its call returns."""


def current_device() -> str:
    """The current CPU device's name: ``"cpu"``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Does nothing: there is one CPU device (``torch.cpu.set_device``)."""


def device_count() -> int:
    """The number of CPU devices: 1."""
    return 1


class Stream:
    """A placeholder stream for device-agnostic code (CPU work runs in program order)."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Stream) -> None:
        """Waits for nothing."""

    def record_event(self) -> None:
        """Records nothing."""

    def wait_event(self, event: Event) -> None:
        """Waits for nothing."""


class Event:
    """A placeholder event for device-agnostic code: always complete."""

    def query(self) -> bool:
        """Whether the event has completed: always True."""
        return True

    def record(self, stream: Stream | None = None) -> None:
        """Records nothing."""

    def synchronize(self) -> None:
        """Waits for nothing."""

    def wait(self, stream: Stream | None = None) -> None:
        """Waits for nothing."""


_current_stream = Stream()


def current_stream(device: Any = None) -> Stream:
    """The CPU's (placeholder) stream."""
    return _current_stream


class StreamContext(contextlib.AbstractContextManager["StreamContext"]):
    """``with StreamContext(stream):`` makes ``stream`` current (a placeholder on the CPU)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __exit__(self, *exc: object) -> None:
        return None


@contextlib.contextmanager
def stream(stream: Stream) -> Iterator[None]:
    """``with lucid.cpu.stream(s):``: runs the block as usual (CPU work is in program order)."""
    yield


def get_capabilities() -> Mapping[str, Any]:
    """The CPU's instruction-set features (as NumPy's build detected them, lower-cased) and
    its core count (``torch.cpu.get_capabilities``; torch's list of keys is longer)."""
    umath = importlib.import_module(
        "numpy._core._multiarray_umath" if hasattr(np, "_core") else "numpy.core._multiarray_umath"
    )  # NumPy 2 moved numpy.core to numpy._core
    feats: dict[str, bool] = getattr(umath, "__cpu_features__", {})
    caps: dict[str, Any] = {name.lower(): bool(on) for name, on in feats.items()}
    caps["num_logical_cores"] = os.cpu_count() or 1
    caps["architecture"] = platform.machine()
    caps["numpy_version"] = np.__version__
    return caps
