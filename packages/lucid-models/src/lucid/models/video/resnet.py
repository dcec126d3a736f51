"""The video ResNets of Tran et al., "A Closer Look at Spatiotemporal Convolutions for Action
Recognition" (CVPR 2018): R3D-18 (3D convolutions), MC3-18 (mixed: 3D, then 2D) and R(2+1)D-18
(each 3D convolution factored into a spatial and a temporal one), in torchvision's layout
(``torchvision.models.video.resnet``: the same state-dict keys). Input ``(N, 3, T, H, W)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lucid import nn
from lucid.models._registry import register_model

__all__ = ["VideoResNet", "mc3_18", "r2plus1d_18", "r3d_18"]

_PAPER = ('Tran et al., "A Closer Look at Spatiotemporal Convolutions for Action Recognition", '
          "CVPR 2018")  # fmt: skip


class Conv3DSimple(nn.Conv3d):
    """A 3x3x3 convolution."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int | None = None,
                 stride: int = 1, padding: int = 1) -> None:  # fmt: skip
        super().__init__(in_planes, out_planes, (3, 3, 3), stride=stride, padding=padding,
                         bias=False)  # fmt: skip

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        """The stride of the shortcut's 1x1x1 convolution."""
        return stride, stride, stride


class Conv2Plus1D(nn.Sequential):
    """A 1x3x3 spatial convolution to ``midplanes``, BatchNorm, ReLU, a 3x1x1 temporal one."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int, stride: int = 1,
                 padding: int = 1) -> None:  # fmt: skip
        super().__init__(
            nn.Conv3d(
                in_planes,
                midplanes,
                (1, 3, 3),
                stride=(1, stride, stride),
                padding=(0, padding, padding),
                bias=False,
            ),  # fmt: skip
            nn.BatchNorm3d(midplanes),
            nn.ReLU(inplace=True),
            nn.Conv3d(
                midplanes,
                out_planes,
                (3, 1, 1),
                stride=(stride, 1, 1),
                padding=(padding, 0, 0),
                bias=False,
            ),  # fmt: skip
        )

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        """The stride of the shortcut's 1x1x1 convolution."""
        return stride, stride, stride


class Conv3DNoTemporal(nn.Conv3d):
    """A 1x3x3 convolution (no temporal extent)."""

    def __init__(self, in_planes: int, out_planes: int, midplanes: int | None = None,
                 stride: int = 1, padding: int = 1) -> None:  # fmt: skip
        super().__init__(in_planes, out_planes, (1, 3, 3), stride=(1, stride, stride),
                         padding=(0, padding, padding), bias=False)  # fmt: skip

    @staticmethod
    def get_downsample_stride(stride: int) -> tuple[int, int, int]:
        """The stride of the shortcut's 1x1x1 convolution (spatial only)."""
        return 1, stride, stride


class BasicBlock(nn.Module):
    """Two convolutions of ``conv_builder`` with BatchNorm, and the shortcut."""

    expansion = 1

    def __init__(self, inplanes: int, planes: int, conv_builder: Callable[..., nn.Module],
                 stride: int = 1, downsample: nn.Module | None = None) -> None:  # fmt: skip
        midplanes = (inplanes * planes * 3 * 3 * 3) // (inplanes * 3 * 3 + 3 * planes)
        super().__init__()
        self.conv1 = nn.Sequential(conv_builder(inplanes, planes, midplanes, stride),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))  # fmt: skip
        self.conv2 = nn.Sequential(conv_builder(planes, planes, midplanes), nn.BatchNorm3d(planes))
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Any) -> Any:
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu(self.conv2(self.conv1(x)) + residual)


class Bottleneck(nn.Module):
    """1x1x1, ``conv_builder``, 1x1x1 (times 4), with BatchNorm, and the shortcut."""

    expansion = 4

    def __init__(self, inplanes: int, planes: int, conv_builder: Callable[..., nn.Module],
                 stride: int = 1, downsample: nn.Module | None = None) -> None:  # fmt: skip
        super().__init__()
        midplanes = (inplanes * planes * 3 * 3 * 3) // (inplanes * 3 * 3 + 3 * planes)
        self.conv1 = nn.Sequential(nn.Conv3d(inplanes, planes, 1, bias=False),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))  # fmt: skip
        self.conv2 = nn.Sequential(conv_builder(planes, planes, midplanes, stride),
                                   nn.BatchNorm3d(planes), nn.ReLU(inplace=True))  # fmt: skip
        self.conv3 = nn.Sequential(nn.Conv3d(planes, planes * self.expansion, 1, bias=False),
                                   nn.BatchNorm3d(planes * self.expansion))  # fmt: skip
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Any) -> Any:
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu(self.conv3(self.conv2(self.conv1(x))) + residual)


class BasicStem(nn.Sequential):
    """The R3D/MC3 stem: a 3x7x7 convolution (spatial stride 2), BatchNorm, ReLU."""

    def __init__(self) -> None:
        super().__init__(
            nn.Conv3d(3, 64, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3), bias=False),
            nn.BatchNorm3d(64),
            nn.ReLU(inplace=True),
        )


class R2Plus1dStem(nn.Sequential):
    """The R(2+1)D stem: a 1x7x7 convolution to 45 channels, then a 3x1x1 one to 64."""

    def __init__(self) -> None:
        super().__init__(
            nn.Conv3d(3, 45, (1, 7, 7), stride=(1, 2, 2), padding=(0, 3, 3), bias=False),
            nn.BatchNorm3d(45),
            nn.ReLU(inplace=True),
            nn.Conv3d(45, 64, (3, 1, 1), stride=(1, 1, 1), padding=(1, 0, 0), bias=False),
            nn.BatchNorm3d(64),
            nn.ReLU(inplace=True),
        )


class VideoResNet(nn.Module):
    """torchvision's ``VideoResNet``: a stem, four stages of ``block`` built with the stage's
    convolution maker, global average pooling and a linear classifier (400 Kinetics classes)."""

    def __init__(self, block: Any, conv_makers: Sequence[Any], layers: list[int],
                 stem: Callable[..., nn.Module], num_classes: int = 400,
                 zero_init_residual: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.inplanes = 64
        self.stem = stem()
        self.layer1 = self._make_layer(block, conv_makers[0], 64, layers[0], stride=1)
        self.layer2 = self._make_layer(block, conv_makers[1], 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, conv_makers[2], 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, conv_makers[3], 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv3d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm3d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck):
                    nn.init.zeros_(m.conv3[1].weight)

    def _make_layer(self, block: Any, conv_builder: Any, planes: int, blocks: int,
                    stride: int = 1) -> nn.Sequential:  # fmt: skip
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            ds_stride = conv_builder.get_downsample_stride(stride)
            downsample = nn.Sequential(
                nn.Conv3d(
                    self.inplanes, planes * block.expansion, 1, stride=ds_stride, bias=False
                ),  # fmt: skip
                nn.BatchNorm3d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, conv_builder, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, conv_builder) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: Any) -> Any:
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def _video(kwargs: dict[str, Any], **config: Any) -> VideoResNet:
    return VideoResNet(**config, **kwargs)


@register_model(task="video-classification", paper=_PAPER, num_params=33_371_472,
                input_size=(3, 16, 112, 112), reference="torchvision")  # fmt: skip
def r3d_18(**kwargs: Any) -> VideoResNet:
    """R3D-18 (3D convolutions throughout), 33,371,472 parameters for 400 classes."""
    return _video(kwargs, block=BasicBlock, conv_makers=[Conv3DSimple] * 4, layers=[2, 2, 2, 2],
                  stem=BasicStem)  # fmt: skip


@register_model(task="video-classification", paper=_PAPER, num_params=11_695_440,
                input_size=(3, 16, 112, 112), reference="torchvision")  # fmt: skip
def mc3_18(**kwargs: Any) -> VideoResNet:
    """MC3-18 (3D convolutions in the first stage, then 2D), 11,695,440 parameters for 400
    classes."""
    return _video(kwargs, block=BasicBlock, conv_makers=[Conv3DSimple] + [Conv3DNoTemporal] * 3,
                  layers=[2, 2, 2, 2], stem=BasicStem)  # fmt: skip


@register_model(task="video-classification", paper=_PAPER, num_params=31_505_325,
                input_size=(3, 16, 112, 112), reference="torchvision")  # fmt: skip
def r2plus1d_18(**kwargs: Any) -> VideoResNet:
    """R(2+1)D-18 (each 3D convolution factored in space and time), 31,505,325 parameters for
    400 classes."""
    return _video(kwargs, block=BasicBlock, conv_makers=[Conv2Plus1D] * 4, layers=[2, 2, 2, 2],
                  stem=R2Plus1dStem)  # fmt: skip
