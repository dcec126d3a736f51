"""The errors ``lucid.cuda`` raises where a call needs a CUDA device (lucid has none).

Each raises the exception class PyTorch's CPU-only build raises for the same call, with
lucid's message saying what to use instead. Where PyTorch's build fails on a missing
``torch._C`` binding (an AttributeError), lucid's error is :class:`NoCUDAAttributeError`:
an AttributeError as there, and an AssertionError as lucid's other refusals (and PyTorch's
"Torch not compiled with CUDA enabled").
"""

from __future__ import annotations

from typing import Any

from lucid._device import NOT_COMPILED


class NoCUDAAttributeError(AssertionError, AttributeError):
    """Raised where PyTorch's CPU build lacks the ``torch._C`` binding a call needs."""


def refusal(what: str, cls: type[BaseException] = AssertionError) -> BaseException:
    """The error for ``lucid.cuda.<what>``: ``cls`` with lucid's no-CUDA message."""
    return cls(f"lucid.cuda.{what} needs a CUDA device. {NOT_COMPILED}")


def device_index(device: Any, optional: bool = False) -> int | None:
    """The CUDA device index ``device`` names (PyTorch's ``_get_device_index``): an int as is,
    ``"cuda:1"`` / ``lucid.device("cuda", 1)`` its index, ``None`` / ``"cuda"`` None where
    ``optional``; another device type raises ValueError, as PyTorch does."""
    if isinstance(device, int):
        return device
    if device is None:
        if optional:
            return None
    else:
        kind, _, index = str(device).partition(":")
        if kind != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if index:
            return int(index)
        if optional:
            return None
    raise ValueError(
        f"Expected a torch.device with a specified index or an integer, but got:{device}"
    )


class RefusingContext:
    """A context manager whose entry raises ``error`` (PyTorch's CPU build returns such
    context managers from ``torch.cuda.nvtx.range``, ``use_mem_pool``...: made fine, failing
    on ``with``)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __enter__(self) -> None:
        raise self.error

    def __exit__(self, *exc_info: object) -> None:
        return None
