"""MaskFormer (Cheng, Schwing and Kirillov, "Per-Pixel Classification is Not All You Need for
Semantic Segmentation", NeurIPS 2021) with a ResNet backbone, laid out as Hugging Face
``transformers``' ``MaskFormerForInstanceSegmentation`` (``MaskFormerConfig(backbone_config=
ResNetConfig(out_features=["stage1", ..., "stage4"]))``), so its state dicts load with the same
keys.

A ResNet gives four maps (strides 4-32); the pixel decoder (an FPN with group norm) brings them
to one stride-4 map of per-pixel embeddings (``mask_projection``); a DETR decoder turns
``num_queries`` learned queries, attending to the stride-32 map, into one class distribution
(``num_labels + 1``, the last "no object") and one mask embedding per query; each query's mask
logits are its embedding's dot product with every pixel's. :class:`MaskFormerLoss` is the mask
classification loss: queries matched one-to-one to the target masks on class + focal + dice
costs, then cross-entropy ("no object" weighted ``eos_coef``), sigmoid focal and dice losses of
the matched masks (upsampled to the targets' size).

Example:
    >>> model = maskformer_resnet50(num_labels=3).eval()
    >>> out = model(lucid.randn(1, 3, 64, 64))
    >>> out["class_queries_logits"].shape, out["masks_queries_logits"].shape
    ((1, 100, 4), (1, 100, 16, 16))
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.detection.detr import (
    DetrDecoderLayer,
    DetrResNetBackbone,
    DetrSinePositionEmbedding,
    _Stack,
)
from lucid.models.detection.matcher import linear_sum_assignment

__all__ = [
    "MaskFormerForInstanceSegmentation",
    "MaskFormerLoss",
    "MaskFormerPixelDecoder",
    "maskformer_resnet50",
    "maskformer_resnet101",
]

_PAPER = ('Cheng, Schwing and Kirillov, "Per-Pixel Classification is Not All You Need for '
          'Semantic Segmentation", NeurIPS 2021')  # fmt: skip


class _ConvGNReLU(nn.Module):
    """``0`` conv 3x3 (no bias), ``1`` GroupNorm(32), ``2`` ReLU (transformers' keys)."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.add_module("0", nn.Conv2d(cin, cout, 3, padding=1, bias=False))
        self.add_module("1", nn.GroupNorm(32, cout))

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(getattr(self, "1")(getattr(self, "0")(x)))


class _FPNLayer(nn.Module):
    def __init__(self, channels: int, lateral: int) -> None:
        super().__init__()
        self.proj = nn.Sequential(nn.Conv2d(lateral, channels, 1, bias=False),
                                  nn.GroupNorm(32, channels))  # fmt: skip
        self.block = _ConvGNReLU(channels, channels)

    def forward(self, down: Tensor, left: Tensor) -> Tensor:
        left = self.proj(left)
        size = (int(left.shape[-2]), int(left.shape[-1]))
        return self.block(F.interpolate(down, size=size, mode="nearest") + left)  # type: ignore[no-any-return]


class _FPN(nn.Module):
    def __init__(self, in_features: int, lateral_widths: list[int], feature_size: int) -> None:
        super().__init__()
        self.stem = _ConvGNReLU(in_features, feature_size)
        self.layers = nn.Sequential(*[_FPNLayer(feature_size, w) for w in lateral_widths[::-1]])


class MaskFormerPixelDecoder(nn.Module):
    """The FPN (a 3x3 conv + GN + ReLU on the stride-32 map, then top-down: 1x1 lateral conv +
    GN, nearest upsampling, sum, 3x3 conv + GN + ReLU) and ``mask_projection`` (3x3 conv) of
    its stride-4 output: the per-pixel embeddings."""

    def __init__(self, in_features: int, lateral_widths: list[int], feature_size: int = 256,
                 mask_feature_size: int = 256) -> None:  # fmt: skip
        super().__init__()
        self.fpn = _FPN(in_features, lateral_widths, feature_size)
        self.mask_projection = nn.Conv2d(feature_size, mask_feature_size, 3, padding=1)

    def forward(self, features: list[Tensor]) -> Tensor:
        x = self.fpn.stem(features[-1])
        for layer, left in zip(self.fpn.layers, features[:-1][::-1]):
            x = layer(x, left)
        return self.mask_projection(x)  # type: ignore[no-any-return]


class _PixelLevelModule(nn.Module):
    def __init__(self, backbone: DetrResNetBackbone, fpn_feature_size: int,
                 mask_feature_size: int) -> None:  # fmt: skip
        super().__init__()
        self.encoder = backbone
        ch = backbone.channels
        self.decoder = MaskFormerPixelDecoder(ch[-1], ch[:-1], fpn_feature_size, mask_feature_size)


class _TransformerModule(nn.Module):
    def __init__(self, in_features: int, d_model: int, num_queries: int,
                 decoder: _Stack) -> None:  # fmt: skip
        super().__init__()
        self.position_embedder = DetrSinePositionEmbedding(d_model // 2, normalize=True)
        self.queries_embedder = nn.Embedding(num_queries, d_model)
        self.input_projection = (nn.Conv2d(in_features, d_model, kernel_size=1)
                                 if in_features != d_model else None)  # fmt: skip
        self.decoder = decoder

    def forward(self, features: Tensor) -> Tensor:
        if self.input_projection is not None:
            features = self.input_projection(features)
        b, _, h, w = features.shape
        pos = self.position_embedder(lucid.ones(b, h, w), features.dtype)
        pos = pos.flatten(2).transpose(1, 2)
        memory = features.flatten(2).transpose(1, 2)
        query_pos = self.queries_embedder.weight.unsqueeze(0).expand(b, -1, -1)
        y = lucid.zeros_like(query_pos)
        for layer in self.decoder.layers:
            y = layer(y, memory, pos, query_pos, None)
        return self.decoder.layernorm(y)  # type: ignore[no-any-return]


class _Model(nn.Module):
    def __init__(self, pixel: _PixelLevelModule, transformer: _TransformerModule) -> None:
        super().__init__()
        self.pixel_level_module = pixel
        self.transformer_module = transformer


class _PredictionBlock(nn.Module):
    def __init__(self, cin: int, cout: int, relu: bool) -> None:
        super().__init__()
        self.add_module("0", nn.Linear(cin, cout))
        self.relu = relu

    def forward(self, x: Tensor) -> Tensor:
        x = getattr(self, "0")(x)
        return F.relu(x) if self.relu else x


class MaskFormerForInstanceSegmentation(nn.Module):
    """MaskFormer with its class and mask heads (transformers' layout; inference).

    ``model(pixel_values)`` returns ``{"class_queries_logits": (B, Q, num_labels + 1),
    "masks_queries_logits": (B, Q, H / 4, W / 4)}``: transformers' outputs of the same names.

    Args:
        backbone: a :class:`DetrResNetBackbone` built with ``frozen_batch_norm=False``.
        num_labels: classes (ADE20K: 150).
        fpn_feature_size: width of the FPN.
        mask_feature_size: width of the mask embeddings.
        d_model: width of the DETR decoder (transformers' ``decoder_config``).
        num_queries: object queries.
        decoder_layers: DETR decoder layers.
        decoder_ffn_dim: width of their MLP.
        decoder_attention_heads: their attention heads.
        dropout: their dropout.
    """

    def __init__(self, backbone: DetrResNetBackbone, num_labels: int = 150,
                 fpn_feature_size: int = 256, mask_feature_size: int = 256, d_model: int = 256,
                 num_queries: int = 100, decoder_layers: int = 6, decoder_ffn_dim: int = 2048,
                 decoder_attention_heads: int = 8, dropout: float = 0.1) -> None:  # fmt: skip
        super().__init__()
        layers: list[nn.Module] = [
            DetrDecoderLayer(d_model, decoder_attention_heads, decoder_ffn_dim, dropout, 0.0, 0.0)
            for _ in range(decoder_layers)
        ]
        transformer = _TransformerModule(backbone.channels[-1], d_model, num_queries,
                                         _Stack(layers, d_model))  # fmt: skip
        pixel = _PixelLevelModule(backbone, fpn_feature_size, mask_feature_size)
        self.model = _Model(pixel, transformer)
        self.class_predictor = nn.Linear(d_model, num_labels + 1)
        self.mask_embedder = nn.Sequential(
            _PredictionBlock(d_model, d_model, True),
            _PredictionBlock(d_model, d_model, True),
            _PredictionBlock(d_model, mask_feature_size, False),
        )

    def forward(self, pixel_values: Tensor) -> dict[str, Tensor]:
        if pixel_values.ndim != 4:
            raise ValueError(
                f"MaskFormer expects pixel_values of shape (batch, channels, height, width), "
                f"got {tuple(pixel_values.shape)}"
            )
        pixel = self.model.pixel_level_module
        features = pixel.encoder.feature_maps(pixel_values)
        pixel_embeddings = pixel.decoder(features)
        queries = self.model.transformer_module(features[-1])
        mask_embeddings = self.mask_embedder(queries)
        b, c, h, w = pixel_embeddings.shape
        masks = mask_embeddings @ pixel_embeddings.reshape(b, c, h * w)
        return {"class_queries_logits": self.class_predictor(queries),
                "masks_queries_logits": masks.reshape(b, -1, h, w)}  # fmt: skip


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)  # type: ignore[no-any-return]


class MaskFormerLoss(nn.Module):
    """MaskFormer's mask classification loss (transformers' ``MaskFormerLoss`` with the weights
    of its config; no auxiliary losses).

    Args:
        num_labels: classes (``class_queries_logits`` have ``num_labels + 1``).
        eos_coef: weight of the "no object" class in the cross-entropy.
        cross_entropy_weight: weight of ``loss_cross_entropy`` in the total.
        mask_weight: weight of ``loss_mask`` (sigmoid focal, alpha 0.25, gamma 2).
        dice_weight: weight of ``loss_dice``.

    ``loss(outputs, mask_labels, class_labels)``: ``outputs`` as the model returns them,
    ``mask_labels`` one ``(M, H, W)`` float 0/1 tensor per image (zero-padded to the largest),
    ``class_labels`` one ``(M,)`` int64 tensor per image. Matching costs: ``-p(class)`` + the
    pairwise focal and dice losses, the targets resized (nearest) to the predictions' size.
    Returns ``(total, parts)``: the weighted sum and the unweighted ``loss_cross_entropy``,
    ``loss_mask``, ``loss_dice``, the mask losses averaged over the number of target masks.
    """

    def __init__(self, num_labels: int, eos_coef: float = 0.1, cross_entropy_weight: float = 1.0,
                 mask_weight: float = 20.0, dice_weight: float = 1.0) -> None:  # fmt: skip
        super().__init__()
        self.num_labels = num_labels
        self.weights = {"loss_cross_entropy": cross_entropy_weight, "loss_mask": mask_weight,
                        "loss_dice": dice_weight}  # fmt: skip
        empty = lucid.ones(num_labels + 1)
        empty[-1] = eos_coef
        self.register_buffer("empty_weight", empty)

    def _match(self, masks: Tensor, logits: Tensor, mask_labels: list[Tensor],
               class_labels: list[Tensor]) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
        # NumPy costs: no gradient flows through the matching
        size = (int(masks.shape[-2]), int(masks.shape[-1]))
        lg = logits.detach().numpy().astype(np.float64)
        probs = np.exp(lg - lg.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        out = []
        for i, (tm, labels) in enumerate(zip(mask_labels, class_labels)):
            lab = np.asarray(labels.numpy(), dtype=np.int64)
            with lucid.no_grad():
                small = F.interpolate(tm.detach()[:, None].to(masks.dtype), size=size,
                                      mode="nearest")[:, 0]  # fmt: skip
            t = small.numpy().reshape(len(lab), -1).astype(np.float64)
            x = masks[i].detach().numpy().reshape(masks.shape[1], -1).astype(np.float64)
            p = 1.0 / (1.0 + np.exp(-x))
            focal_pos = 0.25 * (1 - p) ** 2 * _softplus(-x)
            focal_neg = 0.75 * p**2 * _softplus(x)
            cost_mask = (focal_pos @ t.T + focal_neg @ (1 - t).T) / x.shape[1]
            cost_dice = 1 - (2 * p @ t.T + 1) / (p.sum(-1)[:, None] + t.sum(-1)[None, :] + 1)
            cost = (self.weights["loss_mask"] * cost_mask - probs[i][:, lab]
                    + self.weights["loss_dice"] * cost_dice)  # fmt: skip
            big = np.finfo(np.float32).max
            out.append(linear_sum_assignment(np.nan_to_num(cost, nan=big, posinf=big, neginf=big)))
        return out

    def forward(self, outputs: dict[str, Tensor], mask_labels: list[Tensor],
                class_labels: list[Tensor]) -> tuple[Tensor, dict[str, Tensor]]:  # fmt: skip
        masks, logits = outputs["masks_queries_logits"], outputs["class_queries_logits"]
        b, q = int(logits.shape[0]), int(logits.shape[1])
        if len(mask_labels) != b or len(class_labels) != b:
            raise ValueError(
                f"MaskFormerLoss expects one mask_labels and one class_labels entry per image, got "
                f"{len(mask_labels)} and {len(class_labels)} for {b} images"
            )
        indices = self._match(masks, logits, mask_labels, class_labels)
        classes = np.full((b, q), self.num_labels, dtype=np.int64)
        bi, qi, ti = [], [], []
        for i, (src, tgt) in enumerate(indices):
            classes[i, src] = np.asarray(class_labels[i].numpy(), dtype=np.int64)[tgt]
            bi.append(np.full(len(src), i, dtype=np.int64))
            qi.append(src)
            ti.append(tgt)
        loss_ce = F.cross_entropy(logits.transpose(1, 2), lucid.tensor(classes),
                                  weight=self.empty_weight.to(logits.dtype))  # fmt: skip
        num_masks = max(float(sum(int(c.shape[0]) for c in class_labels)), 1.0)
        h = max(int(m.shape[-2]) for m in mask_labels)
        w = max(int(m.shape[-1]) for m in mask_labels)
        targets = []
        for i, tgt in enumerate(ti):  # zero-padded to the largest target, as transformers'
            tm = np.zeros((len(tgt), h, w), dtype=np.float32)
            src = np.asarray(mask_labels[i].numpy(), dtype=np.float32)[tgt]
            tm[:, : src.shape[1], : src.shape[2]] = src
            targets.append(tm)
        pred = masks[lucid.tensor(np.concatenate(bi)), lucid.tensor(np.concatenate(qi))]
        pred = F.interpolate(pred[:, None], size=(h, w), mode="bilinear",
                             align_corners=False)[:, 0].flatten(1)  # fmt: skip
        t = lucid.tensor(np.concatenate(targets).reshape(pred.shape[0], -1), dtype=pred.dtype)
        prob = pred.sigmoid()
        ce = F.binary_cross_entropy_with_logits(pred, t, reduction="none")
        p_t = prob * t + (1 - prob) * (1 - t)
        alpha_t = 0.25 * t + 0.75 * (1 - t)
        loss_mask = (alpha_t * ce * (1 - p_t) ** 2).mean(1).sum() / num_masks
        dice = 1 - (2 * (prob * t).sum(-1) + 1) / (prob.sum(-1) + t.sum(-1) + 1)
        parts = {"loss_cross_entropy": loss_ce, "loss_mask": loss_mask,
                 "loss_dice": dice.sum() / num_masks}  # fmt: skip
        total = sum((self.weights[k] * v for k, v in parts.items()), lucid.zeros(()))
        return total, parts


def _build(depths: tuple[int, ...], num_labels: int,
           **kwargs: Any) -> MaskFormerForInstanceSegmentation:  # fmt: skip
    backbone = DetrResNetBackbone(depths, frozen_batch_norm=False)
    return MaskFormerForInstanceSegmentation(backbone, num_labels, **kwargs)


@register_model(task="image-segmentation", paper=_PAPER, num_params=41_307_863,
                input_size=(3, 512, 512), reference="transformers",
                family="maskformer")  # fmt: skip
def maskformer_resnet50(num_labels: int = 150, **kwargs: Any) -> MaskFormerForInstanceSegmentation:
    """MaskFormer with a ResNet-50 backbone, 100 queries, 6 decoder layers, ADE20K's 150 classes:
    41,307,863 parameters, as transformers' ``MaskFormerForInstanceSegmentation`` with a
    ``ResNetConfig`` backbone (the paper's 41M)."""
    return _build((3, 4, 6, 3), num_labels, **kwargs)


@register_model(task="image-segmentation", paper=_PAPER, num_params=60_299_991,
                input_size=(3, 512, 512), reference="transformers",
                family="maskformer")  # fmt: skip
def maskformer_resnet101(num_labels: int = 150,
                         **kwargs: Any) -> MaskFormerForInstanceSegmentation:  # fmt: skip
    """MaskFormer with a ResNet-101 backbone: 60,299,991 parameters (the paper's 60M)."""
    return _build((3, 4, 23, 3), num_labels, **kwargs)
