"""Padding layers (``torch.nn.ZeroPad2d`` and friends): thin Modules over ``F.pad``.

``padding`` is an int (every side) or a tuple ``(left, right[, top, bottom[, front, back]])``;
the layer stores it as a tuple of 2, 4 or 6 ints, as torch's do.
"""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.ops.shape import index_int

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _sides(padding: Any, n: int) -> tuple[int, ...]:
    """torch's ``_ntuple(n)``: an int repeated ``n`` times, a sequence as given."""
    if isinstance(padding, (list, tuple)):
        return tuple(int(p) for p in padding)
    one = None if isinstance(padding, bool) else index_int(padding)  # NumPy integers too
    if one is None:
        raise TypeError(
            f"padding must be an int or a tuple of {n} ints, got {type(padding).__name__}"
        )
    return (one,) * n


class _PadNd(Module):
    """One padding mode over ``_spatial`` trailing dims."""

    _mode = "constant"
    _spatial = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _sides(padding, 2 * self._spatial)

    def _check_input_dim(self, input: Tensor) -> None:
        lo = self._spatial + 1
        if input.ndim not in (lo, lo + 1):
            raise ValueError(f"expected {lo}D or {lo + 1}D input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "circular":
            self._check_input_dim(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim of a ``(C, W)`` or ``(N, C, W)`` input with ``value``."""

    _spatial = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims of a ``(C, H, W)`` or ``(N, C, H, W)`` input with ``value``."""

    _spatial = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dims of a ``(C, D, H, W)`` or ``(N, C, D, H, W)`` input with ``value``."""

    _spatial = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last 2 dims with their reflection."""

    _mode = "reflect"
    _spatial = 2


class ReflectionPad3d(_PadNd):
    """Pad the last 3 dims with their reflection."""

    _mode = "reflect"
    _spatial = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""

    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last 2 dims by repeating their edge values."""

    _mode = "replicate"
    _spatial = 2


class ReplicationPad3d(_PadNd):
    """Pad the last 3 dims by repeating their edge values."""

    _mode = "replicate"
    _spatial = 3


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around (periodic boundary)."""

    _mode = "circular"


class CircularPad2d(_PadNd):
    """Pad the last 2 dims by wrapping around."""

    _mode = "circular"
    _spatial = 2


class CircularPad3d(_PadNd):
    """Pad the last 3 dims by wrapping around."""

    _mode = "circular"
    _spatial = 3
