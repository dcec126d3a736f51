"""Pooling layers: MaxPool*, MaxUnpool*, AvgPool*, AdaptiveAvgPool*, AdaptiveMaxPool*, LPPool*
(torch.nn)."""

from __future__ import annotations

from typing import Any

from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


def _check(layer: Module, x: Any, nd: int) -> None:
    name = type(layer).__name__
    check_tensor(name, x)
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{name} expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input, "
                         f"got input of shape {tuple(x.shape)}")  # fmt: skip


class _PoolNd(Module):
    """A pooling layer over ``nd`` spatial dims; each public class names its ``nd``."""

    _nd = 2

    def __init_subclass__(cls, nd: int | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if nd is not None:
            cls._nd = nd


class _MaxPoolNd(_PoolNd):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:
        _check(self, input, self._nd)
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[self._nd - 1]
        return pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)  # fmt: skip

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")  # fmt: skip


class MaxPool1d(_MaxPoolNd, nd=1):
    """Max over sliding windows of ``(N, C, L)``."""


class MaxPool2d(_MaxPoolNd, nd=2):
    """Max over sliding windows of ``(N, C, H, W)``; stride defaults to the kernel size.

    >>> nn.MaxPool2d(2)(lucid.randn(1, 3, 8, 8)).shape
    (1, 3, 4, 4)
    """


class MaxPool3d(_MaxPoolNd, nd=3):
    """Max over sliding windows of ``(N, C, D, H, W)``."""


class _MaxUnpoolNd(_PoolNd):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd, nd=1):
    """The partial inverse of ``MaxPool1d`` (its ``return_indices=True`` output)."""


class MaxUnpool2d(_MaxUnpoolNd, nd=2):
    """The partial inverse of ``MaxPool2d``: values back at their argmax, zeros elsewhere.

    >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
    >>> unpool(*pool(lucid.randn(1, 1, 4, 4))).shape
    (1, 1, 4, 4)
    """


class MaxUnpool3d(_MaxUnpoolNd, nd=3):
    """The partial inverse of ``MaxPool3d``."""


class _AvgPoolNd(_PoolNd):
    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        _check(self, input, self._nd)
        if self._nd == 1:
            return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                                self.ceil_mode, self.count_include_pad)  # fmt: skip
        pool = F.avg_pool2d if self._nd == 2 else F.avg_pool3d
        return pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                    self.count_include_pad, self.divisor_override)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd, nd=1):
    """Average over sliding windows of ``(N, C, L)``."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:  # fmt: skip
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)


class AvgPool2d(_AvgPoolNd, nd=2):
    """Average over sliding windows of ``(N, C, H, W)`` (PyTorch's divisor rules).

    >>> nn.AvgPool2d(2)(lucid.ones(1, 1, 4, 4)).shape
    (1, 1, 2, 2)
    """


class AvgPool3d(_AvgPoolNd, nd=3):
    """Average over sliding windows of ``(N, C, D, H, W)``."""


class _AdaptiveAvgPoolNd(_PoolNd):
    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        _check(self, input, self._nd)
        pool = (F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d)[self._nd - 1]
        return pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd, nd=1):
    """Average pooling of ``(N, C, L)`` to a fixed length."""


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd, nd=2):
    """Average pooling of ``(N, C, H, W)`` to a fixed size (``1`` = global average pooling).

    >>> nn.AdaptiveAvgPool2d(1)(lucid.randn(2, 8, 7, 7)).shape
    (2, 8, 1, 1)
    """


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd, nd=3):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed size."""


class _AdaptiveMaxPoolNd(_PoolNd):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:
        _check(self, input, self._nd)
        pool = (F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)[self._nd - 1]
        return pool(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd, nd=1):
    """Max pooling of ``(N, C, L)`` to a fixed length."""


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd, nd=2):
    """Max pooling of ``(N, C, H, W)`` to a fixed size."""


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd, nd=3):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed size."""


class _LPPoolNd(_PoolNd):
    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        _check(self, input, self._nd)
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._nd - 1]
        return pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")  # fmt: skip


class LPPool1d(_LPPoolNd, nd=1):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, L)``."""


class LPPool2d(_LPPoolNd, nd=2):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, H, W)``."""


class LPPool3d(_LPPoolNd, nd=3):
    """Power-average pooling ``(sum x^p)^(1/p)`` over windows of ``(N, C, D, H, W)``."""


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(
        self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
        return_indices: bool = False, _random_samples: Tensor | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        nd = self._nd
        name = type(self).__name__
        self.kernel_size = _tuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _tuple(output_size, nd)
        self.output_ratio = None if output_ratio is None else _tuple(output_ratio, nd)
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        pool = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)  # fmt: skip


def _tuple(value: Any, n: int) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling (Graham, 2014) of ``(N, C, H, W)``: windows at pseudo-random
    starts (``lucid.rand`` per forward unless ``_random_samples`` is given)."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of ``(N, C, D, H, W)``."""

    _nd = 3
