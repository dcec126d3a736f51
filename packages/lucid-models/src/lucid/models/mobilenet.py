"""MobileNetV2 (Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks",
CVPR 2018), torchvision layout."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model
from lucid.models._weights import init_conv_bn_linear

_PAPER = 'Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks", CVPR 2018'


def _make_divisible(v: float, divisor: int = 8) -> int:
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvBNReLU6(nn.Sequential):
    def __init__(self, cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1):
        super().__init__(
            nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand_ratio: int) -> None:
        super().__init__()
        hidden = int(round(cin * expand_ratio))
        self.use_res_connect = stride == 1 and cin == cout
        layers: list[Any] = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU6(cin, hidden, kernel=1))
        layers += [
            ConvBNReLU6(hidden, hidden, stride=stride, groups=hidden),
            nn.Conv2d(hidden, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.conv = nn.Sequential(*layers)
        self.out_channels = cout

    def forward(self, x: Any) -> Any:
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al. 2018), as ``torchvision.models.MobileNetV2``."""

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, dropout: float = 0.2,
                 in_channels: int = 3) -> None:  # fmt: skip
        super().__init__()
        settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                    [6, 160, 3, 2], [6, 320, 1, 1]]  # fmt: skip
        cin = _make_divisible(32 * width_mult)
        self.last_channel = _make_divisible(1280 * max(1.0, width_mult))
        features: list[Any] = [ConvBNReLU6(in_channels, cin, stride=2)]
        for t, c, n, s in settings:
            cout = _make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        features.append(ConvBNReLU6(cin, self.last_channel, kernel=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(self.last_channel,
                                                                       num_classes))  # fmt: skip
        init_conv_bn_linear(self)

    def forward(self, x: Any) -> Any:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1)).flatten(1)
        return self.classifier(x)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=3_504_872,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def mobilenet_v2(**kwargs: Any) -> MobileNetV2:
    """MobileNetV2 (Sandler et al. 2018), 3,504,872 parameters for 1000 classes."""
    return MobileNetV2(**kwargs)
