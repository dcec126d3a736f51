"""Inception v4 (Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of Residual
Connections on Learning", AAAI 2017), in timm's layout: the stem (3a-5a), four Inception-A,
a Reduction-A, seven Inception-B, a Reduction-B and three Inception-C blocks in ``features``,
then ``last_linear``. Every conv is conv-BN(eps 1e-3)-ReLU without padding unless given."""

from __future__ import annotations

from functools import partial
from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._timm_layers import ConvNormAct

PAPER = (
    'Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of Residual Connections on '
    'Learning", AAAI 2017'
)

# timm's conv block of the Inception v4 / Inception-ResNet families: no padding unless given,
# BatchNorm with eps 1e-3
conv_bn = partial(ConvNormAct, padding=0, eps=1e-3)


def _pool_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.AvgPool2d(3, 1, padding=1, count_include_pad=False), conv_bn(cin, cout))


class Mixed3a(nn.Module):
    """Stride-2 max pool and stride-2 3x3 conv side by side (64 -> 160 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxpool = nn.MaxPool2d(3, stride=2)
        self.conv = conv_bn(64, 96, 3, 2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.maxpool(x), self.conv(x)], 1)


class Mixed4a(nn.Module):
    """1x1-3x3 and 1x1-1x7-7x1-3x3 branches (160 -> 192 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = nn.Sequential(conv_bn(160, 64, 1), conv_bn(64, 96, 3))
        self.branch1 = nn.Sequential(
            conv_bn(160, 64, 1),
            conv_bn(64, 64, (1, 7), padding=(0, 3)),
            conv_bn(64, 64, (7, 1), padding=(3, 0)),
            conv_bn(64, 96, 3),
        )

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x)], 1)


class Mixed5a(nn.Module):
    """Stride-2 3x3 conv and stride-2 max pool side by side (192 -> 384 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = conv_bn(192, 192, 3, 2)
        self.maxpool = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.conv(x), self.maxpool(x)], 1)


class InceptionA(nn.Module):
    """Inception-A (35x35 grid): 1x1, 1x1-3x3, 1x1-3x3-3x3 and pool-1x1 branches."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(384, 96, 1)
        self.branch1 = nn.Sequential(conv_bn(384, 64, 1), conv_bn(64, 96, 3, padding=1))
        self.branch2 = nn.Sequential(
            conv_bn(384, 64, 1), conv_bn(64, 96, 3, padding=1), conv_bn(96, 96, 3, padding=1)
        )
        self.branch3 = _pool_conv(384, 96)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)], 1)


class ReductionA(nn.Module):
    """Reduction-A (35 -> 17): stride-2 3x3, 1x1-3x3-3x3/2 and max-pool branches."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(384, 384, 3, 2)
        self.branch1 = nn.Sequential(
            conv_bn(384, 192, 1), conv_bn(192, 224, 3, padding=1), conv_bn(224, 256, 3, 2)
        )
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1)


class InceptionB(nn.Module):
    """Inception-B (17x17 grid): factorised 7x7 branches."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(1024, 384, 1)
        self.branch1 = nn.Sequential(
            conv_bn(1024, 192, 1),
            conv_bn(192, 224, (1, 7), padding=(0, 3)),
            conv_bn(224, 256, (7, 1), padding=(3, 0)),
        )
        self.branch2 = nn.Sequential(
            conv_bn(1024, 192, 1),
            conv_bn(192, 192, (7, 1), padding=(3, 0)),
            conv_bn(192, 224, (1, 7), padding=(0, 3)),
            conv_bn(224, 224, (7, 1), padding=(3, 0)),
            conv_bn(224, 256, (1, 7), padding=(0, 3)),
        )
        self.branch3 = _pool_conv(1024, 128)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)], 1)


class ReductionB(nn.Module):
    """Reduction-B (17 -> 8): 1x1-3x3/2, 1x1-1x7-7x1-3x3/2 and max-pool branches."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = nn.Sequential(conv_bn(1024, 192, 1), conv_bn(192, 192, 3, 2))
        self.branch1 = nn.Sequential(
            conv_bn(1024, 256, 1),
            conv_bn(256, 256, (1, 7), padding=(0, 3)),
            conv_bn(256, 320, (7, 1), padding=(3, 0)),
            conv_bn(320, 320, 3, 2),
        )
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1)


class InceptionC(nn.Module):
    """Inception-C (8x8 grid): branches that fork into 1x3 and 3x1 convs."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(1536, 256, 1)
        self.branch1_0 = conv_bn(1536, 384, 1)
        self.branch1_1a = conv_bn(384, 256, (1, 3), padding=(0, 1))
        self.branch1_1b = conv_bn(384, 256, (3, 1), padding=(1, 0))
        self.branch2_0 = conv_bn(1536, 384, 1)
        self.branch2_1 = conv_bn(384, 448, (3, 1), padding=(1, 0))
        self.branch2_2 = conv_bn(448, 512, (1, 3), padding=(0, 1))
        self.branch2_3a = conv_bn(512, 256, (1, 3), padding=(0, 1))
        self.branch2_3b = conv_bn(512, 256, (3, 1), padding=(1, 0))
        self.branch3 = _pool_conv(1536, 256)

    def forward(self, x: Any) -> Any:
        x1 = self.branch1_0(x)
        x2 = self.branch2_2(self.branch2_1(self.branch2_0(x)))
        return lucid.cat(
            [
                self.branch0(x),
                self.branch1_1a(x1),
                self.branch1_1b(x1),
                self.branch2_3a(x2),
                self.branch2_3b(x2),
                self.branch3(x),
            ],
            1,
        )


class InceptionV4(nn.Module):
    """Inception v4 (timm's ``InceptionV4``); the smallest input it takes is 75x75."""

    def __init__(
        self, num_classes: int = 1000, in_channels: int = 3, drop_rate: float = 0.0
    ) -> None:
        super().__init__()
        self.num_features = 1536
        layers: list[nn.Module] = [
            conv_bn(in_channels, 32, 3, 2),
            conv_bn(32, 32, 3),
            conv_bn(32, 64, 3, padding=1),
            Mixed3a(),
            Mixed4a(),
            Mixed5a(),
        ]
        layers += [InceptionA() for _ in range(4)]
        layers += [ReductionA()]
        layers += [InceptionB() for _ in range(7)]
        layers += [ReductionB()]
        layers += [InceptionC() for _ in range(3)]
        self.features = nn.Sequential(*layers)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.head_drop = nn.Dropout(drop_rate)
        self.last_linear = nn.Linear(self.num_features, num_classes)

    def forward_features(self, x: Any) -> Any:
        """The 1536-channel feature map before the pooling."""
        return self.features(x)

    def forward(self, x: Any) -> Any:
        x = self.global_pool(self.forward_features(x)).flatten(1)
        return self.last_linear(self.head_drop(x))


@classifier(PAPER, 42_679_816, (3, 299, 299), reference="timm")
def inception_v4(**kwargs: Any) -> InceptionV4:
    """Inception v4, 42,679,816 parameters for 1000 classes."""
    return InceptionV4(**kwargs)
