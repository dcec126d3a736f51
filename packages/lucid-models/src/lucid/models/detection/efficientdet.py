"""EfficientDet (Tan, Pang and Le, "EfficientDet: Scalable and Efficient Object Detection", CVPR
2020): an EfficientNet backbone, a weighted bidirectional feature pyramid (BiFPN) over levels
P3-P7 and shared class and box heads of depthwise-separable convs.

The layout follows Ross Wightman's ``efficientdet-pytorch`` (``effdet``, the PyTorch port of
the official TensorFlow models, https://github.com/rwightman/efficientdet-pytorch,
``effdet/efficientdet.py`` and ``effdet/config/model_config.py``): its ``tf_efficientdet_d0``
... ``d7`` configurations (backbone, BiFPN width and cells, head depth, fusion). D0's count,
3,880,067 (3,877,763 without the redundant biases), is the one effdet's README states; D1-D7
are the same construction from effdet's configurations, and the paper's Table 2 gives all
eight rounded (3.9M ... 52M), which the tests check to its digits. The backbone is lucid's
torchvision-layout EfficientNet without its 1x1 head conv (``backbone.features.0`` ..
``.7``: effdet's timm backbone has the same parameters under other names). Padding is
PyTorch's symmetric padding, not TensorFlow's ``SAME`` (the parameters do not change; the
outputs of stride-2 layers on even sizes do).

``model.forward_raw(x)`` returns the raw per-level class and box outputs (effdet's
``EfficientDet.forward``). ``model(images, targets)`` is the detector, with effdet's training
and prediction benches (``effdet/bench.py``, ``anchors.py``, ``loss.py``) folded in, in the
interface of lucid's other detectors:

- anchors (:func:`anchor_boxes`): per level P3-P7, 3 octave scales x the aspect ratios
  ``(1, 1), (1.4, 0.7), (0.7, 1.4)``, ``anchor_scale = 4`` times the level's stride, centred on
  the cells; the stride is ``image size / feature size`` (effdet's, which is ``2 ** level`` on
  sizes divisible by 128);
- labelling (effdet's ``AnchorLabeler``): an anchor is matched to the truth it overlaps most
  if that IoU is at least 0.5, and each truth is also matched to its best anchor; box targets
  are the Faster R-CNN codes ``(ty, tx, th, tw)`` without scale factors;
- training mode: ``model(images, targets)`` returns ``{"loss_cls", "loss_box"}`` (sum them to
  train) for ``targets`` a list of one dict per image, ``"boxes"`` ``(M, 4)`` xyxy pixels and
  ``"labels"`` ``(M,)`` int64 in ``1 .. num_classes``: ``loss_cls`` is the sigmoid focal loss
  (``alpha = 0.25``, ``gamma = 1.5``) summed over anchors and classes, ``loss_box`` is
  ``box_loss_weight = 50`` times the Huber loss (``delta = 0.1``) of the non-zero box
  targets, both divided by the number of matched anchors in the batch plus one (the box loss
  by four times that): effdet's ``DetectionLoss`` (its ``loss`` is their sum);
- eval mode: ``model(images)`` returns one dict per image of ``"boxes"`` ``(K, 4)`` xyxy
  pixels clipped to the image, ``"scores"`` (sigmoid) and ``"labels"`` (``1 .. num_classes``):
  the best ``max_detection_points = 5000`` (anchor, class) logits, decoded, per-class NMS at
  IoU 0.5, at most ``detections_per_img = 100``, best first (effdet's ``_post_process`` and
  ``generate_detections``), less those at or under ``score_thresh`` (0: none dropped).

Example:
    >>> model = efficientdet_d0(num_classes=3).eval()
    >>> cls, box = model.forward_raw(lucid.randn(1, 3, 128, 128))
    >>> [tuple(c.shape) for c in cls][:2], tuple(box[0].shape)
    ([(1, 27, 16, 16), (1, 27, 8, 8)], (1, 36, 16, 16))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.data.ops import batched_nms, sigmoid_focal_loss
from lucid.models import efficientnet as _effnet
from lucid.models._registry import register_model
from lucid.models.detection.yolo import _as_batch, _check_targets, _iou_np

__all__ = [
    "ASPECT_RATIOS",
    "BiFpn",
    "DetectionLoss",
    "EfficientDet",
    "EfficientNetFeatures",
    "HeadNet",
    "anchor_boxes",
    "bifpn_config",
    "decode_boxes",
    "encode_boxes",
    "efficientdet_d0",
    "efficientdet_d1",
    "efficientdet_d2",
    "efficientdet_d3",
    "efficientdet_d4",
    "efficientdet_d5",
    "efficientdet_d6",
    "efficientdet_d7",
    "label_anchors",
]

_PAPER = 'Tan, Pang and Le, "EfficientDet: Scalable and Efficient Object Detection", CVPR 2020'
_BN = partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)  # TensorFlow's batch-norm settings


def bifpn_config(min_level: int = 3, max_level: int = 7) -> list[dict[str, Any]]:
    """The BiFPN graph (the official ``fpn_configs.bifpn``): a top-down pass, then a bottom-up
    pass; each node ``{"reduction", "inputs_offsets"}``, the offsets counting the input levels
    first, then the nodes in order."""
    num_levels = max_level - min_level + 1
    node_ids = {min_level + i: [i] for i in range(num_levels)}
    ids = itertools.count(num_levels)
    nodes: list[dict[str, Any]] = []
    for i in range(max_level - 1, min_level - 1, -1):  # top-down
        nodes.append({"reduction": 1 << i, "inputs_offsets": [node_ids[i][-1],
                                                              node_ids[i + 1][-1]]})  # fmt: skip
        node_ids[i].append(next(ids))
    for i in range(min_level + 1, max_level + 1):  # bottom-up
        nodes.append({"reduction": 1 << i,
                      "inputs_offsets": node_ids[i] + [node_ids[i - 1][-1]]})  # fmt: skip
        node_ids[i].append(next(ids))
    return nodes


class EfficientNetFeatures(nn.Module):
    """An EfficientNet's stem and seven stages (``features.0`` .. ``features.7``, its 1x1 head
    conv dropped), returning the maps of stages 3, 5 and 7 (strides 8, 16, 32)."""

    def __init__(self, width_mult: float = 1.0, depth_mult: float = 1.0) -> None:
        super().__init__()
        net = _effnet._v1(width_mult, depth_mult, 0.2, {}, norm_layer=_BN)
        self.features = nn.Sequential(*list(net.features.children())[:8])
        self.out_indices = (3, 5, 7)
        self.channels = [self._out_channels(self.features[i]) for i in self.out_indices]

    @staticmethod
    def _out_channels(stage: nn.Module) -> int:
        convs = [m for m in stage.modules() if isinstance(m, nn.Conv2d)]
        return int(convs[-1].out_channels)

    def forward(self, x: Tensor) -> list[Tensor]:
        out = []
        for i, layer in enumerate(self.features):
            x = layer(x)
            if i in self.out_indices:
                out.append(x)
        return out


class ConvBnAct2d(nn.Module):
    """``conv`` then optional ``bn`` (effdet's 1x1 resampling conv)."""

    def __init__(self, cin: int, cout: int, bias: bool, bn: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=bias)
        self.bn = _BN(cout) if bn else None

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x)
        return self.bn(x) if self.bn is not None else x


class SeparableConv2d(nn.Module):
    """Depthwise 3x3 (``conv_dw``, no bias), pointwise 1x1 (``conv_pw``), optional ``bn``."""

    def __init__(self, cin: int, cout: int, bias: bool, bn: bool) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
        self.conv_pw = nn.Conv2d(cin, cout, 1, bias=bias)
        self.bn = _BN(cout) if bn else None

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv_pw(self.conv_dw(x))
        return self.bn(x) if self.bn is not None else x


class ResampleFeatureMap(nn.Module):
    """To ``cout`` channels (1x1 conv + BN, when they differ) and to the target stride (max
    pool 3x3 stride 2 down, nearest up)."""

    def __init__(self, cin: int, cout: int, ratio: float, redundant_bias: bool) -> None:
        super().__init__()
        self.conv = ConvBnAct2d(cin, cout, redundant_bias, True) if cin != cout else None
        self.ratio = ratio

    def forward(self, x: Tensor, size: tuple[int, int] | None = None) -> Tensor:
        if self.conv is not None:
            x = self.conv(x)
        if self.ratio > 1:
            return F.max_pool2d(x, 3, stride=2, padding=1)  # type: ignore[no-any-return]
        if self.ratio < 1:
            return F.interpolate(x, size=size, mode="nearest")
        return x


class FpnCombine(nn.Module):
    """Resample a node's inputs and fuse them: fast normalised fusion
    ``sum(relu(w_i) x_i) / (sum(relu(w_i)) + 1e-4)`` (``edge_weights``), or a plain sum."""

    def __init__(self, in_info: list[tuple[int, int]], fpn_channels: int, offsets: list[int],
                 reduction: int, weighted: bool, redundant_bias: bool) -> None:  # fmt: skip
        super().__init__()
        self.offsets = offsets
        self.resample = nn.ModuleDict({
            str(o): ResampleFeatureMap(in_info[o][0], fpn_channels, reduction / in_info[o][1],
                                       redundant_bias)
            for o in offsets})  # fmt: skip
        self.edge_weights = nn.Parameter(lucid.ones(len(offsets))) if weighted else None

    def forward(self, x: list[Tensor], size: tuple[int, int]) -> Tensor:
        nodes: list[Tensor] = [self.resample[str(o)](x[o], size) for o in self.offsets]
        if self.edge_weights is None:
            out = nodes[0]
            for n in nodes[1:]:
                out = out + n
            return out
        w = F.relu(self.edge_weights)
        total = w.sum() + 0.0001
        out = nodes[0] * (w[0] / total)
        for i in range(1, len(nodes)):
            out = out + nodes[i] * (w[i] / total)
        return out


class Fnode(nn.Module):
    """One BiFPN node: ``combine``, then swish and a separable conv (``after_combine``)."""

    def __init__(self, combine: FpnCombine, after_combine: SeparableConv2d) -> None:
        super().__init__()
        self.combine = combine
        self.after_combine = nn.Sequential()
        self.after_combine.add_module("conv", after_combine)

    def forward(self, x: list[Tensor], size: tuple[int, int]) -> Tensor:
        return self.after_combine(F.silu(self.combine(x, size)))  # type: ignore[no-any-return]


class BiFpnLayer(nn.Module):
    """One BiFPN cell: its eight nodes; returns the last ``num_levels`` maps."""

    def __init__(self, in_info: list[tuple[int, int]], fpn_channels: int, num_levels: int,
                 weighted: bool, redundant_bias: bool) -> None:  # fmt: skip
        super().__init__()
        info = list(in_info)
        self.fnode = nn.ModuleList()
        self.reductions = []
        for cfg in bifpn_config(3, 2 + num_levels):
            combine = FpnCombine(info, fpn_channels, cfg["inputs_offsets"], cfg["reduction"],
                                 weighted, redundant_bias)  # fmt: skip
            self.fnode.append(Fnode(combine, SeparableConv2d(fpn_channels, fpn_channels,
                                                             redundant_bias, True)))  # fmt: skip
            info.append((fpn_channels, cfg["reduction"]))
            self.reductions.append(cfg["reduction"])
        self.num_levels = num_levels

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        sizes = {8 << i: (int(t.shape[-2]), int(t.shape[-1])) for i, t in enumerate(x)}
        x = list(x)
        for node, reduction in zip(self.fnode, self.reductions):
            x.append(node(x, sizes[reduction]))
        return x[-self.num_levels :]


class BiFpn(nn.Module):
    """P6 and P7 from the backbone's last map (``resample``), then ``cell`` repeats."""

    def __init__(self, in_channels: list[int], fpn_channels: int, repeats: int,
                 weighted: bool, redundant_bias: bool, num_levels: int = 5) -> None:  # fmt: skip
        super().__init__()
        self.resample = nn.ModuleDict()
        info = [(c, 8 << i) for i, c in enumerate(in_channels)]
        cin = in_channels[-1]
        for level in range(len(in_channels), num_levels):
            self.resample[str(level)] = ResampleFeatureMap(cin, fpn_channels, 2.0, redundant_bias)
            cin = fpn_channels
            info.append((fpn_channels, 8 << level))
        cells = []
        for _ in range(repeats):
            cells.append(BiFpnLayer(info, fpn_channels, num_levels, weighted, redundant_bias))
            info = [(fpn_channels, 8 << i) for i in range(num_levels)]
        self.cell = nn.Sequential(*cells)

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        x = list(x)
        for resample in self.resample.values():
            x.append(resample(x[-1]))
        for cell in self.cell:
            x = cell(x)
        return x


class HeadNet(nn.Module):
    """``repeats`` separable convs shared across levels, each with its own batch norm per level
    (``bn_rep[i][level]``), swish, then ``predict`` (``num_outputs`` per anchor)."""

    def __init__(self, fpn_channels: int, num_outputs: int, repeats: int, redundant_bias: bool,
                 num_levels: int = 5, num_anchors: int = 9) -> None:  # fmt: skip
        super().__init__()
        self.conv_rep = nn.ModuleList([SeparableConv2d(fpn_channels, fpn_channels,
                                                       redundant_bias, False)
                                       for _ in range(repeats)])  # fmt: skip
        self.bn_rep = nn.ModuleList()
        for _ in range(repeats):
            levels = nn.ModuleList()
            for _ in range(num_levels):
                seq = nn.Sequential()
                seq.add_module("bn", _BN(fpn_channels))
                levels.append(seq)
            self.bn_rep.append(levels)
        self.predict = SeparableConv2d(fpn_channels, num_outputs * num_anchors, True, False)

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        out = []
        for level, t in enumerate(x):
            for conv, bns in zip(self.conv_rep, self.bn_rep):
                t = F.silu(bns[level](conv(t)))  # type: ignore[index]
            out.append(self.predict(t))
        return out


# ----------------------------------------------------------------------------- anchors, loss

ASPECT_RATIOS: tuple[tuple[float, float], ...] = ((1.0, 1.0), (1.4, 0.7), (0.7, 1.4))
_EPS = 1e-8  # the TensorFlow Object Detection box coder's EPSILON


def anchor_boxes(image_size: tuple[int, int], feat_sizes: Sequence[tuple[int, int]],
                 num_scales: int = 3, aspect_ratios: Sequence[tuple[float, float]] = ASPECT_RATIOS,
                 anchor_scale: float = 4.0) -> np.ndarray:  # fmt: skip
    """effdet's anchors (``Anchors``/``_generate_anchor_boxes``) as a float64 ``(A, 4)`` xyxy
    array: level by level (``feat_sizes`` from P3 up), cell by cell (row-major), and within a cell
    ``num_scales`` octaves x ``aspect_ratios`` (octave-major), the order of the heads' channels.

    On level ``l`` of feature size ``(fh, fw)`` the stride is ``(H / fh, W / fw)``; an anchor is
    ``anchor_scale * stride * 2 ** (octave / num_scales)`` times ``(ax, ay)`` wide and high,
    centred on ``((j + 0.5) stride_x, (i + 0.5) stride_y)``.
    """
    h, w = image_size
    levels = []
    for fh, fw in feat_sizes:
        sy, sx = h / fh, w / fw
        yv, xv = np.meshgrid((np.arange(fh) + 0.5) * sy, (np.arange(fw) + 0.5) * sx,
                             indexing="ij")  # fmt: skip
        yv, xv = yv.reshape(-1), xv.reshape(-1)
        per_anchor = []
        for octave in range(num_scales):
            for ax, ay in aspect_ratios:
                half_x = anchor_scale * sx * 2 ** (octave / num_scales) * ax / 2.0
                half_y = anchor_scale * sy * 2 ** (octave / num_scales) * ay / 2.0
                per_anchor.append(np.stack([xv - half_x, yv - half_y, xv + half_x,
                                            yv + half_y], axis=1))  # fmt: skip
        levels.append(np.stack(per_anchor, axis=1).reshape(-1, 4))
    return np.concatenate(levels, axis=0)


def encode_boxes(boxes: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """The Faster R-CNN box codes ``(ty, tx, th, tw)`` (effdet's ``FasterRcnnBoxCoder`` without
    scale factors, in its y-first order) of xyxy ``boxes`` against xyxy ``anchors``."""
    ha = anchors[:, 3] - anchors[:, 1] + _EPS
    wa = anchors[:, 2] - anchors[:, 0] + _EPS
    yca = (anchors[:, 1] + anchors[:, 3]) / 2
    xca = (anchors[:, 0] + anchors[:, 2]) / 2
    h = boxes[:, 3] - boxes[:, 1] + _EPS
    w = boxes[:, 2] - boxes[:, 0] + _EPS
    yc = (boxes[:, 1] + boxes[:, 3]) / 2
    xc = (boxes[:, 0] + boxes[:, 2]) / 2
    return np.stack([(yc - yca) / ha, (xc - xca) / wa, np.log(h / ha), np.log(w / wa)], axis=1)


def decode_boxes(codes: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """xyxy boxes from ``(ty, tx, th, tw)`` codes (effdet's ``decode_box_outputs``)."""
    ha = anchors[:, 3] - anchors[:, 1]
    wa = anchors[:, 2] - anchors[:, 0]
    yc = codes[:, 0] * ha + (anchors[:, 1] + anchors[:, 3]) / 2
    xc = codes[:, 1] * wa + (anchors[:, 0] + anchors[:, 2]) / 2
    h = np.exp(codes[:, 2]) * ha
    w = np.exp(codes[:, 3]) * wa
    return np.stack([xc - w / 2, yc - h / 2, xc + w / 2, yc + h / 2], axis=1)


def label_anchors(anchors: np.ndarray, boxes: np.ndarray, labels: np.ndarray,
                  match_threshold: float = 0.5) -> tuple[np.ndarray, np.ndarray, int]:  # fmt: skip
    """effdet's ``AnchorLabeler.label_anchors`` for one image: ``labels`` 0-based; returns the
    class targets ``(A,)`` (the label, or -1 for background), the box codes ``(A, 4)`` (0 for
    background) and the number of matched anchors.

    The TensorFlow ``ArgMaxMatcher(0.5, 0.5, force_match_for_each_row=True)``: an anchor goes
    to the truth of highest IoU when that IoU is at least ``match_threshold``; then each truth
    takes its best anchor (the first truth wins when two share one)."""
    n = anchors.shape[0]
    cls_t = np.full(n, -1, dtype=np.int64)
    box_t = np.zeros((n, 4))
    if boxes.shape[0] == 0:
        return cls_t, box_t, 0
    iou = _iou_np(boxes, anchors)  # (M, A)
    match = iou.argmax(0)
    match[iou.max(0) < match_threshold] = -1
    best_anchor = iou.argmax(1)
    for g in range(boxes.shape[0] - 1, -1, -1):
        match[best_anchor[g]] = g
    pos = match >= 0
    cls_t[pos] = labels[match[pos]]
    box_t[pos] = encode_boxes(boxes[match[pos]], anchors[pos])
    return cls_t, box_t, int(pos.sum())


def _flatten(outputs: Sequence[Tensor], k: int) -> Tensor:
    """Per-level ``(N, A k, H, W)`` maps as one ``(N, sum H W A, k)`` tensor, in the anchors'
    order (effdet's permute-and-reshape)."""
    n = outputs[0].shape[0]
    return lucid.cat([o.permute(0, 2, 3, 1).reshape(n, -1, k) for o in outputs], dim=1)


class DetectionLoss(nn.Module):
    """effdet's ``DetectionLoss``: ``(total, class loss, box loss)`` with ``total = class loss +
    box_loss_weight * box loss``.

    The class loss is the sigmoid focal loss of the logits against the one-hot targets (none
    for background), summed and divided by ``num_positives + 1``; the box loss is the Huber
    loss (``delta``) of the box outputs against the codes, where the codes are non-zero, summed
    and divided by ``4 (num_positives + 1)``. ``cls_outputs``/``box_outputs`` are per-level
    head maps; the targets come flattened over the levels, ``(N, A)`` class targets (-1 for
    background) and ``(N, A, 4)`` codes (effdet takes them per level)."""

    def __init__(self, num_classes: int, alpha: float = 0.25, gamma: float = 1.5,
                 delta: float = 0.1, box_loss_weight: float = 50.0) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes
        self.alpha, self.gamma, self.delta = alpha, gamma, delta
        self.box_loss_weight = box_loss_weight

    def forward(self, cls_outputs: Sequence[Tensor], box_outputs: Sequence[Tensor],
                cls_targets: Tensor, box_targets: Tensor,
                num_positives: float) -> tuple[Tensor, Tensor, Tensor]:  # fmt: skip
        cls = _flatten(cls_outputs, self.num_classes)
        box = _flatten(box_outputs, 4)
        if tuple(cls_targets.shape) != tuple(cls.shape[:2]):
            raise ValueError(f"DetectionLoss: expected class targets of shape "
                             f"{tuple(cls.shape[:2])}, got {tuple(cls_targets.shape)}")  # fmt: skip
        if tuple(box_targets.shape) != tuple(box.shape):
            raise ValueError(f"DetectionLoss: expected box targets of shape {tuple(box.shape)}, "
                             f"got {tuple(box_targets.shape)}")  # fmt: skip
        t = np.asarray(cls_targets.numpy()).astype(np.int64)
        onehot = np.zeros(tuple(cls.shape), dtype=np.float64)
        b, a = np.nonzero(t >= 0)
        onehot[b, a, t[b, a]] = 1.0
        npdt = np.float64 if cls.dtype == lucid.float64 else np.float32
        norm = float(num_positives) + 1.0
        cls_loss = sigmoid_focal_loss(cls, lucid.tensor(onehot.astype(npdt)), self.alpha,
                                      self.gamma, reduction="sum") / norm  # fmt: skip
        box_t = box_targets.to(box.dtype)
        mask = (box_t != 0).to(box.dtype)
        abs_err = (box - box_t).abs()
        quadratic = abs_err.clamp(max=self.delta)
        linear = abs_err - quadratic
        box_loss = ((0.5 * quadratic * quadratic + self.delta * linear) * mask).sum() / (norm * 4.0)
        return cls_loss + self.box_loss_weight * box_loss, cls_loss, box_loss


class EfficientDet(nn.Module):
    """Backbone, BiFPN, class and box heads. ``forward_raw(x)`` returns ``(class_outputs,
    box_outputs)``: per level P3-P7, ``(N, 9 num_classes, H, W)`` logits and ``(N, 36, H, W)``
    box codes (9 anchors: 3 scales x 3 aspect ratios). ``model(images, targets)`` is the
    detector: the losses in training mode, the detections in eval mode (see the module
    docstring for the anchors, the labelling, the loss and the decoding, all effdet's)."""

    def __init__(self, backbone: EfficientNetFeatures, fpn_channels: int, fpn_repeats: int,
                 head_repeats: int, num_classes: int = 90, weighted_fusion: bool = True,
                 redundant_bias: bool = True, *, num_scales: int = 3,
                 aspect_ratios: Sequence[tuple[float, float]] = ASPECT_RATIOS,
                 anchor_scale: float = 4.0, match_threshold: float = 0.5, alpha: float = 0.25,
                 gamma: float = 1.5, delta: float = 0.1, box_loss_weight: float = 50.0,
                 score_thresh: float = 0.0, nms_thresh: float = 0.5,
                 detections_per_img: int = 100,
                 max_detection_points: int = 5000) -> None:  # fmt: skip
        super().__init__()
        num_anchors = num_scales * len(aspect_ratios)
        self.backbone = backbone
        self.fpn = BiFpn(backbone.channels, fpn_channels, fpn_repeats, weighted_fusion,
                         redundant_bias)  # fmt: skip
        self.class_net = HeadNet(fpn_channels, num_classes, head_repeats, redundant_bias,
                                 num_anchors=num_anchors)  # fmt: skip
        self.box_net = HeadNet(fpn_channels, 4, head_repeats, redundant_bias,
                               num_anchors=num_anchors)  # fmt: skip
        # effdet's initialisation of the class prior: sigmoid(bias) = 0.01 (focal loss paper)
        bias = self.class_net.predict.conv_pw.bias
        assert bias is not None
        with lucid.no_grad():
            nn.init.constant_(bias, -math.log((1 - 0.01) / 0.01))
        self.num_classes = num_classes
        self.num_scales, self.aspect_ratios = num_scales, tuple(aspect_ratios)
        self.anchor_scale, self.match_threshold = anchor_scale, match_threshold
        self.loss_fn = DetectionLoss(num_classes, alpha, gamma, delta, box_loss_weight)
        self.score_thresh, self.nms_thresh = score_thresh, nms_thresh
        self.detections_per_img = detections_per_img
        self.max_detection_points = max_detection_points
        self._anchor_cache: dict[tuple[Any, ...], np.ndarray] = {}

    def forward_raw(self, x: Tensor) -> tuple[list[Tensor], list[Tensor]]:
        """effdet's ``EfficientDet.forward``: the per-level class and box maps."""
        if x.ndim != 4:
            raise ValueError(
                f"EfficientDet expects images of shape (batch, channels, height, width), got "
                f"{tuple(x.shape)}"
            )
        feats = self.fpn(self.backbone(x))
        return self.class_net(feats), self.box_net(feats)

    def forward(self, images: Tensor | Sequence[Tensor],
                targets: list[dict[str, Tensor]] | None = None) -> Any:  # fmt: skip
        """Training mode: ``{"loss_cls", "loss_box"}`` for ``targets``; eval mode: one dict of
        ``boxes``, ``scores``, ``labels`` per image (see the module docstring)."""
        x = _as_batch(images, "EfficientDet")
        if self.training:
            tg = _check_targets(targets, x.shape[0], self.num_classes, "EfficientDet")
            return self.compute_loss(self.forward_raw(x), tg, (x.shape[2], x.shape[3]))
        with lucid.no_grad():
            return self.postprocess(self.forward_raw(x), (x.shape[2], x.shape[3]))

    def predict(self, images: Tensor | Sequence[Tensor]) -> list[dict[str, Tensor]]:
        """The detections of eval mode, whatever the module's mode (which it leaves as is)."""
        was = self.training
        self.eval()
        try:
            return self(images)  # type: ignore[no-any-return]
        finally:
            self.train(was)

    def anchors(self, image_size: tuple[int, int],
                feat_sizes: Sequence[tuple[int, int]]) -> np.ndarray:  # fmt: skip
        """The xyxy anchors (:func:`anchor_boxes`) for an image and its levels' sizes."""
        key = (tuple(image_size), tuple(tuple(f) for f in feat_sizes))
        if key not in self._anchor_cache:
            self._anchor_cache[key] = anchor_boxes(
                image_size, feat_sizes, self.num_scales, self.aspect_ratios, self.anchor_scale
            )
        return self._anchor_cache[key]

    @staticmethod
    def _feat_sizes(outputs: Sequence[Tensor]) -> list[tuple[int, int]]:
        return [(int(o.shape[-2]), int(o.shape[-1])) for o in outputs]

    def compute_loss(self, out: tuple[list[Tensor], list[Tensor]],
                     targets: list[tuple[Any, Any]],
                     size: tuple[int, int]) -> dict[str, Tensor]:  # fmt: skip
        """The losses of ``forward_raw``'s outputs for ``targets`` as ``(boxes xyxy, labels
        0-based)`` numpy pairs: ``{"loss_cls", "loss_box"}``, ``loss_box`` already weighted."""
        cls_out, box_out = out
        anchors = self.anchors(size, self._feat_sizes(cls_out))
        labelled = [label_anchors(anchors, b, lab, self.match_threshold) for b, lab in targets]
        npdt = np.float64 if cls_out[0].dtype == lucid.float64 else np.float32
        cls_t = lucid.tensor(np.stack([c for c, _, _ in labelled]))
        box_t = lucid.tensor(np.stack([b for _, b, _ in labelled]).astype(npdt))
        num_pos = sum(p for _, _, p in labelled)
        _, cls_loss, box_loss = self.loss_fn(cls_out, box_out, cls_t, box_t, num_pos)
        return {"loss_cls": cls_loss, "loss_box": self.loss_fn.box_loss_weight * box_loss}

    def postprocess(self, out: tuple[list[Tensor], list[Tensor]],
                    size: tuple[int, int]) -> list[dict[str, Tensor]]:  # fmt: skip
        """effdet's decoding of ``forward_raw``'s outputs, image by image: the top
        ``max_detection_points`` (anchor, class) logits, their boxes decoded and clipped,
        per-class NMS, the best ``detections_per_img``."""
        cls_out, box_out = out
        anchors = self.anchors(size, self._feat_sizes(cls_out))
        cls = np.asarray(_flatten(cls_out, self.num_classes).detach().numpy(), dtype=np.float64)
        box = np.asarray(_flatten(box_out, 4).detach().numpy(), dtype=np.float64)
        height, width = size
        results = []
        for i in range(cls.shape[0]):
            logits = cls[i].reshape(-1)
            k = min(self.max_detection_points, logits.size)
            top = np.argsort(-logits, kind="stable")[:k]
            idx, classes = top // self.num_classes, top % self.num_classes
            boxes = decode_boxes(box[i, idx], anchors[idx])
            boxes[:, 0::2] = boxes[:, 0::2].clip(0, width)
            boxes[:, 1::2] = boxes[:, 1::2].clip(0, height)
            scores = 1.0 / (1.0 + np.exp(-logits[top]))
            ok = scores > self.score_thresh
            boxes, scores, classes = boxes[ok], scores[ok], classes[ok]
            if scores.size:
                keep_t = batched_nms(lucid.tensor(boxes.astype(np.float32)),
                                     lucid.tensor(scores.astype(np.float32)),
                                     lucid.tensor(classes.astype(np.int64)),
                                     self.nms_thresh)  # fmt: skip
                keep = np.asarray(keep_t.numpy(), dtype=np.int64)[: self.detections_per_img]
                boxes, scores, classes = boxes[keep], scores[keep], classes[keep]
            results.append({
                "boxes": lucid.tensor(boxes.astype(np.float32).reshape(-1, 4)),
                "scores": lucid.tensor(scores.astype(np.float32).reshape(-1)),
                "labels": lucid.tensor(classes.astype(np.int64).reshape(-1) + 1),
            })  # fmt: skip
        return results


# name -> (backbone, fpn channels, BiFPN cells, head repeats, weighted fusion, image size,
# parameters with 90 classes: effdet's tf_efficientdet_dX)
_CONFIGS: dict[str, tuple[tuple[float, float], int, int, int, bool, int, int]] = {
    "d0": ((1.0, 1.0), 64, 3, 3, True, 512, 3_880_067),
    "d1": ((1.0, 1.1), 88, 4, 3, True, 640, 6_625_898),
    "d2": ((1.1, 1.2), 112, 5, 3, True, 768, 8_097_039),
    "d3": ((1.2, 1.4), 160, 6, 4, True, 896, 12_032_296),
    "d4": ((1.4, 1.8), 224, 7, 4, True, 1024, 20_723_675),
    "d5": ((1.6, 2.2), 288, 7, 4, True, 1280, 33_653_315),
    "d6": ((1.8, 2.6), 384, 8, 5, False, 1280, 51_871_782),
    "d7": ((1.8, 2.6), 384, 8, 5, False, 1536, 51_871_782),
}


def _build(variant: str, num_classes: int, **kwargs: Any) -> EfficientDet:
    (width, depth), ch, cells, heads, weighted, _, _ = _CONFIGS[variant]
    return EfficientDet(EfficientNetFeatures(width, depth), ch, cells, heads, num_classes,
                        weighted, **kwargs)  # fmt: skip


def _register(variant: str) -> Callable[[Callable[..., EfficientDet]], Callable[..., Any]]:
    size, count = _CONFIGS[variant][5], _CONFIGS[variant][6]
    return register_model(task="object-detection", paper=_PAPER, num_params=count,
                          input_size=(3, size, size), reference="paper",
                          family="efficientdet")  # fmt: skip


@_register("d0")
def efficientdet_d0(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D0 (EfficientNet-B0, BiFPN 64 channels x 3 cells, heads of 3 convs, 512
    pixels): 3,880,067 parameters with 90 classes (effdet's ``tf_efficientdet_d0``; the
    paper's 3.9M)."""
    return _build("d0", num_classes, **kwargs)


@_register("d1")
def efficientdet_d1(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D1 (B1, 88 x 4, 3, 640 px): 6,625,898 parameters (the paper's 6.6M)."""
    return _build("d1", num_classes, **kwargs)


@_register("d2")
def efficientdet_d2(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D2 (B2, 112 x 5, 3, 768 px): 8,097,039 parameters (the paper's 8.1M)."""
    return _build("d2", num_classes, **kwargs)


@_register("d3")
def efficientdet_d3(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D3 (B3, 160 x 6, 4, 896 px): 12,032,296 parameters (the paper's 12M)."""
    return _build("d3", num_classes, **kwargs)


@_register("d4")
def efficientdet_d4(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D4 (B4, 224 x 7, 4, 1024 px): 20,723,675 parameters (the paper's 21M)."""
    return _build("d4", num_classes, **kwargs)


@_register("d5")
def efficientdet_d5(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D5 (B5, 288 x 7, 4, 1280 px): 33,653,315 parameters (the paper's 34M)."""
    return _build("d5", num_classes, **kwargs)


@_register("d6")
def efficientdet_d6(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D6 (B6, 384 x 8, 5, 1280 px; unweighted sum fusion): 51,871,782
    parameters (the paper's 52M)."""
    return _build("d6", num_classes, **kwargs)


@_register("d7")
def efficientdet_d7(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D7 (D6's network at 1536 px): 51,871,782 parameters (the paper's 52M)."""
    return _build("d7", num_classes, **kwargs)
