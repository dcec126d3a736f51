"""Pyramid Vision Transformer v2 B0-B5 and B2-Li (Wang et al., "PVT v2: Improved Baselines with
Pyramid Vision Transformer", CVMJ 2022), in timm's layout (``timm.models.pvt_v2``: the keys of
``timm.create_model("pvt_v2_b0")``'s state dict are this model's), and PVT v1 Tiny/Small/
Medium/Large (Wang et al., "Pyramid Vision Transformer: A Versatile Backbone for Dense
Prediction without Convolutions", ICCV 2021) in Hugging Face ``transformers``' layout
(``PvtForImageClassification``; timm has no PVT v1)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._vit_layers import drop_path, drop_path_rates

F = nn.functional
_PAPER_V1 = (
    'Wang et al., "Pyramid Vision Transformer: A Versatile Backbone for Dense Prediction without '
    'Convolutions", ICCV 2021'
)
_PAPER_V2 = (
    'Wang et al., "PVT v2: Improved Baselines with Pyramid Vision Transformer", '
    "Computational Visual Media 2022"
)


class MlpWithDepthwiseConv(nn.Module):
    """PVT v2's feed-forward: linear, 3x3 depthwise conv over the token grid, GELU, linear
    (a ReLU before the conv in the linear-attention variant)."""

    def __init__(
        self, in_features: int, hidden_features: int, drop: float = 0.0, extra_relu: bool = False
    ) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.relu = nn.ReLU() if extra_relu else nn.Identity()
        self.dwconv = nn.Conv2d(hidden_features, hidden_features, 3, 1, 1, groups=hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x: Any, feat_size: tuple[int, int]) -> Any:
        x = self.fc1(x)
        b, n, c = x.shape
        x = x.transpose(1, 2).reshape(b, c, feat_size[0], feat_size[1])
        x = self.dwconv(self.relu(x)).flatten(2).transpose(1, 2)
        return self.drop(self.fc2(self.drop(self.act(x))))


class SpatialReductionAttention(nn.Module):
    """Multi-head attention whose keys and values come from the token grid reduced by a
    ``sr_ratio`` strided conv (or, ``linear_attn``, pooled to 7x7), then LayerNorm."""

    def __init__(
        self,
        dim: int,
        num_heads: int = 8,
        sr_ratio: int = 1,
        linear_attn: bool = False,
        qkv_bias: bool = True,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
    ) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim {dim} should be divisible by num_heads {num_heads}")
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.attn_drop = attn_drop
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.pool: nn.Module | None = None
        self.act: nn.Module | None = None
        self.sr: nn.Module | None = None
        self.norm: nn.Module | None = None
        if linear_attn:
            self.pool = nn.AdaptiveAvgPool2d(7)
            self.sr = nn.Conv2d(dim, dim, kernel_size=1, stride=1)
            self.norm = nn.LayerNorm(dim)
            self.act = nn.GELU()
        elif sr_ratio > 1:
            self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
            self.norm = nn.LayerNorm(dim)

    def forward(self, x: Any, feat_size: tuple[int, int]) -> Any:
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.num_heads, -1).permute(0, 2, 1, 3)
        if self.sr is not None and self.norm is not None:
            x = x.permute(0, 2, 1).reshape(b, c, feat_size[0], feat_size[1])
            if self.pool is not None:
                x = self.pool(x)
            x = self.norm(self.sr(x).reshape(b, c, -1).permute(0, 2, 1))
            if self.act is not None:
                x = self.act(x)
        kv = self.kv(x).reshape(b, -1, 2, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        p = self.attn_drop if self.training else 0.0
        x = F.scaled_dot_product_attention(q, kv[0], kv[1], dropout_p=p)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class PvtV2Block(nn.Module):
    """Pre-norm block: spatial-reduction attention and the depthwise-conv MLP, each with drop
    path."""

    def __init__(
        self,
        dim: int,
        num_heads: int,
        mlp_ratio: float = 4.0,
        sr_ratio: int = 1,
        linear_attn: bool = False,
        qkv_bias: bool = True,
        proj_drop: float = 0.0,
        attn_drop: float = 0.0,
        drop_path_prob: float = 0.0,
    ) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = SpatialReductionAttention(
            dim, num_heads, sr_ratio, linear_attn, qkv_bias, attn_drop, proj_drop
        )
        self.drop_path1 = drop_path(drop_path_prob)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MlpWithDepthwiseConv(dim, int(dim * mlp_ratio), proj_drop, linear_attn)
        self.drop_path2 = drop_path(drop_path_prob)

    def forward(self, x: Any, feat_size: tuple[int, int]) -> Any:
        x = x + self.drop_path1(self.attn(self.norm1(x), feat_size))
        return x + self.drop_path2(self.mlp(self.norm2(x), feat_size))


class OverlapPatchEmbed(nn.Module):
    """A strided conv whose kernel overlaps its neighbours, then LayerNorm: ``(N, C, H, W)`` to
    ``(N, H', W', D)``."""

    def __init__(self, patch_size: int = 7, stride: int = 4, in_chans: int = 3,
                 embed_dim: int = 768) -> None:  # fmt: skip
        super().__init__()
        if patch_size <= stride:
            raise ValueError(f"patch_size ({patch_size}) must be larger than stride ({stride})")
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, stride=stride,
                              padding=patch_size // 2)  # fmt: skip
        self.norm = nn.LayerNorm(embed_dim)

    def forward(self, x: Any) -> Any:
        return self.norm(self.proj(x).permute(0, 2, 3, 1))


class PvtV2Stage(nn.Module):
    """A downsampling overlapped patch embedding (not in the first stage), ``depth`` blocks and
    a LayerNorm; ``(N, H, W, C)`` or ``(N, C, H, W)`` in, ``(N, C', H', W')`` out."""

    def __init__(
        self,
        dim: int,
        dim_out: int,
        depth: int,
        downsample: bool,
        num_heads: int,
        sr_ratio: int,
        linear_attn: bool,
        mlp_ratio: float,
        qkv_bias: bool,
        proj_drop: float,
        attn_drop: float,
        drop_path_probs: Sequence[float],
    ) -> None:
        super().__init__()
        self.downsample = OverlapPatchEmbed(3, 2, dim, dim_out) if downsample else None
        self.blocks = nn.ModuleList(
            PvtV2Block(
                dim_out,
                num_heads,
                mlp_ratio,
                sr_ratio,
                linear_attn,
                qkv_bias,
                proj_drop,
                attn_drop,
                drop_path_probs[i],
            )  # fmt: skip
            for i in range(depth)
        )
        self.norm = nn.LayerNorm(dim_out, eps=1e-6)

    def forward(self, x: Any) -> Any:
        if self.downsample is not None:
            x = self.downsample(x)
        b, h, w, c = x.shape
        x = x.reshape(b, -1, c)
        for blk in self.blocks:
            x = blk(x, (h, w))
        return self.norm(x).reshape(b, h, w, -1).permute(0, 3, 1, 2)


class PyramidVisionTransformerV2(nn.Module):
    """PVT v2 (``timm.models.pvt_v2.PyramidVisionTransformerV2``): an overlapped 7x7/4 patch
    embedding, four stages of spatial-reduction attention at strides 4-32, global average
    pooling and a linear head."""

    def __init__(
        self,
        in_channels: int = 3,
        num_classes: int = 1000,
        depths: Sequence[int] = (3, 4, 6, 3),
        embed_dims: Sequence[int] = (64, 128, 256, 512),
        num_heads: Sequence[int] = (1, 2, 4, 8),
        sr_ratios: Sequence[int] = (8, 4, 2, 1),
        mlp_ratios: Sequence[float] = (8.0, 8.0, 4.0, 4.0),
        qkv_bias: bool = True,
        linear: bool = False,
        drop_rate: float = 0.0,
        proj_drop_rate: float = 0.0,
        attn_drop_rate: float = 0.0,
        drop_path_rate: float = 0.0,
    ) -> None:
        super().__init__()
        n = len(depths)
        if not len(embed_dims) == len(num_heads) == len(sr_ratios) == len(mlp_ratios) == n:
            raise ValueError(
                f"depths, embed_dims, num_heads, sr_ratios and mlp_ratios need one entry per "
                f"stage; got lengths {len(depths)}, {len(embed_dims)}, {len(num_heads)}, "
                f"{len(sr_ratios)}, {len(mlp_ratios)}"
            )
        self.num_classes = num_classes
        self.patch_embed = OverlapPatchEmbed(7, 4, in_channels, embed_dims[0])
        dpr = drop_path_rates(drop_path_rate, list(depths))
        prev = embed_dims[0]
        stages = []
        for i in range(n):
            stages.append(
                PvtV2Stage(
                    prev,
                    embed_dims[i],
                    depths[i],
                    i > 0,
                    num_heads[i],
                    sr_ratios[i],
                    linear,
                    mlp_ratios[i],
                    qkv_bias,
                    proj_drop_rate,
                    attn_drop_rate,
                    dpr[i],
                )  # fmt: skip
            )
            prev = embed_dims[i]
        self.stages = nn.Sequential(*stages)
        self.num_features = embed_dims[-1]
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(embed_dims[-1], num_classes) if num_classes > 0 else nn.Identity()
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Any) -> Any:
        """The last stage's ``(N, C, H/32, W/32)`` feature map."""
        return self.stages(self.patch_embed(x))

    def forward(self, x: Any) -> Any:
        x = self.forward_features(x).mean(dim=(-1, -2))
        return self.head(self.head_drop(x))


def _pvt_v2(depths: tuple[int, ...], dims: tuple[int, ...], kwargs: dict[str, Any],
            **extra: Any) -> PyramidVisionTransformerV2:  # fmt: skip
    return PyramidVisionTransformerV2(depths=depths, embed_dims=dims, num_heads=(1, 2, 5, 8),
                                      **{**extra, **kwargs})  # fmt: skip


_pvt = partial(classifier, _PAPER_V2, reference="timm")


@_pvt(3_666_760)
def pvt_v2_b0(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B0 (dims 32-256, depths 2-2-2-2), 3,666,760 parameters for 1000 classes."""
    return _pvt_v2((2, 2, 2, 2), (32, 64, 160, 256), kwargs)


@_pvt(14_009_000)
def pvt_v2_b1(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B1 (dims 64-512, depths 2-2-2-2), 14,009,000 parameters for 1000 classes."""
    return _pvt_v2((2, 2, 2, 2), (64, 128, 320, 512), kwargs)


@_pvt(25_362_856)
def pvt_v2_b2(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B2 (depths 3-4-6-3), 25,362,856 parameters for 1000 classes."""
    return _pvt_v2((3, 4, 6, 3), (64, 128, 320, 512), kwargs)


@_pvt(22_553_512)
def pvt_v2_b2_li(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B2-Li (linear attention: keys and values pooled to 7x7), 22,553,512 parameters
    for 1000 classes."""
    return _pvt_v2((3, 4, 6, 3), (64, 128, 320, 512), kwargs, linear=True)


@_pvt(45_238_696)
def pvt_v2_b3(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B3 (depths 3-4-18-3), 45,238,696 parameters for 1000 classes."""
    return _pvt_v2((3, 4, 18, 3), (64, 128, 320, 512), kwargs)


@_pvt(62_556_072)
def pvt_v2_b4(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B4 (depths 3-8-27-3), 62,556,072 parameters for 1000 classes."""
    return _pvt_v2((3, 8, 27, 3), (64, 128, 320, 512), kwargs)


@_pvt(81_956_008)
def pvt_v2_b5(**kwargs: Any) -> PyramidVisionTransformerV2:
    """PVT v2-B5 (depths 3-6-40-3, MLP ratio 4 throughout), 81,956,008 parameters for 1000
    classes."""
    return _pvt_v2((3, 6, 40, 3), (64, 128, 320, 512), kwargs, mlp_ratios=(4, 4, 4, 4))


# PVT v1, in Hugging Face transformers' layout


@dataclass(frozen=True)
class PvtConfig:
    """The fields of ``transformers.PvtConfig`` the model reads (its defaults are PVT-Tiny)."""

    image_size: int = 224
    num_channels: int = 3
    depths: tuple[int, ...] = (2, 2, 2, 2)
    sequence_reduction_ratios: tuple[int, ...] = (8, 4, 2, 1)
    hidden_sizes: tuple[int, ...] = (64, 128, 320, 512)
    patch_sizes: tuple[int, ...] = (4, 2, 2, 2)
    strides: tuple[int, ...] = (4, 2, 2, 2)
    num_attention_heads: tuple[int, ...] = (1, 2, 5, 8)
    mlp_ratios: tuple[float, ...] = (8, 8, 4, 4)
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    drop_path_rate: float = 0.0
    layer_norm_eps: float = 1e-6
    qkv_bias: bool = True


class PvtPatchEmbeddings(nn.Module):
    """Non-overlapping patches by a strided conv, LayerNorm, (a class token in the last stage)
    plus learned position embeddings for the configured image size."""

    def __init__(self, config: PvtConfig, image_size: int, patch_size: int, stride: int,
                 num_channels: int, hidden_size: int, cls_token: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.grid = (image_size // patch_size, image_size // patch_size)
        n = self.grid[0] * self.grid[1]
        self.position_embeddings = nn.Parameter(lucid.zeros(1, n + 1 if cls_token else n,
                                                            hidden_size))  # fmt: skip
        self.cls_token = nn.Parameter(lucid.zeros(1, 1, hidden_size)) if cls_token else None
        self.projection = nn.Conv2d(num_channels, hidden_size, kernel_size=stride,
                                    stride=patch_size)  # fmt: skip
        self.layer_norm = nn.LayerNorm(hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x: Any) -> tuple[Any, int, int]:
        x = self.projection(x)
        h, w = x.shape[-2], x.shape[-1]
        if (h, w) != self.grid:
            raise ValueError(
                f"PVT's position embeddings are for a {self.grid[0]}x{self.grid[1]} grid of "
                f"patches, got {h}x{w}: build the model with image_size=... for this input"
            )
        x = self.layer_norm(x.flatten(2).transpose(1, 2))
        if self.cls_token is not None:
            x = lucid.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1)
        return self.dropout(x + self.position_embeddings), h, w


class PvtEfficientSelfAttention(nn.Module):
    """Multi-head attention whose keys and values come from the token grid reduced by a
    ``sequences_reduction_ratio`` strided conv and LayerNorm."""

    def __init__(self, config: PvtConfig, hidden_size: int, num_attention_heads: int,
                 sequences_reduction_ratio: int) -> None:  # fmt: skip
        super().__init__()
        if hidden_size % num_attention_heads:
            raise ValueError(
                f"The hidden size ({hidden_size}) is not a multiple of the number of attention "
                f"heads ({num_attention_heads})"
            )
        self.num_attention_heads = num_attention_heads
        self.attention_probs_dropout_prob = config.attention_probs_dropout_prob
        self.query = nn.Linear(hidden_size, hidden_size, bias=config.qkv_bias)
        self.key = nn.Linear(hidden_size, hidden_size, bias=config.qkv_bias)
        self.value = nn.Linear(hidden_size, hidden_size, bias=config.qkv_bias)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.sequences_reduction_ratio = sequences_reduction_ratio
        if sequences_reduction_ratio > 1:
            r = sequences_reduction_ratio
            self.sequence_reduction = nn.Conv2d(hidden_size, hidden_size, kernel_size=r, stride=r)
            self.layer_norm = nn.LayerNorm(hidden_size, eps=config.layer_norm_eps)

    def _heads(self, x: Any) -> Any:
        b, n, c = x.shape
        return x.reshape(b, n, self.num_attention_heads, -1).permute(0, 2, 1, 3)

    def forward(self, x: Any, height: int, width: int) -> Any:
        q = self._heads(self.query(x))
        if self.sequences_reduction_ratio > 1:
            b, _, c = x.shape
            x = x.permute(0, 2, 1).reshape(b, c, height, width)
            x = self.layer_norm(self.sequence_reduction(x).reshape(b, c, -1).permute(0, 2, 1))
        k, v = self._heads(self.key(x)), self._heads(self.value(x))
        p = self.attention_probs_dropout_prob if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        return out.permute(0, 2, 1, 3).flatten(2)


class PvtSelfOutput(nn.Module):
    """Linear and dropout after the attention."""

    def __init__(self, config: PvtConfig, hidden_size: int) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x: Any) -> Any:
        return self.dropout(self.dense(x))


class PvtAttention(nn.Module):
    """:class:`PvtEfficientSelfAttention` and its output projection."""

    def __init__(self, config: PvtConfig, hidden_size: int, num_attention_heads: int,
                 sequences_reduction_ratio: int) -> None:  # fmt: skip
        super().__init__()
        self.self = PvtEfficientSelfAttention(config, hidden_size, num_attention_heads,
                                              sequences_reduction_ratio)  # fmt: skip
        self.output = PvtSelfOutput(config, hidden_size)

    def forward(self, x: Any, height: int, width: int) -> Any:
        return self.output(self.self(x, height, width))


class PvtFFN(nn.Module):
    """Linear, GELU, dropout, linear, dropout."""

    def __init__(self, config: PvtConfig, in_features: int, hidden_features: int) -> None:
        super().__init__()
        self.dense1 = nn.Linear(in_features, hidden_features)
        self.intermediate_act_fn = nn.GELU()
        self.dense2 = nn.Linear(hidden_features, in_features)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x: Any) -> Any:
        x = self.dropout(self.intermediate_act_fn(self.dense1(x)))
        return self.dropout(self.dense2(x))


class PvtLayer(nn.Module):
    """Pre-norm block: spatial-reduction attention and an MLP, each with drop path."""

    def __init__(self, config: PvtConfig, hidden_size: int, num_attention_heads: int,
                 drop_path_prob: float, sequences_reduction_ratio: int,
                 mlp_ratio: float) -> None:  # fmt: skip
        super().__init__()
        self.layer_norm_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_eps)
        self.attention = PvtAttention(config, hidden_size, num_attention_heads,
                                      sequences_reduction_ratio)  # fmt: skip
        self.drop_path = drop_path(drop_path_prob)
        self.layer_norm_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_eps)
        self.mlp = PvtFFN(config, hidden_size, int(hidden_size * mlp_ratio))

    def forward(self, x: Any, height: int, width: int) -> Any:
        x = x + self.drop_path(self.attention(self.layer_norm_1(x), height, width))
        return x + self.drop_path(self.mlp(self.layer_norm_2(x)))


class PvtEncoder(nn.Module):
    """Four stages of patch embedding and layers; a final LayerNorm."""

    def __init__(self, config: PvtConfig) -> None:
        super().__init__()
        c = config
        n = len(c.depths)
        rates = np.linspace(0.0, c.drop_path_rate, sum(c.depths)).tolist()
        self.patch_embeddings = nn.ModuleList(
            PvtPatchEmbeddings(
                c,
                c.image_size if i == 0 else c.image_size // 2 ** (i + 1),
                c.patch_sizes[i],
                c.strides[i],
                c.num_channels if i == 0 else c.hidden_sizes[i - 1],
                c.hidden_sizes[i],
                cls_token=i == n - 1,
            )  # fmt: skip
            for i in range(n)
        )
        blocks = []
        cur = 0
        for i in range(n):
            blocks.append(nn.ModuleList(
                PvtLayer(c, c.hidden_sizes[i], c.num_attention_heads[i], rates[cur + j],
                         c.sequence_reduction_ratios[i], c.mlp_ratios[i])
                for j in range(c.depths[i])
            ))  # fmt: skip
            cur += c.depths[i]
        self.block = nn.ModuleList(blocks)
        self.layer_norm = nn.LayerNorm(c.hidden_sizes[-1], eps=c.layer_norm_eps)

    def forward(self, x: Any) -> Any:
        b = x.shape[0]
        last = len(self.block) - 1
        for i, (embed, layers) in enumerate(zip(self.patch_embeddings, self.block)):
            x, h, w = embed(x)
            for layer in layers.children():
                x = layer(x, h, w)
            if i != last:
                x = x.reshape(b, h, w, -1).permute(0, 3, 1, 2)
        return self.layer_norm(x)


class PvtModel(nn.Module):
    """The PVT backbone: the last stage's normalised tokens, class token first."""

    def __init__(self, config: PvtConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = PvtEncoder(config)

    def forward(self, x: Any) -> Any:
        return self.encoder(x)


class PvtForImageClassification(nn.Module):
    """PVT v1 with its head (``transformers.PvtForImageClassification``): a linear on the class
    token. Returns the logits (HF returns an output object); ``config.image_size`` is the input
    size the position embeddings are for."""

    def __init__(self, config: PvtConfig | None = None, num_classes: int = 1000) -> None:
        super().__init__()
        self.config = config or PvtConfig()
        self.num_classes = num_classes
        self.pvt = PvtModel(self.config)
        width = self.config.hidden_sizes[-1]
        self.classifier: nn.Module = (
            nn.Linear(width, num_classes) if num_classes > 0 else nn.Identity()
        )
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, PvtPatchEmbeddings):
                nn.init.trunc_normal_(m.position_embeddings, std=0.02)
                if m.cls_token is not None:
                    nn.init.trunc_normal_(m.cls_token, std=0.02)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.pvt(x)[:, 0])


def _pvt_v1(depths: tuple[int, ...], kwargs: dict[str, Any]) -> PvtForImageClassification:
    if "in_channels" in kwargs:  # the zoo's name (lucid-train passes it) for num_channels
        kwargs["num_channels"] = kwargs.pop("in_channels")
    fields = {k: kwargs.pop(k) for k in list(kwargs) if k in PvtConfig.__dataclass_fields__}
    return PvtForImageClassification(PvtConfig(depths=depths, **fields), **kwargs)


_pvt1 = partial(classifier, _PAPER_V1, reference="transformers")


@_pvt1(13_229_288)
def pvt_tiny(**kwargs: Any) -> PvtForImageClassification:
    """PVT-Tiny (depths 2-2-2-2), 13,229,288 parameters for 1000 classes (the paper: 13.2M);
    ``PvtConfig`` fields (e.g. ``image_size``) may be passed as keywords."""
    return _pvt_v1((2, 2, 2, 2), kwargs)


@_pvt1(24_485_864)
def pvt_small(**kwargs: Any) -> PvtForImageClassification:
    """PVT-Small (depths 3-4-6-3), 24,485,864 parameters for 1000 classes (the paper: 24.5M)."""
    return _pvt_v1((3, 4, 6, 3), kwargs)


@_pvt1(44_208_104)
def pvt_medium(**kwargs: Any) -> PvtForImageClassification:
    """PVT-Medium (depths 3-4-18-3), 44,208,104 parameters for 1000 classes (the paper:
    44.2M)."""
    return _pvt_v1((3, 4, 18, 3), kwargs)


@_pvt1(61_369_320)
def pvt_large(**kwargs: Any) -> PvtForImageClassification:
    """PVT-Large (depths 3-8-27-3), 61,369,320 parameters for 1000 classes (the paper:
    61.4M)."""
    return _pvt_v1((3, 8, 27, 3), kwargs)
