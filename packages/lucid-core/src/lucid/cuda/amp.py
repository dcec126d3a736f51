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


__all__ = ["GradScaler", "autocast"]
