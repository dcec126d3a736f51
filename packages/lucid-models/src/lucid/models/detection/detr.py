"""DETR (Carion et al., "End-to-End Object Detection with Transformers", ECCV 2020), laid out as
Hugging Face ``transformers``' ``DetrForObjectDetection`` with its ResNet backbone
(``DetrConfig(use_timm_backbone=False)``), so its state dicts load with the same keys.

A ResNet (frozen batch norm) gives the stride-32 map; a 1x1 conv projects it to ``d_model``; a
transformer encoder (post-norm, sine position embeddings added to queries and keys) and a
decoder over ``num_queries`` learned object queries give one class distribution (``num_labels
+ 1``, the last is "no object") and one normalised ``(cx, cy, w, h)`` box per query.
:class:`DetrLoss` is the set-prediction loss of the paper: queries are matched one-to-one to
the targets by :class:`~lucid.models.detection.matcher.HungarianMatcher`, then cross-entropy
(the "no object" class weighted ``eos_coef``), L1 and GIoU losses of the matched boxes,
optionally on every decoder layer's output (``auxiliary_loss``).

Example:
    >>> model = detr_resnet50(num_labels=3).eval()
    >>> out = model(lucid.randn(1, 3, 256, 256))
    >>> out["logits"].shape, out["pred_boxes"].shape
    ((1, 100, 4), (1, 100, 4))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.data.ops import box_convert, generalized_box_iou
from lucid.models._registry import register_model
from lucid.models.detection._utils import FrozenBatchNorm2d
from lucid.models.detection.matcher import HungarianMatcher

__all__ = [
    "DetrConvEncoder",
    "DetrForObjectDetection",
    "DetrLoss",
    "DetrModel",
    "DetrResNetBackbone",
    "DetrSinePositionEmbedding",
    "detr_resnet50",
    "detr_resnet101",
    "post_process_object_detection",
]

_PAPER = 'Carion et al., "End-to-End Object Detection with Transformers", ECCV 2020'


def _norm(channels: int, frozen: bool) -> nn.Module:
    return FrozenBatchNorm2d(channels) if frozen else nn.BatchNorm2d(channels)


class _ConvLayer(nn.Module):
    """``convolution`` (no bias, padding ``k // 2``), ``normalization``, then ReLU if asked."""

    def __init__(self, cin: int, cout: int, kernel_size: int = 3, stride: int = 1,
                 activation: bool = True, frozen: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.convolution = nn.Conv2d(cin, cout, kernel_size, stride=stride,
                                     padding=kernel_size // 2, bias=False)  # fmt: skip
        self.normalization = _norm(cout, frozen)
        self.activation = activation

    def forward(self, x: Tensor) -> Tensor:
        x = self.normalization(self.convolution(x))
        return F.relu(x) if self.activation else x


class _ShortCut(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, frozen: bool) -> None:
        super().__init__()
        self.convolution = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
        self.normalization = _norm(cout, frozen)

    def forward(self, x: Tensor) -> Tensor:
        return self.normalization(self.convolution(x))  # type: ignore[no-any-return]


class _ResidualLayer(nn.Module):
    """transformers' ``ResNetBasicLayer`` (two 3x3) or ``ResNetBottleNeckLayer`` (1x1, 3x3
    with the stride, 1x1; width ``cout / 4``); a projection shortcut when the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int, bottleneck: bool, frozen: bool) -> None:
        super().__init__()
        self.shortcut: nn.Module = (_ShortCut(cin, cout, stride, frozen)
                                    if cin != cout or stride != 1 else nn.Identity())  # fmt: skip
        if bottleneck:
            mid = cout // 4
            self.layer = nn.Sequential(
                _ConvLayer(cin, mid, 1, frozen=frozen),
                _ConvLayer(mid, mid, 3, stride, frozen=frozen),
                _ConvLayer(mid, cout, 1, activation=False, frozen=frozen),
            )
        else:
            self.layer = nn.Sequential(
                _ConvLayer(cin, cout, 3, stride, frozen=frozen),
                _ConvLayer(cout, cout, 3, activation=False, frozen=frozen),
            )

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.layer(x) + self.shortcut(x))


class _Stage(nn.Module):
    def __init__(self, cin: int, cout: int, depth: int, stride: int, bottleneck: bool,
                 frozen: bool) -> None:  # fmt: skip
        super().__init__()
        self.layers = nn.Sequential(
            _ResidualLayer(cin, cout, stride, bottleneck, frozen),
            *[_ResidualLayer(cout, cout, 1, bottleneck, frozen) for _ in range(depth - 1)],
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.layers(x)  # type: ignore[no-any-return]


class _Embeddings(nn.Module):
    def __init__(self, cin: int, cout: int, frozen: bool) -> None:
        super().__init__()
        self.embedder = _ConvLayer(cin, cout, 7, 2, frozen=frozen)
        self.pooler = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.pooler(self.embedder(x))  # type: ignore[no-any-return]


class _Encoder(nn.Module):
    def __init__(self, stages: list[_Stage]) -> None:
        super().__init__()
        self.stages = nn.ModuleList(stages)


class DetrResNetBackbone(nn.Module):
    """transformers' ``ResNetBackbone`` (``embedder``, ``encoder.stages``): a 7x7 stride-2 stem
    and max pool, then one stage per ``depths`` entry (the first at stride 1, the others 2).

    Args:
        depths: residual layers per stage (ResNet-50: ``(3, 4, 6, 3)``).
        hidden_sizes: output channels of each stage (ResNet-50: ``(256, 512, 1024, 2048)``).
        embedding_size: channels of the stem.
        layer_type: ``"bottleneck"`` or ``"basic"``.
        frozen_batch_norm: batch norms as :class:`FrozenBatchNorm2d` (buffers; transformers'
            layout inside DETR), else trainable ``BatchNorm2d`` with the same keys.
        num_channels: image channels.

    ``forward(x)`` returns the last stage's map (stride 32), ``hidden_sizes[-1]`` channels.
    """

    def __init__(self, depths: Sequence[int] = (3, 4, 6, 3),
                 hidden_sizes: Sequence[int] = (256, 512, 1024, 2048),
                 embedding_size: int = 64, layer_type: str = "bottleneck",
                 frozen_batch_norm: bool = True, num_channels: int = 3) -> None:  # fmt: skip
        super().__init__()
        if layer_type not in ("bottleneck", "basic"):
            raise ValueError(f"layer_type must be 'bottleneck' or 'basic', got {layer_type!r}")
        if len(depths) != len(hidden_sizes) or not depths:
            raise ValueError(
                f"depths and hidden_sizes must be non-empty and as long as each other, got "
                f"{len(depths)} and {len(hidden_sizes)}"
            )
        bottleneck = layer_type == "bottleneck"
        self.embedder = _Embeddings(num_channels, embedding_size, frozen_batch_norm)
        stages, cin = [], embedding_size
        for i, (d, c) in enumerate(zip(depths, hidden_sizes)):
            stages.append(_Stage(cin, c, d, 1 if i == 0 else 2, bottleneck, frozen_batch_norm))
            cin = c
        self.encoder = _Encoder(stages)
        self.channels = list(hidden_sizes)

    def forward(self, x: Tensor) -> Tensor:
        return self.feature_maps(x)[-1]

    def feature_maps(self, x: Tensor) -> list[Tensor]:
        """Every stage's output (strides 4, 8, 16, 32 for four stages)."""
        x = self.embedder(x)
        out = []
        for stage in self.encoder.stages:
            x = stage(x)
            out.append(x)
        return out


class DetrConvEncoder(nn.Module):
    """The backbone (``model``) and the pixel mask brought down to its map's size."""

    def __init__(self, backbone: DetrResNetBackbone) -> None:
        super().__init__()
        self.model = backbone
        self.intermediate_channel_sizes = backbone.channels

    def forward(self, pixel_values: Tensor, pixel_mask: Tensor) -> tuple[Tensor, Tensor]:
        feature_map = self.model(pixel_values)
        size = (int(feature_map.shape[-2]), int(feature_map.shape[-1]))
        mask = F.interpolate(pixel_mask[None].to(feature_map.dtype), size=size)[0] > 0.5
        return feature_map, mask


class DetrSinePositionEmbedding(nn.Module):
    """DETR's 2-D sine embedding: ``num_position_features`` channels for y then as many for x,
    ``sin``/``cos`` interleaved at frequencies ``temperature ** (2 floor(i / 2) / F)``, the
    coordinates the running count of unmasked pixels (normalised to ``[0, scale]``)."""

    def __init__(self, num_position_features: int = 64, temperature: int = 10000,
                 normalize: bool = False, scale: float | None = None) -> None:  # fmt: skip
        super().__init__()
        if scale is not None and normalize is False:
            raise ValueError("normalize should be True if scale is passed")
        self.num_position_features = num_position_features
        self.temperature = temperature
        self.normalize = normalize
        self.scale = 2 * math.pi if scale is None else scale

    def forward(self, mask: Tensor, dtype: Any = None) -> Tensor:
        """``mask`` ``(B, H, W)`` (True where the image is): ``(B, 2 F, H, W)``."""
        m = mask.to(dtype or lucid.float32)
        y_embed = m.cumsum(1)
        x_embed = m.cumsum(2)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        f = self.num_position_features
        dim_t = lucid.arange(f, dtype=m.dtype)
        dim_t = lucid.tensor(float(self.temperature), dtype=m.dtype) ** (
            2 * (dim_t // 2) / f)  # fmt: skip
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = lucid.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4)
        pos_y = lucid.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4)
        pos = lucid.cat((pos_y.flatten(3), pos_x.flatten(3)), dim=3)
        return pos.permute(0, 3, 1, 2)


class DetrAttention(nn.Module):
    """Multi-head attention with DETR's position embeddings: ``query_pos`` is added to the
    queries' input, ``key_pos`` to the keys' input, nothing to the values."""

    def __init__(self, hidden_size: int, num_heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if hidden_size % num_heads:
            raise ValueError(
                f"hidden_size must be divisible by num_heads, got {hidden_size} and {num_heads}"
            )
        self.num_heads, self.head_dim = num_heads, hidden_size // num_heads
        self.scaling = self.head_dim**-0.5
        self.dropout = dropout
        self.k_proj = nn.Linear(hidden_size, hidden_size)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.o_proj = nn.Linear(hidden_size, hidden_size)

    def _heads(self, x: Tensor) -> Tensor:
        b, n, _ = x.shape
        return x.reshape(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden_states: Tensor, key_value_states: Tensor | None = None,
                query_pos: Tensor | None = None, key_pos: Tensor | None = None,
                key_padding_mask: Tensor | None = None) -> Tensor:  # fmt: skip
        """``key_padding_mask`` ``(B, S)``: True where a key is real."""
        kv = hidden_states if key_value_states is None else key_value_states
        q_in = hidden_states if query_pos is None else hidden_states + query_pos
        k_in = kv if key_pos is None else kv + key_pos
        q = self._heads(self.q_proj(q_in))
        k = self._heads(self.k_proj(k_in))
        v = self._heads(self.v_proj(kv))
        scores = (q @ k.transpose(2, 3)) * self.scaling
        if key_padding_mask is not None:
            neg = lucid.tensor(lucid.finfo(scores.dtype).min, dtype=scores.dtype)
            scores = lucid.where(key_padding_mask[:, None, None, :], scores, neg)
        attn = F.dropout(scores.softmax(-1), p=self.dropout, training=self.training)
        out = (attn @ v).transpose(1, 2)
        b, n = out.shape[0], out.shape[1]
        return self.o_proj(out.reshape(b, n, -1))  # type: ignore[no-any-return]


class DetrMLP(nn.Module):
    """``fc1``, ReLU, ``fc2`` (dropout after each when training)."""

    def __init__(self, hidden_size: int, intermediate_size: int, dropout: float,
                 activation_dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.fc1 = nn.Linear(hidden_size, intermediate_size)
        self.fc2 = nn.Linear(intermediate_size, hidden_size)
        self.dropout, self.activation_dropout = dropout, activation_dropout

    def forward(self, x: Tensor) -> Tensor:
        x = F.dropout(F.relu(self.fc1(x)), p=self.activation_dropout, training=self.training)
        return F.dropout(self.fc2(x), p=self.dropout, training=self.training)


class DetrEncoderLayer(nn.Module):
    """Post-norm encoder layer: self-attention (position on queries and keys), then MLP."""

    def __init__(self, d_model: int, heads: int, ffn_dim: int, dropout: float,
                 attention_dropout: float, activation_dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.self_attn = DetrAttention(d_model, heads, attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(d_model)
        self.mlp = DetrMLP(d_model, ffn_dim, dropout, activation_dropout)
        self.final_layer_norm = nn.LayerNorm(d_model)
        self.dropout = dropout

    def forward(self, x: Tensor, pos: Tensor, mask: Tensor | None) -> Tensor:
        h = self.self_attn(x, query_pos=pos, key_pos=pos, key_padding_mask=mask)
        x = self.self_attn_layer_norm(x + F.dropout(h, p=self.dropout, training=self.training))
        return self.final_layer_norm(x + self.mlp(x))  # type: ignore[no-any-return]


class DetrDecoderLayer(nn.Module):
    """Post-norm decoder layer: self-attention over the queries (query position on queries and
    keys), cross-attention to the encoder (query position on queries, spatial position on
    keys), then MLP."""

    def __init__(self, d_model: int, heads: int, ffn_dim: int, dropout: float,
                 attention_dropout: float, activation_dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.self_attn = DetrAttention(d_model, heads, attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(d_model)
        self.encoder_attn = DetrAttention(d_model, heads, attention_dropout)
        self.encoder_attn_layer_norm = nn.LayerNorm(d_model)
        self.mlp = DetrMLP(d_model, ffn_dim, dropout, activation_dropout)
        self.final_layer_norm = nn.LayerNorm(d_model)
        self.dropout = dropout

    def forward(self, x: Tensor, memory: Tensor, pos: Tensor, query_pos: Tensor,
                mask: Tensor | None) -> Tensor:  # fmt: skip
        h = self.self_attn(x, query_pos=query_pos, key_pos=query_pos)
        x = self.self_attn_layer_norm(x + F.dropout(h, p=self.dropout, training=self.training))
        h = self.encoder_attn(x, memory, query_pos=query_pos, key_pos=pos, key_padding_mask=mask)
        x = self.encoder_attn_layer_norm(x + F.dropout(h, p=self.dropout, training=self.training))
        return self.final_layer_norm(x + self.mlp(x))  # type: ignore[no-any-return]


class _Stack(nn.Module):
    def __init__(self, layers: list[nn.Module], final_norm: int | None = None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)
        if final_norm is not None:
            self.layernorm = nn.LayerNorm(final_norm)


class DetrModel(nn.Module):
    """Backbone, input projection, encoder and decoder (transformers' ``DetrModel``).

    ``forward(pixel_values, pixel_mask=None)`` returns ``{"last_hidden_state": (B, Q, D),
    "encoder_last_hidden_state": (B, HW, D), "intermediate_hidden_states": (L, B, Q, D)}`` (the
    last only with ``auxiliary_loss``: every decoder layer's output after the final norm).
    """

    def __init__(self, backbone: DetrResNetBackbone, d_model: int = 256, num_queries: int = 100,
                 encoder_layers: int = 6, decoder_layers: int = 6, encoder_ffn_dim: int = 2048,
                 decoder_ffn_dim: int = 2048, encoder_attention_heads: int = 8,
                 decoder_attention_heads: int = 8, dropout: float = 0.1,
                 attention_dropout: float = 0.0, activation_dropout: float = 0.0,
                 auxiliary_loss: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.backbone = DetrConvEncoder(backbone)
        self.position_embedding = DetrSinePositionEmbedding(d_model // 2, normalize=True)
        self.query_position_embeddings = nn.Embedding(num_queries, d_model)
        self.input_projection = nn.Conv2d(backbone.channels[-1], d_model, kernel_size=1)
        drop = (dropout, attention_dropout, activation_dropout)
        self.encoder = _Stack([DetrEncoderLayer(d_model, encoder_attention_heads,
                                                encoder_ffn_dim, *drop)
                               for _ in range(encoder_layers)])  # fmt: skip
        self.decoder = _Stack([DetrDecoderLayer(d_model, decoder_attention_heads,
                                                decoder_ffn_dim, *drop)
                               for _ in range(decoder_layers)], d_model)  # fmt: skip
        self.dropout = dropout
        self.auxiliary_loss = auxiliary_loss
        self.d_model = d_model

    def forward(self, pixel_values: Tensor, pixel_mask: Tensor | None = None) -> dict[str, Any]:
        if pixel_values.ndim != 4:
            raise ValueError(
                f"DETR expects pixel_values of shape (batch, channels, height, width), got "
                f"{tuple(pixel_values.shape)}"
            )
        b, _, h, w = pixel_values.shape
        if pixel_mask is None:
            pixel_mask = lucid.ones(b, h, w, dtype=lucid.int64)
        feature_map, mask = self.backbone(pixel_values, pixel_mask)
        src = self.input_projection(feature_map).flatten(2).transpose(1, 2)
        pos = self.position_embedding(mask, pixel_values.dtype).flatten(2).transpose(1, 2)
        # the mask always goes in, as upstream DETR's ``src_key_padding_mask`` does: where
        # no pixel is padded ``where`` keeps every score (the same bits), and no value is read
        key_mask = mask.flatten(1)
        x = F.dropout(src, p=self.dropout, training=self.training)
        for layer in self.encoder.layers:
            x = layer(x, pos, key_mask)
        memory = x
        query_pos = self.query_position_embeddings.weight.unsqueeze(0).expand(b, -1, -1)
        y = lucid.zeros_like(query_pos)
        intermediate = []
        for layer in self.decoder.layers:
            y = layer(y, memory, pos, query_pos, key_mask)
            if self.auxiliary_loss:
                y = self.decoder.layernorm(y)
                intermediate.append(y)
        y = self.decoder.layernorm(y)
        out: dict[str, Any] = {"last_hidden_state": y, "encoder_last_hidden_state": memory}
        if self.auxiliary_loss:
            out["intermediate_hidden_states"] = lucid.stack(intermediate)
        return out


class DetrMLPPredictionHead(nn.Module):
    """``num_layers`` linear layers with ReLU between them (DETR's box head)."""

    def __init__(self, input_dim: int, hidden_dim: int, output_dim: int, num_layers: int) -> None:
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(
            [nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim])]
        )

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class DetrForObjectDetection(nn.Module):
    """DETR with its class and box heads (transformers' ``DetrForObjectDetection``).

    ``model(pixel_values, pixel_mask=None)`` returns ``{"logits": (B, Q, num_labels + 1),
    "pred_boxes": (B, Q, 4)}`` (normalised cxcywh), plus ``"auxiliary_outputs"`` (one such
    dict per decoder layer but the last) when built with ``auxiliary_loss=True``. Train it with
    :class:`DetrLoss`; :func:`post_process_object_detection` turns the outputs into boxes.
    """

    def __init__(self, backbone: DetrResNetBackbone, num_labels: int = 91,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__()
        self.model = DetrModel(backbone, **kwargs)
        d = self.model.d_model
        self.class_labels_classifier = nn.Linear(d, num_labels + 1)
        self.bbox_predictor = DetrMLPPredictionHead(d, d, 4, 3)
        self.num_labels = num_labels
        self._init_transformer()

    def _init_transformer(self) -> None:
        # DETR's initialisation (xavier-uniform on the transformer's matrices); the backbone
        # keeps its convolutions' defaults
        for name, p in self.named_parameters():
            if not name.startswith("model.backbone.") and p.ndim > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, pixel_values: Tensor, pixel_mask: Tensor | None = None) -> dict[str, Any]:
        out = self.model(pixel_values, pixel_mask)
        hs = out["last_hidden_state"]
        result: dict[str, Any] = {
            "logits": self.class_labels_classifier(hs),
            "pred_boxes": self.bbox_predictor(hs).sigmoid(),
        }
        if "intermediate_hidden_states" in out:
            inter = out["intermediate_hidden_states"]
            logits = self.class_labels_classifier(inter)
            boxes = self.bbox_predictor(inter).sigmoid()
            result["auxiliary_outputs"] = [{"logits": logits[i], "pred_boxes": boxes[i]}
                                           for i in range(int(inter.shape[0]) - 1)]  # fmt: skip
        return result


class DetrLoss(nn.Module):
    """DETR's set-prediction loss (transformers' ``DetrLoss`` with the weights of its config).

    Args:
        num_labels: object classes (``logits`` have ``num_labels + 1``; the last is "no
            object").
        matcher: the :class:`HungarianMatcher` (default costs 1, 5, 2).
        eos_coef: weight of the "no object" class in the cross-entropy.
        class_weight: weight of ``loss_ce`` in the total.
        bbox_weight: weight of ``loss_bbox``.
        giou_weight: weight of ``loss_giou``.

    ``loss(outputs, targets)``: ``outputs`` as :class:`DetrForObjectDetection` returns them,
    ``targets`` one ``{"class_labels": (M,) int64 in [0, num_labels), "boxes": (M, 4)
    normalised cxcywh}`` dict per image. Returns ``(total, parts)``: the weighted sum (over
    the auxiliary outputs too) and the unweighted ``loss_ce``, ``loss_bbox``, ``loss_giou``
    (auxiliary ones suffixed ``_0``, ``_1`` ...). L1 and GIoU are summed over the matched
    boxes and divided by the number of target boxes (at least 1).
    """

    def __init__(self, num_labels: int, matcher: HungarianMatcher | None = None,
                 eos_coef: float = 0.1, class_weight: float = 1.0, bbox_weight: float = 5.0,
                 giou_weight: float = 2.0) -> None:  # fmt: skip
        super().__init__()
        self.num_labels = num_labels
        self.matcher = matcher or HungarianMatcher()
        self.eos_coef = eos_coef
        self.weights = {"loss_ce": class_weight, "loss_bbox": bbox_weight,
                        "loss_giou": giou_weight}  # fmt: skip
        empty = lucid.ones(num_labels + 1)
        empty[-1] = eos_coef
        self.register_buffer("empty_weight", empty)

    def _single(self, logits: Tensor, boxes: Tensor, targets: list[dict[str, Tensor]],
                num_boxes: float) -> dict[str, Tensor]:  # fmt: skip
        if logits.shape[-1] != self.num_labels + 1:
            raise ValueError(
                f"DetrLoss expects logits with num_labels + 1 = {self.num_labels + 1} classes, "
                f"got {logits.shape[-1]}"
            )
        indices = self.matcher(logits, boxes, targets)
        b, q = int(logits.shape[0]), int(logits.shape[1])
        classes = np.full((b, q), self.num_labels, dtype=np.int64)
        batch_idx, query_idx, tgt_boxes = [], [], []
        for i, (src, tgt) in enumerate(indices):
            labels = np.asarray(targets[i]["class_labels"].numpy(), dtype=np.int64).reshape(-1)
            classes[i, src] = labels[tgt]
            batch_idx.append(np.full(len(src), i, dtype=np.int64))
            query_idx.append(src)
            tgt_boxes.append(np.asarray(targets[i]["boxes"].numpy()).reshape(-1, 4)[tgt])
        loss_ce = F.cross_entropy(logits.transpose(1, 2), lucid.tensor(classes),
                                  weight=self.empty_weight.to(logits.dtype))  # fmt: skip
        bi, qi = np.concatenate(batch_idx), np.concatenate(query_idx)
        if len(bi) == 0:
            zero = (boxes * 0).sum()
            return {"loss_ce": loss_ce, "loss_bbox": zero, "loss_giou": zero}
        src_boxes = boxes[lucid.tensor(bi), lucid.tensor(qi)]
        tb = lucid.tensor(np.concatenate(tgt_boxes), dtype=boxes.dtype)
        loss_bbox = (src_boxes - tb).abs().sum() / num_boxes
        giou = generalized_box_iou(box_convert(src_boxes, "cxcywh", "xyxy"),
                                   box_convert(tb, "cxcywh", "xyxy"))  # fmt: skip
        loss_giou = (1 - lucid.diagonal(giou)).sum() / num_boxes
        return {"loss_ce": loss_ce, "loss_bbox": loss_bbox, "loss_giou": loss_giou}

    def forward(self, outputs: dict[str, Any],
                targets: list[dict[str, Tensor]]) -> tuple[Tensor, dict[str, Tensor]]:  # fmt: skip
        if len(targets) != int(outputs["logits"].shape[0]):
            raise ValueError(
                f"DetrLoss expects one target per image, got {len(targets)} targets for "
                f"{int(outputs['logits'].shape[0])} images"
            )
        num_boxes = max(float(sum(int(t["class_labels"].shape[0]) for t in targets)), 1.0)
        parts = self._single(outputs["logits"], outputs["pred_boxes"], targets, num_boxes)
        for i, aux in enumerate(outputs.get("auxiliary_outputs", [])):
            got = self._single(aux["logits"], aux["pred_boxes"], targets, num_boxes)
            parts.update({f"{k}_{i}": v for k, v in got.items()})
        total = sum((self.weights[k.rsplit("_", 1)[0] if k[-1].isdigit() else k] * v
                     for k, v in parts.items()), lucid.zeros(()))  # fmt: skip
        return total, parts


def post_process_object_detection(outputs: dict[str, Any], threshold: float = 0.5,
                                  target_sizes: Sequence[tuple[int, int]] | None = None
                                  ) -> list[dict[str, Tensor]]:  # fmt: skip
    """transformers' ``DetrImageProcessor.post_process_object_detection``: per image the
    queries whose best real class (softmax, "no object" excluded) scores over ``threshold``,
    as ``{"scores", "labels", "boxes"}`` with ``xyxy`` boxes scaled to ``target_sizes``
    (``(height, width)`` each; the normalised boxes when ``None``)."""
    logits, boxes = outputs["logits"], outputs["pred_boxes"]
    if target_sizes is not None and len(target_sizes) != int(logits.shape[0]):
        raise ValueError("Make sure that you pass in as many target sizes as the batch dimension "
                         "of the logits")  # fmt: skip
    probs = logits.softmax(-1)[..., :-1]
    scores, labels = probs.max(-1)
    xyxy = box_convert(boxes.reshape(-1, 4), "cxcywh", "xyxy").reshape(boxes.shape)
    results = []
    for i in range(int(logits.shape[0])):
        b = xyxy[i]
        if target_sizes is not None:
            h, w = target_sizes[i]
            b = b * lucid.tensor([w, h, w, h], dtype=b.dtype)
        keep = scores[i] > threshold
        results.append({"scores": scores[i][keep], "labels": labels[i][keep], "boxes": b[keep]})
    return results


def _build(depths: tuple[int, ...], num_labels: int, frozen_batch_norm: bool,
           **kwargs: Any) -> DetrForObjectDetection:  # fmt: skip
    backbone = DetrResNetBackbone(depths, frozen_batch_norm=frozen_batch_norm)
    return DetrForObjectDetection(backbone, num_labels, **kwargs)


@register_model(task="object-detection", paper=_PAPER, num_params=41_524_768,
                input_size=(3, 800, 800), reference="transformers")  # fmt: skip
def detr_resnet50(num_labels: int = 91, frozen_batch_norm: bool = True,
                  **kwargs: Any) -> DetrForObjectDetection:  # fmt: skip
    """DETR with a ResNet-50 backbone (COCO's 91 label ids, 100 queries, 6 + 6 layers, width
    256): 41,524,768 parameters, as ``DetrForObjectDetection(DetrConfig(use_timm_backbone=
    False, num_labels=91))`` (frozen batch norms: buffers, not parameters), and the 41.5M of
    the paper's DETR-R50 (its COCO head has the same 92 outputs)."""
    return _build((3, 4, 6, 3), num_labels, frozen_batch_norm, **kwargs)


@register_model(task="object-detection", paper=_PAPER, num_params=60_464_672,
                input_size=(3, 800, 800), reference="transformers")  # fmt: skip
def detr_resnet101(num_labels: int = 91, frozen_batch_norm: bool = True,
                   **kwargs: Any) -> DetrForObjectDetection:  # fmt: skip
    """DETR with a ResNet-101 backbone: 60,464,672 parameters, as transformers' DETR with a
    ``ResNetConfig(depths=[3, 4, 23, 3])`` backbone and ``num_labels=91``."""
    return _build((3, 4, 23, 3), num_labels, frozen_batch_norm, **kwargs)
