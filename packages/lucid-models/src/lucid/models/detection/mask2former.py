"""Mask2Former (Cheng et al., "Masked-attention Mask Transformer for Universal Image
Segmentation", CVPR 2022) with a ResNet backbone, laid out as Hugging Face ``transformers``'
``Mask2FormerForUniversalSegmentation`` (``Mask2FormerConfig(backbone_config=ResNetConfig(
out_features=["stage1", ..., "stage4"]))``), so its state dicts load with the same keys.

The pixel decoder runs a multi-scale deformable-attention encoder (Deformable DETR's; each
query samples ``n_points`` points per head and level around its reference point by bilinear
``grid_sample``, in pure lucid ops as ``transformers``' PyTorch fallback does) over the
stride-32, 16 and 8 maps, then one FPN step down to stride 4 for the per-pixel embeddings. The
transformer decoder's layers take the three scales in turn; each layer's cross-attention is
*masked* to the foreground (sigmoid > 0.5) of the mask the previous layer predicted, then
self-attention over the queries, then an MLP. :class:`Mask2FormerLoss` is its loss
(transformers' ``Mask2FormerLoss``): queries matched one-to-one to the target masks on class +
sigmoid cross-entropy + dice costs at random points, then cross-entropy ("no object" weighted
``eos_coef``) and sigmoid cross-entropy and dice of the matched masks at points chosen by
uncertainty.

Example:
    >>> model = mask2former_resnet50(num_labels=3).eval()
    >>> out = model(lucid.randn(1, 3, 64, 64))
    >>> out["class_queries_logits"].shape, out["masks_queries_logits"].shape
    ((1, 100, 4), (1, 100, 16, 16))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.detection.detr import DetrResNetBackbone, DetrSinePositionEmbedding
from lucid.models.detection.matcher import linear_sum_assignment

__all__ = [
    "Mask2FormerForUniversalSegmentation",
    "Mask2FormerLoss",
    "Mask2FormerPixelDecoder",
    "mask2former_resnet50",
    "mask2former_resnet101",
    "multi_scale_deformable_attention",
]

_PAPER = ('Cheng et al., "Masked-attention Mask Transformer for Universal Image Segmentation", '
          "CVPR 2022")  # fmt: skip


def multi_scale_deformable_attention(value: Tensor, shapes: list[tuple[int, int]],
                                     sampling_locations: Tensor,
                                     attention_weights: Tensor) -> Tensor:  # fmt: skip
    """Deformable attention over several maps (Deformable DETR's ``ms_deform_attn``).

    Args:
        value: ``(B, S, heads, head_dim)``, the maps of ``shapes`` flattened one after another.
        shapes: ``(H, W)`` of each level.
        sampling_locations: ``(B, Q, heads, levels, points, 2)``, ``(x, y)`` in [0, 1].
        attention_weights: ``(B, Q, heads, levels, points)``.

    Returns:
        ``(B, Q, heads * head_dim)``: per head, the weighted sum of the bilinearly sampled values
        (zero outside the maps; ``align_corners=False``).
    """
    b, _, heads, hd = value.shape
    q = int(sampling_locations.shape[1])
    levels, points = (int(s) for s in sampling_locations.shape[3:5])
    grids = 2 * sampling_locations - 1
    sampled = []
    start = 0
    for lvl, (h, w) in enumerate(shapes):
        v = value[:, start : start + h * w]
        start += h * w
        v = v.flatten(2).transpose(1, 2).reshape(b * heads, hd, h, w)
        g = grids[:, :, :, lvl].transpose(1, 2).flatten(0, 1)  # (B heads, Q, P, 2)
        sampled.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros",
                                     align_corners=False))  # fmt: skip
    attn = attention_weights.transpose(1, 2).reshape(b * heads, 1, q, levels * points)
    out = (lucid.stack(sampled, dim=-2).flatten(-2) * attn).sum(-1)
    return out.reshape(b, heads * hd, q).transpose(1, 2)


class MultiscaleDeformableAttention(nn.Module):
    """``sampling_offsets``, ``attention_weights`` (softmax over levels x points), ``value_proj``
    and ``output_proj`` of Deformable DETR's attention (transformers' keys)."""

    def __init__(self, embed_dim: int, num_heads: int, n_levels: int = 3,
                 n_points: int = 4) -> None:  # fmt: skip
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads, got {embed_dim} and {num_heads}"
            )
        self.d_model, self.n_heads, self.n_levels, self.n_points = (embed_dim, num_heads,
                                                                    n_levels, n_points)  # fmt: skip
        self.sampling_offsets = nn.Linear(embed_dim, num_heads * n_levels * n_points * 2)
        self.attention_weights = nn.Linear(embed_dim, num_heads * n_levels * n_points)
        self.value_proj = nn.Linear(embed_dim, embed_dim)
        self.output_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: Tensor, pos: Tensor, reference_points: Tensor,
                shapes: list[tuple[int, int]]) -> Tensor:  # fmt: skip
        b, s, _ = x.shape
        query = x + pos
        value = self.value_proj(x).reshape(b, s, self.n_heads, self.d_model // self.n_heads)
        offsets = self.sampling_offsets(query).reshape(b, s, self.n_heads, self.n_levels,
                                                       self.n_points, 2)  # fmt: skip
        weights = self.attention_weights(query).reshape(b, s, self.n_heads,
                                                        self.n_levels * self.n_points)  # fmt: skip
        weights = weights.softmax(-1).reshape(b, s, self.n_heads, self.n_levels, self.n_points)
        normalizer = lucid.tensor([[w, h] for h, w in shapes], dtype=x.dtype)
        locations = (reference_points[:, :, None, :, None, :]
                     + offsets / normalizer[None, None, None, :, None, :])  # fmt: skip
        out = multi_scale_deformable_attention(value, shapes, locations, weights)
        return self.output_proj(out)  # type: ignore[no-any-return]


class _EncoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, ffn: int, dropout: float) -> None:
        super().__init__()
        self.self_attn = MultiscaleDeformableAttention(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.dropout = dropout

    def forward(self, x: Tensor, pos: Tensor, ref: Tensor, shapes: list[tuple[int, int]]) -> Tensor:
        h = F.dropout(self.self_attn(x, pos, ref, shapes), p=self.dropout, training=self.training)
        x = self.self_attn_layer_norm(x + h)
        h = F.dropout(F.relu(self.fc1(x)), p=self.dropout, training=self.training)
        h = F.dropout(self.fc2(h), p=self.dropout, training=self.training)
        return self.final_layer_norm(x + h)  # type: ignore[no-any-return]


class _Layers(nn.Module):
    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)


def _reference_points(shapes: list[tuple[int, int]], batch: int, dtype: Any) -> Tensor:
    """Each map cell's centre, normalised to [0, 1], repeated for every level:
    ``(B, S, levels, 2)`` (no padding: every valid ratio is 1)."""
    refs = []
    for h, w in shapes:
        ys = lucid.linspace(0.5, h - 0.5, h, dtype=dtype) / h
        xs = lucid.linspace(0.5, w - 0.5, w, dtype=dtype) / w
        ref = lucid.stack([xs[None, :].expand(h, w), ys[:, None].expand(h, w)], dim=-1)
        refs.append(ref.reshape(h * w, 2))
    r = lucid.cat(refs, dim=0)
    return r[None, :, None, :].expand(batch, -1, len(shapes), -1)


def _conv_gn(cin: int, cout: int, kernel: int, bias: bool, relu: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=bias),
                               nn.GroupNorm(32, cout)]  # fmt: skip
    if relu:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Mask2FormerPixelDecoder(nn.Module):
    """The deformable-attention encoder over the three coarsest maps, then the FPN step to the
    stride-4 map. ``forward(features)`` returns ``(mask_features, multi_scale_features)``:
    the stride-4 per-pixel embeddings and the encoder's stride-32, 16 and 8 maps."""

    def __init__(self, feature_channels: list[int], feature_size: int = 256,
                 mask_feature_size: int = 256, encoder_layers: int = 6, num_heads: int = 8,
                 encoder_ffn_dim: int = 1024, dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.position_embedding = DetrSinePositionEmbedding(feature_size // 2, normalize=True)
        self.level_embed = nn.Parameter(lucid.zeros(3, feature_size))
        nn.init.normal_(self.level_embed)
        self.input_projections = nn.ModuleList(
            [nn.Sequential(nn.Conv2d(c, feature_size, 1), nn.GroupNorm(32, feature_size))
             for c in feature_channels[-3:][::-1]])  # fmt: skip
        self.encoder = _Layers([_EncoderLayer(feature_size, num_heads, encoder_ffn_dim, dropout)
                                for _ in range(encoder_layers)])  # fmt: skip
        self.mask_projection = nn.Conv2d(feature_size, mask_feature_size, 1)
        self.adapter_1 = _conv_gn(feature_channels[0], feature_size, 1, False)
        self.layer_1 = _conv_gn(feature_size, feature_size, 3, False, relu=True)

    def forward(self, features: list[Tensor]) -> tuple[Tensor, list[Tensor]]:
        embeds, pos = [], []
        for level, x in enumerate(features[::-1][:3]):
            e = self.input_projections[level](x)
            b, _, h, w = e.shape
            embeds.append(e)
            p = self.position_embedding(lucid.ones(b, h, w), x.dtype).flatten(2).transpose(1, 2)
            pos.append(p + self.level_embed[level][None, None, :])
        shapes = [(int(e.shape[-2]), int(e.shape[-1])) for e in embeds]
        b = int(embeds[0].shape[0])
        x = lucid.cat([e.flatten(2).transpose(1, 2) for e in embeds], dim=1)
        pos_flat = lucid.cat(pos, dim=1)
        ref = _reference_points(shapes, b, x.dtype)
        for layer in self.encoder.layers:
            x = layer(x, pos_flat, ref, shapes)
        outputs, start = [], 0
        for h, w in shapes:
            outputs.append(x[:, start : start + h * w].transpose(1, 2).reshape(b, -1, h, w))
            start += h * w
        lateral = self.adapter_1(features[0])
        size = (int(lateral.shape[-2]), int(lateral.shape[-1]))
        up = F.interpolate(outputs[-1], size=size, mode="bilinear", align_corners=False)
        fine = self.layer_1(lateral + up)
        return self.mask_projection(fine), outputs


class _PixelLevelModule(nn.Module):
    def __init__(self, backbone: DetrResNetBackbone, decoder: Mask2FormerPixelDecoder) -> None:
        super().__init__()
        self.encoder = backbone
        self.decoder = decoder


class _SelfAttention(nn.Module):
    """``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``; position on queries and keys."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.q_proj = nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        self.heads = heads

    def forward(self, x: Tensor, pos: Tensor) -> Tensor:
        qk = x + pos
        out = _attend(self.q_proj(qk), self.k_proj(qk), self.v_proj(x), self.heads, None)
        return self.out_proj(out)  # type: ignore[no-any-return]


def _attend(q: Tensor, k: Tensor, v: Tensor, heads: int, mask: Tensor | None) -> Tensor:
    """Batch-first multi-head attention; ``mask`` ``(B, heads, Q, S)``, True where barred."""
    b, n, d = q.shape
    s = k.shape[1]
    hd = d // heads
    q = q.reshape(b, n, heads, hd).transpose(1, 2) * hd**-0.5
    k = k.reshape(b, s, heads, hd).transpose(1, 2)
    v = v.reshape(b, s, heads, hd).transpose(1, 2)
    scores = q @ k.transpose(2, 3)
    if mask is not None:
        scores = lucid.where(mask, lucid.tensor(-math.inf, dtype=scores.dtype), scores)
    return (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)


class _CrossAttention(nn.Module):
    """``nn.MultiheadAttention``'s parameters (``in_proj_weight``, ``in_proj_bias``,
    ``out_proj``)."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.in_proj_weight = nn.Parameter(lucid.empty(3 * d, d))
        self.in_proj_bias = nn.Parameter(lucid.zeros(3 * d))
        self.out_proj = nn.Linear(d, d)
        nn.init.xavier_uniform_(self.in_proj_weight)
        self.heads, self.d = heads, d

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None) -> Tensor:
        w, bias, d = self.in_proj_weight, self.in_proj_bias, self.d
        q = F.linear(query, w[:d], bias[:d])
        k = F.linear(key, w[d : 2 * d], bias[d : 2 * d])
        v = F.linear(value, w[2 * d :], bias[2 * d :])
        return self.out_proj(_attend(q, k, v, self.heads, mask))  # type: ignore[no-any-return]


class _DecoderLayer(nn.Module):
    """Masked cross-attention, self-attention, MLP; each followed by a residual and a norm."""

    def __init__(self, d: int, heads: int, ffn: int, dropout: float) -> None:
        super().__init__()
        self.self_attn = _SelfAttention(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.cross_attn = _CrossAttention(d, heads)
        self.cross_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.dropout = dropout

    def forward(self, x: Tensor, memory: Tensor, pos: Tensor, query_pos: Tensor,
                mask: Tensor | None) -> Tensor:  # fmt: skip
        h = self.cross_attn(x + query_pos, memory + pos, memory, mask)
        x = self.cross_attn_layer_norm(x + F.dropout(h, p=self.dropout, training=self.training))
        h = self.self_attn(x, query_pos)
        x = self.self_attn_layer_norm(x + F.dropout(h, p=self.dropout, training=self.training))
        h = F.dropout(F.relu(self.fc1(x)), p=self.dropout, training=self.training)
        h = F.dropout(self.fc2(h), p=self.dropout, training=self.training)
        return self.final_layer_norm(x + h)  # type: ignore[no-any-return]


class _PredictionBlock(nn.Module):
    def __init__(self, cin: int, cout: int, relu: bool) -> None:
        super().__init__()
        self.add_module("0", nn.Linear(cin, cout))
        self.relu = relu

    def forward(self, x: Tensor) -> Tensor:
        x = getattr(self, "0")(x)
        return F.relu(x) if self.relu else x


class _MaskPredictor(nn.Module):
    def __init__(self, d: int, heads: int, mask_feature_size: int) -> None:
        super().__init__()
        self.mask_embedder = nn.Sequential(
            _PredictionBlock(d, d, True),
            _PredictionBlock(d, d, True),
            _PredictionBlock(d, mask_feature_size, False),
        )
        self.heads = heads

    def forward(self, queries: Tensor, pixel_embeddings: Tensor,
                size: tuple[int, int]) -> tuple[Tensor, Tensor]:  # fmt: skip
        """The masks ``(B, Q, H, W)`` and the attention mask for the next layer ``(B, heads, Q,
        h w)`` at ``size``: True (barred) where the resized mask's sigmoid is under 0.5."""
        emb = self.mask_embedder(queries)
        b, c, h, w = pixel_embeddings.shape
        masks = (emb @ pixel_embeddings.reshape(b, c, h * w)).reshape(b, -1, h, w)
        with lucid.no_grad():
            small = F.interpolate(masks.detach(), size=size, mode="bilinear", align_corners=False)
            barred = small.sigmoid().flatten(2) < 0.5
            barred = barred[:, None].expand(-1, self.heads, -1, -1)
        return masks, barred


class _Decoder(nn.Module):
    def __init__(self, layers: list[_DecoderLayer], d: int, predictor: _MaskPredictor) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.layernorm = nn.LayerNorm(d)
        self.mask_predictor = predictor


class _TransformerModule(nn.Module):
    def __init__(self, d: int, num_queries: int, decoder: _Decoder) -> None:
        super().__init__()
        self.position_embedder = DetrSinePositionEmbedding(d // 2, normalize=True)
        self.queries_embedder = nn.Embedding(num_queries, d)
        self.queries_features = nn.Embedding(num_queries, d)
        self.decoder = decoder
        self.level_embed = nn.Embedding(3, d)

    def forward(self, scales: list[Tensor], pixel_embeddings: Tensor) -> tuple[Tensor, Tensor]:
        memories, positions, sizes = [], [], []
        for i, f in enumerate(scales):
            b, _, h, w = f.shape
            sizes.append((int(h), int(w)))
            p = self.position_embedder(lucid.ones(b, h, w), f.dtype)
            positions.append(p.flatten(2).transpose(1, 2))
            memories.append((f.flatten(2) + self.level_embed.weight[i][None, :, None])
                            .transpose(1, 2))  # fmt: skip
        b = int(scales[0].shape[0])
        query_pos = self.queries_embedder.weight.unsqueeze(0).expand(b, -1, -1)
        x = self.queries_features.weight.unsqueeze(0).expand(b, -1, -1)
        dec = self.decoder
        out = dec.layernorm(x)
        masks, barred = dec.mask_predictor(out, pixel_embeddings, sizes[0])
        for idx, layer in enumerate(dec.layers):
            level = idx % 3
            # a query whose mask bars every position attends everywhere instead
            all_barred = barred.all(-1, keepdim=True)
            barred = lucid.logical_and(barred, lucid.logical_not(all_barred))
            x = layer(x, memories[level], positions[level], query_pos, barred)
            out = dec.layernorm(x)
            masks, barred = dec.mask_predictor(out, pixel_embeddings, sizes[(idx + 1) % 3])
        return out, masks


class _Model(nn.Module):
    def __init__(self, pixel: _PixelLevelModule, transformer: _TransformerModule) -> None:
        super().__init__()
        self.pixel_level_module = pixel
        self.transformer_module = transformer


class Mask2FormerForUniversalSegmentation(nn.Module):
    """Mask2Former with its class head (transformers' layout; inference).

    ``model(pixel_values)`` returns ``{"class_queries_logits": (B, Q, num_labels + 1),
    "masks_queries_logits": (B, Q, H / 4, W / 4)}`` of the last decoder layer, as transformers'.

    Args:
        backbone: a :class:`DetrResNetBackbone` built with ``frozen_batch_norm=False``.
        num_labels: classes (ADE20K: 150).
        feature_size: width of the pixel decoder.
        mask_feature_size: width of the mask embeddings.
        hidden_dim: width of the transformer decoder (equal to ``feature_size``, as
            transformers' default, so the decoder has no input projections).
        num_queries: object queries.
        decoder_layers: transformers' ``decoder_layers``: the decoder has ``decoder_layers -
            1`` layers (the first mask comes from the queries themselves).
        encoder_layers: deformable-attention encoder layers.
        num_attention_heads: heads of every attention.
        encoder_feedforward_dim: width of the encoder's MLPs.
        dim_feedforward: width of the decoder's MLPs.
        dropout: dropout everywhere (transformers' default 0).
    """

    def __init__(self, backbone: DetrResNetBackbone, num_labels: int = 150,
                 feature_size: int = 256, mask_feature_size: int = 256, hidden_dim: int = 256,
                 num_queries: int = 100, encoder_layers: int = 6, decoder_layers: int = 10,
                 num_attention_heads: int = 8, encoder_feedforward_dim: int = 1024,
                 dim_feedforward: int = 2048, dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        if feature_size != hidden_dim:
            raise ValueError(
                f"lucid's Mask2Former expects feature_size == hidden_dim (transformers' default, "
                f"no input projections), got {feature_size} and {hidden_dim}"
            )
        pixel = _PixelLevelModule(backbone, Mask2FormerPixelDecoder(
            backbone.channels, feature_size, mask_feature_size, encoder_layers,
            num_attention_heads, encoder_feedforward_dim, dropout))  # fmt: skip
        layers = [_DecoderLayer(hidden_dim, num_attention_heads, dim_feedforward, dropout)
                  for _ in range(decoder_layers - 1)]  # fmt: skip
        predictor = _MaskPredictor(hidden_dim, num_attention_heads, mask_feature_size)
        decoder = _Decoder(layers, hidden_dim, predictor)
        self.model = _Model(pixel, _TransformerModule(hidden_dim, num_queries, decoder))
        self.class_predictor = nn.Linear(hidden_dim, num_labels + 1)

    def forward(self, pixel_values: Tensor) -> dict[str, Tensor]:
        if pixel_values.ndim != 4:
            raise ValueError(
                f"Mask2Former expects pixel_values of shape (batch, channels, height, width), "
                f"got {tuple(pixel_values.shape)}"
            )
        pixel = self.model.pixel_level_module
        features = pixel.encoder.feature_maps(pixel_values)
        mask_features, scales = pixel.decoder(features)
        queries, masks = self.model.transformer_module(scales, mask_features)
        return {"class_queries_logits": self.class_predictor(queries),
                "masks_queries_logits": masks}  # fmt: skip


def _sample_point(features: Tensor, points: Tensor) -> Tensor:
    """transformers' ``sample_point``: ``features`` ``(R, C, H, W)`` read bilinearly at the
    ``[0, 1]^2`` ``(x, y)`` points ``(R, P, 2)``: ``(R, C, P)``."""
    out = F.grid_sample(features, 2.0 * points[:, :, None] - 1.0, align_corners=False)
    return out[..., 0]


class Mask2FormerLoss(nn.Module):
    """Mask2Former's loss (transformers' ``Mask2FormerLoss`` with the weights of its config; no
    auxiliary losses).

    Args:
        num_labels: classes (``class_queries_logits`` have ``num_labels + 1``).
        eos_coef: weight of the "no object" class in the cross-entropy (``no_object_weight``).
        class_weight: weight of ``loss_cross_entropy`` (and of the class cost in the matching).
        mask_weight: weight of ``loss_mask``, the sigmoid cross-entropy (and of its cost).
        dice_weight: weight of ``loss_dice`` (and of its cost).
        num_points: points sampled per mask (``train_num_points``).
        oversample_ratio: candidates per point for the importance sampling.
        importance_sample_ratio: share of the points taken where the prediction is the most
            uncertain (its logit nearest 0); the others uniform.

    ``loss(outputs, mask_labels, class_labels, rand=None)``: ``outputs`` as the model returns
    them, ``mask_labels`` one ``(M, H, W)`` float 0/1 tensor per image, ``class_labels`` one
    ``(M,)`` int64 tensor per image. The matching compares each query's mask with each target
    at the same ``num_points`` uniform random points (one draw per image); the losses read the
    matched masks (targets zero-padded to the largest) at ``importance_sample_ratio`` of the
    points chosen among ``oversample_ratio`` times as many random candidates by uncertainty,
    the rest uniform. ``rand(shape)`` gives the uniform ``[0, 1)`` numbers, in transformers'
    order of draws (per image ``(1, P, 2)``; then ``(R, oversample P, 2)`` and ``(R, P -
    int(importance P), 2)`` for the ``R`` matched masks); ``None`` is ``lucid.rand``. Returns
    ``(total, parts)``: the weighted sum and the unweighted ``loss_cross_entropy``,
    ``loss_mask`` and ``loss_dice``, the mask losses averaged over the number of target masks.
    """

    def __init__(self, num_labels: int, eos_coef: float = 0.1, class_weight: float = 2.0,
                 mask_weight: float = 5.0, dice_weight: float = 5.0, num_points: int = 12544,
                 oversample_ratio: float = 3.0,
                 importance_sample_ratio: float = 0.75) -> None:  # fmt: skip
        super().__init__()
        self.num_labels = num_labels
        self.weights = {"loss_cross_entropy": class_weight, "loss_mask": mask_weight,
                        "loss_dice": dice_weight}  # fmt: skip
        self.num_points = num_points
        self.oversample_ratio = oversample_ratio
        self.importance_sample_ratio = importance_sample_ratio
        empty = lucid.ones(num_labels + 1)
        empty[-1] = eos_coef
        self.register_buffer("empty_weight", empty)

    def _match(
        self, masks: Tensor, logits: Tensor, mask_labels: Sequence[Tensor],
        class_labels: Sequence[Tensor], rand: Callable[[tuple[int, ...]], Tensor]
    ) -> list[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
        # NumPy costs on the sampled points: no gradient flows through the matching
        lg = logits.detach().numpy().astype(np.float64)
        probs = np.exp(lg - lg.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        out = []
        for i, (tm, labels) in enumerate(zip(mask_labels, class_labels)):
            lab = np.asarray(labels.numpy(), dtype=np.int64)
            points = rand((1, self.num_points, 2)).to(masks.dtype)
            with lucid.no_grad():
                t = _sample_point(tm.detach()[:, None].to(masks.dtype),
                                  points.expand(len(lab), -1, -1))[:, 0]  # fmt: skip
                x = _sample_point(masks[i].detach()[:, None],
                                  points.expand(int(masks.shape[1]), -1, -1))[:, 0]  # fmt: skip
            tn = t.numpy().astype(np.float64)
            xn = x.numpy().astype(np.float64)
            # pairwise sigmoid cross-entropy: softplus(-x) where the target is 1, else softplus(x)
            cost_mask = (np.logaddexp(0.0, -xn) @ tn.T + np.logaddexp(0.0, xn) @ (1 - tn).T) / (
                xn.shape[1]
            )
            p = 1.0 / (1.0 + np.exp(-xn))
            cost_dice = 1 - (2 * p @ tn.T + 1) / (p.sum(-1)[:, None] + tn.sum(-1)[None, :] + 1)
            cost = (self.weights["loss_mask"] * cost_mask
                    - self.weights["loss_cross_entropy"] * probs[i][:, lab]
                    + self.weights["loss_dice"] * cost_dice)  # fmt: skip
            big = np.finfo(np.float32).max
            out.append(linear_sum_assignment(np.nan_to_num(cost, nan=big, posinf=big, neginf=big)))
        return out

    def _importance_points(self, pred: Tensor,
                           rand: Callable[[tuple[int, ...]], Tensor]) -> Tensor:  # fmt: skip
        """transformers' ``sample_points_using_uncertainty`` with uncertainty ``-|logit|``."""
        r = int(pred.shape[0])
        sampled = int(self.num_points * self.oversample_ratio)
        cand = rand((r, sampled, 2)).to(pred.dtype)
        with lucid.no_grad():
            uncertainty = -_sample_point(pred.detach(), cand)[:, 0].abs().numpy()
        k = int(self.importance_sample_ratio * self.num_points)
        idx = np.argsort(-uncertainty, axis=1, kind="stable")[:, :k]
        cn = cand.numpy()
        points = np.take_along_axis(cn, idx[:, :, None], axis=1)
        if self.num_points - k > 0:
            extra = rand((r, self.num_points - k, 2)).to(pred.dtype).numpy()
            points = np.concatenate([points, extra], axis=1)
        return lucid.tensor(points)

    def forward(self, outputs: dict[str, Tensor], mask_labels: Sequence[Tensor],
                class_labels: Sequence[Tensor],
                rand: Callable[[tuple[int, ...]], Tensor] | None = None,
                ) -> tuple[Tensor, dict[str, Tensor]]:  # fmt: skip
        masks, logits = outputs["masks_queries_logits"], outputs["class_queries_logits"]
        b, q = int(logits.shape[0]), int(logits.shape[1])
        if len(mask_labels) != b or len(class_labels) != b:
            raise ValueError(
                f"Mask2FormerLoss expects one mask_labels and one class_labels entry per image, "
                f"got {len(mask_labels)} and {len(class_labels)} for {b} images"
            )
        draw = rand if rand is not None else (lambda shape: lucid.rand(*shape))
        indices = self._match(masks, logits, mask_labels, class_labels, draw)
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
            tm = np.zeros((len(tgt), h, w), dtype=np.float64)
            src = np.asarray(mask_labels[i].numpy(), dtype=np.float64)[tgt]
            tm[:, : src.shape[1], : src.shape[2]] = src
            targets.append(tm)
        pred = masks[lucid.tensor(np.concatenate(bi)), lucid.tensor(np.concatenate(qi))][:, None]
        target = lucid.tensor(np.concatenate(targets)[:, None], dtype=pred.dtype)
        points = self._importance_points(pred, draw).to(pred.dtype)
        with lucid.no_grad():
            labels = _sample_point(target, points)[:, 0]
        point_logits = _sample_point(pred, points)[:, 0]
        ce = F.binary_cross_entropy_with_logits(point_logits, labels, reduction="none")
        prob = point_logits.sigmoid()
        dice = 1 - (2 * (prob * labels).sum(-1) + 1) / (prob.sum(-1) + labels.sum(-1) + 1)
        parts = {"loss_cross_entropy": loss_ce, "loss_mask": ce.mean(1).sum() / num_masks,
                 "loss_dice": dice.sum() / num_masks}  # fmt: skip
        total = sum(
            (self.weights[k] * v for k, v in parts.items()), lucid.zeros((), dtype=pred.dtype)
        )
        return total, parts


def _build(depths: tuple[int, ...], num_labels: int,
           **kwargs: Any) -> Mask2FormerForUniversalSegmentation:  # fmt: skip
    backbone = DetrResNetBackbone(depths, frozen_batch_norm=False)
    return Mask2FormerForUniversalSegmentation(backbone, num_labels, **kwargs)


@register_model(task="image-segmentation", paper=_PAPER, num_params=44_041_367,
                input_size=(3, 512, 512), reference="transformers",
                family="mask2former")  # fmt: skip
def mask2former_resnet50(num_labels: int = 150,
                         **kwargs: Any) -> Mask2FormerForUniversalSegmentation:  # fmt: skip
    """Mask2Former with a ResNet-50 backbone, 100 queries, 6 deformable encoder and 9 decoder
    layers, ADE20K's 150 classes: 44,041,367 parameters, as transformers'
    ``Mask2FormerForUniversalSegmentation`` with a ``ResNetConfig`` backbone (the paper's 44M)."""
    return _build((3, 4, 6, 3), num_labels, **kwargs)


@register_model(task="image-segmentation", paper=_PAPER, num_params=63_033_495,
                input_size=(3, 512, 512), reference="transformers",
                family="mask2former")  # fmt: skip
def mask2former_resnet101(num_labels: int = 150,
                          **kwargs: Any) -> Mask2FormerForUniversalSegmentation:  # fmt: skip
    """Mask2Former with a ResNet-101 backbone: 63,033,495 parameters (the paper's 63M)."""
    return _build((3, 4, 23, 3), num_labels, **kwargs)
