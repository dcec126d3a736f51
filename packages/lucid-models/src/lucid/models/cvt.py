"""CvT-13, CvT-21 and CvT-W24 (Wu et al., "CvT: Introducing Convolutions to Vision
Transformers", ICCV 2021), in Hugging Face ``transformers``' layout
(``CvtForImageClassification``: its state dict loads unchanged; timm has no CvT).

Three stages, each a strided conv token embedding with LayerNorm and transformer blocks whose
queries, keys and values come from depthwise-conv (BatchNorm) projections of the token map,
keys and values at stride 2; the last stage carries a class token, which the head
classifies."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import lucid
from lucid import nn
from lucid.models._registry import classifier
from lucid.models._vit_layers import drop_path

F = nn.functional
_PAPER = 'Wu et al., "CvT: Introducing Convolutions to Vision Transformers", ICCV 2021'


@dataclass(frozen=True)
class CvtConfig:
    """The fields of ``transformers.CvtConfig`` the model reads (its defaults are CvT-13)."""

    num_channels: int = 3
    patch_sizes: tuple[int, ...] = (7, 3, 3)
    patch_stride: tuple[int, ...] = (4, 2, 2)
    patch_padding: tuple[int, ...] = (2, 1, 1)
    embed_dim: tuple[int, ...] = (64, 192, 384)
    num_heads: tuple[int, ...] = (1, 3, 6)
    depth: tuple[int, ...] = (1, 2, 10)
    mlp_ratio: tuple[float, ...] = (4.0, 4.0, 4.0)
    attention_drop_rate: tuple[float, ...] = (0.0, 0.0, 0.0)
    drop_rate: tuple[float, ...] = (0.0, 0.0, 0.0)
    drop_path_rate: tuple[float, ...] = (0.0, 0.0, 0.1)
    qkv_bias: tuple[bool, ...] = (True, True, True)
    cls_token: tuple[bool, ...] = (False, False, True)
    kernel_qkv: tuple[int, ...] = (3, 3, 3)
    padding_kv: tuple[int, ...] = (1, 1, 1)
    stride_kv: tuple[int, ...] = (2, 2, 2)
    padding_q: tuple[int, ...] = (1, 1, 1)
    stride_q: tuple[int, ...] = (1, 1, 1)


class CvtConvEmbeddings(nn.Module):
    """A strided conv and a LayerNorm over the channels: ``(N, C, H, W)`` to ``(N, D, H', W')``."""

    def __init__(self, patch_size: int, num_channels: int, embed_dim: int, stride: int,
                 padding: int) -> None:  # fmt: skip
        super().__init__()
        self.projection = nn.Conv2d(num_channels, embed_dim, patch_size, stride, padding)
        self.normalization = nn.LayerNorm(embed_dim)

    def forward(self, x: Any) -> Any:
        x = self.projection(x)
        b, c, h, w = x.shape
        x = self.normalization(x.reshape(b, c, h * w).permute(0, 2, 1))
        return x.permute(0, 2, 1).reshape(b, c, h, w)


class CvtEmbeddings(nn.Module):
    """:class:`CvtConvEmbeddings` then dropout."""

    def __init__(self, patch_size: int, num_channels: int, embed_dim: int, stride: int,
                 padding: int, dropout_rate: float) -> None:  # fmt: skip
        super().__init__()
        self.convolution_embeddings = CvtConvEmbeddings(patch_size, num_channels, embed_dim,
                                                        stride, padding)  # fmt: skip
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x: Any) -> Any:
        return self.dropout(self.convolution_embeddings(x))


class CvtSelfAttentionConvProjection(nn.Module):
    """Depthwise conv (no bias) and BatchNorm."""

    def __init__(self, embed_dim: int, kernel_size: int, padding: int, stride: int) -> None:
        super().__init__()
        self.convolution = nn.Conv2d(embed_dim, embed_dim, kernel_size, stride, padding,
                                     groups=embed_dim, bias=False)  # fmt: skip
        self.normalization = nn.BatchNorm2d(embed_dim)

    def forward(self, x: Any) -> Any:
        return self.normalization(self.convolution(x))


class CvtSelfAttentionProjection(nn.Module):
    """The conv projection, then the map flattened to tokens ``(N, H W, C)``."""

    def __init__(self, embed_dim: int, kernel_size: int, padding: int, stride: int) -> None:
        super().__init__()
        self.convolution_projection = CvtSelfAttentionConvProjection(embed_dim, kernel_size,
                                                                     padding, stride)  # fmt: skip

    def forward(self, x: Any) -> Any:
        return self.convolution_projection(x).flatten(2).transpose(1, 2)


class CvtSelfAttention(nn.Module):
    """Convolutional projections of the token map (the class token passes unprojected), linear
    projections, multi-head attention scaled by ``embed_dim ** -0.5`` (as the paper's code)."""

    def __init__(self, num_heads: int, embed_dim: int, kernel_size: int, padding_q: int,
                 padding_kv: int, stride_q: int, stride_kv: int, qkv_bias: bool,
                 attention_drop_rate: float, with_cls_token: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.scale = embed_dim**-0.5
        self.with_cls_token = with_cls_token
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.attention_drop_rate = attention_drop_rate
        proj = partial(CvtSelfAttentionProjection, embed_dim, kernel_size)
        self.convolution_projection_query = proj(padding_q, stride_q)
        self.convolution_projection_key = proj(padding_kv, stride_kv)
        self.convolution_projection_value = proj(padding_kv, stride_kv)
        self.projection_query = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)
        self.projection_key = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)
        self.projection_value = nn.Linear(embed_dim, embed_dim, bias=qkv_bias)
        self.dropout = nn.Dropout(attention_drop_rate)

    def _heads(self, x: Any) -> Any:
        b, n, _ = x.shape
        return x.reshape(b, n, self.num_heads, -1).permute(0, 2, 1, 3)

    def forward(self, x: Any, height: int, width: int) -> Any:
        cls = x[:, :1] if self.with_cls_token else None
        if cls is not None:
            x = x[:, 1:]
        b, _, c = x.shape
        x = x.permute(0, 2, 1).reshape(b, c, height, width)
        q = self.convolution_projection_query(x)
        k = self.convolution_projection_key(x)
        v = self.convolution_projection_value(x)
        if cls is not None:
            q, k, v = lucid.cat([cls, q], 1), lucid.cat([cls, k], 1), lucid.cat([cls, v], 1)
        q = self._heads(self.projection_query(q))
        k = self._heads(self.projection_key(k))
        v = self._heads(self.projection_value(v))
        p = self.attention_drop_rate if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, scale=self.scale)
        return out.permute(0, 2, 1, 3).reshape(b, -1, self.embed_dim)


class CvtSelfOutput(nn.Module):
    """Linear and dropout after the attention."""

    def __init__(self, embed_dim: int, drop_rate: float) -> None:
        super().__init__()
        self.dense = nn.Linear(embed_dim, embed_dim)
        self.dropout = nn.Dropout(drop_rate)

    def forward(self, x: Any) -> Any:
        return self.dropout(self.dense(x))


class CvtAttention(nn.Module):
    """:class:`CvtSelfAttention` and its output projection."""

    def __init__(self, num_heads: int, embed_dim: int, kernel_size: int, padding_q: int,
                 padding_kv: int, stride_q: int, stride_kv: int, qkv_bias: bool,
                 attention_drop_rate: float, drop_rate: float,
                 with_cls_token: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.attention = CvtSelfAttention(num_heads, embed_dim, kernel_size, padding_q,
                                          padding_kv, stride_q, stride_kv, qkv_bias,
                                          attention_drop_rate, with_cls_token)  # fmt: skip
        self.output = CvtSelfOutput(embed_dim, drop_rate)

    def forward(self, x: Any, height: int, width: int) -> Any:
        return self.output(self.attention(x, height, width))


class CvtIntermediate(nn.Module):
    """The MLP's first linear and GELU."""

    def __init__(self, embed_dim: int, mlp_ratio: float) -> None:
        super().__init__()
        self.dense = nn.Linear(embed_dim, int(embed_dim * mlp_ratio))
        self.activation = nn.GELU()

    def forward(self, x: Any) -> Any:
        return self.activation(self.dense(x))


class CvtOutput(nn.Module):
    """The MLP's second linear and dropout."""

    def __init__(self, embed_dim: int, mlp_ratio: float, drop_rate: float) -> None:
        super().__init__()
        self.dense = nn.Linear(int(embed_dim * mlp_ratio), embed_dim)
        self.dropout = nn.Dropout(drop_rate)

    def forward(self, x: Any) -> Any:
        return self.dropout(self.dense(x))


class CvtLayer(nn.Module):
    """Pre-norm block: ``x + attention(LN(x))``, then ``x + MLP(LN(x))``, each branch with drop
    path (HF drops the whole sum of the MLP's residual: the paper's code drops the branch, as
    here; the two agree whenever drop path is off, e.g. in eval mode)."""

    def __init__(self, num_heads: int, embed_dim: int, kernel_size: int, padding_q: int,
                 padding_kv: int, stride_q: int, stride_kv: int, qkv_bias: bool,
                 attention_drop_rate: float, drop_rate: float, mlp_ratio: float,
                 drop_path_rate: float, with_cls_token: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.attention = CvtAttention(num_heads, embed_dim, kernel_size, padding_q, padding_kv,
                                      stride_q, stride_kv, qkv_bias, attention_drop_rate,
                                      drop_rate, with_cls_token)  # fmt: skip
        self.intermediate = CvtIntermediate(embed_dim, mlp_ratio)
        self.output = CvtOutput(embed_dim, mlp_ratio, drop_rate)
        self.drop_path = drop_path(drop_path_rate)
        self.layernorm_before = nn.LayerNorm(embed_dim)
        self.layernorm_after = nn.LayerNorm(embed_dim)

    def forward(self, x: Any, height: int, width: int) -> Any:
        x = x + self.drop_path(self.attention(self.layernorm_before(x), height, width))
        return x + self.drop_path(self.output(self.intermediate(self.layernorm_after(x))))


class CvtStage(nn.Module):
    """Token embedding, an optional class token (the last stage's) and ``depth`` layers."""

    def __init__(self, config: CvtConfig, stage: int) -> None:
        super().__init__()
        c, i = config, stage
        self.has_cls_token = c.cls_token[i]
        if self.has_cls_token:
            self.cls_token = nn.Parameter(lucid.zeros(1, 1, c.embed_dim[-1]))
            nn.init.trunc_normal_(self.cls_token, std=0.02)
        in_ch = c.num_channels if i == 0 else c.embed_dim[i - 1]
        self.embedding = CvtEmbeddings(c.patch_sizes[i], in_ch, c.embed_dim[i], c.patch_stride[i],
                                       c.patch_padding[i], c.drop_rate[i])  # fmt: skip
        rates = np.linspace(0.0, c.drop_path_rate[i], c.depth[i]).tolist()
        self.layers = nn.Sequential(*[
            CvtLayer(c.num_heads[i], c.embed_dim[i], c.kernel_qkv[i], c.padding_q[i],
                     c.padding_kv[i], c.stride_q[i], c.stride_kv[i], c.qkv_bias[i],
                     c.attention_drop_rate[i], c.drop_rate[i], c.mlp_ratio[i], rates[j],
                     c.cls_token[i])
            for j in range(c.depth[i])
        ])  # fmt: skip

    def forward(self, x: Any) -> tuple[Any, Any]:
        x = self.embedding(x)
        b, c, h, w = x.shape
        x = x.reshape(b, c, h * w).permute(0, 2, 1)
        if self.has_cls_token:
            x = lucid.cat([self.cls_token.expand(b, -1, -1), x], 1)
        for layer in self.layers:
            x = layer(x, h, w)
        cls = None
        if self.has_cls_token:
            cls, x = x[:, :1], x[:, 1:]
        return x.permute(0, 2, 1).reshape(b, c, h, w), cls


class CvtEncoder(nn.Module):
    """The stages, one after another."""

    def __init__(self, config: CvtConfig) -> None:
        super().__init__()
        self.stages = nn.ModuleList(CvtStage(config, i) for i in range(len(config.depth)))

    def forward(self, x: Any) -> tuple[Any, Any]:
        cls = None
        for stage in self.stages:
            x, cls = stage(x)
        return x, cls


class CvtModel(nn.Module):
    """The CvT backbone: the last stage's map ``(N, D, H/16, W/16)`` and class token."""

    def __init__(self, config: CvtConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = CvtEncoder(config)

    def forward(self, x: Any) -> Any:
        return self.encoder(x)


class CvtForImageClassification(nn.Module):
    """CvT with its head (``transformers.CvtForImageClassification``): LayerNorm of the class
    token (or of the mean token), linear. Returns the logits (HF returns an output object)."""

    def __init__(self, config: CvtConfig | None = None, num_classes: int = 1000) -> None:
        super().__init__()
        self.config = config or CvtConfig()
        self.num_classes = num_classes
        self.cvt = CvtModel(self.config)
        self.layernorm = nn.LayerNorm(self.config.embed_dim[-1])
        self.classifier: nn.Module = (
            nn.Linear(self.config.embed_dim[-1], num_classes) if num_classes > 0 else nn.Identity()
        )
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        seq, cls = self.cvt(x)
        if self.config.cls_token[-1]:
            seq = self.layernorm(cls)
        else:
            b, c, h, w = seq.shape
            seq = self.layernorm(seq.reshape(b, c, h * w).permute(0, 2, 1))
        return self.classifier(seq.mean(dim=1))


def _cvt(kwargs: dict[str, Any], **config: Any) -> CvtForImageClassification:
    if "in_channels" in kwargs:  # the zoo's name (lucid-train passes it) for num_channels
        kwargs["num_channels"] = kwargs.pop("in_channels")
    fields = {k: kwargs.pop(k) for k in list(kwargs) if k in CvtConfig.__dataclass_fields__}
    return CvtForImageClassification(CvtConfig(**{**config, **fields}), **kwargs)


_cv = partial(classifier, _PAPER, reference="transformers")


@_cv(19_997_480)
def cvt_13(**kwargs: Any) -> CvtForImageClassification:
    """CvT-13 (dims 64-192-384, depths 1-2-10), 19,997,480 parameters for 1000 classes (the
    paper: 20M); ``CvtConfig`` fields (e.g. ``drop_path_rate``) may be passed as keywords."""
    return _cvt(kwargs)


@_cv(31_622_696)
def cvt_21(**kwargs: Any) -> CvtForImageClassification:
    """CvT-21 (dims 64-192-384, depths 1-4-16), 31,622,696 parameters for 1000 classes (the
    paper: 32M)."""
    return _cvt(kwargs, depth=(1, 4, 16))


@_cv(277_196_392, (3, 384, 384))
def cvt_w24(**kwargs: Any) -> CvtForImageClassification:
    """CvT-W24 (dims 192-768-1024, depths 2-2-20), 277,196,392 parameters for 1000 classes
    (the paper: 277M; evaluated at 384x384)."""
    return _cvt(kwargs, embed_dim=(192, 768, 1024), num_heads=(3, 12, 16), depth=(2, 2, 20))
