"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (``torch.nn``)."""

from __future__ import annotations

import math
from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.functional.conv import int_tuple
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.modules._params import empty_weight_and_bias
from lucid.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Shared state of the convolution layers (attributes named as in PyTorch)."""

    _nd = 2
    transposed = False
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any, padding: Any,
        dilation: Any, groups: int, bias: bool, padding_mode: str, output_padding: Any,
        device: Any, dtype: Any,
    ) -> None:  # fmt: skip
        super().__init__()
        nd = self._nd
        name = type(self).__name__
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")  # fmt: skip
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by groups "
                             f"({groups})")  # fmt: skip
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")  # fmt: skip
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = int_tuple(kernel_size, nd, "kernel_size")
        self.stride = int_tuple(stride, nd, "stride")
        self.dilation = int_tuple(dilation, nd, "dilation")
        self.output_padding = int_tuple(output_padding, nd, "output_padding")
        self.groups = groups
        self.padding_mode = padding_mode
        self.padding: Any
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")  # fmt: skip
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = int_tuple(padding, nd, "padding")
        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        empty_weight_and_bias(self, shape, out_channels if bias else None, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: kaiming_uniform_(a=sqrt(5)); bias ~ U(-1/sqrt(fan_in), ...)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _reversed_padding(self) -> list[int]:
        """``F.pad`` widths (last dim first) equivalent to ``self.padding``."""
        out: list[int] = []
        for i in reversed(range(self._nd)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                out += [total // 2, total - total // 2]
            elif self.padding == "valid":
                out += [0, 0]
            else:
                out += [self.padding[i], self.padding[i]]
        return out

    def _check_input(self, x: Any, channels: int, weight: Tensor) -> None:
        name = type(self).__name__
        check_tensor(name, x, weight)
        nd = self._nd
        if x.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"{name} expected {nd + 1}D (unbatched) or {nd + 2}D (batched) "
                             f"input, got input of shape {tuple(x.shape)}")  # fmt: skip
        if x.shape[-nd - 1] != channels:
            raise ValueError(f"{name} expected input with {channels} channels, got "
                             f"{tuple(x.shape)}")  # fmt: skip

    def extra_repr(self) -> str:
        nd = self._nd
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")  # fmt: skip
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    def __init__(
        self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
        padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
        padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, 0, device, dtype)  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        weight = self.weight  # read once: a parametrized weight is computed on each read
        self._check_input(input, self.in_channels, weight)
        conv = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding(), mode=self.padding_mode)
            return conv(padded, weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)  # fmt: skip
        return conv(input, weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)  # fmt: skip


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)``.

    >>> nn.Conv1d(4, 8, 3, padding=1)(lucid.randn(2, 4, 10)).shape
    (2, 8, 10)
    """

    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)``, PyTorch's arguments, init and state names.

    ``padding`` may be an int, a pair, "valid" or "same"; ``padding_mode`` one of "zeros",
    "reflect", "replicate", "circular".

    >>> nn.Conv2d(3, 16, 3, padding=1)(lucid.randn(8, 3, 32, 32)).shape
    (8, 16, 32, 32)
    """

    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)``."""

    _nd = 3


class _ConvTranspose(_ConvNd):
    transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not support string padding, got "
                             f"{padding!r}")  # fmt: skip
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device, dtype)  # fmt: skip

    def _output_padding(self, x: Tensor, output_size: Any) -> tuple[int, ...]:
        """The output_padding that gives ``output_size`` (PyTorch's rule), else the stored one."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        size = list(output_size)[-nd:]
        if len(size) != nd:
            raise ValueError(f"{type(self).__name__}: output_size must have {nd} or {nd + 2} "
                             f"elements, got {list(output_size)}")  # fmt: skip
        result = []
        for i in range(nd):
            in_len = x.shape[x.ndim - nd + i]
            low = ((in_len - 1) * self.stride[i] - 2 * self.padding[i]
                   + self.dilation[i] * (self.kernel_size[i] - 1) + 1)  # fmt: skip
            high = low + self.stride[i] - 1
            if not low <= size[i] <= high:
                raise ValueError(
                    f"requested an output size of {size}, but valid sizes range from {low} to "
                    f"{high} (for an input of {list(x.shape[-nd:])})"
                )
            result.append(size[i] - low)
        return tuple(result)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        weight = self.weight  # read once: a parametrized weight is computed on each read
        self._check_input(input, self.in_channels, weight)
        opad = self._output_padding(input, output_size)
        convt = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return convt(input, weight, self.bias, self.stride, self.padding, opad, self.groups,
                     self.dilation)  # fmt: skip


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, k)``."""

    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution (``forward(input, output_size=None)`` as in PyTorch).

    >>> nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)(
    ...     lucid.randn(1, 8, 5, 5)).shape
    (1, 4, 10, 10)
    """

    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution."""

    _nd = 3
