"""``lucid.cuda``: PyTorch's CUDA API, answering for lucid, which has no ``"cuda"`` device.

Device-agnostic programs ask ``torch.cuda.is_available()`` and fall back to the CPU; here the
answer is always False and the seeding calls do nothing (as on PyTorch's CPU build), while the
calls that need a CUDA device raise. Lucid's GPU is MLX's, device ``"mlx"``: ask
``lucid.accelerator.is_available()`` / ``current_accelerator()``.

``lucid.cuda.amp`` (``GradScaler``, ``autocast``) is imported on first access.

>>> device = "cuda" if lucid.cuda.is_available() else "cpu"
>>> device
'cpu'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lucid._device import NOT_COMPILED as NOT_COMPILED  # the message lucid-nn raises too

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "set_device",
    "synchronize",
]


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


def manual_seed(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (``lucid.manual_seed`` seeds every backend)."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (``lucid.manual_seed`` seeds every backend)."""


def empty_cache() -> None:
    """Frees nothing: no CUDA memory is held."""


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


def memory_stats(device: Any = None) -> dict[str, Any]:
    """The caching allocator's statistics: empty, as on PyTorch's CPU build."""
    return {}


def reset_peak_memory_stats(device: Any = None) -> None:
    """Raises: lucid has no CUDA device (PyTorch's CPU build fails here too)."""
    raise AssertionError(NOT_COMPILED)


def synchronize(device: Any = None) -> None:
    """Raises: lucid has no CUDA device (``torch.cuda.synchronize``'s place)."""
    raise AssertionError(NOT_COMPILED)


def current_device() -> int:
    """Raises: lucid has no CUDA device (``torch.cuda.current_device``'s place)."""
    raise AssertionError(NOT_COMPILED)


def set_device(device: Any) -> None:
    """Raises: lucid has no CUDA device (``torch.cuda.set_device``'s place)."""
    raise AssertionError(NOT_COMPILED)


def get_device_name(device: Any = None) -> str:
    """Raises: lucid has no CUDA device (``torch.cuda.get_device_name``'s place)."""
    raise AssertionError(NOT_COMPILED)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """Raises: lucid has no CUDA device (``torch.cuda.get_device_capability``'s place)."""
    raise AssertionError(NOT_COMPILED)


if not TYPE_CHECKING:  # mypy sees only the names above, so typos stay errors

    def __getattr__(name: str) -> Any:
        if name == "amp":
            return importlib.import_module("lucid.cuda.amp")
        if name.endswith("Tensor"):  # torch.cuda.FloatTensor...: named, never made
            from lucid._legacy import CUDA_TYPES

            if name in CUDA_TYPES:
                return CUDA_TYPES[name]
        raise AttributeError(f"module 'lucid.cuda' has no attribute {name!r}")
