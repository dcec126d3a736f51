"""Swin Transformer T/S/B (Liu et al., "Swin Transformer: Hierarchical Vision Transformer using
Shifted Windows", ICCV 2021) and Swin Transformer V2 T/S/B (Liu et al., "Swin Transformer V2:
Scaling Up Capacity and Resolution", CVPR 2022), in torchvision's layout."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._layers import MLP, Permute, StochasticDepth
from lucid.models._registry import classifier

F = nn.functional
_PAPER_V1 = (
    'Liu et al., "Swin Transformer: Hierarchical Vision Transformer using Shifted Windows", '
    "ICCV 2021"
)
_PAPER_V2 = 'Liu et al., "Swin Transformer V2: Scaling Up Capacity and Resolution", CVPR 2022'


def _patch_merging_pad(x: Any) -> Any:
    h, w = x.shape[-3], x.shape[-2]
    x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2))
    parts = [
        x[..., 0::2, 0::2, :],
        x[..., 1::2, 0::2, :],
        x[..., 0::2, 1::2, :],
        x[..., 1::2, 1::2, :],
    ]
    return lucid.cat(parts, -1)


class PatchMerging(nn.Module):
    """2x2 neighbours concatenated (``[..., H, W, C] -> [..., H/2, W/2, 4C]``), LayerNorm,
    linear to 2C."""

    def __init__(self, dim: int, norm_layer: Any = nn.LayerNorm) -> None:
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x: Any) -> Any:
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """Swin V2's patch merging: the norm after the reduction."""

    def __init__(self, dim: int, norm_layer: Any = nn.LayerNorm) -> None:
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x: Any) -> Any:
        return self.norm(self.reduction(_patch_merging_pad(x)))


def _roll(x: Any, shifts: tuple[int, int], dims: tuple[int, int]) -> Any:
    """``torch.roll`` by slicing and concatenation (exports to ONNX, which has no Roll)."""
    for shift, dim in zip(shifts, dims):
        n = x.shape[dim]
        shift %= n
        if shift:
            x = lucid.cat([x.narrow(dim, n - shift, shift), x.narrow(dim, 0, n - shift)], dim)
    return x


def _normalize(x: Any) -> Any:
    """``F.normalize(x, dim=-1)`` from elementary ops (ONNX has no mapping for the p-norm)."""
    # max(|x|, 1e-12) as F.normalize, clamped before the root: a zero row (a padded token's
    # key) then has a zero gradient, not 0 * inf
    return x / (x * x).sum(-1, keepdim=True).clamp(min=1e-24).sqrt()


def _shift_mask(pad_h: int, pad_w: int, window: list[int], shift: list[int]) -> Any:
    """-100 between tokens of a window that came from different regions before the shift."""
    img = np.zeros((pad_h, pad_w), dtype=np.float32)
    count = 0
    for h in ((0, -window[0]), (-window[0], -shift[0]), (-shift[0], None)):
        for w in ((0, -window[1]), (-window[1], -shift[1]), (-shift[1], None)):
            img[h[0] : h[1], w[0] : w[1]] = count
            count += 1
    nh, nw = pad_h // window[0], pad_w // window[1]
    img = img.reshape(nh, window[0], nw, window[1]).transpose(0, 2, 1, 3)
    img = img.reshape(nh * nw, window[0] * window[1])
    diff = img[:, None, :] - img[:, :, None]
    return lucid.tensor(np.where(diff != 0, np.float32(-100.0), np.float32(0.0)))


def shifted_window_attention(
    x: Any,
    qkv_weight: Any,
    proj_weight: Any,
    relative_position_bias: Any,
    window_size: list[int],
    num_heads: int,
    shift_size: list[int],
    attention_dropout: float = 0.0,
    dropout: float = 0.0,
    qkv_bias: Any = None,
    proj_bias: Any = None,
    logit_scale: Any = None,
    training: bool = True,
) -> Any:
    """Window multi-head self-attention with relative position bias, on ``[B, H, W, C]``,
    shifted by ``shift_size`` (cosine attention scaled by ``logit_scale`` for Swin V2)."""
    b, h, w, c = x.shape
    pad_r = (window_size[1] - w % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - h % window_size[0]) % window_size[0]
    x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_h, pad_w, _ = x.shape
    shift = list(shift_size)
    if window_size[0] >= pad_h:
        shift[0] = 0
    if window_size[1] >= pad_w:
        shift[1] = 0
    if sum(shift) > 0:
        x = _roll(x, (-shift[0], -shift[1]), (1, 2))
    nh, nw = pad_h // window_size[0], pad_w // window_size[1]
    n_win, tokens = nh * nw, window_size[0] * window_size[1]
    x = x.reshape(b, nh, window_size[0], nw, window_size[1], c).permute(0, 1, 3, 2, 4, 5)
    x = x.reshape(b * n_win, tokens, c)
    if logit_scale is not None and qkv_bias is not None:  # V2: no key bias
        n = qkv_bias.shape[0] // 3
        qkv_bias = lucid.cat(
            [qkv_bias[:n], lucid.zeros(n, dtype=qkv_bias.dtype), qkv_bias[2 * n :]]
        )
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(b * n_win, tokens, 3, num_heads, c // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        attn = _normalize(q) @ _normalize(k).transpose(-2, -1)
        attn = attn * logit_scale.clamp(max=math.log(100.0)).exp()
    else:
        attn = (q * (c // num_heads) ** -0.5) @ k.transpose(-2, -1)
    attn = attn + relative_position_bias
    if sum(shift) > 0:
        mask = _shift_mask(pad_h, pad_w, window_size, shift)
        attn = attn.reshape(b, n_win, num_heads, tokens, tokens) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.reshape(-1, num_heads, tokens, tokens)
    attn = F.dropout(F.softmax(attn, dim=-1), p=attention_dropout, training=training)
    x = (attn @ v).transpose(1, 2).reshape(b * n_win, tokens, c)
    x = F.dropout(F.linear(x, proj_weight, proj_bias), p=dropout, training=training)
    x = x.reshape(b, nh, nw, window_size[0], window_size[1], c).permute(0, 1, 3, 2, 4, 5)
    x = x.reshape(b, pad_h, pad_w, c)
    if sum(shift) > 0:
        x = _roll(x, (shift[0], shift[1]), (1, 2))
    return x[:, :h, :w, :]


def _relative_position_index(window: list[int]) -> Any:
    coords = np.stack(np.meshgrid(np.arange(window[0]), np.arange(window[1]), indexing="ij"))
    flat = coords.reshape(2, -1)
    rel = (flat[:, :, None] - flat[:, None, :]).transpose(1, 2, 0).copy()
    rel[:, :, 0] += window[0] - 1
    rel[:, :, 1] += window[1] - 1
    rel[:, :, 0] *= 2 * window[1] - 1
    return lucid.tensor(rel.sum(-1).reshape(-1).astype(np.int64))


class ShiftedWindowAttention(nn.Module):
    """See :func:`shifted_window_attention`; a learned table of relative position biases."""

    def __init__(
        self,
        dim: int,
        window_size: list[int],
        shift_size: list[int],
        num_heads: int,
        qkv_bias: bool = True,
        proj_bias: bool = True,
        attention_dropout: float = 0.0,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
            raise ValueError(
                f"window_size and shift_size must be of length 2, got {window_size} and "
                f"{shift_size}"
            )
        self.window_size, self.shift_size, self.num_heads = window_size, shift_size, num_heads
        self.attention_dropout, self.dropout = attention_dropout, dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.register_buffer("relative_position_index", _relative_position_index(window_size))

    def define_relative_position_bias_table(self) -> None:
        """``(2 Wh - 1) (2 Ww - 1)`` biases per head."""
        size = (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1)
        self.relative_position_bias_table = nn.Parameter(lucid.zeros(size, self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def _bias_from(self, table: Any) -> Any:
        n = self.window_size[0] * self.window_size[1]
        bias = table[self.relative_position_index].reshape(n, n, -1)
        return bias.permute(2, 0, 1).unsqueeze(0)

    def get_relative_position_bias(self) -> Any:
        """``(1, heads, N, N)`` biases for the ``N`` tokens of a window."""
        return self._bias_from(self.relative_position_bias_table)

    def forward(self, x: Any) -> Any:
        return shifted_window_attention(
            x,
            self.qkv.weight,
            self.proj.weight,
            self.get_relative_position_bias(),
            self.window_size,
            self.num_heads,
            shift_size=self.shift_size,
            attention_dropout=self.attention_dropout,
            dropout=self.dropout,
            qkv_bias=self.qkv.bias,
            proj_bias=self.proj.bias,
            training=self.training,
        )


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    """Swin V2's attention: cosine similarity scaled by a learned ``logit_scale``, biases from
    a small MLP over log-spaced relative coordinates (``cpb_mlp``)."""

    def __init__(
        self,
        dim: int,
        window_size: list[int],
        shift_size: list[int],
        num_heads: int,
        qkv_bias: bool = True,
        proj_bias: bool = True,
        attention_dropout: float = 0.0,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(
            dim, window_size, shift_size, num_heads, qkv_bias, proj_bias, attention_dropout, dropout
        )
        self.logit_scale = nn.Parameter(lucid.log(10 * lucid.ones(num_heads, 1, 1)))
        self.cpb_mlp = nn.Sequential(
            nn.Linear(2, 512, bias=True),
            nn.ReLU(inplace=True),
            nn.Linear(512, num_heads, bias=False),
        )
        if qkv_bias and self.qkv.bias is not None:
            n = self.qkv.bias.shape[0] // 3
            with lucid.no_grad():
                self.qkv.bias[n : 2 * n] = 0.0

    def define_relative_position_bias_table(self) -> None:
        """The log-spaced relative coordinates ``relative_coords_table`` (a buffer)."""
        wh, ww = self.window_size
        h = np.arange(-(wh - 1), wh, dtype=np.float32)
        w = np.arange(-(ww - 1), ww, dtype=np.float32)
        table = np.stack(np.meshgrid(h, w, indexing="ij")).transpose(1, 2, 0)[None].copy()
        table[..., 0] /= wh - 1
        table[..., 1] /= ww - 1
        table *= 8
        table = np.sign(table) * np.log2(np.abs(table) + 1.0) / 3.0
        self.register_buffer("relative_coords_table", lucid.tensor(table.astype(np.float32)))

    def get_relative_position_bias(self) -> Any:
        table = self.cpb_mlp(self.relative_coords_table).reshape(-1, self.num_heads)
        return 16 * lucid.sigmoid(self._bias_from(table))

    def forward(self, x: Any) -> Any:
        return shifted_window_attention(
            x,
            self.qkv.weight,
            self.proj.weight,
            self.get_relative_position_bias(),
            self.window_size,
            self.num_heads,
            shift_size=self.shift_size,
            attention_dropout=self.attention_dropout,
            dropout=self.dropout,
            qkv_bias=self.qkv.bias,
            proj_bias=self.proj.bias,
            logit_scale=self.logit_scale,
            training=self.training,
        )


class SwinTransformerBlock(nn.Module):
    """Pre-norm block: window attention and a 4x MLP, each with stochastic depth."""

    v2 = False

    def __init__(
        self,
        dim: int,
        num_heads: int,
        window_size: list[int],
        shift_size: list[int],
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
        attention_dropout: float = 0.0,
        stochastic_depth_prob: float = 0.0,
        norm_layer: Any = nn.LayerNorm,
        attn_layer: Any = None,
    ) -> None:
        super().__init__()
        attn = attn_layer or (ShiftedWindowAttentionV2 if self.v2 else ShiftedWindowAttention)
        self.norm1 = norm_layer(dim)
        self.attn = attn(
            dim,
            window_size,
            shift_size,
            num_heads,
            attention_dropout=attention_dropout,
            dropout=dropout,
        )
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x: Any) -> Any:
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """Swin V2's residual post-norm block."""

    v2 = True

    def forward(self, x: Any) -> Any:
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    """Swin Transformer V1 or V2 (``torchvision.models.SwinTransformer``); ``v2=True`` picks
    V2's blocks and patch merging."""

    def __init__(
        self,
        patch_size: list[int],
        embed_dim: int,
        depths: list[int],
        num_heads: list[int],
        window_size: list[int],
        mlp_ratio: float = 4.0,
        dropout: float = 0.0,
        attention_dropout: float = 0.0,
        stochastic_depth_prob: float = 0.1,
        num_classes: int = 1000,
        v2: bool = False,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        block = SwinTransformerBlockV2 if v2 else SwinTransformerBlock
        merge = PatchMergingV2 if v2 else PatchMerging
        norm = partial(nn.LayerNorm, eps=1e-5)
        layers: list[Any] = [
            nn.Sequential(
                nn.Conv2d(
                    in_channels, embed_dim, kernel_size=tuple(patch_size), stride=tuple(patch_size)
                ),
                Permute([0, 2, 3, 1]),
                norm(embed_dim),
            )
        ]
        total = sum(depths)
        block_id = 0
        for i, depth in enumerate(depths):
            dim = embed_dim * 2**i
            stage = []
            for j in range(depth):
                p = stochastic_depth_prob * float(block_id) / (total - 1)
                shift = [0 if j % 2 == 0 else w // 2 for w in window_size]
                stage.append(
                    block(
                        dim,
                        num_heads[i],
                        window_size,
                        shift,
                        mlp_ratio,
                        dropout,
                        attention_dropout,
                        p,
                        norm,
                    )
                )
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if i < len(depths) - 1:
                layers.append(merge(dim, norm))
        self.features = nn.Sequential(*layers)
        width = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm(width)
        self.permute = Permute([0, 3, 1, 2])
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(width, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


def _swin(
    dim: int,
    depths: list[int],
    heads: list[int],
    window: int,
    sd: float,
    v2: bool,
    kwargs: dict[str, Any],
) -> SwinTransformer:
    kwargs.setdefault("stochastic_depth_prob", sd)
    return SwinTransformer([4, 4], dim, depths, heads, [window, window], v2=v2, **kwargs)


@classifier(_PAPER_V1, 28_288_354)
def swin_t(**kwargs: Any) -> SwinTransformer:
    """Swin-T (window 7), 28,288,354 parameters for 1000 classes."""
    return _swin(96, [2, 2, 6, 2], [3, 6, 12, 24], 7, 0.2, False, kwargs)


@classifier(_PAPER_V1, 49_606_258)
def swin_s(**kwargs: Any) -> SwinTransformer:
    """Swin-S (window 7), 49,606,258 parameters for 1000 classes."""
    return _swin(96, [2, 2, 18, 2], [3, 6, 12, 24], 7, 0.3, False, kwargs)


@classifier(_PAPER_V1, 87_768_224)
def swin_b(**kwargs: Any) -> SwinTransformer:
    """Swin-B (window 7), 87,768,224 parameters for 1000 classes."""
    return _swin(128, [2, 2, 18, 2], [4, 8, 16, 32], 7, 0.5, False, kwargs)


@classifier(_PAPER_V2, 28_351_570, (3, 256, 256))
def swin_v2_t(**kwargs: Any) -> SwinTransformer:
    """Swin V2-T (window 8), 28,351,570 parameters for 1000 classes."""
    return _swin(96, [2, 2, 6, 2], [3, 6, 12, 24], 8, 0.2, True, kwargs)


@classifier(_PAPER_V2, 49_737_442, (3, 256, 256))
def swin_v2_s(**kwargs: Any) -> SwinTransformer:
    """Swin V2-S (window 8), 49,737,442 parameters for 1000 classes."""
    return _swin(96, [2, 2, 18, 2], [3, 6, 12, 24], 8, 0.3, True, kwargs)


@classifier(_PAPER_V2, 87_930_848, (3, 256, 256))
def swin_v2_b(**kwargs: Any) -> SwinTransformer:
    """Swin V2-B (window 8), 87,930,848 parameters for 1000 classes."""
    return _swin(128, [2, 2, 18, 2], [4, 8, 16, 32], 8, 0.5, True, kwargs)
