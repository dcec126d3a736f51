"""EfficientNet B0-B7 (Tan & Le, "EfficientNet: Rethinking Model Scaling for Convolutional
Neural Networks", ICML 2019) and EfficientNetV2-S/M/L (Tan & Le, "EfficientNetV2: Smaller
Models and Faster Training", ICML 2021), in torchvision's layout."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from lucid import nn
from lucid.models._layers import (
    Conv2dNormActivation,
    SqueezeExcitation,
    StochasticDepth,
    make_divisible,
)
from lucid.models._registry import classifier

_PAPER_V1 = (
    'Tan & Le, "EfficientNet: Rethinking Model Scaling for Convolutional Neural Networks", '
    "ICML 2019"
)
_PAPER_V2 = 'Tan & Le, "EfficientNetV2: Smaller Models and Faster Training", ICML 2021'


class MBConvConfig:
    """A stage of MBConv blocks; channels scaled by ``width_mult``, depth by ``depth_mult``."""

    fused = False

    def __init__(
        self,
        expand_ratio: float,
        kernel: int,
        stride: int,
        input_channels: int,
        out_channels: int,
        num_layers: int,
        width_mult: float = 1.0,
        depth_mult: float = 1.0,
    ) -> None:
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = make_divisible(input_channels * width_mult, 8)
        self.out_channels = make_divisible(out_channels * width_mult, 8)
        self.num_layers = int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(MBConvConfig):
    """A stage of Fused-MBConv blocks (EfficientNetV2's early stages)."""

    fused = True


class MBConv(nn.Module):
    """Expand 1x1, depthwise kxk, squeeze-excite (SiLU), project 1x1; stochastic depth on the
    residual branch."""

    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer: Any) -> None:
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError(f"illegal stride value: expected 1 or 2, got {cnf.stride}")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.SiLU
        expanded = make_divisible(cnf.input_channels * cnf.expand_ratio, 8)
        layers: list[Any] = []
        if expanded != cnf.input_channels:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels, expanded, 1, norm_layer=norm_layer, activation_layer=act
                )
            )
        layers.append(
            Conv2dNormActivation(
                expanded,
                expanded,
                cnf.kernel,
                stride=cnf.stride,
                groups=expanded,
                norm_layer=norm_layer,
                activation_layer=act,
            )
        )
        squeeze = max(1, cnf.input_channels // 4)
        layers.append(
            SqueezeExcitation(expanded, squeeze, activation=partial(nn.SiLU, inplace=True))
        )
        layers.append(
            Conv2dNormActivation(
                expanded, cnf.out_channels, 1, norm_layer=norm_layer, activation_layer=None
            )
        )
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, x: Any) -> Any:
        y = self.block(x)
        return self.stochastic_depth(y) + x if self.use_res_connect else y


class FusedMBConv(nn.Module):
    """Expand with a full kxk conv (no depthwise, no squeeze-excite), project 1x1."""

    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer: Any) -> None:
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError(f"illegal stride value: expected 1 or 2, got {cnf.stride}")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.SiLU
        expanded = make_divisible(cnf.input_channels * cnf.expand_ratio, 8)
        layers: list[Any] = []
        if expanded != cnf.input_channels:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels,
                    expanded,
                    cnf.kernel,
                    stride=cnf.stride,
                    norm_layer=norm_layer,
                    activation_layer=act,
                )
            )
            layers.append(
                Conv2dNormActivation(
                    expanded, cnf.out_channels, 1, norm_layer=norm_layer, activation_layer=None
                )
            )
        else:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels,
                    cnf.out_channels,
                    cnf.kernel,
                    stride=cnf.stride,
                    norm_layer=norm_layer,
                    activation_layer=act,
                )
            )
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, x: Any) -> Any:
        y = self.block(x)
        return self.stochastic_depth(y) + x if self.use_res_connect else y


class EfficientNet(nn.Module):
    """EfficientNet V1 and V2 from a stage table (``torchvision.models.EfficientNet``); the
    stochastic-depth probability grows linearly from 0 to ``stochastic_depth_prob``."""

    def __init__(
        self,
        inverted_residual_setting: list[MBConvConfig],
        dropout: float,
        stochastic_depth_prob: float = 0.2,
        num_classes: int = 1000,
        norm_layer: Any = None,
        last_channel: int | None = None,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        norm = nn.BatchNorm2d if norm_layer is None else norm_layer
        first = inverted_residual_setting[0].input_channels
        layers: list[Any] = [
            Conv2dNormActivation(
                in_channels, first, 3, stride=2, norm_layer=norm, activation_layer=nn.SiLU
            )
        ]
        total = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage: list[Any] = []
            for _ in range(cnf.num_layers):
                bc = copy.copy(cnf)
                if stage:
                    bc.input_channels, bc.stride = bc.out_channels, 1
                p = stochastic_depth_prob * float(block_id) / total
                stage.append((FusedMBConv if bc.fused else MBConv)(bc, p, norm))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(
            Conv2dNormActivation(last_in, last_out, 1, norm_layer=norm, activation_layer=nn.SiLU)
        )
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout, inplace=True), nn.Linear(last_out, num_classes)
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                r = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -r, r)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _v1(
    width: float, depth: float, dropout: float, kwargs: dict[str, Any], norm_layer: Any = None
) -> EfficientNet:
    b = partial(MBConvConfig, width_mult=width, depth_mult=depth)
    setting = [
        b(1, 3, 1, 32, 16, 1),
        b(6, 3, 2, 16, 24, 2),
        b(6, 5, 2, 24, 40, 2),
        b(6, 3, 2, 40, 80, 3),
        b(6, 5, 1, 80, 112, 3),
        b(6, 5, 2, 112, 192, 4),
        b(6, 3, 1, 192, 320, 1),
    ]
    kwargs.setdefault("dropout", dropout)
    return EfficientNet(setting, norm_layer=norm_layer, **kwargs)


_BN_TF = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)  # B5-B7: TensorFlow's BN settings


@classifier(_PAPER_V1, 5_288_548, (3, 224, 224))
def efficientnet_b0(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B0, 5,288,548 parameters for 1000 classes."""
    return _v1(1.0, 1.0, 0.2, kwargs)


@classifier(_PAPER_V1, 7_794_184, (3, 240, 240))
def efficientnet_b1(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B1, 7,794,184 parameters for 1000 classes."""
    return _v1(1.0, 1.1, 0.2, kwargs)


@classifier(_PAPER_V1, 9_109_994, (3, 288, 288))
def efficientnet_b2(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B2, 9,109,994 parameters for 1000 classes."""
    return _v1(1.1, 1.2, 0.3, kwargs)


@classifier(_PAPER_V1, 12_233_232, (3, 300, 300))
def efficientnet_b3(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B3, 12,233,232 parameters for 1000 classes."""
    return _v1(1.2, 1.4, 0.3, kwargs)


@classifier(_PAPER_V1, 19_341_616, (3, 380, 380))
def efficientnet_b4(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B4, 19,341,616 parameters for 1000 classes."""
    return _v1(1.4, 1.8, 0.4, kwargs)


@classifier(_PAPER_V1, 30_389_784, (3, 456, 456))
def efficientnet_b5(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B5, 30,389,784 parameters for 1000 classes."""
    return _v1(1.6, 2.2, 0.4, kwargs, _BN_TF)


@classifier(_PAPER_V1, 43_040_704, (3, 528, 528))
def efficientnet_b6(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B6, 43,040,704 parameters for 1000 classes."""
    return _v1(1.8, 2.6, 0.5, kwargs, _BN_TF)


@classifier(_PAPER_V1, 66_347_960, (3, 600, 600))
def efficientnet_b7(**kwargs: Any) -> EfficientNet:
    """EfficientNet-B7, 66,347,960 parameters for 1000 classes."""
    return _v1(2.0, 3.1, 0.5, kwargs, _BN_TF)


def _v2(rows: Sequence[tuple[int, ...]], dropout: float, kwargs: dict[str, Any]) -> EfficientNet:
    setting = [(FusedMBConvConfig if fused else MBConvConfig)(*row) for fused, *row in rows]
    kwargs.setdefault("dropout", dropout)
    return EfficientNet(
        setting, last_channel=1280, norm_layer=partial(nn.BatchNorm2d, eps=1e-03), **kwargs
    )


@classifier(_PAPER_V2, 21_458_488, (3, 384, 384))
def efficientnet_v2_s(**kwargs: Any) -> EfficientNet:
    """EfficientNetV2-S, 21,458,488 parameters for 1000 classes."""
    rows = [
        (1, 1, 3, 1, 24, 24, 2),
        (1, 4, 3, 2, 24, 48, 4),
        (1, 4, 3, 2, 48, 64, 4),
        (0, 4, 3, 2, 64, 128, 6),
        (0, 6, 3, 1, 128, 160, 9),
        (0, 6, 3, 2, 160, 256, 15),
    ]
    return _v2(rows, 0.2, kwargs)


@classifier(_PAPER_V2, 54_139_356, (3, 480, 480))
def efficientnet_v2_m(**kwargs: Any) -> EfficientNet:
    """EfficientNetV2-M, 54,139,356 parameters for 1000 classes."""
    rows = [
        (1, 1, 3, 1, 24, 24, 3),
        (1, 4, 3, 2, 24, 48, 5),
        (1, 4, 3, 2, 48, 80, 5),
        (0, 4, 3, 2, 80, 160, 7),
        (0, 6, 3, 1, 160, 176, 14),
        (0, 6, 3, 2, 176, 304, 18),
        (0, 6, 3, 1, 304, 512, 5),
    ]
    return _v2(rows, 0.3, kwargs)


@classifier(_PAPER_V2, 118_515_272, (3, 480, 480))
def efficientnet_v2_l(**kwargs: Any) -> EfficientNet:
    """EfficientNetV2-L, 118,515,272 parameters for 1000 classes."""
    rows = [
        (1, 1, 3, 1, 32, 32, 4),
        (1, 4, 3, 2, 32, 64, 7),
        (1, 4, 3, 2, 64, 96, 7),
        (0, 4, 3, 2, 96, 192, 10),
        (0, 6, 3, 1, 192, 224, 19),
        (0, 6, 3, 2, 224, 384, 25),
        (0, 6, 3, 1, 384, 640, 7),
    ]
    return _v2(rows, 0.4, kwargs)
