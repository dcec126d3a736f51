"""ResNeSt-14d/26d/50d/101e/200e/269e (Zhang et al., "ResNeSt: Split-Attention Networks",
CVPR Workshops 2022), in timm's layout: timm's ResNet with a deep stem, average-pool
downsampling and split-attention bottlenecks (radix 2, the stride taken by an average pool
after the split attention)."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._layers import make_divisible
from lucid.models._registry import classifier
from lucid.models._timm_layers import DropPath, TimmResNet

_PAPER = 'Zhang et al., "ResNeSt: Split-Attention Networks", CVPR Workshops 2022'


class RadixSoftmax(nn.Module):
    """Softmax over the ``radix`` splits of each cardinal group (a sigmoid for radix 1)."""

    def __init__(self, radix: int, cardinality: int) -> None:
        super().__init__()
        self.radix = radix
        self.cardinality = cardinality

    def forward(self, x: Any) -> Any:
        batch = x.shape[0]
        if self.radix > 1:
            x = x.reshape(batch, self.cardinality, self.radix, -1).transpose(1, 2)
            return x.softmax(1).reshape(batch, -1)
        return x.sigmoid()


class SplitAttn(nn.Module):
    """Split attention: a grouped conv into ``radix`` splits, their sum pooled and squeezed
    through two 1x1 convs into a softmax over the splits that weighs their sum (timm's
    ``SplitAttn``)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int = 3,
        stride: int = 1,
        padding: int = 1,
        dilation: int = 1,
        groups: int = 1,
        radix: int = 2,
        rd_ratio: float = 0.25,
        rd_divisor: int = 8,
    ) -> None:
        super().__init__()
        self.radix = radix
        mid = out_channels * radix
        attn = make_divisible(in_channels * radix * rd_ratio, rd_divisor, min_value=32)
        self.conv = nn.Conv2d(in_channels, mid, kernel_size, stride, padding, dilation=dilation,
                              groups=groups * radix, bias=False)  # fmt: skip
        self.bn0 = nn.BatchNorm2d(mid)
        self.act0 = nn.ReLU(inplace=True)
        self.fc1 = nn.Conv2d(out_channels, attn, 1, groups=groups)
        self.bn1 = nn.BatchNorm2d(attn)
        self.act1 = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(attn, mid, 1, groups=groups)
        self.rsoftmax = RadixSoftmax(radix, groups)

    def forward(self, x: Any) -> Any:
        x = self.act0(self.bn0(self.conv(x)))
        b, rc, h, w = x.shape
        if self.radix > 1:
            x = x.reshape(b, self.radix, rc // self.radix, h, w)
            gap = x.sum(1)
        else:
            gap = x
        gap = self.act1(self.bn1(self.fc1(gap.mean((2, 3), keepdim=True))))
        attn = self.rsoftmax(self.fc2(gap))
        if self.radix > 1:
            return (x * attn.reshape(b, self.radix, rc // self.radix, 1, 1)).sum(1)
        return x * attn.reshape(b, -1, 1, 1)


class ResNestBottleneck(nn.Module):
    """1x1 conv, split-attention 3x3 conv, (strided 3x3 average pool), 1x1 conv, residual."""

    expansion = 4

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        cardinality: int = 1,
        base_width: int = 64,
        radix: int = 2,
        avd: bool = True,
        avd_first: bool = False,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        width = int(planes * (base_width / 64.0)) * cardinality
        avd_stride = stride if avd and stride > 1 else 0
        if avd_stride:
            stride = 1
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.act1 = nn.ReLU(inplace=True)
        pool = nn.AvgPool2d(3, avd_stride, padding=1) if avd_stride else None
        self.avd_first = pool if avd_first else None
        self.conv2: nn.Module
        if radix >= 1:
            self.conv2 = SplitAttn(width, width, 3, stride, 1, groups=cardinality, radix=radix)
            self.bn2: nn.Module = nn.Identity()
            self.act2: nn.Module = nn.Identity()
        else:
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=cardinality, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.act2 = nn.ReLU(inplace=True)
        self.avd_last = None if avd_first else pool
        self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.act3 = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else None

    def zero_init_last(self) -> None:
        """Zero the last BN's scale: each block starts as the identity."""
        nn.init.zeros_(self.bn3.weight)

    def forward(self, x: Any) -> Any:
        out = self.act1(self.bn1(self.conv1(x)))
        if self.avd_first is not None:
            out = self.avd_first(out)
        out = self.act2(self.bn2(self.conv2(out)))
        if self.avd_last is not None:
            out = self.avd_last(out)
        out = self.bn3(self.conv3(out))
        if self.drop_path is not None:
            out = self.drop_path(out)
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.act3(out + shortcut)


def _resnest(layers: list[int], stem_width: int, kwargs: dict[str, Any]) -> TimmResNet:
    args: dict[str, Any] = {"stem_type": "deep", "stem_width": stem_width, "avg_down": True}
    args["block_args"] = {"radix": 2, "avd": True, "avd_first": False}
    return TimmResNet(ResNestBottleneck, layers, **{**args, **kwargs})


@classifier(_PAPER, 10_611_688, reference="timm")
def resnest14d(**kwargs: Any) -> TimmResNet:
    """ResNeSt-14d, 10,611,688 parameters for 1000 classes."""
    return _resnest([1, 1, 1, 1], 32, kwargs)


@classifier(_PAPER, 17_069_448, reference="timm")
def resnest26d(**kwargs: Any) -> TimmResNet:
    """ResNeSt-26d, 17,069,448 parameters for 1000 classes."""
    return _resnest([2, 2, 2, 2], 32, kwargs)


@classifier(_PAPER, 27_483_240, reference="timm")
def resnest50d(**kwargs: Any) -> TimmResNet:
    """ResNeSt-50d (the paper's ResNeSt-50), 27,483,240 parameters for 1000 classes."""
    return _resnest([3, 4, 6, 3], 32, kwargs)


@classifier(_PAPER, 48_275_016, (3, 256, 256), reference="timm")
def resnest101e(**kwargs: Any) -> TimmResNet:
    """ResNeSt-101e (the paper's ResNeSt-101), 48,275,016 parameters for 1000 classes."""
    return _resnest([3, 4, 23, 3], 64, kwargs)


@classifier(_PAPER, 70_201_544, (3, 320, 320), reference="timm")
def resnest200e(**kwargs: Any) -> TimmResNet:
    """ResNeSt-200e (the paper's ResNeSt-200), 70,201,544 parameters for 1000 classes."""
    return _resnest([3, 24, 36, 3], 64, kwargs)


@classifier(_PAPER, 110_929_480, (3, 416, 416), reference="timm")
def resnest269e(**kwargs: Any) -> TimmResNet:
    """ResNeSt-269e (the paper's ResNeSt-269), 110,929,480 parameters for 1000 classes."""
    return _resnest([3, 30, 48, 8], 64, kwargs)
