"""``lucid.signal`` (``torch.signal``): signal-processing helpers; today the window functions
of :mod:`lucid.signal.windows`."""

from __future__ import annotations

from lucid.signal import windows

__all__ = ["windows"]
