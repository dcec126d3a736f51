"""InceptionNeXt-Tiny/Small/Base (Yu et al., "InceptionNeXt: When Inception Meets ConvNeXt",
CVPR 2024), in timm's layout (``MetaNeXt``).

ConvNeXt's macro design with its depthwise 7x7 replaced by an Inception depthwise token mixer:
of the channels, one eighth goes through a depthwise 3x3, one eighth a 1x11 and one eighth an
11x1 band, the rest pass unchanged; then BatchNorm, a 1x1-conv MLP, layer scale and residual.
"""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._timm_layers import DropPath

_PAPER = 'Yu et al., "InceptionNeXt: When Inception Meets ConvNeXt", CVPR 2024'


class InceptionDWConv2d(nn.Module):
    """The Inception depthwise convolution: identity, 3x3, 1xk and kx1 depthwise branches on
    four channel groups (``branch_ratio`` of the channels each for the three convs)."""

    def __init__(
        self,
        in_chs: int,
        square_kernel_size: int = 3,
        band_kernel_size: int = 11,
        branch_ratio: float = 0.125,
    ) -> None:
        super().__init__()
        gc = int(in_chs * branch_ratio)
        sq, band = square_kernel_size // 2, band_kernel_size // 2
        self.dwconv_hw = nn.Conv2d(gc, gc, square_kernel_size, padding=sq, groups=gc)
        self.dwconv_w = nn.Conv2d(gc, gc, (1, band_kernel_size), padding=(0, band), groups=gc)
        self.dwconv_h = nn.Conv2d(gc, gc, (band_kernel_size, 1), padding=(band, 0), groups=gc)
        self.split_indexes = [in_chs - 3 * gc, gc, gc, gc]

    def forward(self, x: Any) -> Any:
        x_id, x_hw, x_w, x_h = lucid.split(x, self.split_indexes, 1)
        return lucid.cat([x_id, self.dwconv_hw(x_hw), self.dwconv_w(x_w), self.dwconv_h(x_h)], 1)


class ConvMlp(nn.Module):
    """1x1 conv, GELU, 1x1 conv (timm's ``ConvMlp``)."""

    def __init__(self, in_features: int, hidden_features: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(in_features, hidden_features, 1)
        self.norm = nn.Identity()
        self.act = nn.GELU()
        self.fc2 = nn.Conv2d(hidden_features, in_features, 1)

    def forward(self, x: Any) -> Any:
        return self.fc2(self.act(self.norm(self.fc1(x))))


class MetaNeXtBlock(nn.Module):
    """Inception depthwise mixer, BatchNorm, conv MLP, layer scale ``gamma``, drop path,
    residual."""

    def __init__(
        self, dim: int, mlp_ratio: float = 4, ls_init_value: float = 1e-6, drop_path: float = 0.0
    ) -> None:
        super().__init__()
        self.token_mixer = InceptionDWConv2d(dim)
        self.norm = nn.BatchNorm2d(dim)
        self.mlp = ConvMlp(dim, int(mlp_ratio * dim))
        self.gamma = nn.Parameter(lucid.ones(dim) * ls_init_value)
        self.drop_path: nn.Module = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x: Any) -> Any:
        y = self.mlp(self.norm(self.token_mixer(x)))
        return self.drop_path(y * self.gamma.reshape(1, -1, 1, 1)) + x


class MetaNeXtStage(nn.Module):
    """BatchNorm and a 2x2 stride-2 conv (not in the first stage), then the blocks."""

    def __init__(
        self,
        in_chs: int,
        out_chs: int,
        stride: int,
        mlp_ratio: float,
        ls_init_value: float,
        rates: list[float],
    ) -> None:
        super().__init__()
        self.downsample: nn.Module = (
            nn.Sequential(nn.BatchNorm2d(in_chs), nn.Conv2d(in_chs, out_chs, 2, stride))
            if stride > 1
            else nn.Identity()
        )
        self.blocks = nn.Sequential(
            *[MetaNeXtBlock(out_chs, mlp_ratio, ls_init_value, r) for r in rates]
        )

    def forward(self, x: Any) -> Any:
        return self.blocks(self.downsample(x))


class MlpClassifierHead(nn.Module):
    """Global average pool, ``fc1`` (``mlp_ratio`` x wider), GELU, LayerNorm, dropout,
    ``fc2``."""

    def __init__(
        self, in_features: int, num_classes: int, mlp_ratio: float = 3, drop: float = 0.0
    ) -> None:
        super().__init__()
        hidden = int(mlp_ratio * in_features)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(in_features, hidden)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(hidden, eps=1e-6)
        self.fc2 = nn.Linear(hidden, num_classes)
        self.drop = nn.Dropout(drop)

    def forward(self, x: Any) -> Any:
        x = self.norm(self.act(self.fc1(self.global_pool(x).flatten(1))))
        return self.fc2(self.drop(x))


class MetaNeXt(nn.Module):
    """InceptionNeXt (timm's ``MetaNeXt``): a 4x4 patch stem and BatchNorm, four stages of
    MetaNeXt blocks (MLP ratios 4, 4, 4, 3), the MLP head. ``ls_init_value`` starts the layer
    scales; the stochastic-depth probability grows linearly to ``drop_path_rate``."""

    def __init__(
        self,
        depths: tuple[int, ...] = (3, 3, 9, 3),
        dims: tuple[int, ...] = (96, 192, 384, 768),
        mlp_ratios: tuple[float, ...] = (4, 4, 4, 3),
        num_classes: int = 1000,
        in_channels: int = 3,
        drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
        ls_init_value: float = 1e-6,
    ) -> None:
        super().__init__()
        if not len(depths) == len(dims) == len(mlp_ratios):
            raise ValueError(f"MetaNeXt: depths, dims and mlp_ratios need one entry per stage, "
                             f"got {depths}, {dims}, {mlp_ratios}")  # fmt: skip
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, dims[0], 4, stride=4), nn.BatchNorm2d(dims[0])
        )
        total = sum(depths)
        rates = [drop_path_rate * i / max(total - 1, 1) for i in range(total)]
        self.stages = nn.Sequential()
        prev, first = dims[0], 0
        for i, (depth, dim) in enumerate(zip(depths, dims)):
            stage = MetaNeXtStage(prev, dim, 2 if i > 0 else 1, mlp_ratios[i], ls_init_value,
                                  rates[first : first + depth])  # fmt: skip
            self.stages.add_module(str(i), stage)
            prev, first = dim, first + depth
        self.num_features = prev
        self.head = MlpClassifierHead(prev, num_classes, mlp_ratios[-1], drop_rate)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Any) -> Any:
        """The feature map before the head."""
        return self.stages(self.stem(x))

    def forward(self, x: Any) -> Any:
        return self.head(self.forward_features(x))


@classifier(_PAPER, 28_055_680, reference="timm")
def inception_next_tiny(**kwargs: Any) -> MetaNeXt:
    """InceptionNeXt-Tiny, 28,055,680 parameters for 1000 classes."""
    return MetaNeXt((3, 3, 9, 3), (96, 192, 384, 768), **kwargs)


@classifier(_PAPER, 49_374_016, reference="timm")
def inception_next_small(**kwargs: Any) -> MetaNeXt:
    """InceptionNeXt-Small, 49,374,016 parameters for 1000 classes."""
    return MetaNeXt((3, 3, 27, 3), (96, 192, 384, 768), **kwargs)


@classifier(_PAPER, 86_672_136, reference="timm")
def inception_next_base(**kwargs: Any) -> MetaNeXt:
    """InceptionNeXt-Base, 86,672,136 parameters for 1000 classes."""
    return MetaNeXt((3, 3, 27, 3), (128, 256, 512, 1024), **kwargs)
