"""``lucid.backends.mps``: lucid has no ``"mps"`` device (its Apple GPU is MLX's, ``"mlx"``).

>>> lucid.backends.mps.is_available()
False
"""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """Whether the MPS device is available: always False (use the ``"mlx"`` device on Apple
    GPUs)."""
    return False


def is_built() -> bool:
    """Whether lucid was built with MPS support: always False (use the ``"mlx"`` device)."""
    return False
