"""``lucid.cuda.amp``: ``torch.cuda.amp``'s ``autocast`` and ``GradScaler`` for device "cuda".

Lucid has no CUDA device, so an enabled one warns and is disabled, as PyTorch's CPU build
does; ``GradScaler(enabled=False)`` passes everything through. For mixed precision on the CPU
use ``lucid.autocast("cpu")``; on MLX's GPU ``lucid.autocast("mlx")``.
"""

from __future__ import annotations

import warnings
from typing import Any

from lucid import dtypes
from lucid.amp import autocast_mode, grad_scaler
from lucid.amp import custom_bwd as _custom_bwd
from lucid.amp import custom_fwd as _custom_fwd


class autocast(autocast_mode.autocast):  # noqa: N801 - PyTorch's name
    """``lucid.autocast("cuda", ...)``."""

    def __init__(
        self, enabled: bool = True, dtype: dtypes.dtype = dtypes.float16, cache_enabled: bool = True
    ) -> None:
        warnings.warn(
            "`lucid.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`lucid.amp.autocast('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )  # as torch.cuda.amp.autocast
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """``lucid.amp.GradScaler("cuda", ...)``: ``init_scale``, ``growth_factor``,
    ``backoff_factor``, ``growth_interval``, ``enabled``, positional or by name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            "`lucid.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`lucid.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )  # as torch.cuda.amp.GradScaler
        super().__init__("cuda", *args, **kwargs)


def amp_definitely_not_available() -> bool:
    """Whether CUDA's AMP surely cannot run: True (lucid has no CUDA device)."""
    return True


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    """``lucid.amp.custom_fwd(..., device_type="cuda")`` (warns, as PyTorch's)."""
    warnings.warn(
        "`lucid.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
        "`lucid.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any) -> Any:
    """``lucid.amp.custom_bwd(..., device_type="cuda")`` (warns, as PyTorch's)."""
    warnings.warn(
        "`lucid.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
        "`lucid.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return _custom_bwd(bwd, device_type="cuda")


__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd"]
