"""Building blocks of the families whose reference is timm (ResNeSt, SKNet, CSPNet, ...),
named and laid out as timm 1.0 has them so its state dicts load with the same keys:
``ConvNormAct`` (``conv`` then ``bn``, the activation inside the norm as timm's
``BatchNormAct2d``), ``DropPath``, ``ClassifierHead`` (``head.fc``) and ``TimmResNet``, timm's
ResNet with its deep stems and average-pool downsampling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import lucid
from lucid import nn


def get_padding(kernel_size: int, stride: int = 1, dilation: int = 1) -> int:
    """timm's symmetric padding: ``((stride - 1) + dilation * (kernel_size - 1)) // 2``."""
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2


class BatchNormAct2d(nn.BatchNorm2d):
    """BatchNorm2d followed by an activation (timm's ``BatchNormAct2d``): the state dict is the
    BatchNorm's, the activation a parameterless ``act`` child (``nn.Identity`` when off)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        apply_act: bool = True,
        act_layer: Callable[..., Any] | None = nn.ReLU,
    ) -> None:
        super().__init__(num_features, eps=eps)
        self.act = act_layer() if apply_act and act_layer is not None else nn.Identity()

    def forward(self, x: Any) -> Any:
        return self.act(super().forward(x))


class ConvNormAct(nn.Module):
    """Conv2d (no bias, timm's padding) then :class:`BatchNormAct2d`, as timm's
    ``ConvNormAct``: the keys are ``conv.weight`` and ``bn.*``."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int] = 1,
        stride: int = 1,
        padding: int | tuple[int, int] | None = None,
        dilation: int = 1,
        groups: int = 1,
        apply_act: bool = True,
        act_layer: Callable[..., Any] | None = nn.ReLU,
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        pad = padding
        if pad is None:
            ks = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
            pad = (get_padding(ks[0], stride, dilation), get_padding(ks[1], stride, dilation))
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, pad,
                              dilation=dilation, groups=groups, bias=False)  # fmt: skip
        self.bn = BatchNormAct2d(out_channels, eps=eps, apply_act=apply_act, act_layer=act_layer)

    def forward(self, x: Any) -> Any:
        return self.bn(self.conv(x))


def drop_path(x: Any, p: float, training: bool) -> Any:
    """Zero whole samples of the residual branch ``x`` with probability ``p`` and scale the
    rest by ``1 / (1 - p)`` (stochastic depth, per sample); the identity outside training."""
    if p == 0.0 or not training:
        return x
    keep = 1.0 - p
    mask = (lucid.rand(x.shape[0], *([1] * (x.ndim - 1))) < keep).to(x.dtype)
    return x * mask / keep


class DropPath(nn.Module):
    """Stochastic depth per sample (timm's ``DropPath``), :func:`drop_path` as a module."""

    def __init__(self, drop_prob: float = 0.0) -> None:
        super().__init__()
        if not 0.0 <= drop_prob < 1.0:
            raise ValueError(f"DropPath: drop_prob must be in [0, 1), got {drop_prob}")
        self.drop_prob = drop_prob

    def forward(self, x: Any) -> Any:
        return drop_path(x, self.drop_prob, self.training)

    def extra_repr(self) -> str:
        return f"drop_prob={self.drop_prob}"


class ClassifierHead(nn.Module):
    """Global average pool, flatten, dropout, ``fc`` (timm's ``ClassifierHead``)."""

    def __init__(self, in_features: int, num_classes: int, drop_rate: float = 0.0) -> None:
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(in_features, num_classes) if num_classes > 0 else nn.Identity()

    def forward(self, x: Any) -> Any:
        return self.fc(self.drop(self.global_pool(x).flatten(1)))


def _downsample(inplanes: int, outplanes: int, stride: int, avg_down: bool) -> nn.Sequential:
    """The projection shortcut: a strided 1x1 conv and BN, or (``avg_down``) a 2x2 average
    pool (ceil mode, padding not counted) then a 1x1 conv and BN."""
    if not avg_down:
        conv = nn.Conv2d(inplanes, outplanes, 1, stride=stride, bias=False)
        return nn.Sequential(conv, nn.BatchNorm2d(outplanes))
    pool: nn.Module = (
        nn.AvgPool2d(2, stride, ceil_mode=True, count_include_pad=False)
        if stride != 1
        else nn.Identity()
    )
    conv = nn.Conv2d(inplanes, outplanes, 1, stride=1, bias=False)
    return nn.Sequential(pool, conv, nn.BatchNorm2d(outplanes))


class TimmResNet(nn.Module):
    """timm's ``ResNet`` for the families built on it (ResNeSt, SKNet): a 7x7 stem or a deep
    stem of three 3x3 convs (``stem_type="deep"``, widths ``stem_width``, ``stem_width``,
    ``2 * stem_width``), a 3x3 max pool, four stages of ``block`` and a linear classifier.

    ``block(inplanes, planes, stride, downsample, cardinality=, base_width=, drop_path=,
    **block_args)`` builds a residual block whose output has ``planes * block.expansion``
    channels; ``avg_down`` downsamples the shortcuts with an average pool.
    """

    def __init__(
        self,
        block: Any,
        layers: Sequence[int],
        num_classes: int = 1000,
        in_channels: int = 3,
        cardinality: int = 1,
        base_width: int = 64,
        stem_width: int = 64,
        stem_type: str = "",
        avg_down: bool = False,
        drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
        zero_init_last: bool = True,
        block_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if stem_type not in ("", "deep"):
            raise ValueError(f"TimmResNet: stem_type must be '' or 'deep', got {stem_type!r}")
        block_args = block_args or {}
        deep = stem_type == "deep"
        inplanes = stem_width * 2 if deep else 64
        self.conv1: nn.Module
        if deep:
            self.conv1 = nn.Sequential(
                nn.Conv2d(in_channels, stem_width, 3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(stem_width),
                nn.ReLU(inplace=True),
                nn.Conv2d(stem_width, stem_width, 3, stride=1, padding=1, bias=False),
                nn.BatchNorm2d(stem_width),
                nn.ReLU(inplace=True),
                nn.Conv2d(stem_width, inplanes, 3, stride=1, padding=1, bias=False),
            )
        else:
            self.conv1 = nn.Conv2d(in_channels, inplanes, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(inplanes)
        self.act1 = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        total = sum(layers)
        index = 0
        for stage, (planes, depth) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if stage == 0 else 2
            out = planes * block.expansion
            down = None
            if stride != 1 or inplanes != out:
                down = _downsample(inplanes, out, stride, avg_down)
            blocks = []
            for i in range(depth):
                dpr = drop_path_rate * index / max(total - 1, 1)
                blocks.append(
                    block(inplanes, planes, stride if i == 0 else 1, down if i == 0 else None,
                          cardinality=cardinality, base_width=base_width, drop_path=dpr,
                          **block_args)
                )  # fmt: skip
                inplanes = out
                index += 1
            self.add_module(f"layer{stage + 1}", nn.Sequential(*blocks))
        self.num_features = inplanes
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.drop_rate = drop_rate
        self.fc = nn.Linear(inplanes, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        if zero_init_last:
            for m in self.modules():
                if hasattr(m, "zero_init_last"):
                    m.zero_init_last()

    def forward_features(self, x: Any) -> Any:
        """The feature map before the pooling: ``(N, num_features, H / 32, W / 32)``."""
        x = self.maxpool(self.act1(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))

    def forward(self, x: Any) -> Any:
        x = self.global_pool(self.forward_features(x)).flatten(1)
        if self.drop_rate > 0.0:
            x = nn.functional.dropout(x, self.drop_rate, self.training)
        return self.fc(x)
