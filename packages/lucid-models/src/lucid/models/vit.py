"""A small Vision Transformer (Dosovitskiy et al., "An Image is Worth 16x16 Words", ICLR 2021)
in torchvision's VisionTransformer layout (``conv_proj``, ``class_token``,
``encoder.layers.encoder_layer_0.self_attention`` ...), sized for 32x32 images."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import register_model

_PAPER = (
    "Dosovitskiy et al., "
    '"An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale", ICLR 2021'
)


class MLPBlock(nn.Sequential):
    def __init__(self, dim: int, mlp_dim: int, dropout: float) -> None:
        super().__init__(
            nn.Linear(dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(mlp_dim, dim), nn.Dropout(dropout),
        )  # fmt: skip


class EncoderBlock(nn.Module):
    def __init__(self, heads: int, dim: int, mlp_dim: int, dropout: float) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MLPBlock(dim, mlp_dim, dropout)

    def forward(self, x: Any) -> Any:
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + self.dropout(y)
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_len: int, layers: int, heads: int, dim: int, mlp_dim: int,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.pos_embedding = nn.Parameter(lucid.randn(1, seq_len, dim) * 0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential()
        for i in range(layers):
            self.layers.add_module(f"encoder_layer_{i}", EncoderBlock(heads, dim, mlp_dim, dropout))
        self.ln = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x: Any) -> Any:
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """Vision Transformer (Dosovitskiy et al. 2020), sized for small images by default."""

    def __init__(
        self,
        image_size: int = 32,
        patch_size: int = 4,
        num_layers: int = 6,
        num_heads: int = 3,
        hidden_dim: int = 192,
        mlp_dim: int = 768,
        dropout: float = 0.0,
        num_classes: int = 10,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image_size {image_size} is not divisible by patch {patch_size}")
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.conv_proj = nn.Conv2d(in_channels, hidden_dim, patch_size, stride=patch_size)
        seq_len = (image_size // patch_size) ** 2 + 1
        self.class_token = nn.Parameter(lucid.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_len, num_layers, num_heads, hidden_dim, mlp_dim, dropout)
        self.heads = nn.Sequential()
        self.heads.add_module("head", nn.Linear(hidden_dim, num_classes))

    def forward(self, x: Any) -> Any:
        n, _, h, w = x.shape
        if h != self.image_size or w != self.image_size:
            raise ValueError(
                f"VisionTransformer expected {self.image_size}x{self.image_size} images, got "
                f"{tuple(x.shape)}"
            )
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = lucid.cat([self.class_token.expand(n, -1, -1), x], 1)
        return self.heads(self.encoder(x)[:, 0])


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=2_693_578,
    input_size=(3, 32, 32),
    reference="paper",
)
def vit_tiny_patch4_32(**kwargs: Any) -> VisionTransformer:
    """ViT-Tiny for 32x32 images (patch 4, dim 192, depth 6, 3 heads), 2,693,578 parameters."""
    return VisionTransformer(**kwargs)
