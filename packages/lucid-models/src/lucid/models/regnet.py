"""RegNetX and RegNetY, every size torchvision has, 400MF to 32GF (X) and 128GF (Y)
(Radosavovic et al., "Designing Network Design Spaces", CVPR 2020), in torchvision's layout."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from lucid import nn
from lucid.models._layers import Conv2dNormActivation, SqueezeExcitation, make_divisible
from lucid.models._registry import classifier

_PAPER = 'Radosavovic et al., "Designing Network Design Spaces", CVPR 2020'


class BottleneckTransform(nn.Sequential):
    """1x1 (``a``), grouped 3x3 (``b``), optional squeeze-excite (``se``), 1x1 (``c``)."""

    def __init__(
        self,
        width_in: int,
        width_out: int,
        stride: int,
        norm_layer: Any,
        activation_layer: Any,
        group_width: int,
        bottleneck_multiplier: float,
        se_ratio: float | None,
    ) -> None:
        super().__init__()
        w_b = int(round(width_out * bottleneck_multiplier))
        g = w_b // group_width
        self.add_module(
            "a",
            Conv2dNormActivation(
                width_in, w_b, 1, norm_layer=norm_layer, activation_layer=activation_layer
            ),
        )
        self.add_module(
            "b",
            Conv2dNormActivation(
                w_b,
                w_b,
                3,
                stride=stride,
                groups=g,
                norm_layer=norm_layer,
                activation_layer=activation_layer,
            ),
        )
        if se_ratio:
            se = SqueezeExcitation(
                w_b, int(round(se_ratio * width_in)), activation=activation_layer
            )
            self.add_module("se", se)
        self.add_module(
            "c",
            Conv2dNormActivation(w_b, width_out, 1, norm_layer=norm_layer, activation_layer=None),
        )


class ResBottleneckBlock(nn.Module):
    """``activation(x + f(x))``, ``x`` projected by a 1x1 conv when the shape changes."""

    def __init__(
        self,
        width_in: int,
        width_out: int,
        stride: int,
        norm_layer: Any,
        activation_layer: Any,
        group_width: int = 1,
        bottleneck_multiplier: float = 1.0,
        se_ratio: float | None = None,
    ) -> None:
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(
                width_in, width_out, 1, stride=stride, norm_layer=norm_layer, activation_layer=None
            )
        self.f = BottleneckTransform(
            width_in,
            width_out,
            stride,
            norm_layer,
            activation_layer,
            group_width,
            bottleneck_multiplier,
            se_ratio,
        )
        self.activation = activation_layer(inplace=True)

    def forward(self, x: Any) -> Any:
        shortcut = x if self.proj is None else self.proj(x)
        return self.activation(shortcut + self.f(x))


class BlockParams:
    """Per-stage depths, widths, group widths and bottleneck multipliers of a RegNet."""

    def __init__(
        self,
        depths: list[int],
        widths: list[int],
        group_widths: list[int],
        bottleneck_multipliers: list[float],
        strides: list[int],
        se_ratio: float | None = None,
    ) -> None:
        self.depths, self.widths, self.group_widths = depths, widths, group_widths
        self.bottleneck_multipliers, self.strides = bottleneck_multipliers, strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(
        cls,
        depth: int,
        w_0: int,
        w_a: float,
        w_m: float,
        group_width: int,
        bottleneck_multiplier: float = 1.0,
        se_ratio: float | None = None,
    ) -> BlockParams:
        """The quantised linear widths of the paper (``w_j = w_0 * w_m ** s_j``, multiples of
        8), grouped into stages; computed in float32 like torchvision's torch code, so that the
        rounding agrees."""
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError(
                f"Invalid RegNet settings: need w_a >= 0, w_0 > 0 and a multiple of 8, w_m > 1; "
                f"got w_a={w_a}, w_0={w_0}, w_m={w_m}"
            )
        f32 = np.float32
        widths_cont = np.arange(depth, dtype=f32) * f32(w_a) + f32(w_0)
        capacity = np.round(np.log(widths_cont / f32(w_0)) / f32(math.log(w_m))).astype(f32)
        block_widths = np.round((f32(w_0) * np.power(f32(w_m), capacity)) / f32(8)) * 8
        widths = [int(w) for w in block_widths.astype(np.int32)]
        num_stages = len(set(widths))
        splits = [w != wp for w, wp in zip([*widths, 0], [0, *widths])]
        stage_widths = [w for w, t in zip(widths, splits[:-1]) if t]
        marks = [d for d, t in enumerate(splits) if t]
        stage_depths = [b - a for a, b in zip(marks, marks[1:])]
        mults = [bottleneck_multiplier] * num_stages
        bots = [int(w * b) for w, b in zip(stage_widths, mults)]
        groups = [min(group_width, w) for w in bots]
        bots = [make_divisible(w, g) for w, g in zip(bots, groups)]
        stage_widths = [int(w / b) for w, b in zip(bots, mults)]
        return cls(stage_depths, stage_widths, groups, mults, [2] * num_stages, se_ratio)


class RegNet(nn.Module):
    """RegNet (``torchvision.models.RegNet``): a 3x3 stride-2 stem, then stages
    ``trunk_output.block{i}`` of ``block{i}-{j}`` residual bottlenecks."""

    def __init__(
        self,
        block_params: BlockParams,
        num_classes: int = 1000,
        stem_width: int = 32,
        norm_layer: Any = None,
        activation: Any = None,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        norm = nn.BatchNorm2d if norm_layer is None else norm_layer
        act = nn.ReLU if activation is None else activation
        self.stem = Conv2dNormActivation(
            in_channels, stem_width, 3, stride=2, norm_layer=norm, activation_layer=act
        )
        width = stem_width
        self.trunk_output = nn.Sequential()
        p = block_params
        rows = zip(p.widths, p.strides, p.depths, p.group_widths, p.bottleneck_multipliers)
        for i, (w_out, stride, depth, gw, bm) in enumerate(rows, start=1):
            stage = nn.Sequential()
            for j in range(depth):
                block = ResBottleneckBlock(
                    width if j == 0 else w_out,
                    w_out,
                    stride if j == 0 else 1,
                    norm,
                    act,
                    gw,
                    bm,
                    p.se_ratio,
                )
                stage.add_module(f"block{i}-{j}", block)
            self.trunk_output.add_module(f"block{i}", stage)
            width = w_out
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.fc(self.avgpool(self.trunk_output(self.stem(x))).flatten(1))


def _regnet(
    depth: int,
    w_0: int,
    w_a: float,
    w_m: float,
    group_width: int,
    se_ratio: float | None,
    kwargs: dict[str, Any],
) -> RegNet:
    params = BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width, se_ratio=se_ratio)
    kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return RegNet(params, **kwargs)


@classifier(_PAPER, 4_344_144)
def regnet_y_400mf(**kwargs: Any) -> RegNet:
    """RegNetY-400MF, 4,344,144 parameters for 1000 classes."""
    return _regnet(16, 48, 27.89, 2.09, 8, 0.25, kwargs)


@classifier(_PAPER, 6_432_512)
def regnet_y_800mf(**kwargs: Any) -> RegNet:
    """RegNetY-800MF, 6,432,512 parameters for 1000 classes."""
    return _regnet(14, 56, 38.84, 2.4, 16, 0.25, kwargs)


@classifier(_PAPER, 11_202_430)
def regnet_y_1_6gf(**kwargs: Any) -> RegNet:
    """RegNetY-1.6GF, 11,202,430 parameters for 1000 classes."""
    return _regnet(27, 48, 20.71, 2.65, 24, 0.25, kwargs)


@classifier(_PAPER, 19_436_338)
def regnet_y_3_2gf(**kwargs: Any) -> RegNet:
    """RegNetY-3.2GF, 19,436,338 parameters for 1000 classes."""
    return _regnet(21, 80, 42.63, 2.66, 24, 0.25, kwargs)


@classifier(_PAPER, 39_381_472)
def regnet_y_8gf(**kwargs: Any) -> RegNet:
    """RegNetY-8GF, 39,381,472 parameters for 1000 classes."""
    return _regnet(17, 192, 76.82, 2.19, 56, 0.25, kwargs)


@classifier(_PAPER, 83_590_140)
def regnet_y_16gf(**kwargs: Any) -> RegNet:
    """RegNetY-16GF, 83,590,140 parameters for 1000 classes."""
    return _regnet(18, 200, 106.23, 2.48, 112, 0.25, kwargs)


@classifier(_PAPER, 145_046_770)
def regnet_y_32gf(**kwargs: Any) -> RegNet:
    """RegNetY-32GF, 145,046,770 parameters for 1000 classes."""
    return _regnet(20, 232, 115.89, 2.53, 232, 0.25, kwargs)


@classifier(_PAPER, 644_812_894)
def regnet_y_128gf(**kwargs: Any) -> RegNet:
    """RegNetY-128GF, 644,812,894 parameters for 1000 classes."""
    return _regnet(27, 456, 160.83, 2.52, 264, 0.25, kwargs)


@classifier(_PAPER, 5_495_976)
def regnet_x_400mf(**kwargs: Any) -> RegNet:
    """RegNetX-400MF, 5,495,976 parameters for 1000 classes."""
    return _regnet(22, 24, 24.48, 2.54, 16, None, kwargs)


@classifier(_PAPER, 7_259_656)
def regnet_x_800mf(**kwargs: Any) -> RegNet:
    """RegNetX-800MF, 7,259,656 parameters for 1000 classes."""
    return _regnet(16, 56, 35.73, 2.28, 16, None, kwargs)


@classifier(_PAPER, 9_190_136)
def regnet_x_1_6gf(**kwargs: Any) -> RegNet:
    """RegNetX-1.6GF, 9,190,136 parameters for 1000 classes."""
    return _regnet(18, 80, 34.01, 2.25, 24, None, kwargs)


@classifier(_PAPER, 15_296_552)
def regnet_x_3_2gf(**kwargs: Any) -> RegNet:
    """RegNetX-3.2GF, 15,296,552 parameters for 1000 classes."""
    return _regnet(25, 88, 26.31, 2.25, 48, None, kwargs)


@classifier(_PAPER, 39_572_648)
def regnet_x_8gf(**kwargs: Any) -> RegNet:
    """RegNetX-8GF, 39,572,648 parameters for 1000 classes."""
    return _regnet(23, 80, 49.56, 2.88, 120, None, kwargs)


@classifier(_PAPER, 54_278_536)
def regnet_x_16gf(**kwargs: Any) -> RegNet:
    """RegNetX-16GF, 54,278,536 parameters for 1000 classes."""
    return _regnet(22, 216, 55.59, 2.1, 128, None, kwargs)


@classifier(_PAPER, 107_811_560)
def regnet_x_32gf(**kwargs: Any) -> RegNet:
    """RegNetX-32GF, 107,811,560 parameters for 1000 classes."""
    return _regnet(23, 320, 69.86, 2.0, 168, None, kwargs)
