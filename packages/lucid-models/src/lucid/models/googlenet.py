"""GoogLeNet, Inception v1 (Szegedy et al., "Going Deeper with Convolutions", CVPR 2015), in
torchvision's layout: batch-normalised convolutions and two auxiliary classifiers, whose
outputs come with the main one in training mode (``GoogLeNetOutputs``)."""

from __future__ import annotations

from typing import Any, NamedTuple

import lucid
from lucid import nn
from lucid.models._registry import register_model

_PAPER = 'Szegedy et al., "Going Deeper with Convolutions", CVPR 2015'


class GoogLeNetOutputs(NamedTuple):
    """Training-mode outputs of :class:`GoogLeNet` with ``aux_logits=True``."""

    logits: Any
    aux_logits2: Any
    aux_logits1: Any


class BasicConv2d(nn.Module):
    """Conv2d (no bias), BatchNorm2d (eps 0.001), ReLU."""

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x: Any) -> Any:
        return nn.functional.relu(self.bn(self.conv(x)))


class Inception(nn.Module):
    """Four branches (1x1; 1x1-3x3; 1x1-3x3, torchvision's in place of 5x5; pool-1x1),
    concatenated."""

    def __init__(
        self,
        in_channels: int,
        ch1x1: int,
        ch3x3red: int,
        ch3x3: int,
        ch5x5red: int,
        ch5x5: int,
        pool_proj: int,
    ) -> None:
        super().__init__()
        c = BasicConv2d
        self.branch1 = c(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(
            c(in_channels, ch3x3red, kernel_size=1), c(ch3x3red, ch3x3, kernel_size=3, padding=1)
        )
        self.branch3 = nn.Sequential(
            c(in_channels, ch5x5red, kernel_size=1), c(ch5x5red, ch5x5, kernel_size=3, padding=1)
        )
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
            c(in_channels, pool_proj, kernel_size=1),
        )

    def forward(self, x: Any) -> Any:
        branches = [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)]
        return lucid.cat(branches, 1)


class InceptionAux(nn.Module):
    """Auxiliary classifier: 4x4 average pool, 1x1 conv, two linear layers."""

    def __init__(self, in_channels: int, num_classes: int, dropout: float = 0.7) -> None:
        super().__init__()
        self.conv = BasicConv2d(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x: Any) -> Any:
        x = self.conv(nn.functional.adaptive_avg_pool2d(x, (4, 4))).flatten(1)
        return self.fc2(self.dropout(nn.functional.relu(self.fc1(x))))


class GoogLeNet(nn.Module):
    """GoogLeNet (``torchvision.models.GoogLeNet``): in training mode with ``aux_logits`` it
    returns ``GoogLeNetOutputs(logits, aux_logits2, aux_logits1)``, else the logits."""

    def __init__(
        self,
        num_classes: int = 1000,
        aux_logits: bool = True,
        transform_input: bool = False,
        dropout: float = 0.2,
        dropout_aux: float = 0.7,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        c = BasicConv2d
        self.conv1 = c(in_channels, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = c(64, 64, kernel_size=1)
        self.conv3 = c(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
        self.aux1 = InceptionAux(512, num_classes, dropout_aux) if aux_logits else None
        self.aux2 = InceptionAux(528, num_classes, dropout_aux) if aux_logits else None
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(1024, num_classes)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, mean=0.0, std=0.01, a=-2, b=2)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        if self.transform_input:  # ImageNet-normalised input to the [-1, 1] of the original
            x = lucid.cat(
                [
                    x[:, 0:1] * (0.229 / 0.5) + (0.485 - 0.5) / 0.5,
                    x[:, 1:2] * (0.224 / 0.5) + (0.456 - 0.5) / 0.5,
                    x[:, 2:3] * (0.225 / 0.5) + (0.406 - 0.5) / 0.5,
                ],
                1,
            )
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        x = self.inception4a(x)
        aux = self.training and self.aux1 is not None and self.aux2 is not None
        aux1 = self.aux1(x) if aux and self.aux1 is not None else None
        x = self.inception4d(self.inception4c(self.inception4b(x)))
        aux2 = self.aux2(x) if aux and self.aux2 is not None else None
        x = self.maxpool4(self.inception4e(x))
        x = self.inception5b(self.inception5a(x))
        x = self.fc(self.dropout(self.avgpool(x).flatten(1)))
        return GoogLeNetOutputs(x, aux2, aux1) if aux else x


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=13_004_888,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def googlenet(**kwargs: Any) -> GoogLeNet:
    """GoogLeNet with its two auxiliary classifiers, 13,004,888 parameters for 1000 classes
    (6,624,904 with ``aux_logits=False``)."""
    return GoogLeNet(**kwargs)
