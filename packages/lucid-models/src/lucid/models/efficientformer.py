"""EfficientFormer L1/L3/L7 (Li et al., "EfficientFormer: Vision Transformers at MobileNet
Speed", NeurIPS 2022), in timm's layout (``timm.models.efficientformer``: the keys of
``timm.create_model("efficientformer_l1")``'s state dict are this model's).

Four stages of PoolFormer-style 4D blocks (average-pool token mixing, 1x1-conv MLP with
BatchNorm), the last stage ending in ``num_vit`` transformer blocks whose attention has a
learned bias per relative offset on the 7x7 grid of a 224x224 input. The logits are the mean of
the classification and distillation heads."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._vit_layers import (
    LayerScale,
    LayerScale2d,
    Mlp,
    drop_path,
    drop_path_rates,
    to_2tuple,
)

F = nn.functional
_PAPER = 'Li et al., "EfficientFormer: Vision Transformers at MobileNet Speed", NeurIPS 2022'


class Attention(nn.Module):
    """Multi-head attention (key dim 32, value dim ``attn_ratio * 32``) with a learned bias per
    head and relative offset ``(|dy|, |dx|)`` on a ``resolution`` grid of tokens."""

    def __init__(self, dim: int = 384, key_dim: int = 32, num_heads: int = 8,
                 attn_ratio: float = 4, resolution: int | tuple[int, int] = 7) -> None:  # fmt: skip
        super().__init__()
        self.num_heads, self.key_dim = num_heads, key_dim
        self.val_dim = int(attn_ratio * key_dim)
        self.val_attn_dim = self.val_dim * num_heads
        self.scale = key_dim**-0.5
        self.qkv = nn.Linear(dim, key_dim * num_heads * 2 + self.val_attn_dim)
        self.proj = nn.Linear(self.val_attn_dim, dim)
        r = to_2tuple(resolution)
        self.resolution = r
        pos = np.stack(np.meshgrid(np.arange(r[0]), np.arange(r[1]), indexing="ij")).reshape(2, -1)
        rel = np.abs(pos[:, :, None] - pos[:, None, :])
        self.attention_biases = nn.Parameter(lucid.zeros(num_heads, r[0] * r[1]))
        self.register_buffer(
            "attention_bias_idxs", lucid.tensor((rel[0] * r[1] + rel[1]).astype(np.int64))
        )

    def forward(self, x: Any) -> Any:
        b, n, _ = x.shape
        if n != self.resolution[0] * self.resolution[1]:
            raise ValueError(
                f"EfficientFormer's attention has biases for a {self.resolution[0]}x"
                f"{self.resolution[1]} grid ({self.resolution[0] * self.resolution[1]} tokens), "
                f"got {n} tokens: the input must be 32 times that size (build the model with "
                f"img_size=... for another)"
            )
        qkv = self.qkv(x).reshape(b, n, self.num_heads, -1).permute(0, 2, 1, 3)
        k0, k1 = self.key_dim, 2 * self.key_dim
        q, k, v = qkv[..., :k0], qkv[..., k0:k1], qkv[..., k1:]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn + self.attention_biases[:, self.attention_bias_idxs]
        x = (F.softmax(attn, dim=-1) @ v).transpose(1, 2).reshape(b, n, self.val_attn_dim)
        return self.proj(x)


class Stem4(nn.Sequential):
    """Two 3x3/2 convs, each with BatchNorm and ReLU: stride 4."""

    def __init__(self, in_chs: int, out_chs: int) -> None:
        super().__init__()
        self.add_module("conv1", nn.Conv2d(in_chs, out_chs // 2, 3, stride=2, padding=1))
        self.add_module("norm1", nn.BatchNorm2d(out_chs // 2))
        self.add_module("act1", nn.ReLU())
        self.add_module("conv2", nn.Conv2d(out_chs // 2, out_chs, 3, stride=2, padding=1))
        self.add_module("norm2", nn.BatchNorm2d(out_chs))
        self.add_module("act2", nn.ReLU())


class Downsample(nn.Module):
    """A 3x3/2 conv and BatchNorm."""

    def __init__(self, in_chs: int, out_chs: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size=3, stride=2, padding=1)
        self.norm = nn.BatchNorm2d(out_chs)

    def forward(self, x: Any) -> Any:
        return self.norm(self.conv(x))


class Flat(nn.Module):
    """``(N, C, H, W)`` to tokens ``(N, H W, C)``."""

    def forward(self, x: Any) -> Any:
        return x.flatten(2).transpose(1, 2)


class Pooling(nn.Module):
    """PoolFormer's token mixer: a 3x3 average (padding not counted) minus the input."""

    def __init__(self, pool_size: int = 3) -> None:
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size, stride=1, padding=pool_size // 2,
                                 count_include_pad=False)  # fmt: skip

    def forward(self, x: Any) -> Any:
        return self.pool(x) - x


class ConvMlpWithNorm(nn.Module):
    """1x1 conv, BatchNorm, GELU, 1x1 conv, BatchNorm."""

    def __init__(self, in_features: int, hidden_features: int, drop: float = 0.0) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(in_features, hidden_features, 1)
        self.norm1 = nn.BatchNorm2d(hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Conv2d(hidden_features, in_features, 1)
        self.norm2 = nn.BatchNorm2d(in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x: Any) -> Any:
        x = self.drop(self.act(self.norm1(self.fc1(x))))
        return self.drop(self.norm2(self.fc2(x)))


class MetaBlock1d(nn.Module):
    """Transformer block on tokens: LayerNorm, attention, layer scale; LayerNorm, MLP, layer
    scale."""

    def __init__(self, dim: int, mlp_ratio: float = 4.0, proj_drop: float = 0.0,
                 drop_path_prob: float = 0.0, layer_scale_init_value: float = 1e-5,
                 resolution: int | tuple[int, int] = 7) -> None:  # fmt: skip
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mixer = Attention(dim, resolution=resolution)
        self.ls1 = LayerScale(dim, layer_scale_init_value)
        self.drop_path1 = drop_path(drop_path_prob)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=proj_drop)
        self.ls2 = LayerScale(dim, layer_scale_init_value)
        self.drop_path2 = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        x = x + self.drop_path1(self.ls1(self.token_mixer(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


class MetaBlock2d(nn.Module):
    """PoolFormer block on ``(N, C, H, W)``: pooling mixer and conv MLP, with layer scale."""

    def __init__(self, dim: int, pool_size: int = 3, mlp_ratio: float = 4.0,
                 proj_drop: float = 0.0, drop_path_prob: float = 0.0,
                 layer_scale_init_value: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        self.token_mixer = Pooling(pool_size)
        self.ls1 = LayerScale2d(dim, layer_scale_init_value)
        self.drop_path1 = drop_path(drop_path_prob)
        self.mlp = ConvMlpWithNorm(dim, int(dim * mlp_ratio), proj_drop)
        self.ls2 = LayerScale2d(dim, layer_scale_init_value)
        self.drop_path2 = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        x = x + self.drop_path1(self.ls1(self.token_mixer(x)))
        return x + self.drop_path2(self.ls2(self.mlp(x)))


class EfficientFormerStage(nn.Module):
    """An optional downsampling, then 4D blocks and, last, ``num_vit`` transformer blocks
    (after a :class:`Flat`)."""

    def __init__(
        self,
        dim: int,
        dim_out: int,
        depth: int,
        downsample: bool,
        num_vit: int,
        pool_size: int,
        mlp_ratio: float,
        proj_drop: float,
        drop_path_probs: Sequence[float],
        layer_scale_init_value: float,
        resolution: int | tuple[int, int],
    ) -> None:
        super().__init__()
        self.downsample: nn.Module = Downsample(dim, dim_out) if downsample else nn.Identity()
        blocks: list[nn.Module] = []
        if num_vit and num_vit >= depth:
            blocks.append(Flat())
        for i in range(depth):
            remain = depth - i - 1
            if num_vit and num_vit > remain:
                blocks.append(MetaBlock1d(dim_out, mlp_ratio, proj_drop, drop_path_probs[i],
                                          layer_scale_init_value, resolution))  # fmt: skip
            else:
                blocks.append(MetaBlock2d(dim_out, pool_size, mlp_ratio, proj_drop,
                                          drop_path_probs[i], layer_scale_init_value))  # fmt: skip
                if num_vit and num_vit == remain:
                    blocks.append(Flat())
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x: Any) -> Any:
        return self.blocks(self.downsample(x))


class EfficientFormer(nn.Module):
    """EfficientFormer (``timm.models.efficientformer.EfficientFormer``). ``img_size`` (a lucid
    addition; timm's attention is fixed at 224x224) sizes the attention biases for another
    input size, a multiple of 32."""

    def __init__(
        self,
        depths: Sequence[int] = (3, 2, 6, 4),
        embed_dims: Sequence[int] = (48, 96, 224, 448),
        in_channels: int = 3,
        num_classes: int = 1000,
        num_vit: int = 0,
        mlp_ratios: float = 4,
        pool_size: int = 3,
        layer_scale_init_value: float = 1e-5,
        drop_rate: float = 0.0,
        proj_drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
        img_size: int | tuple[int, int] = 224,
    ) -> None:
        super().__init__()
        if len(depths) != len(embed_dims):
            raise ValueError(
                f"depths and embed_dims need one entry per stage, got {list(depths)} and "
                f"{list(embed_dims)}"
            )
        size = to_2tuple(img_size)
        if size[0] % 32 or size[1] % 32:
            raise ValueError(f"EfficientFormer's img_size must be a multiple of 32, got {img_size}")
        resolution = (size[0] // 32, size[1] // 32)
        self.num_classes = num_classes
        self.stem = Stem4(in_channels, embed_dims[0])
        dpr = drop_path_rates(drop_path_rate, list(depths))
        n = len(depths)
        stages = []
        prev = embed_dims[0]
        for i in range(n):
            stages.append(
                EfficientFormerStage(
                    prev,
                    embed_dims[i],
                    depths[i],
                    i > 0,
                    num_vit if i == n - 1 else 0,
                    pool_size,
                    mlp_ratios,
                    proj_drop_rate,
                    dpr[i],
                    layer_scale_init_value,
                    resolution,
                )  # fmt: skip
            )
            prev = embed_dims[i]
        self.stages = nn.Sequential(*stages)
        self.num_features = embed_dims[-1]
        self.norm = nn.LayerNorm(self.num_features)
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(self.num_features, num_classes)
        self.head_dist = nn.Linear(self.num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Any) -> Any:
        """The normalised tokens of the last stage, ``(N, H W / 1024, C)``."""
        return self.norm(self.stages(self.stem(x)))

    def forward(self, x: Any) -> Any:
        x = self.head_drop(self.forward_features(x).mean(dim=1))
        return (self.head(x) + self.head_dist(x)) / 2


_ef = partial(classifier, _PAPER, reference="timm")


@_ef(12_289_928)
def efficientformer_l1(**kwargs: Any) -> EfficientFormer:
    """EfficientFormer-L1 (dims 48-448, one attention block), 12,289,928 parameters for 1000
    classes."""
    return EfficientFormer((3, 2, 6, 4), (48, 96, 224, 448), num_vit=1, **kwargs)


@_ef(31_406_000)
def efficientformer_l3(**kwargs: Any) -> EfficientFormer:
    """EfficientFormer-L3 (dims 64-512, four attention blocks), 31,406,000 parameters for 1000
    classes."""
    return EfficientFormer((4, 4, 12, 6), (64, 128, 320, 512), num_vit=4, **kwargs)


@_ef(82_229_328)
def efficientformer_l7(**kwargs: Any) -> EfficientFormer:
    """EfficientFormer-L7 (dims 96-768, eight attention blocks), 82,229,328 parameters for 1000
    classes."""
    return EfficientFormer((6, 6, 18, 8), (96, 192, 384, 768), num_vit=8, **kwargs)
