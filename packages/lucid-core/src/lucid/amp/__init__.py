"""Automatic mixed precision: ``autocast`` and ``GradScaler`` (``torch.amp``).

>>> with lucid.amp.autocast("cpu", dtype=lucid.bfloat16):
...     y = lucid.randn(2, 3) @ lucid.randn(3, 4)
>>> y.dtype
lucid.bfloat16
"""

from __future__ import annotations

from lucid.amp import autocast_mode, grad_scaler
from lucid.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from lucid.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "autocast_mode", "custom_bwd", "custom_fwd", "grad_scaler",
           "is_autocast_available"]  # fmt: skip
