"""Fold and Unfold (``torch.nn``): col2im and im2col as layers."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding-block columns ``(N, C * prod(k), L)`` into ``(N, C, *output_size)``."""

    def __init__(
        self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
        stride: Any = 1
    ) -> None:  # fmt: skip
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        check_tensor("Fold", input)
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """Sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * prod(k), L)``.

    >>> nn.Unfold(kernel_size=3)(lucid.randn(2, 3, 5, 5)).shape
    (2, 27, 9)
    """

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        check_tensor("Unfold", input)
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")  # fmt: skip
