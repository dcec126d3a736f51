"""MobileNet v1 at width multipliers 1.0, 0.75, 0.5 and 0.25 (Howard et al., "MobileNets:
Efficient Convolutional Neural Networks for Mobile Vision Applications", arXiv 2017): a 3x3
stride-2 convolution, then 13 depthwise-separable convolutions (each conv followed by
BatchNorm and ReLU), average pooling and one linear layer. torchvision has no MobileNet v1: the
counts are the paper's (Table 6: 4.2M, 2.6M, 1.3M, 0.5M at 224x224), which the tests check."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._layers import Conv2dNormActivation
from lucid.models._registry import classifier

_PAPER = (
    'Howard et al., "MobileNets: Efficient Convolutional Neural Networks for Mobile Vision '
    'Applications", arXiv:1704.04861, 2017'
)
# (output channels, stride) of the 13 depthwise-separable layers (the paper's Table 1)
_LAYERS = [
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (512, 1),
    (1024, 2),
    (1024, 1),
]


class DepthwiseSeparable(nn.Sequential):
    """Depthwise 3x3 conv-BN-ReLU, then pointwise 1x1 conv-BN-ReLU."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__(
            Conv2dNormActivation(cin, cin, 3, stride=stride, groups=cin),
            Conv2dNormActivation(cin, cout, 1),
        )


class MobileNetV1(nn.Module):
    """MobileNet v1 with width multiplier ``width_mult`` (channels ``int(c * width_mult)``)."""

    def __init__(
        self,
        width_mult: float = 1.0,
        num_classes: int = 1000,
        dropout: float = 0.0,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if width_mult <= 0:
            raise ValueError(f"width_mult should be greater than 0, got {width_mult}")
        cin = int(32 * width_mult)
        layers: list[Any] = [Conv2dNormActivation(in_channels, cin, 3, stride=2)]
        for c, s in _LAYERS:
            layers.append(DepthwiseSeparable(cin, int(c * width_mult), s))
            cin = int(c * width_mult)
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(cin, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


@classifier(_PAPER, 4_231_976, reference="paper")
def mobilenet_v1(**kwargs: Any) -> MobileNetV1:
    """MobileNet v1 1.0-224, 4,231,976 parameters for 1000 classes (the paper: 4.2M)."""
    return MobileNetV1(1.0, **kwargs)


@classifier(_PAPER, 2_585_560, reference="paper")
def mobilenet_v1_075(**kwargs: Any) -> MobileNetV1:
    """MobileNet v1 0.75-224, 2,585,560 parameters for 1000 classes (the paper: 2.6M)."""
    return MobileNetV1(0.75, **kwargs)


@classifier(_PAPER, 1_331_592, reference="paper")
def mobilenet_v1_050(**kwargs: Any) -> MobileNetV1:
    """MobileNet v1 0.5-224, 1,331,592 parameters for 1000 classes (the paper: 1.3M)."""
    return MobileNetV1(0.5, **kwargs)


@classifier(_PAPER, 470_072, reference="paper")
def mobilenet_v1_025(**kwargs: Any) -> MobileNetV1:
    """MobileNet v1 0.25-224, 470,072 parameters for 1000 classes (the paper: 0.5M)."""
    return MobileNetV1(0.25, **kwargs)
