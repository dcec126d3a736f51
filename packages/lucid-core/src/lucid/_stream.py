"""``torch.Stream`` and ``torch.Event``, torch's device-generic classes, as torch's CPU build
has them.

On the CPU work runs in order on the calling thread, so a stream is always idle (``query()``
is True, ``synchronize()`` returns at once), waits return at once, and recording an event
raises torch's "cpu backend doesn't support events." Programs name them in annotations and
create them on the CPU path (diffusers' group offloading); lucid's MLX device has no streams
here (MLX's own ``mx.Stream`` is the backend's), and a CUDA device is refused as torch's CPU
build refuses it.
"""

from __future__ import annotations

from typing import Any

from lucid._device import device as _device

__all__ = ["Event", "Stream"]

_NO_EVENTS = "cpu backend doesn't support events."


def _cpu(spec: Any) -> _device:
    """The CPU device ``spec`` names (None: the CPU); torch's error for CUDA, lucid's for MLX."""
    dev = _device("cpu" if spec is None else spec)
    if dev.type == "cuda":
        raise RuntimeError("PyTorch is not linked with support for cuda devices")
    if dev.type != "cpu":
        raise RuntimeError(
            f"lucid has no streams or events on {dev.type!r} devices: lucid.Stream and "
            "lucid.Event are torch's CPU ones"
        )
    return _device("cpu")


class Stream:
    """``torch.Stream(device=None, *, priority=0)`` on the CPU: an in-order queue that is always
    idle; a context manager that changes nothing."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        self._device = _cpu(device)
        self.priority = int(priority)

    @property
    def device(self) -> _device:
        """The stream's device (the CPU)."""
        return self._device

    @property
    def device_type(self) -> int:
        """torch's ``DeviceType`` number of the device (0: the CPU)."""
        return 0

    @property
    def device_index(self) -> int:
        """-1, as torch's CPU stream."""
        return -1

    @property
    def stream_id(self) -> int:
        """0, the CPU's one stream."""
        return 0

    def query(self) -> bool:
        """Whether all work queued on the stream has finished: always, on the CPU."""
        return True

    def synchronize(self) -> None:
        """Waits for the stream's work: none is ever pending on the CPU."""

    def wait_event(self, event: Event) -> None:
        """Makes later work wait for ``event``: nothing to wait for on the CPU."""

    def wait_stream(self, stream: Stream) -> None:
        """Makes later work wait for ``stream``'s: nothing to wait for on the CPU."""

    def record_event(self, event: Event | None = None) -> Event:
        """torch's CPU error: the CPU backend has no events."""
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        """Whether a graph capture is under way on the stream: never, on the CPU."""
        return False

    @property
    def native_handle(self) -> int:
        """0: the CPU stream has no native handle."""
        return 0

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return (self.device_type, self.device_index, self.stream_id) == (
            other.device_type,
            other.device_index,
            other.stream_id,
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (
            f"lucid.Stream device_type={self._device.type}, device_index={self.device_index}, "
            f"stream_id={self.stream_id}"
        )


class Event:
    """``torch.Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``
    on the CPU: always complete; ``record`` raises torch's "cpu backend doesn't support
    events."."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:  # fmt: skip
        self._device = _cpu(device)
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)

    @property
    def device(self) -> _device:
        """The event's device (the CPU)."""
        return self._device

    @property
    def event_id(self) -> int:
        """0: a CPU event is never recorded."""
        return 0

    def query(self) -> bool:
        """Whether the work the event waits for has finished: always, on the CPU."""
        return True

    def synchronize(self) -> None:
        """Waits for the event: nothing is pending on the CPU."""

    def wait(self, stream: Stream | None = None) -> None:
        """Makes ``stream``'s later work wait for the event: nothing to wait for on the CPU."""

    def record(self, stream: Stream | None = None) -> None:
        """torch's CPU error: the CPU backend has no events."""
        raise RuntimeError(_NO_EVENTS)

    def elapsed_time(self, end_event: Event) -> float:
        """torch's errors: both events need ``enable_timing=True``, and the CPU has no events."""
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(_NO_EVENTS)

    def ipc_handle(self) -> Any:
        """torch's CPU error: the CPU backend has no events to share."""
        raise RuntimeError(_NO_EVENTS)

    @classmethod
    def from_ipc_handle(cls, device: Any, ipc_handle: Any) -> Event:
        """torch's CPU error: the CPU backend has no events to share."""
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (
            f"lucid.Event device_type={self._device.type}, device_index=-1, "
            f"event_flag={int(self.enable_timing)}, event_id={self.event_id}"
        )
