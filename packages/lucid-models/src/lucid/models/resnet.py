"""ResNet-18/34/50/101/152 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016)
in torchvision's layout (same module names, so converted torchvision state dicts load), the
CIFAR variant (3x3 stem, no max-pool) and Wide ResNet-28-10 (Zagoruyko & Komodakis, BMVC 2016).
"""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model

_PAPER = 'He et al., "Deep Residual Learning for Image Recognition", CVPR 2016'

_RESNEXT = 'Xie et al., "Aggregated Residual Transformations for Deep Neural Networks", CVPR 2017'
_WRN = 'Zagoruyko & Komodakis, "Wide Residual Networks", BMVC 2016'


def conv3x3(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> Any:
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, bias=False)


def conv1x1(cin: int, cout: int, stride: int = 1) -> Any:
    return nn.Conv2d(cin, cout, 1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: Any = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1) -> None:  # fmt: skip
        super().__init__()
        if groups != 1 or base_width != 64:
            raise ValueError(
                f"BasicBlock only supports groups=1 and base_width=64, got {groups} and "
                f"{base_width}"
            )
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Any) -> Any:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: Any = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1) -> None:  # fmt: skip
        super().__init__()
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=dilation, groups=groups,
                               dilation=dilation, bias=False)  # fmt: skip
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Any) -> Any:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's ResNet; ``cifar=True`` uses a 3x3 stride-1 stem and no max-pool;
    ``groups`` and ``width_per_group`` make the ResNeXt and Wide ResNet-50/101 bottlenecks;
    ``replace_stride_with_dilation`` (three booleans, for ``layer2``..``layer4``) dilates those
    stages instead of striding them, as the segmentation backbones do."""

    def __init__(
        self,
        block: Any,
        layers: list[int],
        num_classes: int = 1000,
        in_channels: int = 3,
        cifar: bool = False,
        zero_init_residual: bool = False,
        groups: int = 1,
        width_per_group: int = 64,
        replace_stride_with_dilation: list[bool] | None = None,
    ) -> None:
        super().__init__()
        self.inplanes = 64
        self.dilation = 1
        self.groups, self.base_width = groups, width_per_group
        dilate = replace_stride_with_dilation or [False, False, False]
        if len(dilate) != 3:
            raise ValueError(
                f"replace_stride_with_dilation should be None or a 3-element tuple, got {dilate}"
            )
        if cifar:
            self.conv1 = nn.Conv2d(in_channels, 64, 3, stride=1, padding=1, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.Identity() if cifar else nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=dilate[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=dilate[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=dilate[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        if zero_init_residual:
            for m in self.modules():
                last = getattr(m, "bn3", None) if isinstance(m, Bottleneck) else None
                last = getattr(m, "bn2", None) if isinstance(m, BasicBlock) else last
                if last is not None:
                    nn.init.zeros_(last.weight)

    def _make_layer(self, block: Any, planes: int, blocks: int, stride: int = 1,
                    dilate: bool = False) -> Any:  # fmt: skip
        previous = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        # the dilation keyword only where dilated: SE-ResNet's blocks do not take it
        first = {"dilation": previous} if previous != 1 else {}
        rest = {"dilation": self.dilation} if self.dilation != 1 else {}
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                nn.BatchNorm2d(planes * block.expansion),
            )
        g, w = self.groups, self.base_width
        layers = [block(self.inplanes, planes, stride, downsample, g, w, **first)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, 1, None, g, w, **rest) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: Any) -> Any:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=11_689_512,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnet18(**kwargs: Any) -> ResNet:
    """ResNet-18 (He et al. 2016), 11,689,512 parameters for 1000 classes."""
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=21_797_672,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnet34(**kwargs: Any) -> ResNet:
    """ResNet-34 (He et al. 2016), 21,797,672 parameters for 1000 classes."""
    return ResNet(BasicBlock, [3, 4, 6, 3], **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=25_557_032,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnet50(**kwargs: Any) -> ResNet:
    """ResNet-50 (He et al. 2016), 25,557,032 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=44_549_160,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnet101(**kwargs: Any) -> ResNet:
    """ResNet-101 (He et al. 2016), 44,549,160 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=60_192_808,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnet152(**kwargs: Any) -> ResNet:
    """ResNet-152 (He et al. 2016), 60,192,808 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 8, 36, 3], **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=11_173_962,
    input_size=(3, 32, 32),
    reference="paper",
)
def resnet18_cifar(num_classes: int = 10, **kwargs: Any) -> ResNet:
    """ResNet-18, CIFAR variant (3x3 stem, no max-pool), 11,173,962 parameters for 10 classes."""
    return ResNet(BasicBlock, [2, 2, 2, 2], num_classes=num_classes, cifar=True, **kwargs)


class WideBasic(nn.Module):
    """Pre-activation wide block (BN-ReLU-conv, dropout between the convs)."""

    def __init__(self, cin: int, cout: int, stride: int, dropout: float) -> None:
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU()
        self.shortcut = (
            nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
            if stride != 1 or cin != cout
            else None
        )

    def forward(self, x: Any) -> Any:
        o = self.relu(self.bn1(x))
        shortcut = x if self.shortcut is None else self.shortcut(o)
        y = self.conv1(o)
        y = self.conv2(self.dropout(self.relu(self.bn2(y))))
        return y + shortcut


class WideResNet(nn.Module):
    """WRN-depth-k for 32x32 inputs (Zagoruyko & Komodakis 2016)."""

    def __init__(self, depth: int = 28, widen_factor: int = 10, num_classes: int = 10,
                 dropout: float = 0.0, in_channels: int = 3) -> None:  # fmt: skip
        super().__init__()
        if (depth - 4) % 6:
            raise ValueError(f"WideResNet depth must be 6n+4, got {depth}")
        n = (depth - 4) // 6
        widths = [16, 16 * widen_factor, 32 * widen_factor, 64 * widen_factor]
        self.conv1 = nn.Conv2d(in_channels, widths[0], 3, padding=1, bias=False)
        blocks: list[Any] = []
        cin = widths[0]
        for stage, stride in zip(range(1, 4), (1, 2, 2)):
            for i in range(n):
                blocks.append(WideBasic(cin, widths[stage], stride if i == 0 else 1, dropout))
                cin = widths[stage]
        self.blocks = nn.Sequential(*blocks)
        self.bn = nn.BatchNorm2d(cin)
        self.relu = nn.ReLU()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x: Any) -> Any:
        x = self.relu(self.bn(self.blocks(self.conv1(x))))
        return self.fc(self.avgpool(x).flatten(1))


@register_model(
    task="image-classification",
    paper=_WRN,
    num_params=36_479_194,
    input_size=(3, 32, 32),
    reference="paper",
)
def wide_resnet28_10(**kwargs: Any) -> WideResNet:
    """Wide ResNet-28-10 for CIFAR (Zagoruyko & Komodakis 2016), 36,479,194 parameters."""
    return WideResNet(28, 10, **kwargs)


@register_model(
    task="image-classification",
    paper=_RESNEXT,
    num_params=25_028_904,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnext50_32x4d(**kwargs: Any) -> ResNet:
    """ResNeXt-50 32x4d, 25,028,904 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 6, 3], groups=32, width_per_group=4, **kwargs)


@register_model(
    task="image-classification",
    paper=_RESNEXT,
    num_params=88_791_336,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnext101_32x8d(**kwargs: Any) -> ResNet:
    """ResNeXt-101 32x8d, 88,791,336 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=8, **kwargs)


@register_model(
    task="image-classification",
    paper=_RESNEXT,
    num_params=83_455_272,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def resnext101_64x4d(**kwargs: Any) -> ResNet:
    """ResNeXt-101 64x4d, 83,455,272 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 23, 3], groups=64, width_per_group=4, **kwargs)


@register_model(
    task="image-classification",
    paper=_WRN,
    num_params=68_883_240,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def wide_resnet50_2(**kwargs: Any) -> ResNet:
    """Wide ResNet-50-2 (bottlenecks twice as wide), 68,883,240 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 6, 3], groups=1, width_per_group=128, **kwargs)


@register_model(
    task="image-classification",
    paper=_WRN,
    num_params=126_886_696,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def wide_resnet101_2(**kwargs: Any) -> ResNet:
    """Wide ResNet-101-2 (bottlenecks twice as wide), 126,886,696 parameters for 1000 classes."""
    return ResNet(Bottleneck, [3, 4, 23, 3], groups=1, width_per_group=128, **kwargs)
