"""torchvision's region proposal network: a shared 3x3 conv and 1x1 objectness and
box-regression convs on each FPN level; the anchors decoded, the best ``pre_nms_top_n`` per
level kept, clipped, small and low-scoring boxes dropped, NMS per level, the best
``post_nms_top_n`` proposals kept. In training mode it also gives torchvision's losses: anchors
matched to the ground truth (IoU 0.7 / 0.3, each box's best anchors kept), 256 anchors sampled
per image (half positive at most), binary cross-entropy on their objectness and smooth L1
(beta 1/9) on the positives' box codes, summed over the sampled anchors."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.data.ops import batched_nms, box_iou, clip_boxes_to_image, remove_small_boxes
from lucid.models.detection._utils import BalancedPositiveNegativeSampler, BoxCoder, Matcher
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.ops import Conv2dNormActivation
from lucid.nn import functional as F


class RPNHead(nn.Module):
    """``conv_depth`` 3x3 conv + ReLU layers, then ``cls_logits`` (A per location) and
    ``bbox_pred`` (4 A per location)."""

    def __init__(self, in_channels: int, num_anchors: int, conv_depth: int = 1) -> None:
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels, kernel_size=3,
                                                         norm_layer=None)
                                    for _ in range(conv_depth)])  # fmt: skip
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, 1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, 1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.01)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
        logits, bbox_reg = [], []
        for feature in x:
            t = self.conv(feature)
            logits.append(self.cls_logits(t))
            bbox_reg.append(self.bbox_pred(t))
        return logits, bbox_reg


def permute_and_flatten(layer: Tensor, n: int, c: int) -> Tensor:
    """``(N, A C, H, W)`` to ``(N, H W A, C)``: the anchors of a location next to each other."""
    _, _, h, w = layer.shape
    return layer.reshape(n, -1, c, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, c)


def concat_box_prediction_layers(
    box_cls: list[Tensor], box_regression: list[Tensor]
) -> tuple[Tensor, Tensor]:
    """All levels' predictions in the anchors' order: ``(N sum(HWA), C)`` and ``(.., 4)``."""
    cls, reg = [], []
    for c, r in zip(box_cls, box_regression):
        n, a = c.shape[0], r.shape[1] // 4
        cls.append(permute_and_flatten(c, n, c.shape[1] // a))
        reg.append(permute_and_flatten(r, n, 4))
    return lucid.cat(cls, dim=1).flatten(0, -2), lucid.cat(reg, dim=1).reshape(-1, 4)


class RegionProposalNetwork(nn.Module):
    """The RPN: ``forward(images, image_sizes, features, targets=None)`` gives one ``(K, 4)``
    tensor of proposals per image and a dict of losses (``loss_objectness``,
    ``loss_rpn_box_reg``; empty in eval mode). ``pre_nms_top_n`` and ``post_nms_top_n`` are
    ints (both modes) or torchvision's ``{"training": .., "testing": ..}`` dicts."""

    def __init__(
        self,
        anchor_generator: AnchorGenerator,
        head: nn.Module,
        pre_nms_top_n: int | dict[str, int],
        post_nms_top_n: int | dict[str, int],
        nms_thresh: float,
        score_thresh: float = 0.0,
        fg_iou_thresh: float = 0.7,
        bg_iou_thresh: float = 0.3,
        batch_size_per_image: int = 256,
        positive_fraction: float = 0.5,
    ) -> None:
        super().__init__()
        self.anchor_generator = anchor_generator
        self.head = head
        self.box_coder = BoxCoder((1.0, 1.0, 1.0, 1.0))
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh, True)
        self.fg_bg_sampler = BalancedPositiveNegativeSampler(batch_size_per_image,
                                                             positive_fraction)  # fmt: skip
        self._pre_nms_top_n, self._post_nms_top_n = pre_nms_top_n, post_nms_top_n
        self.nms_thresh, self.score_thresh = nms_thresh, score_thresh
        self.min_size = 1e-3

    def _top_n(self, value: int | dict[str, int]) -> int:
        if isinstance(value, dict):
            return value["training" if self.training else "testing"]
        return value

    @property
    def pre_nms_top_n(self) -> int:
        """Proposals kept per level before NMS, in the current mode."""
        return self._top_n(self._pre_nms_top_n)

    @property
    def post_nms_top_n(self) -> int:
        """Proposals kept per image after NMS, in the current mode."""
        return self._top_n(self._post_nms_top_n)

    def assign_targets_to_anchors(self, anchors: list[Tensor],
                                  targets: list[dict[str, Tensor]]
                                  ) -> tuple[list[Tensor], list[Tensor]]:  # fmt: skip
        """Per image: the anchors' labels (1 object, 0 background, -1 ignored) and the boxes
        of their matched ground truths."""
        labels, matched_gt_boxes = [], []
        for anchors_per_image, t in zip(anchors, targets):
            gt_boxes = t["boxes"]
            if gt_boxes.shape[0] == 0:
                matched = lucid.zeros(anchors_per_image.shape, dtype=anchors_per_image.dtype)
                lab = lucid.zeros((anchors_per_image.shape[0],), dtype=lucid.float32)
            else:
                idx = self.proposal_matcher(box_iou(gt_boxes, anchors_per_image))
                matched = gt_boxes[idx.clamp(min=0)]
                i = idx.numpy()
                lab_np = (i >= 0).astype("float32")
                lab_np[i == Matcher.BELOW_LOW_THRESHOLD] = 0.0
                lab_np[i == Matcher.BETWEEN_THRESHOLDS] = -1.0
                lab = lucid.tensor(lab_np)
            labels.append(lab)
            matched_gt_boxes.append(matched)
        return labels, matched_gt_boxes

    def compute_loss(self, objectness: Tensor, pred_bbox_deltas: Tensor, labels: list[Tensor],
                     regression_targets: list[Tensor]) -> tuple[Tensor, Tensor]:  # fmt: skip
        """torchvision's RPN losses: objectness BCE over the sampled anchors, box smooth L1
        (beta 1/9) over the sampled positives divided by the number sampled."""
        pos_masks, neg_masks = self.fg_bg_sampler(labels)
        pos = lucid.where(lucid.cat(pos_masks, dim=0))[0]
        neg = lucid.where(lucid.cat(neg_masks, dim=0))[0]
        sampled = lucid.cat([pos, neg], dim=0)
        objectness = objectness.flatten()
        lab = lucid.cat(labels, dim=0)
        targets = lucid.cat(regression_targets, dim=0)
        box_loss = F.smooth_l1_loss(pred_bbox_deltas[pos], targets[pos], beta=1 / 9,
                                    reduction="sum") / sampled.shape[0]  # fmt: skip
        objectness_loss = F.binary_cross_entropy_with_logits(objectness[sampled], lab[sampled])
        return objectness_loss, box_loss

    def filter_proposals(self, proposals: Tensor, objectness: Tensor,
                         image_sizes: list[tuple[int, int]],
                         per_level: list[int]) -> list[Tensor]:  # fmt: skip
        n = proposals.shape[0]
        objectness = objectness.detach().reshape(n, -1)
        levels = lucid.cat([lucid.full((k,), i, dtype=lucid.int64)
                            for i, k in enumerate(per_level)])  # fmt: skip
        top, offset = [], 0
        for ob in objectness.split(per_level, 1):
            k = min(self.pre_nms_top_n, ob.shape[1])
            top.append(ob.topk(k, dim=1)[1] + offset)
            offset += ob.shape[1]
        idx = lucid.cat(top, dim=1)
        out = []
        for i, size in enumerate(image_sizes):
            boxes = clip_boxes_to_image(proposals[i][idx[i]], size)
            scores, lvl = lucid.sigmoid(objectness[i][idx[i]]), levels[idx[i]]
            keep = remove_small_boxes(boxes, self.min_size)
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = lucid.where(scores >= self.score_thresh)[0]
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = batched_nms(boxes, scores, lvl, self.nms_thresh)[: self.post_nms_top_n]
            out.append(boxes[keep])
        return out

    def forward(self, images: Tensor, image_sizes: list[tuple[int, int]],
                features: dict[str, Tensor], targets: list[dict[str, Tensor]] | None = None
                ) -> tuple[list[Tensor], dict[str, Tensor]]:  # fmt: skip
        feats = list(features.values())
        objectness, deltas = self.head(feats)
        fsizes = [(int(f.shape[-2]), int(f.shape[-1])) for f in feats]
        anchors = self.anchor_generator((int(images.shape[-2]), int(images.shape[-1])), fsizes)
        per_level = [o.shape[1] * o.shape[2] * o.shape[3] for o in objectness]
        objectness, deltas = concat_box_prediction_layers(objectness, deltas)
        n = images.shape[0]
        proposals = self.box_coder.decode(deltas.detach(), [anchors] * n).reshape(n, -1, 4)
        boxes = self.filter_proposals(proposals, objectness, image_sizes, per_level)
        losses: dict[str, Any] = {}
        if self.training:
            if targets is None:
                raise ValueError("targets should not be None")
            labels, matched_gt_boxes = self.assign_targets_to_anchors([anchors] * n, targets)
            regression_targets = self.box_coder.encode(matched_gt_boxes, [anchors] * n)
            loss_objectness, loss_rpn_box_reg = self.compute_loss(
                objectness, deltas, labels, regression_targets
            )
            losses = {"loss_objectness": loss_objectness, "loss_rpn_box_reg": loss_rpn_box_reg}
        return boxes, losses
