"""torchvision's RoI heads (inference): the box branch (multi-scale RoI Align, a two-layer
MLP, class scores and class-specific box regression, per-class NMS)."""

from __future__ import annotations

import lucid
from lucid import Tensor, nn
from lucid.data.ops import batched_nms, clip_boxes_to_image, remove_small_boxes
from lucid.models.detection._utils import BoxCoder
from lucid.models.ops import MultiScaleRoIAlign
from lucid.nn import functional as F


class TwoMLPHead(nn.Module):
    """Flatten, ``fc6`` + ReLU, ``fc7`` + ReLU."""

    def __init__(self, in_channels: int, representation_size: int) -> None:
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.fc7(F.relu(self.fc6(x.flatten(1)))))


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


class RoIHeads(nn.Module):
    """``forward(features, proposals, image_sizes)``: per image a dict of ``boxes``
    ``(K, 4)``, ``labels`` ``(K,)`` (int64, 0 is the background) and ``scores`` ``(K,)``.
    Inference only, as :class:`~lucid.models.detection.rpn.RegionProposalNetwork`."""

    def __init__(self, box_roi_pool: MultiScaleRoIAlign, box_head: nn.Module,
                 box_predictor: nn.Module, score_thresh: float = 0.05, nms_thresh: float = 0.5,
                 detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        self.box_roi_pool = box_roi_pool
        self.box_head = box_head
        self.box_predictor = box_predictor
        self.box_coder = BoxCoder((10.0, 10.0, 5.0, 5.0))
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

    def forward(self, features: dict[str, Tensor], proposals: list[Tensor],
                image_sizes: list[tuple[int, int]]) -> list[dict[str, Tensor]]:  # fmt: skip
        if self.training:
            raise NotImplementedError("lucid's RoIHeads have no training losses yet: call "
                                      "model.eval() for inference")  # fmt: skip
        x = self.box_head(self.box_roi_pool(features, proposals, image_sizes))
        class_logits, box_regression = self.box_predictor(x)
        return self.postprocess_detections(class_logits, box_regression, proposals, image_sizes)
