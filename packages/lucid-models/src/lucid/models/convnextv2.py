"""ConvNeXt V2 Atto/Femto/Pico/Nano/Tiny/Small/Base/Large/Huge (Woo et al., "ConvNeXt V2:
Co-designing and Scaling ConvNets with Masked Autoencoders", CVPR 2023), in timm's layout.

ConvNeXt's block with a global response normalization (GRN) after the MLP's activation and
no layer scale. The four smallest use 1x1 convs for the MLP (channels first, timm's
``conv_mlp``), the others linear layers on channels-last features; the keys are the same
either way but the weight shapes follow timm's (``(C_out, C_in, 1, 1)`` for the convs)."""

from __future__ import annotations

from functools import partial
from typing import Any

import lucid
from lucid import nn
from lucid.models._layers import LayerNorm2d
from lucid.models._registry import classifier
from lucid.models._timm_layers import DropPath

_PAPER = (
    'Woo et al., "ConvNeXt V2: Co-designing and Scaling ConvNets with Masked Autoencoders", '
    "CVPR 2023"
)


class GlobalResponseNorm(nn.Module):
    """GRN: each channel's spatial L2 norm over the channels' mean of it; ``x + bias + weight *
    x * that`` (``weight`` and ``bias`` start at 0, so the layer starts as the identity)."""

    def __init__(self, dim: int, eps: float = 1e-6, channels_last: bool = True) -> None:
        super().__init__()
        self.eps = eps
        self.spatial_dim = (1, 2) if channels_last else (2, 3)
        self.channel_dim = -1 if channels_last else 1
        self.wb_shape = (1, 1, 1, -1) if channels_last else (1, -1, 1, 1)
        self.weight = nn.Parameter(lucid.zeros(dim))
        self.bias = nn.Parameter(lucid.zeros(dim))

    def forward(self, x: Any) -> Any:
        # the L2 norm spelled out: it exports to ONNX (a norm op has no mapping there)
        g = (x * x).sum(self.spatial_dim, keepdim=True).sqrt()
        n = g / (g.mean(self.channel_dim, keepdim=True) + self.eps)
        w, b = self.weight.reshape(*self.wb_shape), self.bias.reshape(*self.wb_shape)
        return x + b + w * (x * n)


class GlobalResponseNormMlp(nn.Module):
    """fc1, GELU, GRN, fc2: linear layers (channels last) or 1x1 convs (``use_conv``)."""

    def __init__(self, in_features: int, hidden_features: int, use_conv: bool = False) -> None:
        super().__init__()
        linear: Any = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
        self.fc1 = linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.grn = GlobalResponseNorm(hidden_features, channels_last=not use_conv)
        self.fc2 = linear(hidden_features, in_features)

    def forward(self, x: Any) -> Any:
        return self.fc2(self.grn(self.act(self.fc1(x))))


class ConvNeXtV2Block(nn.Module):
    """Depthwise 7x7, LayerNorm, GRN MLP (4x), stochastic depth, residual."""

    def __init__(self, dim: int, conv_mlp: bool, drop_path: float = 0.0) -> None:
        super().__init__()
        self.use_conv_mlp = conv_mlp
        self.conv_dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = LayerNorm2d(dim, eps=1e-6) if conv_mlp else nn.LayerNorm(dim, eps=1e-6)
        self.mlp = GlobalResponseNormMlp(dim, 4 * dim, use_conv=conv_mlp)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x: Any) -> Any:
        y = self.conv_dw(x)
        if self.use_conv_mlp:
            y = self.mlp(self.norm(y))
        else:
            y = self.mlp(self.norm(y.permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        return self.drop_path(y) + x


class ConvNeXtV2Stage(nn.Module):
    """LayerNorm and a 2x2 stride-2 conv (not in the first stage), then the blocks."""

    def __init__(
        self, in_chs: int, out_chs: int, depth: int, conv_mlp: bool, rates: list[float]
    ) -> None:
        super().__init__()
        self.downsample: nn.Module = (
            nn.Sequential(LayerNorm2d(in_chs, eps=1e-6), nn.Conv2d(in_chs, out_chs, 2, 2))
            if in_chs != out_chs
            else nn.Identity()
        )
        self.blocks = nn.Sequential(*[ConvNeXtV2Block(out_chs, conv_mlp, r) for r in rates])

    def forward(self, x: Any) -> Any:
        return self.blocks(self.downsample(x))


class NormMlpClassifierHead(nn.Module):
    """Global average pool, LayerNorm, flatten, dropout, ``fc`` (timm's head of ConvNeXt)."""

    def __init__(self, in_features: int, num_classes: int, drop_rate: float = 0.0) -> None:
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.norm = LayerNorm2d(in_features, eps=1e-6)
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, x: Any) -> Any:
        return self.fc(self.drop(self.norm(self.global_pool(x)).flatten(1)))


class ConvNeXtV2(nn.Module):
    """ConvNeXt V2 (timm's ``ConvNeXt`` with ``use_grn=True, ls_init_value=None``): a 4x4
    patch stem and LayerNorm, four stages, the normalised pooled head. The stochastic-depth
    probability grows linearly from 0 to ``drop_path_rate`` over the blocks."""

    def __init__(
        self,
        depths: tuple[int, ...],
        dims: tuple[int, ...],
        conv_mlp: bool = False,
        num_classes: int = 1000,
        in_channels: int = 3,
        drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
    ) -> None:
        super().__init__()
        if len(depths) != 4 or len(dims) != 4:
            raise ValueError(f"ConvNeXtV2: depths and dims need 4 stages, got {depths}, {dims}")
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, dims[0], 4, stride=4), LayerNorm2d(dims[0], eps=1e-6)
        )
        total = sum(depths)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        stages, prev, first = [], dims[0], 0
        for depth, dim in zip(depths, dims):
            stages.append(ConvNeXtV2Stage(prev, dim, depth, conv_mlp, rates[first : first + depth]))
            prev, first = dim, first + depth
        self.stages = nn.Sequential(*stages)
        self.norm_pre = nn.Identity()
        self.num_features = prev
        self.head = NormMlpClassifierHead(prev, num_classes, drop_rate)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Any) -> Any:
        """The feature map before the head."""
        return self.norm_pre(self.stages(self.stem(x)))

    def forward(self, x: Any) -> Any:
        return self.head(self.forward_features(x))


def _v2(depths: tuple[int, ...], dims: tuple[int, ...], conv: bool, kw: Any) -> ConvNeXtV2:
    return ConvNeXtV2(depths, dims, **{"conv_mlp": conv, **kw})


@classifier(_PAPER, 3_708_400, reference="timm")
def convnextv2_atto(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Atto, 3,708,400 parameters for 1000 classes."""
    return _v2((2, 2, 6, 2), (40, 80, 160, 320), True, kwargs)


@classifier(_PAPER, 5_233_240, reference="timm")
def convnextv2_femto(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Femto, 5,233,240 parameters for 1000 classes."""
    return _v2((2, 2, 6, 2), (48, 96, 192, 384), True, kwargs)


@classifier(_PAPER, 9_066_280, reference="timm")
def convnextv2_pico(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Pico, 9,066,280 parameters for 1000 classes."""
    return _v2((2, 2, 6, 2), (64, 128, 256, 512), True, kwargs)


@classifier(_PAPER, 15_623_800, reference="timm")
def convnextv2_nano(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Nano, 15,623,800 parameters for 1000 classes."""
    return _v2((2, 2, 8, 2), (80, 160, 320, 640), True, kwargs)


@classifier(_PAPER, 28_635_496, reference="timm")
def convnextv2_tiny(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Tiny, 28,635,496 parameters for 1000 classes."""
    return _v2((3, 3, 9, 3), (96, 192, 384, 768), False, kwargs)


@classifier(_PAPER, 50_318_440, reference="timm")
def convnextv2_small(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Small, 50,318,440 parameters for 1000 classes."""
    return _v2((3, 3, 27, 3), (96, 192, 384, 768), False, kwargs)


@classifier(_PAPER, 88_717_800, reference="timm")
def convnextv2_base(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Base, 88,717,800 parameters for 1000 classes."""
    return _v2((3, 3, 27, 3), (128, 256, 512, 1024), False, kwargs)


@classifier(_PAPER, 197_956_840, reference="timm")
def convnextv2_large(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Large, 197,956,840 parameters for 1000 classes."""
    return _v2((3, 3, 27, 3), (192, 384, 768, 1536), False, kwargs)


@classifier(_PAPER, 660_289_640, reference="timm")
def convnextv2_huge(**kwargs: Any) -> ConvNeXtV2:
    """ConvNeXt V2-Huge, 660,289,640 parameters for 1000 classes."""
    return _v2((3, 3, 27, 3), (352, 704, 1408, 2816), False, kwargs)
