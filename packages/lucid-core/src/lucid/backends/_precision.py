"""The float32 matmul precision setting (``torch.set_float32_matmul_precision``).

Stored and reported, with no effect on NumPy, which always multiplies float32 in full float32
precision; it is there so programs that set it run unchanged.
"""

from __future__ import annotations

import warnings

_CHOICES = ("highest", "high", "medium")
_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """``"highest"`` (the default), ``"high"`` or ``"medium"``; anything else warns and keeps
    the current setting, as in PyTorch."""
    global _precision
    if precision not in _CHOICES:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            stacklevel=2,
        )
        return
    _precision = precision


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``."""
    return _precision
