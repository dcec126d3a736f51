"""torchvision's RoI heads: the box branch (multi-scale RoI Align, a two-layer MLP, class
scores and class-specific box regression, per-class NMS) and, in training mode, its losses:
the ground-truth boxes added to the proposals, proposals matched at IoU 0.5, 512 sampled per
image (a quarter positive at most), cross-entropy on their classes and smooth L1 (beta 1/9) on
the positives' codes of their class (``fastrcnn_loss``); Mask R-CNN's ``maskrcnn_loss``."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.data.ops import batched_nms, box_iou, clip_boxes_to_image, remove_small_boxes, roi_align
from lucid.models.detection._utils import BalancedPositiveNegativeSampler, BoxCoder, Matcher
from lucid.models.ops import Conv2dNormActivation, MultiScaleRoIAlign
from lucid.nn import functional as F


class TwoMLPHead(nn.Module):
    """Flatten, ``fc6`` + ReLU, ``fc7`` + ReLU."""

    def __init__(self, in_channels: int, representation_size: int) -> None:
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.fc7(F.relu(self.fc6(x.flatten(1)))))


class FastRCNNConvFCHead(nn.Sequential):
    """torchvision's ``FastRCNNConvFCHead`` (the v2 models' box head): 3x3 conv + norm +
    ReLU layers of ``conv_layers`` widths, flatten, then linear + ReLU layers of
    ``fc_layers`` widths; ``input_size`` is ``(channels, height, width)``."""

    def __init__(self, input_size: tuple[int, int, int], conv_layers: list[int],
                 fc_layers: list[int], norm_layer: Any = None) -> None:  # fmt: skip
        channels, height, width = input_size
        blocks: list[nn.Module] = []
        previous = channels
        for width_ in conv_layers:
            blocks.append(Conv2dNormActivation(previous, width_, norm_layer=norm_layer))
            previous = width_
        blocks.append(nn.Flatten())
        previous = previous * height * width
        for width_ in fc_layers:
            blocks.append(nn.Linear(previous, width_))
            blocks.append(nn.ReLU(inplace=True))
            previous = width_
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)


class FastRCNNPredictor(nn.Module):
    """``cls_score`` (``num_classes``, background included) and ``bbox_pred`` (4 per
    class)."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = x.flatten(1)
        return self.cls_score(x), self.bbox_pred(x)


def fastrcnn_loss(class_logits: Tensor, box_regression: Tensor, labels: list[Tensor],
                  regression_targets: list[Tensor]) -> tuple[Tensor, Tensor]:  # fmt: skip
    """torchvision's ``fastrcnn_loss``: cross-entropy of the sampled proposals' classes, and
    smooth L1 (beta 1/9, summed, divided by the number of proposals) of the positives' box
    codes of their ground-truth class."""
    lab = lucid.cat(labels, dim=0)
    targets = lucid.cat(regression_targets, dim=0)
    classification_loss = F.cross_entropy(class_logits, lab)
    pos = lucid.where(lab > 0)[0]
    n = class_logits.shape[0]
    box_regression = box_regression.reshape(n, box_regression.shape[-1] // 4, 4)
    box_loss = F.smooth_l1_loss(box_regression[pos, lab[pos]], targets[pos], beta=1 / 9,
                                reduction="sum")  # fmt: skip
    return classification_loss, box_loss / lab.numel()


def project_masks_on_boxes(gt_masks: Tensor, boxes: Tensor, matched_idxs: Tensor,
                           m: int) -> Tensor:  # fmt: skip
    """The ground-truth masks (``(G, H, W)``) of each proposal's match cut out of its box and
    resized to ``(m, m)`` by RoI Align: ``(K, m, m)``."""
    rois = lucid.cat([matched_idxs.to(boxes.dtype)[:, None], boxes], dim=1)
    return roi_align(gt_masks[:, None].to(rois.dtype), rois, (m, m), 1.0)[:, 0]


def maskrcnn_loss(mask_logits: Tensor, proposals: list[Tensor], gt_masks: list[Tensor],
                  gt_labels: list[Tensor], mask_matched_idxs: list[Tensor]) -> Tensor:  # fmt: skip
    """torchvision's ``maskrcnn_loss``: binary cross-entropy of each positive proposal's
    logits of its class against its ground-truth mask projected on its box."""
    size = mask_logits.shape[-1]
    labels = lucid.cat([gl[idx] for gl, idx in zip(gt_labels, mask_matched_idxs)], dim=0)
    targets = lucid.cat([project_masks_on_boxes(gm, p, idx, size) for gm, p, idx
                         in zip(gt_masks, proposals, mask_matched_idxs)], dim=0)  # fmt: skip
    if targets.numel() == 0:
        return mask_logits.sum() * 0
    picked = mask_logits[lucid.arange(labels.shape[0]), labels]
    return F.binary_cross_entropy_with_logits(picked, targets)


class RoIHeads(nn.Module):
    """``forward(features, proposals, image_sizes, targets=None)``: per image a dict of
    ``boxes`` ``(K, 4)``, ``labels`` ``(K,)`` (int64, 0 is the background) and ``scores``
    ``(K,)`` (eval mode; an empty list in training mode), and a dict of losses
    (``loss_classifier``, ``loss_box_reg``; empty in eval mode). Mask R-CNN adds
    ``mask_roi_pool``, ``mask_head`` and ``mask_predictor``, used by its own forward."""

    def __init__(self, box_roi_pool: MultiScaleRoIAlign, box_head: nn.Module,
                 box_predictor: nn.Module, score_thresh: float = 0.05, nms_thresh: float = 0.5,
                 detections_per_img: int = 100, fg_iou_thresh: float = 0.5,
                 bg_iou_thresh: float = 0.5, batch_size_per_image: int = 512,
                 positive_fraction: float = 0.25,
                 bbox_reg_weights: tuple[float, float, float, float] | None = None
                 ) -> None:  # fmt: skip
        super().__init__()
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.box_coder = BoxCoder(bbox_reg_weights or (10.0, 10.0, 5.0, 5.0))
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh, False)
        self.fg_bg_sampler = BalancedPositiveNegativeSampler(batch_size_per_image,
                                                             positive_fraction)  # fmt: skip
        self.score_thresh, self.nms_thresh = score_thresh, nms_thresh
        self.detections_per_img = detections_per_img

    def postprocess_detections(
        self,
        class_logits: Tensor,
        box_regression: Tensor,
        proposals: list[Tensor],
        image_sizes: list[tuple[int, int]],
    ) -> list[dict[str, Tensor]]:
        num_classes = class_logits.shape[-1]
        counts = [p.shape[0] for p in proposals]
        pred_boxes = self.box_coder.decode(box_regression, proposals).split(counts, 0)
        pred_scores = F.softmax(class_logits, -1).split(counts, 0)
        out = []
        for boxes, scores, size in zip(pred_boxes, pred_scores, image_sizes):
            boxes = clip_boxes_to_image(boxes, size)
            labels = lucid.arange(num_classes).reshape(1, -1).expand(*scores.shape)
            boxes = boxes[:, 1:].reshape(-1, 4)  # the background column dropped
            scores, labels = scores[:, 1:].reshape(-1), labels[:, 1:].reshape(-1)
            keep = lucid.where(scores > self.score_thresh)[0]
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = remove_small_boxes(boxes, 1e-2)
            boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
            keep = batched_nms(boxes, scores, labels, self.nms_thresh)[: self.detections_per_img]
            out.append({"boxes": boxes[keep], "labels": labels[keep], "scores": scores[keep]})
        return out

    def assign_targets_to_proposals(self, proposals: list[Tensor], gt_boxes: list[Tensor],
                                    gt_labels: list[Tensor]
                                    ) -> tuple[list[Tensor], list[Tensor]]:  # fmt: skip
        """Per image: each proposal's matched ground truth (clamped at 0) and its label (0
        background, -1 ignored)."""
        matched_idxs, labels = [], []
        for props, boxes, gl in zip(proposals, gt_boxes, gt_labels):
            if boxes.shape[0] == 0:
                clamped = lucid.zeros((props.shape[0],), dtype=lucid.int64)
                lab = lucid.zeros((props.shape[0],), dtype=lucid.int64)
            else:
                idx = self.proposal_matcher(box_iou(boxes, props))
                clamped = idx.clamp(min=0)
                lab_np = gl.numpy()[clamped.numpy()].astype("int64")
                i = idx.numpy()
                lab_np[i == Matcher.BELOW_LOW_THRESHOLD] = 0
                lab_np[i == Matcher.BETWEEN_THRESHOLDS] = -1
                lab = lucid.tensor(lab_np)
            matched_idxs.append(clamped)
            labels.append(lab)
        return matched_idxs, labels

    def select_training_samples(
        self, proposals: list[Tensor], targets: list[dict[str, Tensor]]
    ) -> tuple[list[Tensor], list[Tensor], list[Tensor], list[Tensor]]:
        """The ground-truth boxes appended to the proposals, matched, sampled (in index
        order): the kept proposals, their matches, labels and box-regression targets."""
        gt_boxes = [t["boxes"].to(proposals[0].dtype) for t in targets]
        gt_labels = [t["labels"] for t in targets]
        proposals = [lucid.cat([p, g], dim=0) for p, g in zip(proposals, gt_boxes)]
        matched_idxs, labels = self.assign_targets_to_proposals(proposals, gt_boxes, gt_labels)
        pos_masks, neg_masks = self.fg_bg_sampler(labels)
        matched_gt_boxes = []
        for i, (pm, nm) in enumerate(zip(pos_masks, neg_masks)):
            keep = lucid.where((pm + nm) > 0)[0]
            proposals[i], labels[i], matched_idxs[i] = (
                proposals[i][keep],
                labels[i][keep],
                matched_idxs[i][keep],
            )
            gt = gt_boxes[i] if gt_boxes[i].shape[0] else lucid.zeros((1, 4))
            matched_gt_boxes.append(gt[matched_idxs[i]])
        regression_targets = self.box_coder.encode(matched_gt_boxes, proposals)
        return proposals, matched_idxs, labels, regression_targets

    def forward(self, features: dict[str, Tensor], proposals: list[Tensor],
                image_sizes: list[tuple[int, int]],
                targets: list[dict[str, Tensor]] | None = None
                ) -> tuple[list[dict[str, Tensor]], dict[str, Tensor]]:  # fmt: skip
        losses: dict[str, Any] = {}
        if self.training:
            if targets is None:
                raise ValueError("targets should not be None in training mode")
            proposals, matched_idxs, labels, regression_targets = self.select_training_samples(
                proposals, targets
            )
        x = self.box_head(self.box_roi_pool(features, proposals, image_sizes))
        class_logits, box_regression = self.box_predictor(x)
        if not self.training:
            return self.postprocess_detections(
                class_logits, box_regression, proposals, image_sizes
            ), losses
        loss_classifier, loss_box_reg = fastrcnn_loss(
            class_logits, box_regression, labels, regression_targets
        )
        losses = {"loss_classifier": loss_classifier, "loss_box_reg": loss_box_reg}
        if hasattr(self, "mask_predictor") and targets is not None:
            pos = [lucid.where(lab > 0)[0] for lab in labels]
            mask_props = [p[k] for p, k in zip(proposals, pos)]
            pos_matched = [m[k] for m, k in zip(matched_idxs, pos)]
            mask_logits = self.mask_predictor(
                self.mask_head(self.mask_roi_pool(features, mask_props, image_sizes))
            )
            losses["loss_mask"] = maskrcnn_loss(
                mask_logits, mask_props, [t["masks"] for t in targets],
                [t["labels"] for t in targets], pos_matched)  # fmt: skip
        return [], losses
