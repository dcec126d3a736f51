"""Building blocks the zoo shares, named and laid out as torchvision's ``ops`` has them (so
state dicts line up): ``Conv2dNormActivation``, ``SqueezeExcitation``, ``StochasticDepth``,
``MLP``, ``Permute``, ``LayerNorm2d`` and ``make_divisible``.

They are built from lucid-nn's layers and lucid's ops alone; they belong in lucid-nn (or a
``lucid.ops``) eventually, and live here until then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import lucid
from lucid import nn


def make_divisible(v: float, divisor: int = 8, min_value: int | None = None) -> int:
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``), never
    below 90% of ``v`` (torchvision's ``_make_divisible``)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, then a norm layer (BatchNorm2d by default) and an activation (ReLU by default),
    as ``torchvision.ops.Conv2dNormActivation``; the conv has a bias only without a norm layer,
    and ``padding`` defaults to ``(kernel_size - 1) // 2 * dilation``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int] = 3,
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] | None = None,
        groups: int = 1,
        norm_layer: Callable[..., Any] | None = nn.BatchNorm2d,
        activation_layer: Callable[..., Any] | None = nn.ReLU,
        dilation: int = 1,
        inplace: bool | None = True,
        bias: bool | None = None,
    ) -> None:
        if padding is None:
            if isinstance(kernel_size, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                padding = (
                    (kernel_size[0] - 1) // 2 * dilation,
                    (kernel_size[1] - 1) // 2 * dilation,
                )
        if bias is None:
            bias = norm_layer is None
        layers: list[Any] = [
            nn.Conv2d(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation=dilation,
                groups=groups,
                bias=bias,
            )
        ]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """Squeeze-and-Excitation (Hu et al., CVPR 2018): global average pool, 1x1 conv down to
    ``squeeze_channels``, ``activation``, 1x1 conv up, ``scale_activation``, times the input."""

    def __init__(
        self,
        input_channels: int,
        squeeze_channels: int,
        activation: Callable[..., Any] = nn.ReLU,
        scale_activation: Callable[..., Any] = nn.Sigmoid,
    ) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, x: Any) -> Any:
        scale = self.fc2(self.activation(self.fc1(self.avgpool(x))))
        return self.scale_activation(scale) * x


def stochastic_depth(x: Any, p: float, mode: str, training: bool = True) -> Any:
    """Zero the whole input (``mode="batch"``) or some of its rows (``"row"``) with probability
    ``p`` and scale the rest by ``1 / (1 - p)`` (Huang et al., "Deep Networks with Stochastic
    Depth", ECCV 2016); the identity outside training or for ``p == 0``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return x
    survival = 1.0 - p
    size = [x.shape[0]] + [1] * (x.ndim - 1) if mode == "row" else [1] * x.ndim
    noise = (lucid.rand(*size) < survival).to(x.dtype)
    if survival > 0.0:
        noise = noise / survival
    return x * noise


class StochasticDepth(nn.Module):
    """The module form of :func:`stochastic_depth` (``torchvision.ops.StochasticDepth``)."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, x: Any) -> Any:
        return stochastic_depth(x, self.p, self.mode, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, mode={self.mode}"


class MLP(nn.Sequential):
    """Linear layers with an activation (and optional norm) and dropout between them, and
    dropout after the last (``torchvision.ops.MLP``)."""

    def __init__(
        self,
        in_channels: int,
        hidden_channels: Sequence[int],
        norm_layer: Callable[..., Any] | None = None,
        activation_layer: Callable[..., Any] = nn.ReLU,
        inplace: bool | None = None,
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        params = {} if inplace is None else {"inplace": inplace}
        layers: list[Any] = []
        in_dim = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers += [activation_layer(**params), nn.Dropout(dropout, **params)]
            in_dim = hidden
        layers += [nn.Linear(in_dim, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **params)]
        super().__init__(*layers)


class Permute(nn.Module):
    """``x.permute(*dims)`` as a module."""

    def __init__(self, dims: Sequence[int]) -> None:
        super().__init__()
        self.dims = list(dims)

    def forward(self, x: Any) -> Any:
        return x.permute(*self.dims)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an ``(N, C, H, W)`` input (ConvNeXt's)."""

    def forward(self, x: Any) -> Any:
        x = x.permute(0, 2, 3, 1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class Conv3dNormActivation(nn.Sequential):
    """Conv3d, then a norm layer (BatchNorm3d by default) and an activation (ReLU by default),
    as ``torchvision.ops.Conv3dNormActivation``; the conv has a bias only without a norm layer,
    and ``padding`` defaults to ``(kernel_size - 1) // 2 * dilation`` per dimension."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int, int] = 3,
        stride: int | tuple[int, int, int] = 1,
        padding: int | tuple[int, int, int] | None = None,
        groups: int = 1,
        norm_layer: Callable[..., Any] | None = nn.BatchNorm3d,
        activation_layer: Callable[..., Any] | None = nn.ReLU,
        dilation: int = 1,
        inplace: bool | None = True,
        bias: bool | None = None,
    ) -> None:
        if padding is None:
            k = (kernel_size,) * 3 if isinstance(kernel_size, int) else tuple(kernel_size)
            padding = tuple((n - 1) // 2 * dilation for n in k)  # type: ignore[assignment]
        if bias is None:
            bias = norm_layer is None
        layers: list[Any] = [
            nn.Conv3d(
                in_channels,
                out_channels,
                kernel_size,
                stride,
                padding,
                dilation=dilation,
                groups=groups,
                bias=bias,
            )  # fmt: skip
        ]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels
