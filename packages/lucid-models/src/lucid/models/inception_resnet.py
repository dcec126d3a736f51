"""Inception-ResNet v2 (Szegedy et al., "Inception-v4, Inception-ResNet and the Impact of
Residual Connections on Learning", AAAI 2017), in timm's layout: the stem, Mixed-5b, ten
Block35 (scale 0.17), Mixed-6a, twenty Block17 (0.10), Mixed-7a, nine Block8 (0.20) and a last
Block8 without ReLU, a 1x1 conv to 1536 channels and ``classif``. The residual branches end in
a 1x1 conv with a bias, scaled before the addition."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models.inception_v4 import PAPER, conv_bn


class Mixed5b(nn.Module):
    """1x1, 1x1-5x5, 1x1-3x3-3x3 and pool-1x1 branches (192 -> 320 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(192, 96, 1)
        self.branch1 = nn.Sequential(conv_bn(192, 48, 1), conv_bn(48, 64, 5, padding=2))
        self.branch2 = nn.Sequential(
            conv_bn(192, 64, 1), conv_bn(64, 96, 3, padding=1), conv_bn(96, 96, 3, padding=1)
        )
        self.branch3 = nn.Sequential(
            nn.AvgPool2d(3, 1, padding=1, count_include_pad=False), conv_bn(192, 64, 1)
        )

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)], 1)


class Block35(nn.Module):
    """Inception-ResNet-A (35x35 grid, 320 channels)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(320, 32, 1)
        self.branch1 = nn.Sequential(conv_bn(320, 32, 1), conv_bn(32, 32, 3, padding=1))
        self.branch2 = nn.Sequential(
            conv_bn(320, 32, 1), conv_bn(32, 48, 3, padding=1), conv_bn(48, 64, 3, padding=1)
        )
        self.conv2d = nn.Conv2d(128, 320, 1)
        self.act = nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1))
        return self.act(out * self.scale + x)


class Mixed6a(nn.Module):
    """Reduction-A (35 -> 17; 320 -> 1088 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(320, 384, 3, 2)
        self.branch1 = nn.Sequential(
            conv_bn(320, 256, 1), conv_bn(256, 256, 3, padding=1), conv_bn(256, 384, 3, 2)
        )
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1)


class Block17(nn.Module):
    """Inception-ResNet-B (17x17 grid, 1088 channels)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(1088, 192, 1)
        self.branch1 = nn.Sequential(
            conv_bn(1088, 128, 1),
            conv_bn(128, 160, (1, 7), padding=(0, 3)),
            conv_bn(160, 192, (7, 1), padding=(3, 0)),
        )
        self.conv2d = nn.Conv2d(384, 1088, 1)
        self.act = nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x)], 1))
        return self.act(out * self.scale + x)


class Mixed7a(nn.Module):
    """Reduction-B (17 -> 8; 1088 -> 2080 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = nn.Sequential(conv_bn(1088, 256, 1), conv_bn(256, 384, 3, 2))
        self.branch1 = nn.Sequential(conv_bn(1088, 256, 1), conv_bn(256, 288, 3, 2))
        self.branch2 = nn.Sequential(
            conv_bn(1088, 256, 1), conv_bn(256, 288, 3, padding=1), conv_bn(288, 320, 3, 2)
        )
        self.branch3 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)], 1)


class Block8(nn.Module):
    """Inception-ResNet-C (8x8 grid, 2080 channels); the last one has no ReLU."""

    def __init__(self, scale: float = 1.0, no_relu: bool = False) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(2080, 192, 1)
        self.branch1 = nn.Sequential(
            conv_bn(2080, 192, 1),
            conv_bn(192, 224, (1, 3), padding=(0, 1)),
            conv_bn(224, 256, (3, 1), padding=(1, 0)),
        )
        self.conv2d = nn.Conv2d(448, 2080, 1)
        self.relu = None if no_relu else nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x)], 1)) * self.scale + x
        return out if self.relu is None else self.relu(out)


class InceptionResnetV2(nn.Module):
    """Inception-ResNet v2 (timm's ``InceptionResnetV2``); the smallest input is 75x75."""

    def __init__(
        self, num_classes: int = 1000, in_channels: int = 3, drop_rate: float = 0.0
    ) -> None:
        super().__init__()
        self.num_features = 1536
        self.conv2d_1a = conv_bn(in_channels, 32, 3, 2)
        self.conv2d_2a = conv_bn(32, 32, 3)
        self.conv2d_2b = conv_bn(32, 64, 3, padding=1)
        self.maxpool_3a = nn.MaxPool2d(3, stride=2)
        self.conv2d_3b = conv_bn(64, 80, 1)
        self.conv2d_4a = conv_bn(80, 192, 3)
        self.maxpool_5a = nn.MaxPool2d(3, stride=2)
        self.mixed_5b = Mixed5b()
        self.repeat = nn.Sequential(*[Block35(0.17) for _ in range(10)])
        self.mixed_6a = Mixed6a()
        self.repeat_1 = nn.Sequential(*[Block17(0.10) for _ in range(20)])
        self.mixed_7a = Mixed7a()
        self.repeat_2 = nn.Sequential(*[Block8(0.20) for _ in range(9)])
        self.block8 = Block8(no_relu=True)
        self.conv2d_7b = conv_bn(2080, self.num_features, 1)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.head_drop = nn.Dropout(drop_rate)
        self.classif = nn.Linear(self.num_features, num_classes)

    def forward_features(self, x: Any) -> Any:
        """The 1536-channel feature map before the pooling."""
        x = self.conv2d_2b(self.conv2d_2a(self.conv2d_1a(x)))
        x = self.conv2d_4a(self.conv2d_3b(self.maxpool_3a(x)))
        x = self.repeat(self.mixed_5b(self.maxpool_5a(x)))
        x = self.repeat_2(self.mixed_7a(self.repeat_1(self.mixed_6a(x))))
        return self.conv2d_7b(self.block8(x))

    def forward(self, x: Any) -> Any:
        x = self.global_pool(self.forward_features(x)).flatten(1)
        return self.classif(self.head_drop(x))


@classifier(PAPER, 55_843_464, (3, 299, 299), reference="timm")
def inception_resnet_v2(**kwargs: Any) -> InceptionResnetV2:
    """Inception-ResNet v2, 55,843,464 parameters for 1000 classes."""
    return InceptionResnetV2(**kwargs)


# ---- Inception-ResNet v1 ------------------------------------------------------------------
# facenet-pytorch's ``InceptionResnetV1`` (github.com/timesler/facenet-pytorch, 2.6.0), the
# layout of David Sandberg's FaceNet port: the paper's v1 widths (256/896/1792 channels), five
# Block35, ten Block17, five Block8 and a last Block8 without ReLU, then a 512-d bottleneck
# (``last_linear`` without bias, ``last_bn``) and, for classification, ``logits``. The state dict
# keys are facenet-pytorch's, so its checkpoints load unchanged.


class Block35V1(nn.Module):
    """Inception-ResNet-A of v1 (35x35 grid, 256 channels)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(256, 32, 1)
        self.branch1 = nn.Sequential(conv_bn(256, 32, 1), conv_bn(32, 32, 3, padding=1))
        self.branch2 = nn.Sequential(
            conv_bn(256, 32, 1), conv_bn(32, 32, 3, padding=1), conv_bn(32, 32, 3, padding=1)
        )
        self.conv2d = nn.Conv2d(96, 256, 1)
        self.relu = nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1))
        return self.relu(out * self.scale + x)


class Block17V1(nn.Module):
    """Inception-ResNet-B of v1 (17x17 grid, 896 channels)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(896, 128, 1)
        self.branch1 = nn.Sequential(
            conv_bn(896, 128, 1),
            conv_bn(128, 128, (1, 7), padding=(0, 3)),
            conv_bn(128, 128, (7, 1), padding=(3, 0)),
        )
        self.conv2d = nn.Conv2d(256, 896, 1)
        self.relu = nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x)], 1))
        return self.relu(out * self.scale + x)


class Block8V1(nn.Module):
    """Inception-ResNet-C of v1 (8x8 grid, 1792 channels); the last one has no ReLU."""

    def __init__(self, scale: float = 1.0, no_relu: bool = False) -> None:
        super().__init__()
        self.scale = scale
        self.branch0 = conv_bn(1792, 192, 1)
        self.branch1 = nn.Sequential(
            conv_bn(1792, 192, 1),
            conv_bn(192, 192, (1, 3), padding=(0, 1)),
            conv_bn(192, 192, (3, 1), padding=(1, 0)),
        )
        self.conv2d = nn.Conv2d(384, 1792, 1)
        self.relu = None if no_relu else nn.ReLU()

    def forward(self, x: Any) -> Any:
        out = self.conv2d(lucid.cat([self.branch0(x), self.branch1(x)], 1)) * self.scale + x
        return out if self.relu is None else self.relu(out)


class Mixed6aV1(nn.Module):
    """Reduction-A of v1 (35 -> 17; 256 -> 896 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = conv_bn(256, 384, 3, 2)
        self.branch1 = nn.Sequential(
            conv_bn(256, 192, 1), conv_bn(192, 192, 3, padding=1), conv_bn(192, 256, 3, 2)
        )
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x)], 1)


class Mixed7aV1(nn.Module):
    """Reduction-B of v1 (17 -> 8; 896 -> 1792 channels)."""

    def __init__(self) -> None:
        super().__init__()
        self.branch0 = nn.Sequential(conv_bn(896, 256, 1), conv_bn(256, 384, 3, 2))
        self.branch1 = nn.Sequential(conv_bn(896, 256, 1), conv_bn(256, 256, 3, 2))
        self.branch2 = nn.Sequential(
            conv_bn(896, 256, 1), conv_bn(256, 256, 3, padding=1), conv_bn(256, 256, 3, 2)
        )
        self.branch3 = nn.MaxPool2d(3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat([self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)], 1)


class InceptionResnetV1(nn.Module):
    """Inception-ResNet v1 (facenet-pytorch's ``InceptionResnetV1``); the smallest input is 75x75.

    With ``classify=True`` (the default here, as a zoo classifier) the output is the logits of
    ``num_classes`` classes computed from the 512-d embedding; with ``classify=False`` it is the
    L2-normalised embedding itself (FaceNet's use) and the model has no ``logits`` layer.
    """

    def __init__(
        self,
        num_classes: int = 1000,
        in_channels: int = 3,
        classify: bool = True,
        dropout_prob: float = 0.6,
        embedding_dim: int = 512,
    ) -> None:
        super().__init__()
        self.classify = classify
        self.num_features = 1792
        self.conv2d_1a = conv_bn(in_channels, 32, 3, 2)
        self.conv2d_2a = conv_bn(32, 32, 3)
        self.conv2d_2b = conv_bn(32, 64, 3, padding=1)
        self.maxpool_3a = nn.MaxPool2d(3, stride=2)
        self.conv2d_3b = conv_bn(64, 80, 1)
        self.conv2d_4a = conv_bn(80, 192, 3)
        self.conv2d_4b = conv_bn(192, 256, 3, 2)
        self.repeat_1 = nn.Sequential(*[Block35V1(0.17) for _ in range(5)])
        self.mixed_6a = Mixed6aV1()
        self.repeat_2 = nn.Sequential(*[Block17V1(0.10) for _ in range(10)])
        self.mixed_7a = Mixed7aV1()
        self.repeat_3 = nn.Sequential(*[Block8V1(0.20) for _ in range(5)])
        self.block8 = Block8V1(no_relu=True)
        self.avgpool_1a = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(dropout_prob)
        self.last_linear = nn.Linear(self.num_features, embedding_dim, bias=False)
        self.last_bn = nn.BatchNorm1d(embedding_dim, eps=1e-3)
        self.logits = nn.Linear(embedding_dim, num_classes) if classify else None

    def forward_features(self, x: Any) -> Any:
        """The 1792-channel feature map before the pooling."""
        x = self.conv2d_2b(self.conv2d_2a(self.conv2d_1a(x)))
        x = self.conv2d_4b(self.conv2d_4a(self.conv2d_3b(self.maxpool_3a(x))))
        x = self.repeat_2(self.mixed_6a(self.repeat_1(x)))
        return self.block8(self.repeat_3(self.mixed_7a(x)))

    def forward(self, x: Any) -> Any:
        x = self.dropout(self.avgpool_1a(self.forward_features(x))).flatten(1)
        x = self.last_bn(self.last_linear(x))
        if self.logits is None:
            return nn.functional.normalize(x, p=2.0, dim=1)
        return self.logits(x)


@classifier(PAPER, 23_995_624, (3, 160, 160), reference="facenet-pytorch")
def inception_resnet_v1(**kwargs: Any) -> InceptionResnetV1:
    """Inception-ResNet v1, 23,995,624 parameters for 1000 classes (facenet-pytorch 2.6.0's
    ``InceptionResnetV1(classify=True, num_classes=1000)``; 23,482,624 without ``logits``).
    ``classify=False`` gives FaceNet's L2-normalised 512-d embedding."""
    return InceptionResnetV1(**kwargs)
