"""Multiscale Vision Transformers: MViT-V1-B (Fan et al., "Multiscale Vision Transformers",
ICCV 2021) and MViT-V2-S (Li et al., "MViTv2: Improved Multiscale Vision Transformers for
Classification and Detection", CVPR 2022) in torchvision's layout
(``torchvision.models.video.mvit``: the same state-dict keys). Input ``(N, 3, 16, 224, 224)``
(or ``(N, 3, 224, 224)``, a one-frame clip)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._layers import StochasticDepth
from lucid.models._registry import register_model
from lucid.models.ops import MLP
from lucid.nn import functional as F

__all__ = ["MSBlockConfig", "MViT", "mvit_v1_b", "mvit_v2_s"]

_PAPER_V1 = 'Fan et al., "Multiscale Vision Transformers", ICCV 2021'
_PAPER_V2 = (
    'Li et al., "MViTv2: Improved Multiscale Vision Transformers for Classification '
    'and Detection", CVPR 2022'
)

THW = tuple[int, int, int]


@dataclass
class MSBlockConfig:
    """One block of the table: heads, channels in and out, pooling kernels and strides."""

    num_heads: int
    input_channels: int
    output_channels: int
    kernel_q: list[int]
    kernel_kv: list[int]
    stride_q: list[int]
    stride_kv: list[int]


def _prod(s: Sequence[int]) -> int:
    return math.prod(s)


class Pool(nn.Module):
    """Pools the tokens (not the class token) of ``[B, (heads,) N, C]`` as a ``T x H x W``
    volume, then the norm (and activation)."""

    def __init__(
        self,
        pool: nn.Module,
        norm: nn.Module | None,
        activation: nn.Module | None = None,
        norm_before_pool: bool = False,
    ) -> None:
        super().__init__()
        self.pool = pool
        layers = [m for m in (norm, activation) if m is not None]
        self.norm_act = nn.Sequential(*layers) if layers else None
        self.norm_before_pool = norm_before_pool

    def forward(self, x: Any, thw: THW) -> tuple[Any, THW]:
        squeeze = x.ndim == 3
        if squeeze:
            x = x.unsqueeze(1)
        elif x.ndim != 4:
            raise ValueError(f"Unsupported input dimension {tuple(x.shape)}")
        class_token, x = x[:, :, :1], x[:, :, 1:]
        x = x.transpose(2, 3)
        b, n, c = x.shape[:3]
        x = x.reshape(b * n, c, *thw)
        if self.norm_before_pool and self.norm_act is not None:
            x = self.norm_act(x)
        x = self.pool(x)
        t, h, w = x.shape[2:]
        x = lucid.cat([class_token, x.reshape(b, n, c, -1).transpose(2, 3)], dim=2)
        if not self.norm_before_pool and self.norm_act is not None:
            x = self.norm_act(x)
        return (x.squeeze(1) if squeeze else x), (t, h, w)


def _interpolate(embedding: Any, d: int) -> Any:
    if embedding.shape[0] == d:
        return embedding
    out = F.interpolate(embedding.permute(1, 0).unsqueeze(0), size=d, mode="linear")
    return out.squeeze(0).permute(1, 0)


def _distance(q: int, k: int) -> np.ndarray:
    q_ratio, k_ratio = max(k / q, 1.0), max(q / k, 1.0)
    dist = np.arange(q)[:, None] * q_ratio - (np.arange(k)[None, :] + (1.0 - k)) * k_ratio
    return dist.astype(np.int64)  # truncation, as torch's .long()


def _add_rel_pos(
    attn: Any, q: Any, q_thw: THW, k_thw: THW, rel_pos_h: Any, rel_pos_w: Any, rel_pos_t: Any
) -> Any:
    """MViTv2's decomposed relative-position term, added to the token-token attention."""
    q_t, q_h, q_w = q_thw
    k_t, k_h, k_w = k_thw
    rh = _interpolate(rel_pos_h, int(2 * max(q_h, k_h) - 1))[lucid.tensor(_distance(q_h, k_h))]
    rw = _interpolate(rel_pos_w, int(2 * max(q_w, k_w) - 1))[lucid.tensor(_distance(q_w, k_w))]
    rt = _interpolate(rel_pos_t, int(2 * max(q_t, k_t) - 1))[lucid.tensor(_distance(q_t, k_t))]
    b, n_head, _, dim = q.shape
    r_q = q[:, :, 1:].reshape(b, n_head, q_t, q_h, q_w, dim)
    rel_h = lucid.einsum("bythwc,hkc->bythwk", r_q, rh)
    rel_w = lucid.einsum("bythwc,wkc->bythwk", r_q, rw)
    r_t = r_q.permute(2, 0, 1, 3, 4, 5).reshape(q_t, b * n_head * q_h * q_w, dim)
    rel_t = lucid.matmul(r_t, rt.transpose(1, 2)).transpose(0, 1)
    rel_t = rel_t.reshape(b, n_head, q_h, q_w, q_t, k_t).permute(0, 1, 4, 2, 3, 5)
    rel = (
        rel_h[:, :, :, :, :, None, :, None]
        + rel_w[:, :, :, :, :, None, None, :]
        + rel_t[:, :, :, :, :, :, None, None]
    )
    rel = rel.reshape(b, n_head, q_t * q_h * q_w, k_t * k_h * k_w)
    return attn + F.pad(rel, (1, 0, 1, 0))  # the class token has no relative position


class MultiscaleAttention(nn.Module):
    """Pooling attention: queries, keys and values pooled by depthwise 3D convolutions
    (with LayerNorm), optionally MViTv2's relative positions and residual pooling."""

    def __init__(
        self,
        input_size: list[int],
        embed_dim: int,
        output_dim: int,
        num_heads: int,
        kernel_q: list[int],
        kernel_kv: list[int],
        stride_q: list[int],
        stride_kv: list[int],
        residual_pool: bool,
        residual_with_cls_embed: bool,
        rel_pos_embed: bool,
        dropout: float = 0.0,
        norm_layer: Callable[..., nn.Module] = nn.LayerNorm,
    ) -> None:
        super().__init__()
        self.embed_dim = embed_dim
        self.output_dim = output_dim
        self.num_heads = num_heads
        self.head_dim = output_dim // num_heads
        self.scaler = 1.0 / math.sqrt(self.head_dim)
        self.residual_pool = residual_pool
        self.residual_with_cls_embed = residual_with_cls_embed
        self.qkv = nn.Linear(embed_dim, 3 * output_dim)
        layers: list[nn.Module] = [nn.Linear(output_dim, output_dim)]
        if dropout > 0.0:
            layers.append(nn.Dropout(dropout, inplace=True))
        self.project = nn.Sequential(*layers)

        def pool(kernel: list[int], stride: list[int]) -> Pool:
            conv = nn.Conv3d(
                self.head_dim,
                self.head_dim,
                kernel,
                stride=stride,
                padding=[k // 2 for k in kernel],
                groups=self.head_dim,
                bias=False,
            )
            return Pool(conv, norm_layer(self.head_dim))

        self.pool_q = (
            pool(kernel_q, stride_q) if _prod(kernel_q) > 1 or _prod(stride_q) > 1 else None
        )
        kv = _prod(kernel_kv) > 1 or _prod(stride_kv) > 1
        self.pool_k = pool(kernel_kv, stride_kv) if kv else None
        self.pool_v = pool(kernel_kv, stride_kv) if kv else None
        self.rel_pos_h: Any = None
        self.rel_pos_w: Any = None
        self.rel_pos_t: Any = None
        if rel_pos_embed:
            size = max(input_size[1:])
            q_size = size // stride_q[1] if len(stride_q) > 0 else size
            kv_size = size // stride_kv[1] if len(stride_kv) > 0 else size
            spatial_dim = 2 * max(q_size, kv_size) - 1
            temporal_dim = 2 * input_size[0] - 1
            self.rel_pos_h = nn.Parameter(lucid.zeros(spatial_dim, self.head_dim))
            self.rel_pos_w = nn.Parameter(lucid.zeros(spatial_dim, self.head_dim))
            self.rel_pos_t = nn.Parameter(lucid.zeros(temporal_dim, self.head_dim))
            for p in (self.rel_pos_h, self.rel_pos_w, self.rel_pos_t):
                nn.init.trunc_normal_(p, std=0.02)

    def forward(self, x: Any, thw: THW) -> tuple[Any, THW]:
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, self.head_dim).transpose(1, 3)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        k_thw = thw
        if self.pool_k is not None:
            k, k_thw = self.pool_k(k, thw)
        if self.pool_v is not None:
            v = self.pool_v(v, thw)[0]
        if self.pool_q is not None:
            q, thw = self.pool_q(q, thw)
        attn = lucid.matmul(self.scaler * q, k.transpose(2, 3))
        if self.rel_pos_h is not None:
            attn = _add_rel_pos(attn, q, thw, k_thw, self.rel_pos_h, self.rel_pos_w, self.rel_pos_t)
        x = lucid.matmul(attn.softmax(dim=-1), v)
        if self.residual_pool:
            x = x + (q if self.residual_with_cls_embed else F.pad(q[:, :, 1:], (0, 0, 1, 0)))
        x = x.transpose(1, 2).reshape(b, -1, self.output_dim)
        return self.project(x), thw


class MultiscaleBlock(nn.Module):
    """Pre-norm pooling attention and MLP; the shortcut max-pooled where the queries are, and
    projected where the width changes."""

    def __init__(
        self,
        input_size: list[int],
        cnf: MSBlockConfig,
        residual_pool: bool,
        residual_with_cls_embed: bool,
        rel_pos_embed: bool,
        proj_after_attn: bool,
        dropout: float = 0.0,
        stochastic_depth_prob: float = 0.0,
        norm_layer: Callable[..., nn.Module] = nn.LayerNorm,
    ) -> None:
        super().__init__()
        self.proj_after_attn = proj_after_attn
        self.pool_skip: Pool | None = None
        if _prod(cnf.stride_q) > 1:
            kernel_skip = [s + 1 if s > 1 else s for s in cnf.stride_q]
            self.pool_skip = Pool(
                nn.MaxPool3d(
                    kernel_skip, stride=cnf.stride_q, padding=[k // 2 for k in kernel_skip]
                ),
                None,
            )
        attn_dim = cnf.output_channels if proj_after_attn else cnf.input_channels
        self.norm1 = norm_layer(cnf.input_channels)
        self.norm2 = norm_layer(attn_dim)
        self.needs_transposal = isinstance(self.norm1, nn.BatchNorm1d)
        self.attn = MultiscaleAttention(
            input_size,
            cnf.input_channels,
            attn_dim,
            cnf.num_heads,
            kernel_q=cnf.kernel_q,
            kernel_kv=cnf.kernel_kv,
            stride_q=cnf.stride_q,
            stride_kv=cnf.stride_kv,
            rel_pos_embed=rel_pos_embed,
            residual_pool=residual_pool,
            residual_with_cls_embed=residual_with_cls_embed,
            dropout=dropout,
            norm_layer=norm_layer,
        )
        self.mlp = MLP(
            attn_dim,
            [4 * attn_dim, cnf.output_channels],
            activation_layer=nn.GELU,
            dropout=dropout,
            inplace=None,
        )
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.project: nn.Module | None = None
        if cnf.input_channels != cnf.output_channels:
            self.project = nn.Linear(cnf.input_channels, cnf.output_channels)

    def _norm(self, norm: nn.Module, x: Any) -> Any:
        return norm(x.transpose(1, 2)).transpose(1, 2) if self.needs_transposal else norm(x)

    def forward(self, x: Any, thw: THW) -> tuple[Any, THW]:
        x_norm1 = self._norm(self.norm1, x)
        x_attn, thw_new = self.attn(x_norm1, thw)
        x = x if self.project is None or not self.proj_after_attn else self.project(x_norm1)
        x_skip = x if self.pool_skip is None else self.pool_skip(x, thw)[0]
        x = x_skip + self.stochastic_depth(x_attn)
        x_norm2 = self._norm(self.norm2, x)
        x_proj = x if self.project is None or self.proj_after_attn else self.project(x_norm2)
        return x_proj + self.stochastic_depth(self.mlp(x_norm2)), thw_new


class PositionalEncoding(nn.Module):
    """The class token, and MViTv1's absolute space and time position embeddings."""

    def __init__(
        self,
        embed_size: int,
        spatial_size: tuple[int, int],
        temporal_size: int,
        rel_pos_embed: bool,
    ) -> None:
        super().__init__()
        self.spatial_size = spatial_size
        self.temporal_size = temporal_size
        self.class_token = nn.Parameter(lucid.zeros(embed_size))
        self.spatial_pos: Any = None
        self.temporal_pos: Any = None
        self.class_pos: Any = None
        if not rel_pos_embed:
            self.spatial_pos = nn.Parameter(
                lucid.zeros(spatial_size[0] * spatial_size[1], embed_size)
            )
            self.temporal_pos = nn.Parameter(lucid.zeros(temporal_size, embed_size))
            self.class_pos = nn.Parameter(lucid.zeros(embed_size))

    def forward(self, x: Any) -> Any:
        class_token = self.class_token.expand(x.shape[0], -1).unsqueeze(1)
        x = lucid.cat([class_token, x], dim=1)
        if self.spatial_pos is not None:
            hw, embed = self.spatial_pos.shape
            pos = lucid.repeat_interleave(self.temporal_pos, hw, dim=0)
            pos = pos + self.spatial_pos.unsqueeze(0).expand(self.temporal_size, -1, -1).reshape(
                -1, embed
            )
            x = x + lucid.cat([self.class_pos.unsqueeze(0), pos], dim=0).unsqueeze(0)
        return x


class MViT(nn.Module):
    """torchvision's ``MViT``: a 3D patch embedding, multiscale blocks, LayerNorm of the class
    token and a linear head (400 Kinetics classes)."""

    def __init__(
        self,
        spatial_size: tuple[int, int],
        temporal_size: int,
        block_setting: Sequence[MSBlockConfig],
        residual_pool: bool,
        residual_with_cls_embed: bool,
        rel_pos_embed: bool,
        proj_after_attn: bool,
        dropout: float = 0.5,
        attention_dropout: float = 0.0,
        stochastic_depth_prob: float = 0.0,
        num_classes: int = 400,
        block: Callable[..., nn.Module] | None = None,
        norm_layer: Callable[..., nn.Module] | None = None,
        patch_embed_kernel: tuple[int, int, int] = (3, 7, 7),
        patch_embed_stride: tuple[int, int, int] = (2, 4, 4),
        patch_embed_padding: tuple[int, int, int] = (1, 3, 3),
    ) -> None:
        super().__init__()
        total = len(block_setting)
        if total == 0:
            raise ValueError("The configuration parameter can't be empty.")
        block = block or MultiscaleBlock
        norm = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.conv_proj = nn.Conv3d(
            3,
            block_setting[0].input_channels,
            patch_embed_kernel,
            stride=patch_embed_stride,
            padding=patch_embed_padding,
        )
        input_size = [s // st for s, st in zip((temporal_size, *spatial_size), patch_embed_stride)]
        self.pos_encoding = PositionalEncoding(
            block_setting[0].input_channels,
            (input_size[1], input_size[2]),
            input_size[0],
            rel_pos_embed,
        )
        self.blocks = nn.ModuleList()
        for i, cnf in enumerate(block_setting):
            sd_prob = stochastic_depth_prob * i / (total - 1.0)
            self.blocks.append(
                block(
                    input_size=input_size,
                    cnf=cnf,
                    residual_pool=residual_pool,
                    residual_with_cls_embed=residual_with_cls_embed,
                    rel_pos_embed=rel_pos_embed,
                    proj_after_attn=proj_after_attn,
                    dropout=attention_dropout,
                    stochastic_depth_prob=sd_prob,
                    norm_layer=norm,
                )
            )
            if len(cnf.stride_q) > 0:
                input_size = [s // st for s, st in zip(input_size, cnf.stride_q)]
        self.norm = norm(block_setting[-1].output_channels)
        self.head = nn.Sequential(
            nn.Dropout(dropout, inplace=True),
            nn.Linear(block_setting[-1].output_channels, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                if m.weight is not None:
                    nn.init.ones_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, PositionalEncoding):
                for p in m.parameters():
                    nn.init.trunc_normal_(p, std=0.02)

    def forward(self, x: Any) -> Any:
        if x.ndim == 4:
            x = x.unsqueeze(2)
        elif x.ndim != 5:
            raise ValueError(f"Unsupported input dimension {tuple(x.shape)}")
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = self.pos_encoding(x)
        thw = (self.pos_encoding.temporal_size, *self.pos_encoding.spatial_size)
        for block in self.blocks:
            x, thw = block(x, thw)
        return self.head(self.norm(x)[:, 0])


def _settings(config: dict[str, list[Any]]) -> list[MSBlockConfig]:
    return [
        MSBlockConfig(
            *(
                config[f][i]
                for f in (
                    "num_heads",
                    "input_channels",
                    "output_channels",
                    "kernel_q",
                    "kernel_kv",
                    "stride_q",
                    "stride_kv",
                )
            )
        )
        for i in range(len(config["num_heads"]))
    ]


def _mvit(block_setting: list[MSBlockConfig], kwargs: dict[str, Any], **config: Any) -> MViT:
    spatial_size = kwargs.pop("spatial_size", (224, 224))
    temporal_size = kwargs.pop("temporal_size", 16)
    for key in ("residual_pool", "residual_with_cls_embed", "rel_pos_embed", "proj_after_attn"):
        config[key] = kwargs.pop(key, config[key])
    sd = kwargs.pop("stochastic_depth_prob", 0.2)
    return MViT(
        spatial_size=spatial_size,
        temporal_size=temporal_size,
        block_setting=block_setting,
        stochastic_depth_prob=sd,
        **config,
        **kwargs,
    )


_K3 = [3, 3, 3]
_S2 = [1, 2, 2]
_HEADS = [1, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 8, 8]
_STRIDE_KV = [[1, 8, 8], [1, 4, 4], [1, 4, 4], *[[1, 2, 2]] * 11, [1, 1, 1], [1, 1, 1]]


@register_model(
    task="video-classification",
    paper=_PAPER_V1,
    num_params=36_610_672,
    input_size=(3, 16, 224, 224),
    reference="torchvision",
)
def mvit_v1_b(**kwargs: Any) -> MViT:
    """MViT-V1-B (16x224x224 clips), 36,610,672 parameters for 400 classes."""
    q = [[], _S2, [], _S2, *[[]] * 10, _S2, []]
    config: dict[str, list[Any]] = {
        "num_heads": _HEADS,
        "input_channels": [96, 192, 192, *[384] * 11, 768, 768],
        "output_channels": [192, 192, *[384] * 11, 768, 768, 768],
        "kernel_q": [_K3 if s else [] for s in q],
        "kernel_kv": [_K3] * 16,
        "stride_q": q,
        "stride_kv": _STRIDE_KV,
    }
    return _mvit(
        _settings(config),
        kwargs,
        residual_pool=False,
        residual_with_cls_embed=False,
        rel_pos_embed=False,
        proj_after_attn=False,
    )


@register_model(
    task="video-classification",
    paper=_PAPER_V2,
    num_params=34_537_744,
    input_size=(3, 16, 224, 224),
    reference="torchvision",
)
def mvit_v2_s(**kwargs: Any) -> MViT:
    """MViT-V2-S (16x224x224 clips), 34,537,744 parameters for 400 classes."""
    one = [1, 1, 1]
    config: dict[str, list[Any]] = {
        "num_heads": _HEADS,
        "input_channels": [96, 96, 192, 192, *[384] * 11, 768],
        "output_channels": [96, 192, 192, *[384] * 11, 768, 768],
        "kernel_q": [_K3] * 16,
        "kernel_kv": [_K3] * 16,
        "stride_q": [one, _S2, one, _S2, *[one] * 10, _S2, one],
        "stride_kv": _STRIDE_KV,
    }
    return _mvit(
        _settings(config),
        kwargs,
        residual_pool=True,
        residual_with_cls_embed=False,
        rel_pos_embed=True,
        proj_after_attn=True,
    )
