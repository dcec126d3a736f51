"""Input checks shared by layers: errors that name the layer, what it expected and what it got."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.amp.autocast_mode import is_autocast_enabled


def check_tensor(layer: str, x: Any, ref: Tensor | None = None) -> None:
    """``x`` must be a Tensor; with ``ref`` (a weight) also on its device and of its dtype
    (any floating dtype under autocast, which casts both to its own)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{layer} expected a lucid.Tensor as input, got {type(x).__name__}")
    if ref is None:
        return
    if x._backend is ref._backend and x._data.dtype == ref._data.dtype:
        return  # the common case, without building devices and dtypes (a backend is a device)
    if x.device != ref.device:
        raise RuntimeError(
            f"{layer} expected input on device {ref.device} (where its parameters are), got "
            f"input on {x.device}; move one with .to()"
        )
    if x.dtype is not ref.dtype and not is_autocast_enabled(x.device.type):
        raise RuntimeError(
            f"{layer} expected input of dtype {ref.dtype} (its parameters' dtype), got "
            f"{x.dtype}; convert the input with .to({ref.dtype}) or the layer with .to()"
        )


def check_ndim(layer: str, x: Tensor, allowed: tuple[int, ...], what: str) -> None:
    if x.ndim not in allowed:
        raise ValueError(f"{layer} expected {what} input, got input of shape {tuple(x.shape)}")


def check_dim_size(layer: str, x: Tensor, dim: int, size: int, what: str) -> None:
    if x.ndim == 0 or x.shape[dim] != size:
        raise ValueError(f"{layer} expected input with {size} {what}, got {tuple(x.shape)}")
