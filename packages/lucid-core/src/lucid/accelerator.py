"""``lucid.accelerator``: the device-agnostic accelerator API (``torch.accelerator``).

Lucid's accelerator is MLX's GPU (Metal on Apple silicon, CUDA where MLX is built for it),
reached through the lucid-backend-mlx plugin as device ``"mlx"``. Without that plugin, or
where MLX reports no GPU, there is no accelerator and everything runs on ``"cpu"``. The first
question loads the plugin (and MLX) if it is installed; ``import lucid`` does not.

>>> device = lucid.accelerator.current_accelerator() or lucid.device("cpu")
"""

from __future__ import annotations

import functools
from typing import Any

from lucid._device import device as _device
from lucid.backends import DeviceError, available_backends, get_backend

__all__ = [
    "current_accelerator",
    "current_device_index",
    "device_count",
    "is_available",
    "synchronize",
]

_DEVICE = "mlx"
_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


@functools.cache
def is_available() -> bool:
    """Whether MLX is installed as a lucid backend and reports a GPU."""
    if _DEVICE not in available_backends():
        return False
    try:
        get_backend(f"{_DEVICE}:gpu")  # refuses where MLX has no GPU
    except (DeviceError, ImportError):
        return False
    return True


def current_accelerator(check_available: bool = False) -> _device | None:
    """``lucid.device("mlx")`` where the MLX GPU is present, else None (``check_available``
    is accepted for PyTorch's signature: lucid reports an accelerator only when it is there)."""
    return _device(_DEVICE) if is_available() else None


def device_count() -> int:
    """1 where the MLX GPU is present (MLX drives one), else 0."""
    return 1 if is_available() else 0


def current_device_index() -> int:
    """The index of the current accelerator (0: MLX drives one GPU); raises where there is none."""
    _require()
    return 0


def synchronize(device: Any = None, /) -> None:
    """Wait for the accelerator's pending work (MLX evaluates lazily)."""
    _require()
    get_backend(f"{_DEVICE}:gpu").evaluate()


def _require() -> None:
    if not is_available():
        raise RuntimeError(_NONE_AVAILABLE)
