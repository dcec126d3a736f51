"""CSPResNet-50, CSPResNeXt-50 and CSPDarkNet-53 (Wang et al., "CSPNet: A New Backbone that
can Enhance Learning Capability of CNN", CVPR Workshops 2020), in timm's layout.

Each stage downsamples (a strided 3x3 conv), expands with a 1x1 conv and splits the result in
two halves along the channels: one half runs through the stage's residual blocks and a 1x1
transition, the other crosses the stage untouched; the two are concatenated and mixed by a
last 1x1 transition. Activations are leaky ReLUs (slope 0.01)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._timm_layers import ClassifierHead, ConvNormAct, DropPath

_PAPER = (
    'Wang et al., "CSPNet: A New Backbone that can Enhance Learning Capability of CNN", '
    "CVPR Workshops 2020"
)


def _act() -> nn.Module:
    return nn.LeakyReLU(0.01)


class BottleneckBlock(nn.Module):
    """1x1, 3x3 (grouped), 1x1 without activation, residual, leaky ReLU."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        bottle_ratio: float = 0.25,
        groups: int = 1,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        mid = int(round(out_chs * bottle_ratio))
        self.conv1 = ConvNormAct(in_chs, mid, 1, act_layer=_act)
        self.conv2 = ConvNormAct(mid, mid, 3, groups=groups, act_layer=_act)
        self.conv3 = ConvNormAct(mid, out_chs, 1, apply_act=False, act_layer=_act)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path else nn.Identity()
        self.act3 = _act()

    def zero_init_last(self) -> None:
        """Zero the last BN's scale: each block starts as the identity."""
        nn.init.zeros_(self.conv3.bn.weight)

    def forward(self, x: Any) -> Any:
        out = self.conv3(self.conv2(self.conv1(x)))
        return self.act3(self.drop_path(out) + x)


class DarkBlock(nn.Module):
    """DarkNet's residual block: 1x1 then 3x3 (both with activation), residual."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        bottle_ratio: float = 0.5,
        groups: int = 1,
        drop_path: float = 0.0,
    ) -> None:
        super().__init__()
        mid = int(round(out_chs * bottle_ratio))
        self.conv1 = ConvNormAct(in_chs, mid, 1, act_layer=_act)
        self.conv2 = ConvNormAct(mid, out_chs, 3, groups=groups, act_layer=_act)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path else nn.Identity()

    def zero_init_last(self) -> None:
        """Zero the last BN's scale: each block starts as the identity."""
        nn.init.zeros_(self.conv2.bn.weight)

    def forward(self, x: Any) -> Any:
        return self.drop_path(self.conv2(self.conv1(x))) + x


class CrossStage(nn.Module):
    """A cross-stage-partial stage (timm's ``CrossStage``): downsample, 1x1 expansion split in
    two, blocks and a 1x1 transition on one half, concatenation, 1x1 transition."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        stride: int,
        depth: int,
        block_fn: Any,
        block_ratio: float = 1.0,
        bottle_ratio: float = 1.0,
        expand_ratio: float = 1.0,
        groups: int = 1,
        down_growth: bool = False,
        cross_linear: bool = False,
        block_dpr: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        down_chs = out_chs if down_growth else in_chs
        self.expand_chs = exp = int(round(out_chs * expand_ratio))
        block_out = int(round(out_chs * block_ratio))
        self.conv_down: nn.Module
        if stride != 1:
            self.conv_down = ConvNormAct(in_chs, down_chs, 3, stride, groups=groups, act_layer=_act)
            prev = down_chs
        else:
            self.conv_down = nn.Identity()
            prev = in_chs
        self.conv_exp = ConvNormAct(prev, exp, 1, apply_act=not cross_linear, act_layer=_act)
        prev = exp // 2
        self.blocks = nn.Sequential()
        for i in range(depth):
            dpr = block_dpr[i] if block_dpr is not None else 0.0
            self.blocks.add_module(
                str(i), block_fn(prev, block_out, bottle_ratio, groups, drop_path=dpr)
            )
            prev = block_out
        self.conv_transition_b = ConvNormAct(prev, exp // 2, 1, act_layer=_act)
        self.conv_transition = ConvNormAct(exp, out_chs, 1, act_layer=_act)

    def forward(self, x: Any) -> Any:
        x = self.conv_exp(self.conv_down(x))
        xs, xb = lucid.split(x, self.expand_chs // 2, 1)
        xb = self.conv_transition_b(self.blocks(xb))
        return self.conv_transition(lucid.cat([xs, xb], 1))


@dataclass(frozen=True)
class _StagesCfg:
    depth: tuple[int, ...]
    out_chs: tuple[int, ...]
    stride: tuple[int, ...]
    groups: int
    block_ratio: tuple[float, ...]
    bottle_ratio: tuple[float, ...]
    expand_ratio: tuple[float, ...]
    down_growth: bool
    cross_linear: bool
    dark: bool


class CspNet(nn.Module):
    """Cross Stage Partial network (timm's ``CspNet``): a stem (``stem.conv1``, then
    ``stem.pool`` for the ResNet-style stems), the cross stages and ``head.fc``."""

    def __init__(
        self,
        stem_chs: int,
        stem_kernel: int,
        stem_pool: bool,
        stages: _StagesCfg,
        num_classes: int = 1000,
        in_channels: int = 3,
        drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
        zero_init_last: bool = True,
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential()
        stride = 2 if stem_pool else 1
        self.stem.add_module(
            "conv1", ConvNormAct(in_channels, stem_chs, stem_kernel, stride, act_layer=_act)
        )
        if stem_pool:
            self.stem.add_module("pool", nn.MaxPool2d(3, 2, padding=1))
        total = sum(stages.depth)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        prev = stem_chs
        self.stages = nn.Sequential()
        first = 0
        for i, depth in enumerate(stages.depth):
            self.stages.add_module(
                str(i),
                CrossStage(
                    prev,
                    stages.out_chs[i],
                    stages.stride[i],
                    depth,
                    DarkBlock if stages.dark else BottleneckBlock,
                    block_ratio=stages.block_ratio[i],
                    bottle_ratio=stages.bottle_ratio[i],
                    expand_ratio=stages.expand_ratio[i],
                    groups=stages.groups,
                    down_growth=stages.down_growth,
                    cross_linear=stages.cross_linear,
                    block_dpr=rates[first : first + depth] if drop_path_rate else None,
                ),
            )
            first += depth
            prev = stages.out_chs[i]
        self.num_features = prev
        self.head = ClassifierHead(prev, num_classes, drop_rate)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)
            elif zero_init_last and hasattr(m, "zero_init_last"):
                m.zero_init_last()

    def forward_features(self, x: Any) -> Any:
        """The feature map before the pooling."""
        return self.stages(self.stem(x))

    def forward(self, x: Any) -> Any:
        return self.head(self.forward_features(x))


_RESNET_STAGES: dict[str, Any] = dict(depth=(3, 3, 5, 2), stride=(1, 2, 2, 2),
                                      cross_linear=True, down_growth=False, dark=False)  # fmt: skip


@classifier(_PAPER, 21_616_168, (3, 256, 256), reference="timm")
def cspresnet50(**kwargs: Any) -> CspNet:
    """CSPResNet-50, 21,616,168 parameters for 1000 classes."""
    stages = _StagesCfg(out_chs=(128, 256, 512, 1024), groups=1, block_ratio=(1.0,) * 4,
                        bottle_ratio=(0.5,) * 4, expand_ratio=(2.0,) * 4,
                        **_RESNET_STAGES)  # fmt: skip
    return CspNet(64, 7, True, stages, **kwargs)


@classifier(_PAPER, 20_569_896, (3, 256, 256), reference="timm")
def cspresnext50(**kwargs: Any) -> CspNet:
    """CSPResNeXt-50, 20,569,896 parameters for 1000 classes."""
    stages = _StagesCfg(out_chs=(256, 512, 1024, 2048), groups=32, block_ratio=(0.5,) * 4,
                        bottle_ratio=(1.0,) * 4, expand_ratio=(1.0,) * 4,
                        **_RESNET_STAGES)  # fmt: skip
    return CspNet(64, 7, True, stages, **kwargs)


@classifier(_PAPER, 27_642_184, (3, 256, 256), reference="timm")
def cspdarknet53(**kwargs: Any) -> CspNet:
    """CSPDarkNet-53, 27,642,184 parameters for 1000 classes."""
    stages = _StagesCfg(depth=(1, 2, 8, 8, 4), out_chs=(64, 128, 256, 512, 1024),
                        stride=(2,) * 5, groups=1, block_ratio=(1.0,) + (0.5,) * 4,
                        bottle_ratio=(0.5,) + (1.0,) * 4, expand_ratio=(2.0,) + (1.0,) * 4,
                        down_growth=True, cross_linear=False, dark=True)  # fmt: skip
    return CspNet(32, 3, False, stages, **kwargs)
