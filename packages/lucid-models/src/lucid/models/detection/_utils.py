"""The shared pieces of torchvision's detection models: the box coder, the frozen batch norm
and the ResNet + FPN backbone (``backbone.body`` / ``backbone.fpn``, torchvision's keys)."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, nn
from lucid.models.ops import FeaturePyramidNetwork, LastLevelMaxPool
from lucid.models.ops import FrozenBatchNorm2d as FrozenBatchNorm2d  # re-exported (detr)
from lucid.models.resnet import BasicBlock, Bottleneck, ResNet

BBOX_XFORM_CLIP = math.log(1000.0 / 16)


class BoxCoder:
    """Decodes ``(dx, dy, dw, dh)`` regression codes against reference boxes (xyxy), the
    codes divided by ``weights``, ``dw`` and ``dh`` clamped at ``log(1000 / 16)``."""

    def __init__(self, weights: tuple[float, float, float, float],
                 bbox_xform_clip: float = BBOX_XFORM_CLIP) -> None:  # fmt: skip
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def encode_single(self, reference_boxes: Tensor, proposals: Tensor) -> Tensor:
        """The codes that take ``proposals`` ``(N, 4)`` to ``reference_boxes`` ``(N, 4)``
        (torchvision's ``encode_boxes``): ``(N, 4)``, each times its weight."""
        wx, wy, ww, wh = self.weights
        ex_w = proposals[:, 2] - proposals[:, 0]
        ex_h = proposals[:, 3] - proposals[:, 1]
        ex_x, ex_y = proposals[:, 0] + 0.5 * ex_w, proposals[:, 1] + 0.5 * ex_h
        gt_w = reference_boxes[:, 2] - reference_boxes[:, 0]
        gt_h = reference_boxes[:, 3] - reference_boxes[:, 1]
        gt_x, gt_y = reference_boxes[:, 0] + 0.5 * gt_w, reference_boxes[:, 1] + 0.5 * gt_h
        return lucid.stack([wx * (gt_x - ex_x) / ex_w, wy * (gt_y - ex_y) / ex_h,
                            ww * lucid.log(gt_w / ex_w), wh * lucid.log(gt_h / ex_h)],
                           dim=1)  # fmt: skip

    def encode(self, reference_boxes: list[Tensor], proposals: list[Tensor]) -> list[Tensor]:
        """:meth:`encode_single` over the images, one ``(N_i, 4)`` tensor each."""
        counts = [b.shape[0] for b in reference_boxes]
        codes = self.encode_single(lucid.cat(reference_boxes, dim=0), lucid.cat(proposals, dim=0))
        return list(codes.split(counts, 0))

    def decode_single(self, rel_codes: Tensor, boxes: Tensor) -> Tensor:
        """``rel_codes`` ``(N, 4 k)`` against ``boxes`` ``(N, 4)``: ``(N, 4 k)`` boxes."""
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx, dy = rel_codes[:, 0::4] / wx, rel_codes[:, 1::4] / wy
        dw = (rel_codes[:, 2::4] / ww).clamp(max=self.bbox_xform_clip)
        dh = (rel_codes[:, 3::4] / wh).clamp(max=self.bbox_xform_clip)
        cx = dx * widths[:, None] + ctr_x[:, None]
        cy = dy * heights[:, None] + ctr_y[:, None]
        half_w = 0.5 * (lucid.exp(dw) * widths[:, None])
        half_h = 0.5 * (lucid.exp(dh) * heights[:, None])
        out = lucid.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], dim=2)
        return out.flatten(1)

    def decode(self, rel_codes: Tensor, boxes: list[Tensor]) -> Tensor:
        """The codes of all images (rows in the order of ``boxes``): ``(N, k, 4)``. With no
        box at all (no proposal survived) ``rel_codes`` is ``(0, 4 k)`` and the result
        ``(0, k, 4)``: ``reshape(0, -1)`` would be ambiguous, so torchvision reshapes only when
        ``box_sum > 0``."""
        concat = lucid.cat(boxes, dim=0)
        box_sum = concat.shape[0]
        if box_sum > 0:
            rel_codes = rel_codes.reshape(box_sum, -1)
        pred_boxes = self.decode_single(rel_codes, concat)
        if box_sum > 0:
            return pred_boxes.reshape(box_sum, -1, 4)
        return pred_boxes.reshape(0, pred_boxes.shape[-1] // 4, 4)


class Matcher:
    """torchvision's ``Matcher``: each column (prediction) of an ``(M gt, N predictions)``
    quality matrix gets the row of its best ground truth, ``-1`` (``BELOW_LOW_THRESHOLD``) when
    that quality is under ``low_threshold``, ``-2`` (``BETWEEN_THRESHOLDS``) when it is under
    ``high_threshold``; with ``allow_low_quality_matches`` each ground truth's best predictions
    (ties included) keep their match whatever its quality."""

    BELOW_LOW_THRESHOLD = -1
    BETWEEN_THRESHOLDS = -2

    def __init__(self, high_threshold: float, low_threshold: float,
                 allow_low_quality_matches: bool = False) -> None:  # fmt: skip
        if low_threshold > high_threshold:
            raise ValueError(f"Matcher: low_threshold ({low_threshold}) must not exceed "
                             f"high_threshold ({high_threshold})")  # fmt: skip
        self.high_threshold, self.low_threshold = high_threshold, low_threshold
        self.allow_low_quality_matches = allow_low_quality_matches

    def __call__(self, match_quality_matrix: Tensor) -> Tensor:
        q = match_quality_matrix.detach().numpy()
        if q.size == 0:
            if q.shape[0] == 0:
                raise ValueError("No ground-truth boxes available for one of the images "
                                 "during training")  # fmt: skip
            raise ValueError("No proposal boxes available for one of the images during training")
        matches = q.argmax(axis=0)
        vals = q[matches, np.arange(q.shape[1])]
        all_matches = matches.copy()
        matches[vals < self.low_threshold] = self.BELOW_LOW_THRESHOLD
        matches[(vals >= self.low_threshold) & (vals < self.high_threshold)] = (
            self.BETWEEN_THRESHOLDS
        )
        if self.allow_low_quality_matches:
            best = q.max(axis=1)
            preds = np.nonzero(q == best[:, None])[1]
            matches[preds] = all_matches[preds]
        return lucid.tensor(matches.astype(np.int64))


class BalancedPositiveNegativeSampler:
    """torchvision's ``BalancedPositiveNegativeSampler``: per image, up to
    ``batch_size_per_image * positive_fraction`` positives (label >= 1) and negatives (label
    0) to fill the batch, each drawn at random (``lucid.randperm``, so ``lucid.manual_seed``
    fixes them). ``__call__(labels)`` gives per image a positive and a negative uint8 mask."""

    def __init__(self, batch_size_per_image: int, positive_fraction: float) -> None:
        self.batch_size_per_image = batch_size_per_image
        self.positive_fraction = positive_fraction

    def __call__(self, matched_idxs: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
        pos_masks, neg_masks = [], []
        for labels in matched_idxs:
            lab = labels.numpy()
            positive, negative = np.nonzero(lab >= 1)[0], np.nonzero(lab == 0)[0]
            num_pos = min(positive.size, int(self.batch_size_per_image * self.positive_fraction))
            num_neg = min(negative.size, self.batch_size_per_image - num_pos)
            perm1 = lucid.randperm(positive.size).numpy()[:num_pos]
            perm2 = lucid.randperm(negative.size).numpy()[:num_neg]
            pos = np.zeros(lab.shape, dtype=np.uint8)
            neg = np.zeros(lab.shape, dtype=np.uint8)
            pos[positive[perm1]] = 1
            neg[negative[perm2]] = 1
            pos_masks.append(lucid.tensor(pos))
            neg_masks.append(lucid.tensor(neg))
        return pos_masks, neg_masks


def check_targets(name: str, targets: Any, num_images: int, masks: bool = False) -> None:
    """torchvision's checks of a detector's training targets: one dict per image with float
    ``boxes`` ``(N, 4)`` of positive width and height, ``labels`` ``(N,)`` (and ``masks``)."""
    if targets is None:
        raise ValueError(f"{name}: targets should not be none when in training mode")
    if not isinstance(targets, (list, tuple)) or len(targets) != num_images:
        raise ValueError(f"{name}: targets should be a list of one dict per image "
                         f"({num_images}), got {type(targets).__name__}"
                         + (f" of {len(targets)}" if isinstance(targets, (list, tuple))
                            else ""))  # fmt: skip
    for i, t in enumerate(targets):
        keys = ("boxes", "labels", "masks") if masks else ("boxes", "labels")
        for key in keys:
            if not isinstance(t, dict) or key not in t:
                raise ValueError(f"{name}: target {i} has no {key!r}")
        boxes = t["boxes"]
        if not isinstance(boxes, Tensor) or boxes.ndim != 2 or boxes.shape[-1] != 4:
            raise ValueError(f"Expected target boxes to be a tensor of shape [N, 4], got "
                             f"{getattr(boxes, 'shape', type(boxes).__name__)}.")  # fmt: skip
        if not boxes.is_floating_point():
            raise TypeError(f"target boxes must be of float type, instead got {boxes.dtype}")
        b = boxes.numpy()
        bad = np.nonzero((b[:, 2:] <= b[:, :2]).any(axis=1))[0]
        if bad.size:
            raise ValueError(f"All bounding boxes should have positive height and width. "
                             f"Found invalid box {b[bad[0]].tolist()} for target at index "
                             f"{i}.")  # fmt: skip


def _freeze_batch_norms(module: nn.Module) -> None:
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, FrozenBatchNorm2d(child.num_features, child.eps))
        else:
            _freeze_batch_norms(child)


class ResNetBody(nn.Module):
    """A ResNet without its classifier, returning the maps of ``return_layers`` (torchvision's
    ``IntermediateLayerGetter``: ``{"layer1": "0", ...}``) as an ordered dict."""

    def __init__(self, resnet: ResNet, return_layers: dict[str, str]) -> None:
        super().__init__()
        for name in ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"):
            setattr(self, name, getattr(resnet, name))
        self.return_layers = return_layers

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out: dict[str, Tensor] = OrderedDict()
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for name in ("layer1", "layer2", "layer3", "layer4"):
            x = getattr(self, name)(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class BackboneWithFPN(nn.Module):
    """``body`` then ``fpn``: an image batch to the FPN's ordered dict of maps (``"0"`` ..
    ``"3"``, ``"pool"``), each ``out_channels`` wide."""

    def __init__(self, body: nn.Module, in_channels_list: list[int], out_channels: int,
                 extra_blocks: Any = None, norm_layer: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.body = body
        self.fpn = FeaturePyramidNetwork(in_channels_list, out_channels,
                                         extra_blocks or LastLevelMaxPool(),
                                         norm_layer)  # fmt: skip
        self.out_channels = out_channels

    def forward(self, x: Tensor) -> Any:
        return self.fpn(self.body(x))


def resnet50_fpn_backbone(trainable_layers: int = 5, frozen_batch_norm: bool = False,
                          returned_layers: tuple[int, ...] = (1, 2, 3, 4),
                          extra_blocks: Any = None) -> BackboneWithFPN:  # fmt: skip
    """torchvision's ``resnet_fpn_backbone("resnet50")``: the stem and the first
    ``5 - trainable_layers`` stages do not train (``requires_grad=False``); with
    ``frozen_batch_norm`` the batch norms are :class:`FrozenBatchNorm2d` (torchvision's layout
    when it loads pretrained weights), else ``BatchNorm2d`` (its layout with ``weights=None``)."""
    if not 0 <= trainable_layers <= 5:
        raise ValueError(f"trainable_layers must be in [0, 5], got {trainable_layers}")
    resnet = ResNet(Bottleneck, [3, 4, 6, 3])
    if frozen_batch_norm:
        _freeze_batch_norms(resnet)
    trainable = ["layer4", "layer3", "layer2", "layer1", "conv1"][:trainable_layers]
    if trainable_layers == 5:
        trainable.append("bn1")
    for name, p in resnet.named_parameters():
        if all(not name.startswith(layer) for layer in trainable):
            p.requires_grad_(False)
    body = ResNetBody(resnet, {f"layer{k}": str(i) for i, k in enumerate(returned_layers)})
    in_channels = [256 * 2 ** (k - 1) for k in returned_layers]
    return BackboneWithFPN(body, in_channels, 256, extra_blocks)


_RESNET_LAYOUTS: dict[str, tuple[type[nn.Module], list[int]]] = {
    "resnet18": (BasicBlock, [2, 2, 2, 2]),
    "resnet34": (BasicBlock, [3, 4, 6, 3]),
    "resnet50": (Bottleneck, [3, 4, 6, 3]),
    "resnet101": (Bottleneck, [3, 4, 23, 3]),
    "resnet152": (Bottleneck, [3, 8, 36, 3]),
}


def resnet_fpn_backbone(backbone_name: str, trainable_layers: int = 5,
                        returned_layers: tuple[int, ...] = (1, 2, 3, 4),
                        extra_blocks: Any = None, out_channels: int = 256,
                        frozen_batch_norm: bool = False,
                        norm_layer: Any = None) -> BackboneWithFPN:  # fmt: skip
    """torchvision's ``resnet_fpn_backbone`` (no weights): a ResNet of ``backbone_name``
    (``resnet18`` .. ``resnet152``) with an FPN of ``out_channels`` on the stages of
    ``returned_layers``; the first ``5 - trainable_layers`` parts do not train.
    ``norm_layer`` is the FPN's (torchvision's ``_resnet_fpn_extractor``; the v2 models')."""
    if backbone_name not in _RESNET_LAYOUTS:
        raise ValueError(f"resnet_fpn_backbone: backbone_name must be one of "
                         f"{sorted(_RESNET_LAYOUTS)}, got {backbone_name!r}")  # fmt: skip
    if not 0 <= trainable_layers <= 5:
        raise ValueError(f"trainable_layers must be in [0, 5], got {trainable_layers}")
    block, layers = _RESNET_LAYOUTS[backbone_name]
    resnet = ResNet(block, layers)
    if frozen_batch_norm:
        _freeze_batch_norms(resnet)
    trainable = ["layer4", "layer3", "layer2", "layer1", "conv1"][:trainable_layers]
    if trainable_layers == 5:
        trainable.append("bn1")
    for name, p in resnet.named_parameters():
        if all(not name.startswith(layer) for layer in trainable):
            p.requires_grad_(False)
    body = ResNetBody(resnet, {f"layer{k}": str(i) for i, k in enumerate(returned_layers)})
    stage2 = 64 if block is BasicBlock else 256
    in_channels = [stage2 * 2 ** (k - 1) for k in returned_layers]
    return BackboneWithFPN(body, in_channels, out_channels, extra_blocks, norm_layer)
