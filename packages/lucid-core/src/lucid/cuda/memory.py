"""``lucid.cuda.memory``: ``torch.cuda.memory``'s allocator calls, answering as PyTorch's CPU
build does: the counters are 0 and the statistics empty (a program that reports its CUDA
memory runs on the CPU and reports nothing), while the calls that need the CUDA caching
allocator raise the class PyTorch's build raises, with lucid's message."""

from __future__ import annotations

import os
import warnings
from typing import Any

from lucid.cuda._errors import NoCUDAAttributeError, RefusingContext, refusal

__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "caching_allocator_disabled",
    "caching_allocator_enable",
    "get_per_process_memory_fraction",
    "set_per_process_memory_fraction",
    "empty_cache",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_cached",
    "max_memory_cached",
    "memory_snapshot",
    "memory_summary",
    "list_gpu_processes",
    "mem_get_info",
    "get_allocator_backend",
    "CUDAPluggableAllocator",
    "change_current_allocator",
    "MemPool",
    "use_mem_pool",
]


def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
    """Raises: there is no CUDA caching allocator."""
    raise refusal("caching_allocator_alloc")


def caching_allocator_delete(mem_ptr: int) -> None:
    """Raises: there is no CUDA caching allocator."""
    raise refusal("caching_allocator_delete", NoCUDAAttributeError)


def caching_allocator_disabled() -> RefusingContext:
    """A context manager whose entry raises: there is no CUDA caching allocator."""
    return RefusingContext(refusal("caching_allocator_disabled", NoCUDAAttributeError))


def caching_allocator_enable(value: bool = True) -> None:
    """Does nothing: CUDA is never initialized (as on PyTorch's CPU build)."""


def get_per_process_memory_fraction(device: Any = None) -> float:
    """Raises: there is no CUDA device."""
    raise refusal("get_per_process_memory_fraction")


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    """Raises: there is no CUDA device."""
    raise refusal("set_per_process_memory_fraction")


def empty_cache() -> None:
    """Frees nothing: no CUDA memory is held."""


def memory_stats(device: Any = None) -> dict[str, Any]:
    """The caching allocator's statistics: empty, as on PyTorch's CPU build."""
    return {}


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """:func:`memory_stats` nested: empty, as on PyTorch's CPU build."""
    return {}


def reset_accumulated_memory_stats(device: Any = None) -> None:
    """Raises: there is no CUDA caching allocator."""
    raise refusal("reset_accumulated_memory_stats", NoCUDAAttributeError)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Raises: lucid has no CUDA device (PyTorch's CPU build fails here too)."""
    raise refusal("reset_peak_memory_stats", NoCUDAAttributeError)


def reset_max_memory_allocated(device: Any = None) -> None:
    """Warns as PyTorch does, then :func:`reset_peak_memory_stats` (which raises)."""
    warnings.warn(
        "lucid.cuda.reset_max_memory_allocated now calls lucid.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> None:
    """Warns as PyTorch does, then :func:`reset_peak_memory_stats` (which raises)."""
    warnings.warn(
        "lucid.cuda.reset_max_memory_cached now calls lucid.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
        stacklevel=2,
    )
    reset_peak_memory_stats(device)


def host_memory_stats() -> dict[str, Any]:
    """The pinned-host allocator's statistics: empty, as on PyTorch's CPU build."""
    return {}


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """:func:`host_memory_stats` nested: empty, as on PyTorch's CPU build."""
    return {}


def reset_accumulated_host_memory_stats() -> None:
    """Raises: there is no CUDA host allocator."""
    raise refusal("reset_accumulated_host_memory_stats", NoCUDAAttributeError)


def reset_peak_host_memory_stats() -> None:
    """Raises: there is no CUDA host allocator."""
    raise refusal("reset_peak_host_memory_stats", NoCUDAAttributeError)


def memory_allocated(device: Any = None) -> int:
    """Bytes of CUDA memory held by tensors: always 0, as on PyTorch's CPU build."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """The peak of :func:`memory_allocated`: always 0, as on PyTorch's CPU build (a program that
    reports its peak CUDA memory runs on the CPU and reports 0)."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """Bytes of CUDA memory the caching allocator holds: always 0, as on PyTorch's CPU build."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """The peak of :func:`memory_reserved`: always 0, as on PyTorch's CPU build."""
    return 0


def memory_cached(device: Any = None) -> int:
    """:func:`memory_reserved`'s old name (warns, as PyTorch does): 0."""
    warnings.warn(
        "`lucid.cuda.memory_cached` has been renamed to `lucid.cuda.memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """:func:`max_memory_reserved`'s old name (warns, as PyTorch does): 0."""
    warnings.warn(
        "`lucid.cuda.max_memory_cached` has been renamed to `lucid.cuda.max_memory_reserved`",
        FutureWarning,
        stacklevel=2,
    )
    return max_memory_reserved(device)


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> list[Any]:
    """Raises: there is no CUDA caching allocator."""
    raise refusal("memory_snapshot", NoCUDAAttributeError)


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """Raises KeyError, as PyTorch's CPU build does (its statistics are empty)."""
    raise refusal("memory_summary", KeyError)


def list_gpu_processes(device: Any = None) -> str:
    """A report of the processes on the CUDA device: a line saying there is none (PyTorch's
    CPU build returns a line too, asking for nvidia-ml-py)."""
    return "lucid has no CUDA device: no GPU processes to list"


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """Raises: there is no CUDA device."""
    raise refusal("mem_get_info")


def get_allocator_backend() -> str:
    """Raises: there is no CUDA caching allocator."""
    raise refusal("get_allocator_backend", NoCUDAAttributeError)


class _CUDAAllocator:
    """The base of PyTorch's CUDA allocators."""


class CUDAPluggableAllocator(_CUDAAllocator):
    """A CUDA allocator loaded from a shared library: raises OSError where the library is
    missing (as PyTorch's CPU build does), else as there is no CUDA allocator to replace."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str) -> None:
        if not os.path.exists(path_to_so_file):
            raise OSError(f"{path_to_so_file}: cannot open shared object file")
        raise refusal("CUDAPluggableAllocator", NoCUDAAttributeError)


def change_current_allocator(allocator: _CUDAAllocator) -> None:
    """Raises: there is no CUDA allocator to replace."""
    raise refusal("change_current_allocator", NoCUDAAttributeError)


class MemPool:
    """A CUDA memory pool: making one raises RuntimeError, as on PyTorch's CPU build."""

    def __init__(
        self, allocator: Any = None, use_on_oom: bool = False, no_split: bool = False
    ) -> None:
        raise refusal("MemPool", RuntimeError)


def use_mem_pool(pool: MemPool, device: Any = None) -> RefusingContext:
    """A context manager whose entry raises: there is no CUDA device."""
    return RefusingContext(refusal("use_mem_pool"))
