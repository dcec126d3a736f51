"""Inception v3 (Szegedy et al., "Rethinking the Inception Architecture for Computer Vision",
CVPR 2016), in torchvision's layout (``Conv2d_1a_3x3`` ... ``Mixed_7c``, ``AuxLogits``); in
training mode with ``aux_logits`` it returns ``InceptionOutputs(logits, aux_logits)``."""

from __future__ import annotations

from typing import Any, NamedTuple

import lucid
from lucid import nn
from lucid.models._registry import register_model
from lucid.models.googlenet import BasicConv2d

F = nn.functional
_PAPER = 'Szegedy et al., "Rethinking the Inception Architecture for Computer Vision", CVPR 2016'


class InceptionOutputs(NamedTuple):
    """Training-mode outputs of :class:`Inception3` with ``aux_logits=True``."""

    logits: Any
    aux_logits: Any


def _chain(x: Any, *layers: Any) -> Any:
    for layer in layers:
        x = layer(x)
    return x


def _avg3(x: Any) -> Any:
    return F.avg_pool2d(x, kernel_size=3, stride=1, padding=1)


class InceptionA(nn.Module):
    """35x35 block: 1x1, 5x5, double 3x3 and pooled branches."""

    def __init__(self, in_channels: int, pool_features: int) -> None:
        super().__init__()
        c = BasicConv2d
        self.branch1x1 = c(in_channels, 64, kernel_size=1)
        self.branch5x5_1 = c(in_channels, 48, kernel_size=1)
        self.branch5x5_2 = c(48, 64, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = c(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = c(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = c(96, 96, kernel_size=3, padding=1)
        self.branch_pool = c(in_channels, pool_features, kernel_size=1)

    def forward(self, x: Any) -> Any:
        return lucid.cat(
            [
                self.branch1x1(x),
                _chain(x, self.branch5x5_1, self.branch5x5_2),
                _chain(x, self.branch3x3dbl_1, self.branch3x3dbl_2, self.branch3x3dbl_3),
                self.branch_pool(_avg3(x)),
            ],
            1,
        )


class InceptionB(nn.Module):
    """Grid reduction 35 -> 17."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        c = BasicConv2d
        self.branch3x3 = c(in_channels, 384, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = c(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = c(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = c(96, 96, kernel_size=3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat(
            [
                self.branch3x3(x),
                _chain(x, self.branch3x3dbl_1, self.branch3x3dbl_2, self.branch3x3dbl_3),
                F.max_pool2d(x, kernel_size=3, stride=2),
            ],
            1,
        )


class InceptionC(nn.Module):
    """17x17 block with factorised 7x7 convolutions (1x7 then 7x1)."""

    def __init__(self, in_channels: int, channels_7x7: int) -> None:
        super().__init__()
        c, c7 = BasicConv2d, channels_7x7
        self.branch1x1 = c(in_channels, 192, kernel_size=1)
        self.branch7x7_1 = c(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = c(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = c(c7, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = c(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = c(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = c(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = c(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = c(c7, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = c(in_channels, 192, kernel_size=1)

    def forward(self, x: Any) -> Any:
        return lucid.cat(
            [
                self.branch1x1(x),
                _chain(x, self.branch7x7_1, self.branch7x7_2, self.branch7x7_3),
                _chain(
                    x,
                    self.branch7x7dbl_1,
                    self.branch7x7dbl_2,
                    self.branch7x7dbl_3,
                    self.branch7x7dbl_4,
                    self.branch7x7dbl_5,
                ),
                self.branch_pool(_avg3(x)),
            ],
            1,
        )


class InceptionD(nn.Module):
    """Grid reduction 17 -> 8."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        c = BasicConv2d
        self.branch3x3_1 = c(in_channels, 192, kernel_size=1)
        self.branch3x3_2 = c(192, 320, kernel_size=3, stride=2)
        self.branch7x7x3_1 = c(in_channels, 192, kernel_size=1)
        self.branch7x7x3_2 = c(192, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = c(192, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = c(192, 192, kernel_size=3, stride=2)

    def forward(self, x: Any) -> Any:
        return lucid.cat(
            [
                _chain(x, self.branch3x3_1, self.branch3x3_2),
                _chain(
                    x,
                    self.branch7x7x3_1,
                    self.branch7x7x3_2,
                    self.branch7x7x3_3,
                    self.branch7x7x3_4,
                ),
                F.max_pool2d(x, kernel_size=3, stride=2),
            ],
            1,
        )


class InceptionE(nn.Module):
    """8x8 block with expanded filter banks (1x3 and 3x1 side by side)."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        c = BasicConv2d
        self.branch1x1 = c(in_channels, 320, kernel_size=1)
        self.branch3x3_1 = c(in_channels, 384, kernel_size=1)
        self.branch3x3_2a = c(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = c(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = c(in_channels, 448, kernel_size=1)
        self.branch3x3dbl_2 = c(448, 384, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = c(384, 384, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = c(384, 384, kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = c(in_channels, 192, kernel_size=1)

    def forward(self, x: Any) -> Any:
        a = self.branch3x3_1(x)
        b = _chain(x, self.branch3x3dbl_1, self.branch3x3dbl_2)
        return lucid.cat(
            [
                self.branch1x1(x),
                lucid.cat([self.branch3x3_2a(a), self.branch3x3_2b(a)], 1),
                lucid.cat([self.branch3x3dbl_3a(b), self.branch3x3dbl_3b(b)], 1),
                self.branch_pool(_avg3(x)),
            ],
            1,
        )


class InceptionAux(nn.Module):
    """Auxiliary classifier on the 17x17 grid."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.conv0 = BasicConv2d(in_channels, 128, kernel_size=1)
        self.conv1 = BasicConv2d(128, 768, kernel_size=5)
        self.fc = nn.Linear(768, num_classes)

    def forward(self, x: Any) -> Any:
        x = self.conv1(self.conv0(F.avg_pool2d(x, kernel_size=5, stride=3)))
        return self.fc(F.adaptive_avg_pool2d(x, (1, 1)).flatten(1))


class Inception3(nn.Module):
    """Inception v3 (``torchvision.models.Inception3``); inputs of at least 75x75 (299x299 as
    trained; the auxiliary head needs at least 139x139)."""

    def __init__(
        self,
        num_classes: int = 1000,
        aux_logits: bool = True,
        transform_input: bool = False,
        dropout: float = 0.5,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        c = BasicConv2d
        self.Conv2d_1a_3x3 = c(in_channels, 32, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = c(32, 32, kernel_size=3)
        self.Conv2d_2b_3x3 = c(32, 64, kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = c(64, 80, kernel_size=1)
        self.Conv2d_4a_3x3 = c(80, 192, kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = InceptionA(192, pool_features=32)
        self.Mixed_5c = InceptionA(256, pool_features=64)
        self.Mixed_5d = InceptionA(288, pool_features=64)
        self.Mixed_6a = InceptionB(288)
        self.Mixed_6b = InceptionC(768, channels_7x7=128)
        self.Mixed_6c = InceptionC(768, channels_7x7=160)
        self.Mixed_6d = InceptionC(768, channels_7x7=160)
        self.Mixed_6e = InceptionC(768, channels_7x7=192)
        self.AuxLogits = InceptionAux(768, num_classes) if aux_logits else None
        self.Mixed_7a = InceptionD(768)
        self.Mixed_7b = InceptionE(1280)
        self.Mixed_7c = InceptionE(2048)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(2048, num_classes)
        stddev = {}
        if self.AuxLogits is not None:
            stddev = {id(self.AuxLogits.conv1.conv): 0.01, id(self.AuxLogits.fc): 0.001}
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                std = stddev.get(id(m), 0.1)
                nn.init.trunc_normal_(m.weight, mean=0.0, std=std, a=-2, b=2)
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
        x = _chain(
            x,
            self.Conv2d_1a_3x3,
            self.Conv2d_2a_3x3,
            self.Conv2d_2b_3x3,
            self.maxpool1,
            self.Conv2d_3b_1x1,
            self.Conv2d_4a_3x3,
            self.maxpool2,
            self.Mixed_5b,
            self.Mixed_5c,
            self.Mixed_5d,
            self.Mixed_6a,
            self.Mixed_6b,
            self.Mixed_6c,
            self.Mixed_6d,
            self.Mixed_6e,
        )
        aux = self.AuxLogits(x) if self.training and self.AuxLogits is not None else None
        x = _chain(x, self.Mixed_7a, self.Mixed_7b, self.Mixed_7c, self.avgpool, self.dropout)
        x = self.fc(x.flatten(1))
        return InceptionOutputs(x, aux) if aux is not None else x


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=27_161_264,
    input_size=(3, 299, 299),
    reference="torchvision",
)
def inception_v3(**kwargs: Any) -> Inception3:
    """Inception v3 with its auxiliary classifier, 27,161,264 parameters for 1000 classes
    (23,834,568 with ``aux_logits=False``)."""
    return Inception3(**kwargs)
