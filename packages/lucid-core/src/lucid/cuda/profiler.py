"""``lucid.cuda.profiler``: the CUDA profiler's start and stop. Lucid has no CUDA device, so
each raises AssertionError, as on PyTorch's CPU build; ``lucid.profiler`` profiles lucid."""

from __future__ import annotations

from lucid.cuda._errors import RefusingContext, refusal

__all__ = ["start", "stop", "profile"]

DEFAULT_FLAGS = [
    "gpustarttimestamp",
    "gpuendtimestamp",
    "gridsize3d",
    "threadblocksize",
    "streamid",
    "enableonstart 0",
    "conckerneltrace",
]


def start() -> None:
    """Raises: there is no CUDA profiler."""
    raise refusal("profiler.start")


def stop() -> None:
    """Raises: there is no CUDA profiler."""
    raise refusal("profiler.stop")


def profile() -> RefusingContext:
    """A context manager whose entry raises: there is no CUDA profiler."""
    return RefusingContext(refusal("profiler.profile"))
