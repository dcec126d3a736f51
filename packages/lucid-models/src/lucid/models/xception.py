"""Xception (Chollet, "Xception: Deep Learning with Depthwise Separable Convolutions", CVPR
2017): the entry flow, eight middle-flow blocks and the exit flow of depthwise-separable
convolutions with residual connections (the paper's Figure 5), each convolution followed by
BatchNorm. torchvision has no Xception: the count is the paper's, 22,855,952 parameters
(its Table 3), which the builder reproduces exactly."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import classifier

_PAPER = 'Chollet, "Xception: Deep Learning with Depthwise Separable Convolutions", CVPR 2017'


class SeparableConv2d(nn.Module):
    """A depthwise 3x3 convolution, then a pointwise 1x1 one; no biases."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
        self.pointwise = nn.Conv2d(cin, cout, 1, bias=False)

    def forward(self, x: Any) -> Any:
        return self.pointwise(self.depthwise(x))


def _sep(cin: int, cout: int, relu_first: bool = True) -> list[Any]:
    return ([nn.ReLU()] if relu_first else []) + [SeparableConv2d(cin, cout), nn.BatchNorm2d(cout)]


class Block(nn.Module):
    """Separable convolutions (ReLU before each), then a 3x3 stride-2 max-pool when
    ``stride == 2``; the shortcut is a strided 1x1 conv + BN when the shape changes."""

    def __init__(self, cin: int, channels: list[int], stride: int, relu_first: bool = True) -> None:
        super().__init__()
        layers: list[Any] = []
        c = cin
        for i, cout in enumerate(channels):
            layers += _sep(c, cout, relu_first or i > 0)
            c = cout
        if stride == 2:
            layers.append(nn.MaxPool2d(3, stride=2, padding=1))
        self.body = nn.Sequential(*layers)
        self.skip = None
        if stride != 1 or cin != c:
            self.skip = nn.Sequential(
                nn.Conv2d(cin, c, 1, stride=stride, bias=False), nn.BatchNorm2d(c)
            )

    def forward(self, x: Any) -> Any:
        return self.body(x) + (x if self.skip is None else self.skip(x))


class Xception(nn.Module):
    """Xception for 299x299 inputs (any size of at least 71x71 works)."""

    def __init__(self, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, 32, 3, stride=2, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
        )
        self.entry = nn.Sequential(
            Block(64, [128, 128], 2, relu_first=False),
            Block(128, [256, 256], 2),
            Block(256, [728, 728], 2),
        )
        self.middle = nn.Sequential(*[Block(728, [728, 728, 728], 1) for _ in range(8)])
        self.exit = nn.Sequential(
            Block(728, [728, 1024], 2),
            SeparableConv2d(1024, 1536),
            nn.BatchNorm2d(1536),
            nn.ReLU(),
            SeparableConv2d(1536, 2048),
            nn.BatchNorm2d(2048),
            nn.ReLU(),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        x = self.exit(self.middle(self.entry(self.stem(x))))
        return self.fc(self.avgpool(x).flatten(1))


@classifier(_PAPER, 22_855_952, (3, 299, 299), reference="paper")
def xception(**kwargs: Any) -> Xception:
    """Xception, 22,855,952 parameters for 1000 classes (the paper's count, exactly)."""
    return Xception(**kwargs)
