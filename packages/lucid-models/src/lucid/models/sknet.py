"""SK-ResNet-18/34/50 and SK-ResNeXt-50 32x4d (Li et al., "Selective Kernel Networks", CVPR
2019), in timm's layout: timm's ResNet whose 3x3 convs are selective-kernel convs (a 3x3 and
a dilated 3x3 path, the receptive field of a 5x5, mixed by a softmax attention over the paths).

SK-ResNeXt-50 32x4d is the paper's SKNet-50; the SK-ResNets split the input channels between
the two paths to keep the parameter count down (timm's variation)."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._layers import make_divisible
from lucid.models._registry import classifier
from lucid.models._timm_layers import ConvNormAct, DropPath, TimmResNet

_PAPER = 'Li et al., "Selective Kernel Networks", CVPR 2019'


class SelectiveKernelAttn(nn.Module):
    """The paths' sum, pooled, reduced by a 1x1 conv and BN-ReLU, expanded to one logit per
    path and channel: a softmax over the paths."""

    def __init__(self, channels: int, num_paths: int = 2, attn_channels: int = 32) -> None:
        super().__init__()
        self.num_paths = num_paths
        self.fc_reduce = nn.Conv2d(channels, attn_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(attn_channels)
        self.act = nn.ReLU(inplace=True)
        self.fc_select = nn.Conv2d(attn_channels, channels * num_paths, 1, bias=False)

    def forward(self, x: Any) -> Any:
        x = self.act(self.bn(self.fc_reduce(x.sum(1).mean((2, 3), keepdim=True))))
        x = self.fc_select(x)
        b, c, h, w = x.shape
        return x.reshape(b, self.num_paths, c // self.num_paths, h, w).softmax(1)


class SelectiveKernel(nn.Module):
    """Selective-kernel conv: a 3x3 and a 3x3 dilated by 2 path (each conv-BN-ReLU, grouped
    by ``groups``; with ``split_input`` each sees half the input channels), weighed by
    :class:`SelectiveKernelAttn` and summed."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        stride: int = 1,
        dilation: int = 1,
        groups: int = 1,
        rd_ratio: float = 1.0 / 16,
        rd_divisor: int = 8,
        split_input: bool = True,
    ) -> None:
        super().__init__()
        dilations = [dilation * (k - 1) // 2 for k in (3, 5)]  # 5x5 as a 3x3 dilated by 2
        self.num_paths = len(dilations)
        self.in_channels = in_channels
        self.split_input = split_input
        if split_input:
            if in_channels % self.num_paths:
                raise ValueError(f"SelectiveKernel: split_input needs in_channels divisible by "
                                 f"{self.num_paths}, got {in_channels}")  # fmt: skip
            in_channels //= self.num_paths
        groups = min(out_channels, groups)
        self.paths = nn.ModuleList(
            [ConvNormAct(in_channels, out_channels, 3, stride, dilation=d, groups=groups)
             for d in dilations]
        )  # fmt: skip
        attn = make_divisible(out_channels * rd_ratio, rd_divisor)
        self.attn = SelectiveKernelAttn(out_channels, self.num_paths, attn)

    def forward(self, x: Any) -> Any:
        if self.split_input:
            parts = lucid.split(x, self.in_channels // self.num_paths, 1)
            paths = [op(parts[i]) for i, op in enumerate(self.paths)]
        else:
            paths = [op(x) for op in self.paths]
        x = lucid.stack(paths, 1)
        return (x * self.attn(x)).sum(1)


class SelectiveKernelBasic(nn.Module):
    """ResNet's basic block with a selective-kernel first conv."""

    expansion = 1

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        cardinality: int = 1,
        base_width: int = 64,
        sk_kwargs: dict[str, Any] | None = None,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        if cardinality != 1 or base_width != 64:
            raise ValueError(f"SelectiveKernelBasic supports cardinality 1 and base_width 64, "
                             f"got {cardinality} and {base_width}")  # fmt: skip
        self.conv1 = SelectiveKernel(inplanes, planes, stride=stride, **(sk_kwargs or {}))
        self.conv2 = ConvNormAct(planes, planes, 3, apply_act=False)
        self.act = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else None

    def zero_init_last(self) -> None:
        """Zero the last BN's scale: each block starts as the identity."""
        nn.init.zeros_(self.conv2.bn.weight)

    def forward(self, x: Any) -> Any:
        out = self.conv2(self.conv1(x))
        if self.drop_path is not None:
            out = self.drop_path(out)
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.act(out + shortcut)


class SelectiveKernelBottleneck(nn.Module):
    """ResNet's bottleneck with a selective-kernel 3x3 conv."""

    expansion = 4

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        cardinality: int = 1,
        base_width: int = 64,
        sk_kwargs: dict[str, Any] | None = None,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        width = int(planes * (base_width / 64)) * cardinality
        self.conv1 = ConvNormAct(inplanes, width, 1)
        self.conv2 = SelectiveKernel(width, width, stride=stride, groups=cardinality,
                                     **(sk_kwargs or {}))  # fmt: skip
        self.conv3 = ConvNormAct(width, planes * 4, 1, apply_act=False)
        self.act = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else None

    def zero_init_last(self) -> None:
        """Zero the last BN's scale: each block starts as the identity."""
        nn.init.zeros_(self.conv3.bn.weight)

    def forward(self, x: Any) -> Any:
        out = self.conv3(self.conv2(self.conv1(x)))
        if self.drop_path is not None:
            out = self.drop_path(out)
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.act(out + shortcut)


def _sknet(block: Any, layers: list[int], sk: dict[str, Any], kw: dict[str, Any]) -> TimmResNet:
    args: dict[str, Any] = {"block_args": {"sk_kwargs": sk}, "zero_init_last": False}
    return TimmResNet(block, layers, **{**args, **kw})


_SPLIT_BASIC = {"rd_ratio": 1 / 8, "rd_divisor": 16, "split_input": True}


@classifier(_PAPER, 11_958_056, reference="timm")
def skresnet18(**kwargs: Any) -> TimmResNet:
    """SK-ResNet-18, 11,958,056 parameters for 1000 classes."""
    return _sknet(SelectiveKernelBasic, [2, 2, 2, 2], _SPLIT_BASIC, kwargs)


@classifier(_PAPER, 22_282_376, reference="timm")
def skresnet34(**kwargs: Any) -> TimmResNet:
    """SK-ResNet-34, 22,282,376 parameters for 1000 classes."""
    return _sknet(SelectiveKernelBasic, [3, 4, 6, 3], _SPLIT_BASIC, kwargs)


@classifier(_PAPER, 25_803_160, reference="timm")
def skresnet50(**kwargs: Any) -> TimmResNet:
    """SK-ResNet-50, 25,803,160 parameters for 1000 classes."""
    return _sknet(SelectiveKernelBottleneck, [3, 4, 6, 3], {"split_input": True}, kwargs)


@classifier(_PAPER, 27_479_784, reference="timm")
def skresnext50_32x4d(**kwargs: Any) -> TimmResNet:
    """SK-ResNeXt-50 32x4d (the paper's SKNet-50), 27,479,784 parameters for 1000 classes."""
    sk = {"rd_ratio": 1 / 16, "rd_divisor": 32, "split_input": False}
    kwargs = {"cardinality": 32, "base_width": 4, **kwargs}
    return _sknet(SelectiveKernelBottleneck, [3, 4, 6, 3], sk, kwargs)
