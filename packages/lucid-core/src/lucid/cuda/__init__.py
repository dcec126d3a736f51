"""``lucid.cuda``: PyTorch's CUDA API, answering for lucid, which has no ``"cuda"`` device.

Device-agnostic programs ask ``torch.cuda.is_available()`` and fall back to the CPU; here every
name of ``torch.cuda`` answers as on PyTorch's CPU-only build: ``is_available()`` is False,
the seeding calls do nothing, the memory counters are 0 and the statistics empty,
``get_arch_list()`` is ``[]``, ``stream(None)`` / ``device(-1)`` / ``device_of(cpu_tensor)``
are no-op context managers, while the calls that need a CUDA device raise the exception class
PyTorch's CPU build raises, with a message saying what to use. Lucid's GPU is MLX's, device
``"mlx"``: ask ``lucid.accelerator.is_available()`` / ``current_accelerator()``.

The submodules ``random``, ``memory``, ``streams``, ``graphs``, ``nvtx``, ``profiler``,
``nccl``, ``jiterator``, ``tunable`` and ``sparse`` are attributes after ``import lucid``, as
PyTorch's are, and ``lucid.cuda.amp`` (``GradScaler``, ``autocast``).

>>> device = "cuda" if lucid.cuda.is_available() else "cpu"
>>> device
'cpu'
"""

from __future__ import annotations

from typing import Any

from lucid._device import NOT_COMPILED as NOT_COMPILED  # the message lucid-nn raises too
from lucid._legacy import CUDA_STORAGES, CUDA_TYPES
from lucid.cuda import amp as amp
from lucid.cuda import graphs as graphs
from lucid.cuda import jiterator as jiterator
from lucid.cuda import memory as memory
from lucid.cuda import nccl as nccl
from lucid.cuda import nvtx as nvtx
from lucid.cuda import profiler as profiler
from lucid.cuda import random as random
from lucid.cuda import sparse as sparse
from lucid.cuda import streams as streams
from lucid.cuda import tunable as tunable
from lucid.cuda._errors import NoCUDAAttributeError, device_index, refusal
from lucid.cuda.graphs import CUDAGraph as CUDAGraph
from lucid.cuda.graphs import graph as graph
from lucid.cuda.graphs import graph_pool_handle as graph_pool_handle
from lucid.cuda.graphs import is_current_stream_capturing as is_current_stream_capturing
from lucid.cuda.graphs import make_graphed_callables as make_graphed_callables
from lucid.cuda.memory import CUDAPluggableAllocator as CUDAPluggableAllocator
from lucid.cuda.memory import MemPool as MemPool
from lucid.cuda.memory import caching_allocator_alloc as caching_allocator_alloc
from lucid.cuda.memory import caching_allocator_delete as caching_allocator_delete
from lucid.cuda.memory import caching_allocator_disabled as caching_allocator_disabled
from lucid.cuda.memory import caching_allocator_enable as caching_allocator_enable
from lucid.cuda.memory import change_current_allocator as change_current_allocator
from lucid.cuda.memory import empty_cache as empty_cache
from lucid.cuda.memory import get_allocator_backend as get_allocator_backend
from lucid.cuda.memory import get_per_process_memory_fraction as get_per_process_memory_fraction
from lucid.cuda.memory import host_memory_stats as host_memory_stats
from lucid.cuda.memory import host_memory_stats_as_nested_dict as host_memory_stats_as_nested_dict
from lucid.cuda.memory import list_gpu_processes as list_gpu_processes
from lucid.cuda.memory import max_memory_allocated as max_memory_allocated
from lucid.cuda.memory import max_memory_cached as max_memory_cached
from lucid.cuda.memory import max_memory_reserved as max_memory_reserved
from lucid.cuda.memory import mem_get_info as mem_get_info
from lucid.cuda.memory import memory_allocated as memory_allocated
from lucid.cuda.memory import memory_cached as memory_cached
from lucid.cuda.memory import memory_reserved as memory_reserved
from lucid.cuda.memory import memory_snapshot as memory_snapshot
from lucid.cuda.memory import memory_stats as memory_stats
from lucid.cuda.memory import memory_stats_as_nested_dict as memory_stats_as_nested_dict
from lucid.cuda.memory import memory_summary as memory_summary
from lucid.cuda.memory import (
    reset_accumulated_host_memory_stats as reset_accumulated_host_memory_stats,
)
from lucid.cuda.memory import reset_accumulated_memory_stats as reset_accumulated_memory_stats
from lucid.cuda.memory import reset_max_memory_allocated as reset_max_memory_allocated
from lucid.cuda.memory import reset_max_memory_cached as reset_max_memory_cached
from lucid.cuda.memory import reset_peak_host_memory_stats as reset_peak_host_memory_stats
from lucid.cuda.memory import reset_peak_memory_stats as reset_peak_memory_stats
from lucid.cuda.memory import set_per_process_memory_fraction as set_per_process_memory_fraction
from lucid.cuda.memory import use_mem_pool as use_mem_pool
from lucid.cuda.random import get_rng_state as get_rng_state
from lucid.cuda.random import get_rng_state_all as get_rng_state_all
from lucid.cuda.random import initial_seed as initial_seed
from lucid.cuda.random import manual_seed as manual_seed
from lucid.cuda.random import manual_seed_all as manual_seed_all
from lucid.cuda.random import seed as seed
from lucid.cuda.random import seed_all as seed_all
from lucid.cuda.random import set_rng_state as set_rng_state
from lucid.cuda.random import set_rng_state_all as set_rng_state_all
from lucid.cuda.streams import Event as Event
from lucid.cuda.streams import ExternalStream as ExternalStream
from lucid.cuda.streams import Stream as Stream

__all__ = [
    "BFloat16Storage", "BFloat16Tensor", "BoolStorage", "BoolTensor", "ByteStorage",
    "ByteTensor", "CUDAGraph", "CUDAPluggableAllocator", "CharStorage", "CharTensor",
    "ComplexDoubleStorage", "ComplexFloatStorage", "CudaError", "DeferredCudaCallError",
    "DoubleStorage", "DoubleTensor", "Event", "ExternalStream", "FloatStorage", "FloatTensor",
    "GreenContext", "HalfStorage", "HalfTensor", "IntStorage", "IntTensor", "LongStorage",
    "LongTensor", "MemPool", "ShortStorage", "ShortTensor", "Stream", "StreamContext", "amp",
    "caching_allocator_alloc", "caching_allocator_delete", "caching_allocator_disabled",
    "caching_allocator_enable", "can_device_access_peer", "change_current_allocator",
    "check_error", "clock_rate", "cudaStatus", "cudart", "current_blas_handle",
    "current_device", "current_solver_handle", "current_stream", "default_generators",
    "default_stream", "device", "device_count", "device_memory_used", "device_of",
    "empty_cache", "get_allocator_backend", "get_arch_list", "get_device_capability",
    "get_device_name", "get_device_properties", "get_gencode_flags",
    "get_per_process_memory_fraction", "get_rng_state", "get_rng_state_all",
    "get_stream_from_external", "get_sync_debug_mode", "graph", "graph_pool_handle", "graphs",
    "has_half", "has_magma", "host_memory_stats", "host_memory_stats_as_nested_dict", "init",
    "initial_seed", "ipc_collect", "is_available", "is_bf16_supported",
    "is_current_stream_capturing", "is_initialized", "is_tf32_supported", "jiterator",
    "list_gpu_processes", "make_graphed_callables", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info",
    "memory", "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot",
    "memory_stats", "memory_stats_as_nested_dict", "memory_summary", "memory_usage", "nccl",
    "nvtx", "power_draw", "profiler", "random", "reset_accumulated_host_memory_stats",
    "reset_accumulated_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
    "reset_peak_host_memory_stats", "reset_peak_memory_stats", "seed", "seed_all",
    "set_device", "set_per_process_memory_fraction", "set_rng_state", "set_rng_state_all",
    "set_stream", "set_sync_debug_mode", "sparse", "stream", "streams", "synchronize",
    "temperature", "tunable", "use_mem_pool", "utilization",
]  # fmt: skip

# torch.cuda's legacy tensor types: named by CPU programs (isinstance checks,
# `Tensor = cuda.FloatTensor if cuda else FloatTensor`), never made
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor, BoolTensor) = CUDA_TYPES.values()  # fmt: skip
(FloatStorage, DoubleStorage, HalfStorage, BFloat16Storage, ByteStorage, CharStorage,
 ShortStorage, IntStorage, LongStorage, BoolStorage, ComplexFloatStorage,
 ComplexDoubleStorage) = CUDA_STORAGES.values()  # fmt: skip

has_half = True  # as torch.cuda's, on every build
has_magma = False
default_generators: tuple[Any, ...] = ()  # one per CUDA device: none


def is_available() -> bool:
    """Whether a CUDA device can be used: always False, as on PyTorch's CPU build."""
    return False


def device_count() -> int:
    """The number of CUDA devices: always 0 (lucid's GPU is MLX's, device ``"mlx"``)."""
    return 0


def is_initialized() -> bool:
    """Whether CUDA has been initialized: always False (no CUDA device)."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the CUDA device supports bfloat16: always False (no CUDA device)."""
    return False


def is_tf32_supported() -> bool:
    """Whether the CUDA device supports TF32: always False (no CUDA device)."""
    return False


def get_arch_list() -> list[str]:
    """The CUDA architectures this build was compiled for: none, ``[]``."""
    return []


def get_gencode_flags() -> str:
    """The NVCC gencode flags this build was compiled with: none, ``""``."""
    return ""


def init() -> None:
    """Raises: lucid has no CUDA device to initialize."""
    raise refusal("init")


# torch.cuda's private state that programs read although torch keeps it private: reversible
# networks (RevTorch's ``Deterministic``, copied into reformer/performer/...) record the CUDA
# RNG states only ``if torch.cuda._initialized``. As on torch's CPU-only build: never
# initialized, not compiled with CUDA, never in a bad fork.
_initialized = False


def _is_compiled() -> bool:
    """Whether lucid was compiled with CUDA (torch's private ``_is_compiled``): False."""
    return False


def _is_in_bad_fork() -> bool:
    """Whether this process is a fork of one that initialized CUDA: False (never initialized)."""
    return False


def _lazy_init() -> None:
    """Raises AssertionError, as torch's CPU build's ``torch.cuda._lazy_init()``: there is no
    CUDA to initialize."""
    raise refusal("_lazy_init")


def _get_device_index(device: Any, optional: bool = False, allow_cpu: bool = False) -> int | None:
    """The CUDA device index ``device`` names (torch's private ``_get_device_index``): an
    int as is, ``"cuda:1"`` its index; a CPU device is -1 with ``allow_cpu``."""
    if allow_cpu and str(getattr(device, "type", device)).partition(":")[0] == "cpu":
        return -1
    return device_index(device, optional)


def ipc_collect() -> None:
    """Raises: lucid has no CUDA device."""
    raise refusal("ipc_collect")


def cudart() -> Any:
    """Raises: lucid has no CUDA runtime."""
    raise refusal("cudart")


def current_blas_handle() -> int:
    """Raises: lucid has no cuBLAS."""
    raise refusal("current_blas_handle")


def current_solver_handle() -> int:
    """Raises: lucid has no cuSOLVER."""
    raise refusal("current_solver_handle")


def synchronize(device: Any = None) -> None:
    """Raises: lucid has no CUDA device (``torch.cuda.synchronize``'s place)."""
    raise AssertionError(NOT_COMPILED)


def current_device() -> int:
    """Raises: lucid has no CUDA device (``torch.cuda.current_device``'s place)."""
    raise AssertionError(NOT_COMPILED)


def set_device(device: Any) -> None:
    """Does nothing for a negative index (as PyTorch); else raises: lucid has no CUDA
    device. ``ValueError`` for a device of another type, as PyTorch."""
    index = device_index(device)
    if index is not None and index >= 0:
        raise NoCUDAAttributeError(NOT_COMPILED)


def get_device_name(device: Any = None) -> str:
    """Raises: lucid has no CUDA device (``torch.cuda.get_device_name``'s place)."""
    raise AssertionError(NOT_COMPILED)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """Raises: lucid has no CUDA device (``torch.cuda.get_device_capability``'s place)."""
    raise AssertionError(NOT_COMPILED)


def get_device_properties(device: Any = None) -> Any:
    """Raises: lucid has no CUDA device."""
    raise refusal("get_device_properties")


def can_device_access_peer(device: Any, peer_device: Any) -> bool:
    """Raises: lucid has no CUDA device."""
    raise refusal("can_device_access_peer")


def get_sync_debug_mode() -> int:
    """Raises: lucid has no CUDA device."""
    raise refusal("get_sync_debug_mode")


def set_sync_debug_mode(debug_mode: int | str) -> None:
    """Raises: lucid has no CUDA device."""
    raise refusal("set_sync_debug_mode")


def _nvml(what: str) -> BaseException:
    # PyTorch's CPU build raises ModuleNotFoundError: these read NVML (nvidia-ml-py)
    return refusal(f"{what} (it reads NVML)", ModuleNotFoundError)


def memory_usage(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("memory_usage")


def utilization(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("utilization")


def temperature(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("temperature")


def power_draw(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("power_draw")


def clock_rate(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("clock_rate")


def device_memory_used(device: Any = None) -> int:
    """Raises ModuleNotFoundError, as PyTorch's CPU build does without nvidia-ml-py."""
    raise _nvml("device_memory_used")


class cudaStatus:  # noqa: N801 - PyTorch's name
    """CUDA runtime status codes."""

    SUCCESS: int = 0
    ERROR_NOT_READY: int = 34


class CudaError(RuntimeError):
    """A CUDA runtime error (``except lucid.cuda.CudaError`` runs; lucid raises none)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"CUDA error {code} (lucid has no CUDA runtime)")


class DeferredCudaCallError(Exception):
    """A failure of a call queued until CUDA initializes (lucid queues none)."""


def check_error(res: int) -> None:
    """Raises: lucid has no CUDA runtime to ask about ``res`` (AttributeError, as PyTorch's
    CPU build)."""
    raise refusal("check_error", NoCUDAAttributeError)


class device:  # noqa: N801 - PyTorch's name
    """The context manager that selects a CUDA device: a no-op for a negative index (and for
    :class:`device_of` a CPU tensor); for an index of 0 or more entering raises RuntimeError,
    as on PyTorch's CPU build. A device of another type raises ValueError."""

    def __init__(self, device: Any) -> None:
        self.idx = device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is None:  # PyTorch's CPU build compares None with 0 here
            raise refusal("device(None)", TypeError)
        if self.idx >= 0:
            raise refusal("device", RuntimeError)

    def __exit__(self, *exc_info: object) -> None:
        return None


class device_of(device):  # noqa: N801 - PyTorch's name
    """:class:`device` of the device ``obj`` (a tensor or storage) is on: lucid's tensors are
    never on a CUDA device, so a no-op."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if getattr(obj, "is_cuda", False) else -1)


class StreamContext:
    """The context manager that selects a CUDA stream: a no-op for ``None`` (no CUDA device
    means no stream is ever selected), as on PyTorch's CPU build."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.idx = -1  # no CUDA device
        self.src_prev_stream: Stream | None = None
        self.dst_prev_stream: Stream | None = None

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


def stream(stream: Stream | None) -> StreamContext:
    """:class:`StreamContext` of ``stream``: a no-op here."""
    return StreamContext(stream)


def set_stream(stream: Stream | None) -> None:
    """Does nothing for ``None``; lucid has no other stream to set (a non-stream raises
    AttributeError, as PyTorch)."""
    if stream is None:
        return
    raise refusal("set_stream", NoCUDAAttributeError)


def current_stream(device: Any = None) -> Stream:
    """Raises: lucid has no CUDA stream."""
    raise refusal("current_stream")


def default_stream(device: Any = None) -> Stream:
    """Raises: lucid has no CUDA stream."""
    raise refusal("default_stream")


def get_stream_from_external(data_ptr: int, device: Any = None) -> Stream:
    """Raises: lucid has no CUDA stream."""
    raise refusal("get_stream_from_external")


class GreenContext:
    """A CUDA green context: ``GreenContext.create`` raises RuntimeError, as on PyTorch's CPU
    build (it was not built with green contexts)."""

    @staticmethod
    def create(
        *,
        num_sms: int | None = None,
        workqueue_scope: str | None = None,
        workqueue_concurrency_limit: int | None = None,
        device_id: int | None = None,
    ) -> object:
        """Raises: a green context partitions a CUDA device's SMs, and lucid has none."""
        raise refusal("GreenContext.create", RuntimeError)
