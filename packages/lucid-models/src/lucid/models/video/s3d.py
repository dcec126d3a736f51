"""S3D (Xie et al., "Rethinking Spatiotemporal Feature Learning: Speed-Accuracy Trade-offs in
Video Classification", ECCV 2018) in torchvision's layout (``torchvision.models.video.s3d``:
the same state-dict keys). Input ``(N, 3, 16, 224, 224)`` or longer/larger clips."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import lucid
from lucid import nn
from lucid.models._layers import Conv3dNormActivation
from lucid.models._registry import register_model

__all__ = ["S3D", "s3d"]

_PAPER = ('Xie et al., "Rethinking Spatiotemporal Feature Learning: Speed-Accuracy Trade-offs '
          'in Video Classification", ECCV 2018')  # fmt: skip


class TemporalSeparableConv(nn.Sequential):
    """A 1xkxk spatial convolution then a kx1x1 temporal one, each with norm and ReLU."""

    def __init__(self, in_planes: int, out_planes: int, kernel_size: int, stride: int,
                 padding: int, norm_layer: Callable[..., nn.Module]) -> None:  # fmt: skip
        super().__init__(
            Conv3dNormActivation(
                in_planes,
                out_planes,
                (1, kernel_size, kernel_size),
                stride=(1, stride, stride),
                padding=(0, padding, padding),
                bias=False,
                norm_layer=norm_layer,
            ),  # fmt: skip
            Conv3dNormActivation(
                out_planes,
                out_planes,
                (kernel_size, 1, 1),
                stride=(stride, 1, 1),
                padding=(padding, 0, 0),
                bias=False,
                norm_layer=norm_layer,
            ),  # fmt: skip
        )


class SepInceptionBlock3D(nn.Module):
    """An Inception block of separable 3D convolutions: four branches, concatenated."""

    def __init__(
        self,
        in_planes: int,
        b0_out: int,
        b1_mid: int,
        b1_out: int,
        b2_mid: int,
        b2_out: int,
        b3_out: int,
        norm_layer: Callable[..., nn.Module],
    ) -> None:
        super().__init__()
        self.branch0 = Conv3dNormActivation(in_planes, b0_out, 1, 1, norm_layer=norm_layer)
        self.branch1 = nn.Sequential(
            Conv3dNormActivation(in_planes, b1_mid, 1, 1, norm_layer=norm_layer),
            TemporalSeparableConv(b1_mid, b1_out, 3, 1, 1, norm_layer),
        )
        self.branch2 = nn.Sequential(
            Conv3dNormActivation(in_planes, b2_mid, 1, 1, norm_layer=norm_layer),
            TemporalSeparableConv(b2_mid, b2_out, 3, 1, 1, norm_layer),
        )
        self.branch3 = nn.Sequential(
            nn.MaxPool3d(kernel_size=(3, 3, 3), stride=1, padding=1),
            Conv3dNormActivation(in_planes, b3_out, 1, 1, norm_layer=norm_layer),
        )

    def forward(self, x: Any) -> Any:
        branches = (self.branch0, self.branch1, self.branch2, self.branch3)
        return lucid.cat([b(x) for b in branches], dim=1)


class S3D(nn.Module):
    """torchvision's ``S3D``: separable-convolution Inception features, a 2x7x7 average pool
    and a 1x1x1 convolution classifier averaged over what remains (400 Kinetics classes)."""

    def __init__(self, num_classes: int = 400, dropout: float = 0.2,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:  # fmt: skip
        super().__init__()
        norm = norm_layer or partial(nn.BatchNorm3d, eps=0.001, momentum=0.001)
        block = partial(SepInceptionBlock3D, norm_layer=norm)
        self.features = nn.Sequential(
            TemporalSeparableConv(3, 64, 7, 2, 3, norm),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            Conv3dNormActivation(64, 64, 1, 1, norm_layer=norm),
            TemporalSeparableConv(64, 192, 3, 1, 1, norm),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            block(192, 64, 96, 128, 16, 32, 32),
            block(256, 128, 128, 192, 32, 96, 64),
            nn.MaxPool3d(kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1)),
            block(480, 192, 96, 208, 16, 48, 64),
            block(512, 160, 112, 224, 24, 64, 64),
            block(512, 128, 128, 256, 24, 64, 64),
            block(512, 112, 144, 288, 32, 64, 64),
            block(528, 256, 160, 320, 32, 128, 128),
            nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0)),
            block(832, 256, 160, 320, 32, 128, 128),
            block(832, 384, 192, 384, 48, 128, 128),
        )
        self.avgpool = nn.AvgPool3d(kernel_size=(2, 7, 7), stride=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Conv3d(1024, num_classes, kernel_size=1, stride=1, bias=True),
        )

    def forward(self, x: Any) -> Any:
        x = self.classifier(self.avgpool(self.features(x)))
        return x.mean(dim=(2, 3, 4))


@register_model(task="video-classification", paper=_PAPER, num_params=8_320_048,
                input_size=(3, 16, 224, 224), reference="torchvision")  # fmt: skip
def s3d(**kwargs: Any) -> S3D:
    """S3D, 8,320,048 parameters for 400 classes."""
    return S3D(**kwargs)
