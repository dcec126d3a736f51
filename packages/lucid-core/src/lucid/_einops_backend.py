"""einops's backend for lucid tensors: ``einops.rearrange``/``reduce``/``repeat``/``einsum``/
``pack``/``unpack`` work on ``lucid.Tensor`` and keep the autograd graph.

einops finds a backend among the subclasses of its ``AbstractBackend`` whose
``framework_name`` module is imported; this module defines that subclass. lucid imports it as
soon as both lucid and einops are imported (``lucid._interop``), whichever comes first, so a
program only imports the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from einops._backends import AbstractBackend

from lucid import dtypes
from lucid._creation import arange, from_numpy
from lucid._tensor import Tensor
from lucid.ops import amax, amin, cat, einsum, stack, unsqueeze

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


class LucidBackend(AbstractBackend):
    """The einops backend of ``lucid.Tensor`` (as einops's ``TorchBackend``)."""

    framework_name = "lucid"

    def is_appropriate_type(self, tensor: Any) -> bool:
        """True for lucid tensors."""
        return isinstance(tensor, Tensor)

    def from_numpy(self, x: np.ndarray) -> Tensor:
        """A tensor of ``x``; floating ones require grad (einops's tests check gradients)."""
        t = from_numpy(x)
        if t.dtype in _FLOATS:
            t.requires_grad_(True)
        return t

    def to_numpy(self, x: Tensor) -> np.ndarray:
        """The values of ``x`` as a numpy array."""
        out: np.ndarray = x.detach().cpu().numpy()
        return out

    def arange(self, start: int, stop: int) -> Tensor:
        """int64 ``arange`` (used by einops's tests)."""
        return arange(start, stop, dtype=dtypes.int64)

    def reduce(self, x: Tensor, operation: str, reduced_axes: Any) -> Tensor:
        """``x`` reduced over ``reduced_axes`` by min, max, sum, mean, prod, any or all."""
        axes = tuple(reduced_axes)
        if operation == "min":
            return amin(x, dim=axes)
        if operation == "max":
            return amax(x, dim=axes)
        if operation in ("sum", "mean"):
            out: Tensor = getattr(x, operation)(dim=axes)
            return out
        if operation in ("any", "all", "prod"):
            for i in sorted(axes)[::-1]:  # one axis at a time, as torch's
                x = getattr(x, operation)(dim=i)
            return x
        raise NotImplementedError(f"Unknown reduction {operation}")

    def transpose(self, x: Tensor, axes: Any) -> Tensor:
        """``x.permute(axes)``."""
        return x.permute(*axes)

    def stack_on_zeroth_dimension(self, tensors: list[Tensor]) -> Tensor:
        """``lucid.stack(tensors)``."""
        return stack(tensors)

    def add_axes(self, x: Tensor, n_axes: int, pos2len: dict[int, int]) -> Tensor:
        """New axes of the given lengths, as a broadcast view (``expand``)."""
        repeats = [-1] * n_axes
        for pos, length in pos2len.items():
            x = unsqueeze(x, pos)
            repeats[pos] = length
        return x.expand(*repeats)

    def tile(self, x: Tensor, repeats: Any) -> Tensor:
        """``x.repeat(repeats)``."""
        return x.repeat(*repeats)

    def concat(self, tensors: list[Tensor], axis: int) -> Tensor:
        """``lucid.cat(tensors, dim=axis)``."""
        return cat(tensors, dim=axis)

    def add_axis(self, x: Tensor, new_position: int) -> Tensor:
        """``lucid.unsqueeze(x, new_position)``."""
        return unsqueeze(x, new_position)

    def is_float_type(self, x: Tensor) -> bool:
        """Whether ``x`` is floating point (einops refuses ``mean`` of other types)."""
        return x.dtype in _FLOATS

    def einsum(self, pattern: str, *x: Tensor) -> Tensor:
        """``lucid.einsum(pattern, *x)``."""
        return einsum(pattern, *x)
