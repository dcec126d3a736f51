"""SE-ResNet-18/34/50/101/152 and SE-ResNeXt-50 32x4d / 101 32x4d (Hu et al.,
"Squeeze-and-Excitation Networks", CVPR 2018): torchvision's ResNet and ResNeXt with a
squeeze-and-excitation gate (reduction 16) on each residual branch, before the addition.

torchvision has no SENet; the counts are those of the configuration the paper describes
(SE-ResNet-50: 28.1M in the paper, which the tests check)."""

from __future__ import annotations

from typing import Any

from lucid.models._layers import SqueezeExcitation
from lucid.models._registry import classifier
from lucid.models.resnet import BasicBlock, Bottleneck, ResNet

_PAPER = 'Hu et al., "Squeeze-and-Excitation Networks", CVPR 2018'
REDUCTION = 16


class SEBasicBlock(BasicBlock):
    """ResNet's basic block, its residual branch gated by squeeze-and-excitation."""

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: Any = None,
        groups: int = 1,
        base_width: int = 64,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, groups, base_width)
        self.se = SqueezeExcitation(planes, planes // REDUCTION)

    def forward(self, x: Any) -> Any:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.se(self.bn2(self.conv2(out)))
        return self.relu(out + identity)


class SEBottleneck(Bottleneck):
    """ResNet's bottleneck, its residual branch gated by squeeze-and-excitation."""

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: Any = None,
        groups: int = 1,
        base_width: int = 64,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, groups, base_width)
        c = planes * self.expansion
        self.se = SqueezeExcitation(c, c // REDUCTION)

    def forward(self, x: Any) -> Any:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.se(self.bn3(self.conv3(out)))
        return self.relu(out + identity)


@classifier(_PAPER, 11_778_592, reference="paper")
def seresnet18(**kwargs: Any) -> ResNet:
    """SE-ResNet-18, 11,778,592 parameters for 1000 classes."""
    return ResNet(SEBasicBlock, [2, 2, 2, 2], **kwargs)


@classifier(_PAPER, 21_958_868, reference="paper")
def seresnet34(**kwargs: Any) -> ResNet:
    """SE-ResNet-34, 21,958,868 parameters for 1000 classes."""
    return ResNet(SEBasicBlock, [3, 4, 6, 3], **kwargs)


@classifier(_PAPER, 28_088_024, reference="paper")
def seresnet50(**kwargs: Any) -> ResNet:
    """SE-ResNet-50, 28,088,024 parameters for 1000 classes (the paper: 28.1M)."""
    return ResNet(SEBottleneck, [3, 4, 6, 3], **kwargs)


@classifier(_PAPER, 49_326_872, reference="paper")
def seresnet101(**kwargs: Any) -> ResNet:
    """SE-ResNet-101, 49,326,872 parameters for 1000 classes."""
    return ResNet(SEBottleneck, [3, 4, 23, 3], **kwargs)


@classifier(_PAPER, 66_821_848, reference="paper")
def seresnet152(**kwargs: Any) -> ResNet:
    """SE-ResNet-152, 66,821,848 parameters for 1000 classes."""
    return ResNet(SEBottleneck, [3, 8, 36, 3], **kwargs)


@classifier(_PAPER, 27_559_896, reference="paper")
def seresnext50_32x4d(**kwargs: Any) -> ResNet:
    """SE-ResNeXt-50 32x4d, 27,559,896 parameters for 1000 classes."""
    return ResNet(SEBottleneck, [3, 4, 6, 3], groups=32, width_per_group=4, **kwargs)


@classifier(_PAPER, 48_955_416, reference="paper")
def seresnext101_32x4d(**kwargs: Any) -> ResNet:
    """SE-ResNeXt-101 32x4d, 48,955,416 parameters for 1000 classes."""
    return ResNet(SEBottleneck, [3, 4, 23, 3], groups=32, width_per_group=4, **kwargs)
