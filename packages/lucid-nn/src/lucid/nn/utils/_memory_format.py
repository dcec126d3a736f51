"""``torch.nn.utils.memory_format``: lay conv weights out in a memory format."""

from __future__ import annotations

from typing import Any, TypeVar

from lucid import Tensor
from lucid.nn.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

M = TypeVar("M", bound=Module)


def convert_conv2d_weight_memory_format(module: M, memory_format: Any) -> M:
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` the layout
    ``memory_format`` (``lucid.channels_last`` ...), in place; returns ``module``, as torch."""
    return _convert(module, memory_format, 2)


def convert_conv3d_weight_memory_format(module: M, memory_format: Any) -> M:
    """:func:`convert_conv2d_weight_memory_format` for ``Conv3d``/``ConvTranspose3d``."""
    return _convert(module, memory_format, 3)


def _convert(module: M, memory_format: Any, spatial: int) -> M:
    # A conv layer is a module with a weight and a kernel_size of `spatial` dims (the conv
    # classes sit above nn.utils, which the layers import: no isinstance on them here).
    for m in module.modules():
        weight = getattr(m, "weight", None)
        kernel = getattr(m, "kernel_size", None)
        if isinstance(weight, Tensor) and isinstance(kernel, tuple) and len(kernel) == spatial:
            weight.data = weight.detach().clone(memory_format=memory_format)
    return module
