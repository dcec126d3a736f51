"""MobileNetV3-Small and -Large (Howard et al., "Searching for MobileNetV3", ICCV 2019), in
torchvision's layout."""

from __future__ import annotations

from functools import partial
from typing import Any

from lucid import nn
from lucid.models._layers import Conv2dNormActivation, SqueezeExcitation, make_divisible
from lucid.models._registry import classifier

_PAPER = 'Howard et al., "Searching for MobileNetV3", ICCV 2019'


class InvertedResidualConfig:
    """One bottleneck of the table: channels scaled by ``width_mult`` to multiples of 8."""

    def __init__(
        self,
        input_channels: int,
        kernel: int,
        expanded_channels: int,
        out_channels: int,
        use_se: bool,
        activation: str,
        stride: int,
        dilation: int,
        width_mult: float,
    ) -> None:
        self.input_channels = make_divisible(input_channels * width_mult, 8)
        self.kernel = kernel
        self.expanded_channels = make_divisible(expanded_channels * width_mult, 8)
        self.out_channels = make_divisible(out_channels * width_mult, 8)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation


class InvertedResidual(nn.Module):
    """Expand 1x1, depthwise kxk, squeeze-excite (hard-sigmoid gate), project 1x1."""

    def __init__(self, cnf: InvertedResidualConfig, norm_layer: Any) -> None:
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError(f"illegal stride value: expected 1 or 2, got {cnf.stride}")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers: list[Any] = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(
                Conv2dNormActivation(
                    cnf.input_channels,
                    cnf.expanded_channels,
                    1,
                    norm_layer=norm_layer,
                    activation_layer=act,
                )
            )
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels,
                cnf.expanded_channels,
                cnf.kernel,
                stride=1 if cnf.dilation > 1 else cnf.stride,
                dilation=cnf.dilation,
                groups=cnf.expanded_channels,
                norm_layer=norm_layer,
                activation_layer=act,
            )
        )
        if cnf.use_se:
            squeeze = make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(
                SqueezeExcitation(cnf.expanded_channels, squeeze, scale_activation=nn.Hardsigmoid)
            )
        layers.append(
            Conv2dNormActivation(
                cnf.expanded_channels,
                cnf.out_channels,
                1,
                norm_layer=norm_layer,
                activation_layer=None,
            )
        )
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1  # a stage's first block (the segmentation heads find them)

    def forward(self, x: Any) -> Any:
        y = self.block(x)
        return y + x if self.use_res_connect else y


class MobileNetV3(nn.Module):
    """MobileNetV3 from a bottleneck table (``torchvision.models.MobileNetV3``)."""

    def __init__(
        self,
        inverted_residual_setting: list[InvertedResidualConfig],
        last_channel: int,
        num_classes: int = 1000,
        dropout: float = 0.2,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers: list[Any] = [
            Conv2dNormActivation(
                in_channels, first, 3, stride=2, norm_layer=norm, activation_layer=nn.Hardswish
            )
        ]
        layers += [InvertedResidual(cnf, norm) for cnf in inverted_residual_setting]
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(
            Conv2dNormActivation(
                last_in, last_out, 1, norm_layer=norm, activation_layer=nn.Hardswish
            )
        )
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(last_out, last_channel),
            nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True),
            nn.Linear(last_channel, num_classes),
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
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _conf(
    arch: str, width_mult: float = 1.0, reduced_tail: bool = False, dilated: bool = False
) -> tuple[list[InvertedResidualConfig], int]:
    """torchvision's ``_mobilenet_v3_conf``: ``dilated`` dilates the last stage instead of
    striding it (the segmentation backbones), ``reduced_tail`` halves its channels."""
    b = partial(InvertedResidualConfig, width_mult=width_mult)
    rd = 2 if reduced_tail else 1
    d = 2 if dilated else 1
    if arch == "large":
        rows: list[tuple[Any, ...]] = [
            (16, 3, 16, 16, False, "RE", 1),
            (16, 3, 64, 24, False, "RE", 2),
            (24, 3, 72, 24, False, "RE", 1),
            (24, 5, 72, 40, True, "RE", 2),
            (40, 5, 120, 40, True, "RE", 1),
            (40, 5, 120, 40, True, "RE", 1),
            (40, 3, 240, 80, False, "HS", 2),
            (80, 3, 200, 80, False, "HS", 1),
            (80, 3, 184, 80, False, "HS", 1),
            (80, 3, 184, 80, False, "HS", 1),
            (80, 3, 480, 112, True, "HS", 1),
            (112, 3, 672, 112, True, "HS", 1),
            (112, 5, 672, 160 // rd, True, "HS", 2, d),
            (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, d),
            (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, d),
        ]
        last = 1280 // rd
    else:
        rows = [
            (16, 3, 16, 16, True, "RE", 2),
            (16, 3, 72, 24, False, "RE", 2),
            (24, 3, 88, 24, False, "RE", 1),
            (24, 5, 96, 40, True, "HS", 2),
            (40, 5, 240, 40, True, "HS", 1),
            (40, 5, 240, 40, True, "HS", 1),
            (40, 5, 120, 48, True, "HS", 1),
            (48, 5, 144, 48, True, "HS", 1),
            (48, 5, 288, 96 // rd, True, "HS", 2, d),
            (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, d),
            (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, d),
        ]
        last = 1024 // rd
    setting = []
    for row in rows:
        i, k, e, o, se, a, s = row[:7]
        setting.append(b(i, k, e, o, se, a, s, row[7] if len(row) > 7 else 1))
    return setting, make_divisible(last * width_mult, 8)


@classifier(_PAPER, 5_483_032)
def mobilenet_v3_large(
    reduced_tail: bool = False, dilated: bool = False, **kwargs: Any
) -> MobileNetV3:
    """MobileNetV3-Large, 5,483,032 parameters for 1000 classes."""
    return MobileNetV3(*_conf("large", reduced_tail=reduced_tail, dilated=dilated), **kwargs)


@classifier(_PAPER, 2_542_856)
def mobilenet_v3_small(
    reduced_tail: bool = False, dilated: bool = False, **kwargs: Any
) -> MobileNetV3:
    """MobileNetV3-Small, 2,542,856 parameters for 1000 classes."""
    return MobileNetV3(*_conf("small", reduced_tail=reduced_tail, dilated=dilated), **kwargs)
