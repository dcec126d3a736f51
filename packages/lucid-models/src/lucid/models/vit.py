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
    def __init__(self, heads: int, dim: int, mlp_dim: int, dropout: float,
                 attention_dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=1e-6)
        self.self_attention = nn.MultiheadAttention(dim, heads, dropout=attention_dropout,
                                                    batch_first=True)  # fmt: skip
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
                 dropout: float, attention_dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.pos_embedding = nn.Parameter(lucid.randn(1, seq_len, dim) * 0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential()
        for i in range(layers):
            self.layers.add_module(f"encoder_layer_{i}", EncoderBlock(heads, dim, mlp_dim, dropout,
                                                                 attention_dropout))  # fmt: skip
        self.ln = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x: Any) -> Any:
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """Vision Transformer (Dosovitskiy et al. 2020), ``torchvision.models.VisionTransformer``'s
    layout and arguments (``representation_size`` adds a tanh pre-logits layer); the class
    defaults size it for 32x32 images and 10 classes, the ``vit_*`` builders for ImageNet."""

    def __init__(
        self,
        image_size: int = 32,
        patch_size: int = 4,
        num_layers: int = 6,
        num_heads: int = 3,
        hidden_dim: int = 192,
        mlp_dim: int = 768,
        dropout: float = 0.0,
        attention_dropout: float = 0.0,
        num_classes: int = 10,
        representation_size: int | None = None,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"image_size {image_size} is not divisible by patch {patch_size}")
        self.image_size, self.patch_size, self.hidden_dim = image_size, patch_size, hidden_dim
        self.conv_proj = nn.Conv2d(in_channels, hidden_dim, patch_size, stride=patch_size)
        seq_len = (image_size // patch_size) ** 2 + 1
        self.class_token = nn.Parameter(lucid.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_len, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout)  # fmt: skip
        self.heads = nn.Sequential()
        if representation_size is None:
            self.heads.add_module("head", nn.Linear(hidden_dim, num_classes))
        else:
            self.heads.add_module("pre_logits", nn.Linear(hidden_dim, representation_size))
            self.heads.add_module("act", nn.Tanh())
            self.heads.add_module("head", nn.Linear(representation_size, num_classes))

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


@register_model(
    task="image-classification", paper=_PAPER, num_params=86_567_656,
    input_size=(3, 224, 224), reference="torchvision",
)  # fmt: skip
def vit_b_16(**kwargs: Any) -> VisionTransformer:
    """ViT-B/16 at 224x224, 86,567,656 parameters for 1000 classes."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=16, num_layers=12, num_heads=12, hidden_dim=768,
                             mlp_dim=3072, **kwargs)  # fmt: skip


@register_model(
    task="image-classification", paper=_PAPER, num_params=88_224_232,
    input_size=(3, 224, 224), reference="torchvision",
)  # fmt: skip
def vit_b_32(**kwargs: Any) -> VisionTransformer:
    """ViT-B/32 at 224x224, 88,224,232 parameters for 1000 classes."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=32, num_layers=12, num_heads=12, hidden_dim=768,
                             mlp_dim=3072, **kwargs)  # fmt: skip


@register_model(
    task="image-classification", paper=_PAPER, num_params=304_326_632,
    input_size=(3, 224, 224), reference="torchvision",
)  # fmt: skip
def vit_l_16(**kwargs: Any) -> VisionTransformer:
    """ViT-L/16 at 224x224, 304,326,632 parameters for 1000 classes."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=16, num_layers=24, num_heads=16, hidden_dim=1024,
                             mlp_dim=4096, **kwargs)  # fmt: skip


@register_model(
    task="image-classification", paper=_PAPER, num_params=306_535_400,
    input_size=(3, 224, 224), reference="torchvision",
)  # fmt: skip
def vit_l_32(**kwargs: Any) -> VisionTransformer:
    """ViT-L/32 at 224x224, 306,535,400 parameters for 1000 classes."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=32, num_layers=24, num_heads=16, hidden_dim=1024,
                             mlp_dim=4096, **kwargs)  # fmt: skip


@register_model(
    task="image-classification", paper=_PAPER, num_params=632_045_800,
    input_size=(3, 224, 224), reference="torchvision",
)  # fmt: skip
def vit_h_14(**kwargs: Any) -> VisionTransformer:
    """ViT-H/14 at 224x224, 632,045,800 parameters for 1000 classes."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=14, num_layers=32, num_heads=16, hidden_dim=1280,
                             mlp_dim=5120, **kwargs)  # fmt: skip


_DEIT = (
    'Touvron et al., "Training data-efficient image transformers & distillation through '
    'attention", ICML 2021'
)


@register_model(
    task="image-classification", paper=_DEIT, num_params=5_717_416,
    input_size=(3, 224, 224), reference="paper",
)  # fmt: skip
def vit_ti_16(**kwargs: Any) -> VisionTransformer:
    """ViT-Ti/16 (DeiT-Ti's shape: dim 192, 3 heads, depth 12), 5,717,416 parameters for 1000
    classes (the DeiT paper: 5M)."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
                             mlp_dim=768, **kwargs)  # fmt: skip


@register_model(
    task="image-classification", paper=_DEIT, num_params=22_050_664,
    input_size=(3, 224, 224), reference="paper",
)  # fmt: skip
def vit_s_16(**kwargs: Any) -> VisionTransformer:
    """ViT-S/16 (DeiT-S's shape: dim 384, 6 heads, depth 12), 22,050,664 parameters for 1000
    classes (the DeiT paper: 22M)."""
    kwargs.setdefault("image_size", 224)
    kwargs.setdefault("num_classes", 1000)
    return VisionTransformer(patch_size=16, num_layers=12, num_heads=6, hidden_dim=384,
                             mlp_dim=1536, **kwargs)  # fmt: skip
