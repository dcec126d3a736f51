"""``lucid.backends.cudnn``: PyTorch's cuDNN switches, kept so device-agnostic programs run.

Lucid has no cuDNN (``is_available()`` is False, ``version()`` is None); the switches are
plain module attributes with PyTorch's defaults and change no computation.
"""

from __future__ import annotations

__all__ = ["allow_tf32", "benchmark", "deterministic", "enabled", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """Whether cuDNN can be used: always False in lucid."""
    return False


def version() -> int | None:
    """The cuDNN version: always None in lucid."""
    return None
