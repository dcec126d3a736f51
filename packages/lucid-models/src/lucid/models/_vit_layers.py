"""Layers the vision-transformer families of the zoo share, named and laid out as timm's
``timm.layers`` has them (so timm's state dicts line up): ``DropPath``, ``Mlp``,
``drop_path_rates``, ``to_2tuple``, the ViT ``Attention`` and ``Block``, ``LayerScale``.

They are built from lucid-nn's layers and lucid's ops alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._layers import stochastic_depth


def to_2tuple(x: int | tuple[int, int] | list[int]) -> tuple[int, int]:
    """``(x, x)`` for an int, the pair itself otherwise."""
    if isinstance(x, int):
        return (x, x)
    if len(x) != 2:
        raise ValueError(f"expected an int or a pair of ints, got {x!r}")
    return (int(x[0]), int(x[1]))


def drop_path_rates(rate: float, depths: list[int] | tuple[int, ...]) -> list[list[float]]:
    """Stochastic-depth rates rising linearly from 0 to ``rate`` over all blocks, split per
    stage (timm's ``calculate_drop_path_rates(rate, depths, stagewise=True)``)."""
    rates = np.linspace(0.0, rate, int(sum(depths))).tolist()
    out: list[list[float]] = []
    start = 0
    for d in depths:
        out.append(rates[start : start + d])
        start += d
    return out


class DropPath(nn.Module):
    """Zero whole samples of a residual branch with probability ``drop_prob`` in training and
    scale the rest by ``1 / (1 - drop_prob)`` (timm's ``DropPath``, torchvision's
    ``StochasticDepth(p, "row")``)."""

    def __init__(self, drop_prob: float = 0.0) -> None:
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x: Any) -> Any:
        return stochastic_depth(x, self.drop_prob, "row", self.training)

    def extra_repr(self) -> str:
        return f"drop_prob={self.drop_prob}"


def drop_path(p: float) -> nn.Module:
    """``DropPath(p)``, or ``nn.Identity()`` for ``p == 0`` (as timm builds its blocks)."""
    return DropPath(p) if p > 0.0 else nn.Identity()


class Mlp(nn.Module):
    """Linear, activation, dropout, (norm), linear, dropout: timm's ``Mlp`` (``fc1``, ``fc2``);
    ``use_conv=True`` makes the linears 1x1 convolutions over ``(N, C, H, W)``."""

    def __init__(
        self,
        in_features: int,
        hidden_features: int | None = None,
        out_features: int | None = None,
        act_layer: Callable[..., Any] = nn.GELU,
        norm_layer: Callable[..., Any] | None = None,
        bias: bool = True,
        drop: float = 0.0,
        use_conv: bool = False,
    ) -> None:
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        linear: Callable[..., Any] = (
            (lambda i, o, bias: nn.Conv2d(i, o, 1, bias=bias)) if use_conv else nn.Linear
        )
        self.fc1 = linear(in_features, hidden_features, bias=bias)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.norm = norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
        self.fc2 = linear(hidden_features, out_features, bias=bias)
        self.drop2 = nn.Dropout(drop)

    def forward(self, x: Any) -> Any:
        x = self.drop1(self.act(self.fc1(x)))
        return self.drop2(self.fc2(self.norm(x)))


def init_timm_weights(module: nn.Module) -> None:
    """timm's usual initialisation: linears ``trunc_normal_(std=0.02)`` with zero biases,
    LayerNorms ones and zeros."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm) and m.weight is not None:
            nn.init.ones_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


class Attention(nn.Module):
    """Multi-head self-attention with one ``qkv`` linear and an output ``proj`` (timm's
    ``Attention`` of its ViT)."""

    def __init__(
        self,
        dim: int,
        num_heads: int = 8,
        qkv_bias: bool = False,
        attn_drop: float = 0.0,
        proj_drop: float = 0.0,
    ) -> None:
        super().__init__()
        if dim % num_heads:
            raise ValueError(f"dim {dim} should be divisible by num_heads {num_heads}")
        self.num_heads = num_heads
        self.attn_drop = attn_drop
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x: Any) -> Any:
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.num_heads, c // self.num_heads)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        p = self.attn_drop if self.training else 0.0
        x = nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], dropout_p=p)
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(b, n, c)))


class Block(nn.Module):
    """Pre-norm transformer block: self-attention and an MLP, each with drop path (timm's
    ``vision_transformer.Block`` without layer scale)."""

    def __init__(
        self,
        dim: int,
        num_heads: int,
        mlp_ratio: float = 4.0,
        qkv_bias: bool = False,
        proj_drop: float = 0.0,
        attn_drop: float = 0.0,
        drop_path_prob: float = 0.0,
        norm_layer: Callable[..., Any] = nn.LayerNorm,
    ) -> None:
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads, qkv_bias, attn_drop, proj_drop)
        self.drop_path1 = drop_path(drop_path_prob)
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), drop=proj_drop)
        self.drop_path2 = drop_path(drop_path_prob)

    def forward(self, x: Any) -> Any:
        x = x + self.drop_path1(self.attn(self.norm1(x)))
        return x + self.drop_path2(self.mlp(self.norm2(x)))


class LayerScale(nn.Module):
    """Per-channel learned scale ``gamma`` of a residual branch, channels last (timm's
    ``LayerScale``); ``LayerScale2d`` scales ``(N, C, H, W)``."""

    channel_dim = -1

    def __init__(self, dim: int, init_values: float = 1e-5) -> None:
        super().__init__()
        self.gamma = nn.Parameter(lucid.full((dim,), float(init_values)))

    def forward(self, x: Any) -> Any:
        if self.channel_dim == 1:
            return x * self.gamma.reshape(1, -1, 1, 1)
        return x * self.gamma


class LayerScale2d(LayerScale):
    """:class:`LayerScale` over the channels of ``(N, C, H, W)``."""

    channel_dim = 1
