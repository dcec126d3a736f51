"""ConvNeXt-Tiny/Small/Base/Large (Liu et al., "A ConvNet for the 2020s", CVPR 2022), in
torchvision's layout."""

from __future__ import annotations

from functools import partial
from typing import Any

import lucid
from lucid import nn
from lucid.models._layers import Conv2dNormActivation, LayerNorm2d, Permute, StochasticDepth
from lucid.models._registry import classifier

_PAPER = 'Liu et al., "A ConvNet for the 2020s", CVPR 2022'


class CNBlock(nn.Module):
    """Depthwise 7x7, LayerNorm, 4x MLP with GELU, scaled by ``layer_scale``, stochastic
    depth, residual."""

    def __init__(
        self, dim: int, layer_scale: float, stochastic_depth_prob: float, norm_layer: Any = None
    ) -> None:
        super().__init__()
        norm = partial(nn.LayerNorm, eps=1e-6) if norm_layer is None else norm_layer
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),
            norm(dim),
            nn.Linear(dim, 4 * dim),
            nn.GELU(),
            nn.Linear(4 * dim, dim),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(lucid.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, x: Any) -> Any:
        return self.stochastic_depth(self.layer_scale * self.block(x)) + x


class CNBlockConfig:
    """A stage: ``num_layers`` blocks of ``input_channels``, then a downsampling to
    ``out_channels`` (none after the last stage)."""

    def __init__(self, input_channels: int, out_channels: int | None, num_layers: int) -> None:
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers


class ConvNeXt(nn.Module):
    """ConvNeXt (``torchvision.models.ConvNeXt``); the stochastic-depth probability grows
    linearly from 0 to ``stochastic_depth_prob``."""

    def __init__(
        self,
        block_setting: list[CNBlockConfig],
        stochastic_depth_prob: float = 0.0,
        layer_scale: float = 1e-6,
        num_classes: int = 1000,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        norm = partial(LayerNorm2d, eps=1e-6)
        first = block_setting[0].input_channels
        layers: list[Any] = [
            Conv2dNormActivation(
                in_channels,
                first,
                kernel_size=4,
                stride=4,
                padding=0,
                norm_layer=norm,
                activation_layer=None,
                bias=True,
            )
        ]
        total = sum(cnf.num_layers for cnf in block_setting)
        block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                p = stochastic_depth_prob * block_id / (total - 1.0)
                stage.append(CNBlock(cnf.input_channels, layer_scale, p))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(
                    nn.Sequential(
                        norm(cnf.input_channels),
                        nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2),
                    )
                )
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        width = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm(width), nn.Flatten(1), nn.Linear(width, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)))


def _convnext(widths: list[int], depths: list[int], sd: float, kwargs: dict[str, Any]) -> ConvNeXt:
    outs: list[int | None] = [*widths[1:], None]
    setting = [CNBlockConfig(w, o, d) for w, o, d in zip(widths, outs, depths)]
    kwargs.setdefault("stochastic_depth_prob", sd)
    return ConvNeXt(setting, **kwargs)


@classifier(_PAPER, 28_589_128)
def convnext_tiny(**kwargs: Any) -> ConvNeXt:
    """ConvNeXt-Tiny, 28,589,128 parameters for 1000 classes."""
    return _convnext([96, 192, 384, 768], [3, 3, 9, 3], 0.1, kwargs)


@classifier(_PAPER, 50_223_688)
def convnext_small(**kwargs: Any) -> ConvNeXt:
    """ConvNeXt-Small, 50,223,688 parameters for 1000 classes."""
    return _convnext([96, 192, 384, 768], [3, 3, 27, 3], 0.4, kwargs)


@classifier(_PAPER, 88_591_464)
def convnext_base(**kwargs: Any) -> ConvNeXt:
    """ConvNeXt-Base, 88,591,464 parameters for 1000 classes."""
    return _convnext([128, 256, 512, 1024], [3, 3, 27, 3], 0.5, kwargs)


@classifier(_PAPER, 197_767_336)
def convnext_large(**kwargs: Any) -> ConvNeXt:
    """ConvNeXt-Large, 197,767,336 parameters for 1000 classes."""
    return _convnext([192, 384, 768, 1536], [3, 3, 27, 3], 0.5, kwargs)
