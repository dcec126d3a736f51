"""``lucid.cuda.nvtx``: NVIDIA's profiler annotations. Lucid has no CUDA build, so each call
raises the class PyTorch's CPU build raises ("NVTX functions not installed"); for ranges that
show in lucid's profiler use ``lucid.profiler.record_function``."""

from __future__ import annotations

from typing import Any

from lucid.cuda._errors import NoCUDAAttributeError, RefusingContext, refusal

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]


def _not_installed(what: str) -> BaseException:
    return refusal(f"nvtx.{what} (NVTX functions not installed)", RuntimeError)


def range_push(msg: str) -> int:
    """Raises RuntimeError, as PyTorch's CPU build does."""
    raise _not_installed("range_push")


def range_pop() -> int:
    """Raises RuntimeError, as PyTorch's CPU build does."""
    raise _not_installed("range_pop")


def range_start(msg: str) -> int:
    """Raises AttributeError, as PyTorch's CPU build does."""
    raise refusal("nvtx.range_start", NoCUDAAttributeError)


def range_end(range_id: int) -> None:
    """Raises AttributeError, as PyTorch's CPU build does."""
    raise refusal("nvtx.range_end", NoCUDAAttributeError)


def mark(msg: str) -> None:
    """Raises RuntimeError, as PyTorch's CPU build does."""
    raise _not_installed("mark")


def range(msg: str, *args: Any, **kwargs: Any) -> RefusingContext:  # noqa: A001 - PyTorch's name
    """A context manager whose entry raises RuntimeError, as on PyTorch's CPU build."""
    return RefusingContext(_not_installed("range"))
