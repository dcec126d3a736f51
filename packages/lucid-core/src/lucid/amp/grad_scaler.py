"""``lucid.amp.GradScaler``: loss scaling for float16 training, with PyTorch's update rule.

``scale(loss)`` multiplies by the scale; ``step(optimizer)`` unscales the gradients (unless
``unscale_`` already did), skips ``optimizer.step()`` when any of them is inf or nan, and
``update()`` then backs the scale off (``backoff_factor``) after a skipped step or grows it
(``growth_factor``) after ``growth_interval`` steps in a row without one. The scale is kept in
float32, as PyTorch keeps it, so both produce the same sequence of scales and skipped steps.
With ``enabled=False`` every method passes through: ``scale(x)`` is ``x``, ``step`` is
``optimizer.step()``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from enum import Enum
from typing import Any

import numpy as np

from lucid import dtypes
from lucid._creation import full
from lucid._tensor import Tensor
from lucid.amp.autocast_mode import _device_key
from lucid.backends import available_backends


class _Stage(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """``torch.amp.GradScaler``: ``scale``, ``unscale_``, ``step``, ``update`` (see module).

    >>> scaler = lucid.amp.GradScaler("cpu", init_scale=1024.0)
    >>> scaler.get_scale()
    1024.0
    """

    def __init__(
        self,
        device: str = "cpu",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = _device_key(device)
        if enabled and self._device not in available_backends():
            warnings.warn(
                f"GradScaler is enabled for device {device!r}, but no Lucid backend for it is "
                f"available (available: {', '.join(available_backends())}). Disabling.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"The growth factor must be > 1.0, got {growth_factor}")
            if backoff_factor >= 1.0:
                raise ValueError(f"The backoff factor must be < 1.0, got {backoff_factor}")
        self._scale = _f32(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # -- scaling -----------------------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or lists/tuples of them) times the scale; as is if disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            factor = full((1,), self._scale, dtype=dtypes.float32, device=outputs.device)
            return outputs * factor
        if isinstance(outputs, Iterable) and not isinstance(outputs, (str, bytes)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and record whether any is
        inf or nan (once per ``step``; call it to clip gradients before ``step``)."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = float(np.float32(1.0 / np.float64(self._scale)))
        state["found_inf"] = _unscale_grads(optimizer, inv)
        state["stage"] = _Stage.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(*args, **kwargs)`` unless the unscaled gradients hold inf or nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return result

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off or grow the scale from this iteration's inf checks (or set ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = _new_scale(new_scale)
        else:
            checks = [s["found_inf"] for s in self._per_optimizer.values() if "found_inf" in s]
            if not checks:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._grow_or_back_off(any(checks))
        self._per_optimizer = {}

    def _grow_or_back_off(self, found_inf: bool) -> None:
        """PyTorch's ``_amp_update_scale_``, in float32."""
        if found_inf:
            self._scale = _f32(np.float32(self._scale) * np.float32(self._backoff_factor))
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            grown = np.float32(self._scale) * np.float32(self._growth_factor)
            if np.isfinite(grown):
                self._scale = float(grown)
            self._growth_tracker = 0

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _Stage.READY})

    # -- settings ----------------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale factor (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` steps without inf/NaN."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the factor the scale grows by."""
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a step with inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the factor the scale shrinks by."""
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """The number of steps without inf/NaN after which the scale grows."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the number of steps without inf/NaN after which the scale grows."""
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False makes every method a pass-through)."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """The scale and its update settings (empty when disabled), as PyTorch's keys."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the scale and its update settings from ``state_dict()``'s result."""
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._scale = _f32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


def _f32(value: Any) -> float:
    return float(np.float32(value))


def _new_scale(value: float | Tensor) -> float:
    if isinstance(value, Tensor):
        if value.numel() != 1 or value.requires_grad:
            raise ValueError(
                "new_scale should be a float or a 1-element tensor with requires_grad=False, "
                f"got a tensor of shape {tuple(value.shape)} (requires_grad={value.requires_grad})"
            )
        return _f32(value.item())
    return _f32(value)


def _unscale_grads(optimizer: Any, inv_scale: float) -> bool:
    """Multiply every gradient by ``inv_scale`` in place; whether any held inf or nan."""
    found_inf = False
    for group in optimizer.param_groups:
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            if g.dtype is dtypes.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
            if not found_inf and not bool(g.isfinite().all().item()):
                found_inf = True
            g.mul_(inv_scale)
    return found_inf
