"""``torch.nn.utils.memory_format``: lay conv weights out in a memory format."""

from __future__ import annotations

from typing import Any, TypeVar

from lucid.nn.module import Module
from lucid.nn.modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

M = TypeVar("M", bound=Module)


def convert_conv2d_weight_memory_format(module: M, memory_format: Any) -> M:
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` the layout
    ``memory_format`` (``lucid.channels_last`` ...), in place; returns ``module``, as torch."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: M, memory_format: Any) -> M:
    """:func:`convert_conv2d_weight_memory_format` for ``Conv3d``/``ConvTranspose3d``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))


def _convert(module: M, memory_format: Any, kinds: tuple[type, ...]) -> M:
    for m in module.modules():
        if isinstance(m, kinds):
            weight = m.weight
            weight.data = weight.detach().clone(memory_format=memory_format)
    return module
