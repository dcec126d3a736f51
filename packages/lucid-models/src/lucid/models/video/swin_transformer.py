"""Video Swin Transformer (Liu et al., "Video Swin Transformer", CVPR 2022): Swin3D-T/S/B in
torchvision's layout (``torchvision.models.video.swin_transformer``: the same state-dict keys).
Input ``(N, 3, T, H, W)``; 3D shifted windows of ``8 x 7 x 7``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._registry import register_model
from lucid.models.swin import PatchMerging, SwinTransformerBlock, _roll
from lucid.nn import functional as F

__all__ = ["SwinTransformer3d", "swin3d_b", "swin3d_s", "swin3d_t"]

_PAPER = 'Liu et al., "Video Swin Transformer", CVPR 2022'


def _window_and_shift(shift: list[int], size: list[int],
                      window: list[int]) -> tuple[list[int], list[int]]:  # fmt: skip
    """A window no larger than the input, and no shift where the window covers it."""
    for i in range(3):
        if size[i] <= window[i]:
            window[i] = size[i]
            shift[i] = 0
    return window, shift


def _pad_size(size: tuple[int, ...], patch: tuple[int, ...]) -> tuple[int, int, int]:
    pad = [(patch[i] - size[i] % patch[i]) % patch[i] for i in range(3)]
    return pad[0], pad[1], pad[2]


def _attention_mask_3d(size: tuple[int, int, int], window: list[int],
                       shift: list[int]) -> Any:  # fmt: skip
    """-100 between positions of a shifted window that came from different regions."""
    mask = np.zeros(size, np.float32)
    slices = [((0, -window[i]), (-window[i], -shift[i]), (-shift[i], None)) for i in range(3)]
    count = 0
    for d in slices[0]:
        for h in slices[1]:
            for w in slices[2]:
                mask[d[0] : d[1], h[0] : h[1], w[0] : w[1]] = count
                count += 1
    n = (size[0] // window[0]) * (size[1] // window[1]) * (size[2] // window[2])
    mask = mask.reshape(size[0] // window[0], window[0], size[1] // window[1], window[1],
                        size[2] // window[2], window[2])  # fmt: skip
    mask = mask.transpose(0, 2, 4, 1, 3, 5).reshape(n, window[0] * window[1] * window[2])
    diff = mask[:, None, :] - mask[:, :, None]
    return lucid.tensor(np.where(diff != 0, -100.0, 0.0).astype(np.float32))


def shifted_window_attention_3d(x: Any, qkv_weight: Any, proj_weight: Any, bias: Any,
                                window: list[int], num_heads: int, shift: list[int],
                                attention_dropout: float = 0.0, dropout: float = 0.0,
                                qkv_bias: Any = None, proj_bias: Any = None,
                                training: bool = True) -> Any:  # fmt: skip
    """Multi-head attention inside (shifted) 3D windows of ``x`` (``[B, T, H, W, C]``)."""
    b, t, h, w, c = x.shape
    pad = _pad_size((t, h, w), tuple(window))
    x = F.pad(x, (0, 0, 0, pad[2], 0, pad[1], 0, pad[0]))
    _, tp, hp, wp, _ = x.shape
    shifted = sum(shift) > 0
    if shifted:
        x = _roll(x, (-shift[0], -shift[1], -shift[2]), (1, 2, 3))  # type: ignore[arg-type]
    nt, nh, nw = tp // window[0], hp // window[1], wp // window[2]
    n = nt * nh * nw
    vol = window[0] * window[1] * window[2]
    x = x.reshape(b, nt, window[0], nh, window[1], nw, window[2], c)
    x = x.permute(0, 1, 3, 5, 2, 4, 6, 7).reshape(b * n, vol, c)
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(b * n, vol, 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    q = q * (c // num_heads) ** -0.5
    attn = lucid.matmul(q, k.transpose(-2, -1)) + bias
    if shifted:
        mask = _attention_mask_3d((tp, hp, wp), window, shift)
        attn = attn.reshape(b, n, num_heads, vol, vol) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.reshape(-1, num_heads, vol, vol)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = lucid.matmul(attn, v).transpose(1, 2).reshape(b * n, vol, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.reshape(b, nt, nh, nw, window[0], window[1], window[2], c)
    x = x.permute(0, 1, 4, 2, 5, 3, 6, 7).reshape(b, tp, hp, wp, c)
    if shifted:
        x = _roll(x, (shift[0], shift[1], shift[2]), (1, 2, 3))  # type: ignore[arg-type]
    return x[:, :t, :h, :w, :]


class ShiftedWindowAttention3d(nn.Module):
    """3D shifted-window attention with a learned relative-position bias."""

    def __init__(self, dim: int, window_size: list[int], shift_size: list[int], num_heads: int,
                 qkv_bias: bool = True, proj_bias: bool = True, attention_dropout: float = 0.0,
                 dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        if len(window_size) != 3 or len(shift_size) != 3:
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size = list(window_size)
        self.shift_size = list(shift_size)
        self.num_heads = num_heads
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        wd, wh, ww = self.window_size
        self.relative_position_bias_table = nn.Parameter(
            lucid.zeros((2 * wd - 1) * (2 * wh - 1) * (2 * ww - 1), num_heads)
        )
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        coords = np.stack(np.meshgrid(np.arange(wd), np.arange(wh), np.arange(ww),
                                      indexing="ij")).reshape(3, -1)  # fmt: skip
        rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0).copy()
        rel[:, :, 0] += wd - 1
        rel[:, :, 1] += wh - 1
        rel[:, :, 2] += ww - 1
        rel[:, :, 0] *= (2 * wh - 1) * (2 * ww - 1)
        rel[:, :, 1] *= 2 * ww - 1
        self.register_buffer("relative_position_index", lucid.tensor(rel.sum(-1).astype(np.int64)))

    def get_relative_position_bias(self, window_size: list[int]) -> Any:
        """The ``(1, heads, V, V)`` bias of a window of volume ``V``."""
        vol = window_size[0] * window_size[1] * window_size[2]
        index = self.relative_position_index[:vol, :vol].reshape(-1)
        bias = self.relative_position_bias_table[index].reshape(vol, vol, -1)
        return bias.permute(2, 0, 1).unsqueeze(0)

    def forward(self, x: Any) -> Any:
        _, t, h, w, _ = x.shape
        window, shift = _window_and_shift(list(self.shift_size), [t, h, w],
                                          list(self.window_size))  # fmt: skip
        return shifted_window_attention_3d(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(window),
            window, self.num_heads, shift, self.attention_dropout, self.dropout,
            self.qkv.bias, self.proj.bias, self.training,
        )  # fmt: skip


class PatchEmbed3d(nn.Module):
    """Non-overlapping 3D patches (a strided Conv3d), channels last, then the norm."""

    def __init__(self, patch_size: list[int], in_channels: int = 3, embed_dim: int = 96,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.tuple_patch_size = (patch_size[0], patch_size[1], patch_size[2])
        self.proj = nn.Conv3d(in_channels, embed_dim, kernel_size=self.tuple_patch_size,
                              stride=self.tuple_patch_size)  # fmt: skip
        self.norm: nn.Module = norm_layer(embed_dim) if norm_layer is not None else nn.Identity()

    def forward(self, x: Any) -> Any:
        _, _, t, h, w = x.shape
        pad = _pad_size((t, h, w), self.tuple_patch_size)
        x = F.pad(x, (0, pad[2], 0, pad[1], 0, pad[0]))
        return self.norm(self.proj(x).permute(0, 2, 3, 4, 1))


class SwinTransformer3d(nn.Module):
    """torchvision's ``SwinTransformer3d``: 3D patch embedding, Swin stages of 3D
    shifted-window blocks with patch merging between them, LayerNorm, average pooling and a
    linear head (400 Kinetics classes)."""

    def __init__(self, patch_size: list[int], embed_dim: int, depths: list[int],
                 num_heads: list[int], window_size: list[int], mlp_ratio: float = 4.0,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.1, num_classes: int = 400,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 block: Callable[..., nn.Module] | None = None,
                 downsample_layer: Callable[..., nn.Module] = PatchMerging,
                 patch_embed: Callable[..., nn.Module] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes
        block = block or partial(SwinTransformerBlock, attn_layer=ShiftedWindowAttention3d)
        norm = norm_layer or partial(nn.LayerNorm, eps=1e-5)
        embed = patch_embed or PatchEmbed3d
        self.patch_embed = embed(patch_size=patch_size, embed_dim=embed_dim, norm_layer=norm)
        self.pos_drop = nn.Dropout(p=dropout)
        layers: list[nn.Module] = []
        total = sum(depths)
        block_id = 0
        for i_stage, depth in enumerate(depths):
            dim = embed_dim * 2**i_stage
            stage: list[nn.Module] = []
            for i_layer in range(depth):
                sd_prob = stochastic_depth_prob * float(block_id) / (total - 1)
                stage.append(block(
                    dim, num_heads[i_stage], window_size=window_size,
                    shift_size=[0 if i_layer % 2 == 0 else w // 2 for w in window_size],
                    mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                    stochastic_depth_prob=sd_prob, norm_layer=norm,
                    attn_layer=ShiftedWindowAttention3d,
                ))  # fmt: skip
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < len(depths) - 1:
                layers.append(downsample_layer(dim, norm))
        self.features = nn.Sequential(*layers)
        self.num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm(self.num_features)
        self.avgpool = nn.AdaptiveAvgPool3d(1)
        self.head = nn.Linear(self.num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        x = self.features(self.pos_drop(self.patch_embed(x)))
        x = self.norm(x).permute(0, 4, 1, 2, 3)
        return self.head(self.avgpool(x).flatten(1))


def _swin3d(kwargs: dict[str, Any], **config: Any) -> SwinTransformer3d:
    return SwinTransformer3d(patch_size=[2, 4, 4], window_size=[8, 7, 7], **config, **kwargs)


@register_model(task="video-classification", paper=_PAPER, num_params=28_158_070,
                input_size=(3, 16, 224, 224), reference="torchvision")  # fmt: skip
def swin3d_t(**kwargs: Any) -> SwinTransformer3d:
    """Swin3D-T, 28,158,070 parameters for 400 classes."""
    return _swin3d(kwargs, embed_dim=96, depths=[2, 2, 6, 2], num_heads=[3, 6, 12, 24],
                   stochastic_depth_prob=0.1)  # fmt: skip


@register_model(task="video-classification", paper=_PAPER, num_params=49_816_678,
                input_size=(3, 16, 224, 224), reference="torchvision")  # fmt: skip
def swin3d_s(**kwargs: Any) -> SwinTransformer3d:
    """Swin3D-S, 49,816,678 parameters for 400 classes."""
    return _swin3d(kwargs, embed_dim=96, depths=[2, 2, 18, 2], num_heads=[3, 6, 12, 24],
                   stochastic_depth_prob=0.1)  # fmt: skip


@register_model(task="video-classification", paper=_PAPER, num_params=88_048_984,
                input_size=(3, 16, 224, 224), reference="torchvision")  # fmt: skip
def swin3d_b(**kwargs: Any) -> SwinTransformer3d:
    """Swin3D-B, 88,048,984 parameters for 400 classes."""
    return _swin3d(kwargs, embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32],
                   stochastic_depth_prob=0.1)  # fmt: skip
