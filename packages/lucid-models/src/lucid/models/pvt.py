"""Pyramid Vision Transformer v2 B0-B5 and B2-Li (Wang et al., "PVT v2: Improved Baselines with
Pyramid Vision Transformer", CVMJ 2022), in timm's layout (``timm.models.pvt_v2``: the keys of
``timm.create_model("pvt_v2_b0")``'s state dict are this model's)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

from lucid import nn
from lucid.models._registry import classifier
from lucid.models._vit_layers import drop_path, drop_path_rates

F = nn.functional
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
        in_chans: int = 3,
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
        self.patch_embed = OverlapPatchEmbed(7, 4, in_chans, embed_dims[0])
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
