"""``lucid.xpu``: PyTorch's XPU (Intel GPU) API, answering for lucid, which has no ``"xpu"``
device.

Device-agnostic programs ask ``torch.cuda.is_available()``, then ``torch.xpu.is_available()``,
and fall back to the CPU (the profiler recipe does); here both answers are False and the seeding
calls do nothing (as on PyTorch's CPU build), while the calls that need an XPU device raise
PyTorch's error. Lucid's GPU is MLX's, device ``"mlx"``: ask ``lucid.accelerator``.

>>> lucid.xpu.is_available(), lucid.xpu.device_count()
(False, 0)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "set_device",
    "synchronize",
]

NOT_COMPILED = (
    "Torch not compiled with XPU enabled (lucid has no XPU device: use 'cpu', or MLX's GPU as "
    "device 'mlx' where lucid.accelerator.is_available())"
)


def is_available() -> bool:
    """Whether an XPU device can be used: always False, as on PyTorch's CPU build."""
    return False


def device_count() -> int:
    """The number of XPU devices: always 0."""
    return 0


def is_initialized() -> bool:
    """Whether the XPU runtime has been initialized: always False (no XPU device)."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the XPU device supports bfloat16: always False (no XPU device)."""
    return False


def manual_seed(seed: int) -> None:
    """Seeds nothing: there is no XPU generator (``lucid.manual_seed`` seeds every backend)."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing: there is no XPU generator (``lucid.manual_seed`` seeds every backend)."""


def empty_cache() -> None:
    """Frees nothing: no XPU memory is held."""


def synchronize(device: Any = None) -> None:
    """Raises: lucid has no XPU device (``torch.xpu.synchronize``'s place)."""
    raise AssertionError(NOT_COMPILED)


def current_device() -> int:
    """Raises: lucid has no XPU device (``torch.xpu.current_device``'s place)."""
    raise AssertionError(NOT_COMPILED)


def set_device(device: Any) -> None:
    """Raises: lucid has no XPU device (``torch.xpu.set_device``'s place)."""
    raise AssertionError(NOT_COMPILED)


def get_device_name(device: Any = None) -> str:
    """Raises: lucid has no XPU device (``torch.xpu.get_device_name``'s place)."""
    raise AssertionError(NOT_COMPILED)
