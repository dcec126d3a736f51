"""The network MaxViT and CoAtNet share, in timm's layout (``timm.models.maxxvit.MaxxVit``: the
keys of timm's state dicts are this model's): a conv stem, four stages of MBConv (``"C"``),
transformer (``"T"``) or MaxViT (``"M"``: MBConv, window attention, grid attention) blocks, and
a pool-norm-MLP head.

Only the configurations of the paper-like timm variants are supported: CoAtNet's
(``coatnet_N_224``: GELU, BatchNorm eps 1e-5, LayerNorm eps 1e-6, relative position bias
tables over the whole feature map) and MaxViT's TensorFlow-compatible one (``maxvit_*_tf_224``:
tanh-GELU, BatchNorm eps 1e-3, LayerNorm eps 1e-5, TensorFlow "SAME" padding, interleaved
heads, one-hot relative position bias).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._layers import LayerNorm2d, make_divisible
from lucid.models._vit_layers import Mlp, drop_path, drop_path_rates, to_2tuple

F = nn.functional


@dataclass(frozen=True)
class MaxxVitCfg:
    """A MaxxVit configuration: widths, depths and block types per stage, stem widths, and the
    options of the conv and transformer blocks (those of timm's paper-like variants)."""

    embed_dim: tuple[int, ...]
    depths: tuple[int, ...]
    block_type: tuple[str, ...]
    stem_width: tuple[int, int]
    stem_bias: bool
    head_hidden_size: int
    tf: bool  # MaxViT's TensorFlow-compatible options, else CoAtNet's

    @property
    def act(self) -> Any:
        return partial(nn.GELU, approximate="tanh") if self.tf else nn.GELU

    @property
    def bn_eps(self) -> float:
        return 1e-3 if self.tf else 1e-5

    @property
    def ln_eps(self) -> float:
        return 1e-5 if self.tf else 1e-6


def _same_pad(size: int, k: int, s: int) -> tuple[int, int]:
    pad = max((math.ceil(size / s) - 1) * s + k - size, 0)
    return pad // 2, pad - pad // 2


class Conv2dSame(nn.Conv2d):
    """A conv with TensorFlow's "SAME" padding (asymmetric where the stride needs it)."""

    def forward(self, x: Any) -> Any:
        kh, kw = self.kernel_size
        sh, sw = self.stride
        top, bottom = _same_pad(x.shape[-2], kh, sh)
        left, right = _same_pad(x.shape[-1], kw, sw)
        if top or bottom or left or right:
            x = F.pad(x, (left, right, top, bottom))
        return super().forward(x)


def create_conv2d(in_chs: int, out_chs: int, k: int, stride: int = 1, groups: int = 1,
                  bias: bool = False, same: bool = False) -> nn.Module:  # fmt: skip
    """timm's ``create_conv2d``: symmetric padding ``((s - 1) + (k - 1)) // 2``, or "SAME"
    (static where the stride is 1)."""
    if same and stride > 1:
        return Conv2dSame(in_chs, out_chs, k, stride, 0, groups=groups, bias=bias)
    pad = (k - 1) // 2 if same else ((stride - 1) + (k - 1)) // 2
    return nn.Conv2d(in_chs, out_chs, k, stride, pad, groups=groups, bias=bias)


class AvgPool2dSame(nn.AvgPool2d):
    """2x2/2 average pooling with "SAME" zero padding (counted in the average, as timm)."""

    def forward(self, x: Any) -> Any:
        top, bottom = _same_pad(x.shape[-2], 2, 2)
        left, right = _same_pad(x.shape[-1], 2, 2)
        if top or bottom or left or right:
            x = F.pad(x, (left, right, top, bottom))
        return super().forward(x)


class BatchNormAct2d(nn.BatchNorm2d):
    """BatchNorm2d then an activation (timm's ``BatchNormAct2d``; same state-dict keys)."""

    def __init__(self, num_features: int, eps: float = 1e-5, act_layer: Any = nn.GELU,
                 apply_act: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps=eps)
        self.act = act_layer() if apply_act else nn.Identity()

    def forward(self, x: Any) -> Any:
        return self.act(super().forward(x))


class SEModule(nn.Module):
    """Squeeze-and-excitation: mean over the map, 1x1 conv, SiLU, 1x1 conv, sigmoid gate."""

    def __init__(self, channels: int, rd_channels: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, rd_channels, 1)
        self.bn = nn.Identity()
        self.act = nn.SiLU()
        self.fc2 = nn.Conv2d(rd_channels, channels, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x: Any) -> Any:
        s = self.act(self.bn(self.fc1(x.mean((2, 3), keepdim=True))))
        return x * self.gate(self.fc2(s))


class Downsample2d(nn.Module):
    """2x2/2 average pooling, then a 1x1 conv where the width changes."""

    def __init__(self, dim: int, dim_out: int, bias: bool = True, same: bool = False) -> None:
        super().__init__()
        self.pool = AvgPool2dSame(2, 2) if same else nn.AvgPool2d(2, 2)
        self.expand = nn.Conv2d(dim, dim_out, 1, bias=bias) if dim != dim_out else nn.Identity()

    def forward(self, x: Any) -> Any:
        return self.expand(self.pool(x))


def _rel_index(window: tuple[int, int]) -> Any:
    coords = np.stack(np.meshgrid(np.arange(window[0]), np.arange(window[1]), indexing="ij"))
    flat = coords.reshape(2, -1)
    rel = (flat[:, :, None] - flat[:, None, :]).transpose(1, 2, 0).copy()
    rel[:, :, 0] += window[0] - 1
    rel[:, :, 1] += window[1] - 1
    rel[:, :, 0] *= 2 * window[1] - 1
    return rel.sum(-1).reshape(-1).astype(np.int64)


class RelPosBias(nn.Module):
    """A learned bias per head and relative offset, Swin's table (``(2h-1)(2w-1), heads``)
    gathered by a (non-persistent) index: ``(heads, N, N)`` for the ``N`` tokens of a window."""

    def __init__(self, window_size: tuple[int, int], num_heads: int) -> None:
        super().__init__()
        self.window_size = window_size
        n = window_size[0] * window_size[1]
        self.bias_shape = (n, n, num_heads)
        size = (2 * window_size[0] - 1) * (2 * window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(lucid.zeros(size, num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)
        self.register_buffer(
            "relative_position_index", lucid.tensor(_rel_index(window_size)), persistent=False
        )

    def get_bias(self) -> Any:
        bias = self.relative_position_bias_table[self.relative_position_index]
        return bias.reshape(self.bias_shape).permute(2, 0, 1)


class RelPosBiasTf(nn.Module):
    """TensorFlow MaxViT's relative position bias: a ``(heads, 2h-1, 2w-1)`` table, the bias of
    query ``(i, j)`` and key ``(x, y)`` at ``[x - i + h - 1, y - j + w - 1]`` (timm computes the
    same with one-hot einsum lookups)."""

    def __init__(self, window_size: tuple[int, int], num_heads: int) -> None:
        super().__init__()
        h, w = window_size
        self.window_size = window_size
        self.relative_position_bias_table = nn.Parameter(
            lucid.zeros(num_heads, 2 * h - 1, 2 * w - 1)
        )
        nn.init.normal_(self.relative_position_bias_table, std=0.02)
        ii, jj = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        qi, qj = ii.reshape(-1), jj.reshape(-1)
        hi = (qi[None, :] - qi[:, None] + h - 1).astype(np.int64)
        wi = (qj[None, :] - qj[:, None] + w - 1).astype(np.int64)
        self.register_buffer("height_index", lucid.tensor(hi), persistent=False)
        self.register_buffer("width_index", lucid.tensor(wi), persistent=False)

    def get_bias(self) -> Any:
        return self.relative_position_bias_table[:, self.height_index, self.width_index]


def _rel_pos(tf: bool, window: tuple[int, int], num_heads: int) -> nn.Module:
    return RelPosBiasTf(window, num_heads) if tf else RelPosBias(window, num_heads)


class Attention2d(nn.Module):
    """Multi-head attention on ``(N, C, H, W)`` with 1x1-conv projections (CoAtNet's), heads
    first in the ``qkv`` channels, a relative position bias over the whole map."""

    def __init__(self, dim: int, dim_out: int, dim_head: int, window: tuple[int, int],
                 tf: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.num_heads, self.dim_head = dim_out // dim_head, dim_head
        self.qkv = nn.Conv2d(dim, dim_out * 3, 1)
        self.rel_pos = _rel_pos(tf, window, self.num_heads)
        self.proj = nn.Conv2d(dim_out, dim_out, 1)

    def forward(self, x: Any) -> Any:
        b, _, h, w = x.shape
        if (h, w) != tuple(self.rel_pos.window_size):
            raise ValueError(
                f"CoAtNet's attention has position biases for a {self.rel_pos.window_size} map, "
                f"got {(h, w)}: build the model with img_size=... for this input"
            )
        qkv = self.qkv(x).reshape(b, self.num_heads, self.dim_head * 3, -1).transpose(-1, -2)
        d = self.dim_head
        q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=self.rel_pos.get_bias())
        return self.proj(x.transpose(-1, -2).reshape(b, -1, h, w))


class AttentionCl(nn.Module):
    """Multi-head attention on channels-last windows ``(N, h, w, C)`` (MaxViT's); TensorFlow's
    interleaved ``qkv`` layout where ``tf``."""

    def __init__(self, dim: int, dim_head: int, window: tuple[int, int], tf: bool) -> None:
        super().__init__()
        self.num_heads, self.dim_head, self.tf = dim // dim_head, dim_head, tf
        self.qkv = nn.Linear(dim, dim * 3)
        self.rel_pos = _rel_pos(tf, window, self.num_heads)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: Any) -> Any:
        b = x.shape[0]
        shape = tuple(x.shape[:-1])
        h, d = self.num_heads, self.dim_head
        if self.tf:
            qkv = self.qkv(x).reshape(b, -1, 3, h, d).transpose(1, 3)  # (b, h, 3, n, d)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        else:
            qkv = self.qkv(x).reshape(b, -1, h, d * 3).transpose(1, 2)
            q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=self.rel_pos.get_bias())
        return self.proj(x.transpose(1, 2).reshape(*shape, -1))


class MbConvBlock(nn.Module):
    """Pre-norm inverted bottleneck: BatchNorm, 1x1 expand (4x the output width), BN-GELU, 3x3
    depthwise (strided), BN-GELU, squeeze-excitation, 1x1 project; shortcut pooled and widened
    where the block downsamples."""

    def __init__(self, in_chs: int, out_chs: int, stride: int, cfg: MaxxVitCfg,
                 drop_path_prob: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        norm_act = partial(BatchNormAct2d, eps=cfg.bn_eps, act_layer=cfg.act)
        mid = make_divisible(out_chs * 4.0)
        self.shortcut = (
            Downsample2d(in_chs, out_chs, True, cfg.tf) if stride == 2 else nn.Identity()
        )
        self.pre_norm = norm_act(in_chs, apply_act=False)
        self.down = nn.Identity()
        self.conv1_1x1 = create_conv2d(in_chs, mid, 1, same=cfg.tf)
        self.norm1 = norm_act(mid)
        self.conv2_kxk = create_conv2d(mid, mid, 3, stride, groups=mid, same=cfg.tf)
        self.norm2 = norm_act(mid)
        self.se = SEModule(mid, int(0.25 * out_chs))
        self.conv3_1x1 = create_conv2d(mid, out_chs, 1, bias=True, same=cfg.tf)
        self.drop_path = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        shortcut = self.shortcut(x)
        x = self.conv2_kxk(self.norm1(self.conv1_1x1(self.down(self.pre_norm(x)))))
        x = self.conv3_1x1(self.se(self.norm2(x)))
        return self.drop_path(x) + shortcut


class TransformerBlock2d(nn.Module):
    """CoAtNet's transformer block on ``(N, C, H, W)``: LayerNorm2d (then 2x2 pooling where it
    downsamples), attention widening to ``dim_out``; LayerNorm2d, 1x1-conv MLP."""

    def __init__(self, dim: int, dim_out: int, stride: int, feat_size: tuple[int, int],
                 cfg: MaxxVitCfg, drop_path_prob: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        norm = partial(LayerNorm2d, eps=cfg.ln_eps)
        self.shortcut: nn.Module
        self.norm1: nn.Module
        if stride == 2:
            self.shortcut = Downsample2d(dim, dim_out, True, cfg.tf)
            self.norm1 = nn.Sequential()
            self.norm1.add_module("norm", norm(dim))
            self.norm1.add_module("down", Downsample2d(dim, dim, True, cfg.tf))
        else:
            if dim != dim_out:
                raise ValueError(f"a stride-1 block keeps its width, got {dim} -> {dim_out}")
            self.shortcut = nn.Identity()
            self.norm1 = norm(dim)
        self.attn = Attention2d(dim, dim_out, 32, feat_size, cfg.tf)
        self.ls1 = nn.Identity()
        self.drop_path1 = drop_path(drop_path_prob)
        self.norm2 = norm(dim_out)
        self.mlp = Mlp(dim_out, dim_out * 4, act_layer=cfg.act, use_conv=True)
        self.ls2 = nn.Identity()
        self.drop_path2 = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        x = self.shortcut(x) + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


def window_partition(x: Any, window: tuple[int, int]) -> Any:
    """``(B, H, W, C)`` to windows ``(B H W / (h w), h, w, C)`` of adjacent tokens."""
    b, h, w, c = x.shape
    if h % window[0] or w % window[1]:
        raise ValueError(f"the feature map {(h, w)} is not divisible by the window {window}")
    x = x.reshape(b, h // window[0], window[0], w // window[1], window[1], c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window[0], window[1], c)


def window_reverse(windows: Any, window: tuple[int, int], size: tuple[int, int]) -> Any:
    """The inverse of :func:`window_partition`."""
    h, w = size
    c = windows.shape[-1]
    x = windows.reshape(-1, h // window[0], w // window[1], window[0], window[1], c)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(-1, h, w, c)


def grid_partition(x: Any, grid: tuple[int, int]) -> Any:
    """``(B, H, W, C)`` to windows of a ``grid`` of tokens strided across the whole map."""
    b, h, w, c = x.shape
    if h % grid[0] or w % grid[1]:
        raise ValueError(f"the feature map {(h, w)} is not divisible by the grid {grid}")
    x = x.reshape(b, grid[0], h // grid[0], grid[1], w // grid[1], c)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(-1, grid[0], grid[1], c)


def grid_reverse(windows: Any, grid: tuple[int, int], size: tuple[int, int]) -> Any:
    """The inverse of :func:`grid_partition`."""
    h, w = size
    c = windows.shape[-1]
    x = windows.reshape(-1, h // grid[0], w // grid[1], grid[0], grid[1], c)
    return x.permute(0, 3, 1, 4, 2, 5).reshape(-1, h, w, c)


class PartitionAttentionCl(nn.Module):
    """MaxViT's block (``"block"``) or grid (``"grid"``) attention and MLP, channels last."""

    def __init__(self, dim: int, partition_type: str, partition: tuple[int, int],
                 cfg: MaxxVitCfg, drop_path_prob: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.partition_block = partition_type == "block"
        self.partition_size = partition
        self.norm1 = nn.LayerNorm(dim, eps=cfg.ln_eps)
        self.attn = AttentionCl(dim, 32, partition, cfg.tf)
        self.ls1 = nn.Identity()
        self.drop_path1 = drop_path(drop_path_prob)
        self.norm2 = nn.LayerNorm(dim, eps=cfg.ln_eps)
        self.mlp = Mlp(dim, dim * 4, act_layer=cfg.act)
        self.ls2 = nn.Identity()
        self.drop_path2 = drop_path(drop_path_prob)

    def _partition_attn(self, x: Any) -> Any:
        size = (x.shape[1], x.shape[2])
        if self.partition_block:
            parts = window_partition(x, self.partition_size)
            return window_reverse(self.attn(parts), self.partition_size, size)
        parts = grid_partition(x, self.partition_size)
        return grid_reverse(self.attn(parts), self.partition_size, size)

    def forward(self, x: Any) -> Any:
        x = x + self.drop_path1(self.ls1(self._partition_attn(self.norm1(x))))
        return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))


class MaxxVitBlock(nn.Module):
    """MaxViT's block: MBConv, then window (block) attention and grid attention."""

    def __init__(self, dim: int, dim_out: int, stride: int, partition: tuple[int, int],
                 cfg: MaxxVitCfg, drop_path_prob: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.conv = MbConvBlock(dim, dim_out, stride, cfg, drop_path_prob)
        self.attn_block = PartitionAttentionCl(dim_out, "block", partition, cfg, drop_path_prob)
        self.attn_grid = PartitionAttentionCl(dim_out, "grid", partition, cfg, drop_path_prob)

    def forward(self, x: Any) -> Any:
        x = self.conv(x).permute(0, 2, 3, 1)
        return self.attn_grid(self.attn_block(x)).permute(0, 3, 1, 2)


class MaxxVitStage(nn.Module):
    """``depth`` blocks of one type, the first with stride 2."""

    def __init__(self, in_chs: int, out_chs: int, depth: int, block_type: str,
                 feat_size: tuple[int, int], partition: tuple[int, int], cfg: MaxxVitCfg,
                 drop_path_probs: Sequence[float]) -> None:  # fmt: skip
        super().__init__()
        blocks: list[nn.Module] = []
        for i in range(depth):
            stride = 2 if i == 0 else 1
            if block_type == "C":
                blocks.append(MbConvBlock(in_chs, out_chs, stride, cfg, drop_path_probs[i]))
            elif block_type == "T":
                blocks.append(TransformerBlock2d(in_chs, out_chs, stride, feat_size, cfg,
                                                 drop_path_probs[i]))  # fmt: skip
            elif block_type == "M":
                blocks.append(MaxxVitBlock(in_chs, out_chs, stride, partition, cfg,
                                           drop_path_probs[i]))  # fmt: skip
            else:
                raise ValueError(f"block_type must be 'C', 'T' or 'M', got {block_type!r}")
            in_chs = out_chs
        self.blocks = nn.Sequential(*blocks)

    def forward(self, x: Any) -> Any:
        return self.blocks(x)


class Stem(nn.Module):
    """3x3/2 conv, BN-GELU, 3x3 conv."""

    def __init__(self, in_chs: int, out_chs: tuple[int, int], cfg: MaxxVitCfg) -> None:
        super().__init__()
        self.conv1 = create_conv2d(in_chs, out_chs[0], 3, 2, bias=cfg.stem_bias, same=cfg.tf)
        self.norm1 = BatchNormAct2d(out_chs[0], eps=cfg.bn_eps, act_layer=cfg.act)
        self.conv2 = create_conv2d(out_chs[0], out_chs[1], 3, 1, bias=cfg.stem_bias, same=cfg.tf)

    def forward(self, x: Any) -> Any:
        return self.conv2(self.norm1(self.conv1(x)))


class NormMlpClassifierHead(nn.Module):
    """Global average pool, LayerNorm2d, linear-tanh pre-logits, dropout, linear."""

    def __init__(self, in_features: int, num_classes: int, hidden_size: int,
                 drop_rate: float, eps: float) -> None:  # fmt: skip
        super().__init__()
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.norm = LayerNorm2d(in_features, eps=eps)
        self.flatten = nn.Flatten(1)
        self.pre_logits = nn.Sequential()
        self.pre_logits.add_module("fc", nn.Linear(in_features, hidden_size))
        self.pre_logits.add_module("act", nn.Tanh())
        self.drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x: Any) -> Any:
        x = self.pre_logits(self.flatten(self.norm(self.global_pool(x))))
        return self.fc(self.drop(x))


class MaxxVit(nn.Module):
    """MaxViT / CoAtNet (``timm.models.maxxvit.MaxxVit`` with its paper-like configurations).
    ``img_size`` sizes the attention windows (MaxViT: ``img_size // 32``) and CoAtNet's
    position-bias tables (the whole feature map): the input must have that size."""

    def __init__(self, cfg: MaxxVitCfg, img_size: int | tuple[int, int] = 224,
                 in_channels: int = 3, num_classes: int = 1000, drop_rate: float = 0.0,
                 drop_path_rate: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        size = to_2tuple(img_size)
        self.img_size = size
        self.num_classes = num_classes
        partition = (size[0] // 32, size[1] // 32)
        if min(partition) < 1:
            raise ValueError(f"img_size must be at least 32, got {img_size}")
        self.stem = Stem(in_channels, cfg.stem_width, cfg)
        feat = (size[0] // 2, size[1] // 2)
        dpr = drop_path_rates(drop_path_rate, list(cfg.depths))
        in_chs = cfg.stem_width[1]
        stages = []
        for i, out_chs in enumerate(cfg.embed_dim):
            feat = ((feat[0] - 1) // 2 + 1, (feat[1] - 1) // 2 + 1)
            stages.append(MaxxVitStage(in_chs, out_chs, cfg.depths[i], cfg.block_type[i], feat,
                                       partition, cfg, dpr[i]))  # fmt: skip
            in_chs = out_chs
        self.stages = nn.Sequential(*stages)
        self.num_features = cfg.embed_dim[-1]
        self.norm = nn.Identity()
        self.head = NormMlpClassifierHead(self.num_features, num_classes, cfg.head_hidden_size,
                                          drop_rate, cfg.ln_eps)  # fmt: skip
        for name, m in self.named_modules():
            if isinstance(m, nn.Linear) or (isinstance(m, nn.Conv2d) and ".attn" in name):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / fan_out))
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x: Any) -> Any:
        """The last stage's ``(N, C, H/32, W/32)`` map."""
        if tuple(x.shape[-2:]) != self.img_size:
            raise ValueError(
                f"{type(self).__name__} was built for {self.img_size[0]}x{self.img_size[1]} "
                f"inputs, got {tuple(x.shape)} (build it with img_size=...)"
            )
        return self.norm(self.stages(self.stem(x)))

    def forward(self, x: Any) -> Any:
        return self.head(self.forward_features(x))
