"""RetinaNet (Lin et al., "Focal Loss for Dense Object Detection", ICCV 2017) with a ResNet-50 +
FPN (P3-P7) backbone, as torchvision's ``retinanet_resnet50_fpn`` builds it: 9
anchors per location, a classification and a box-regression subnet of four 3x3 convs each on
every level; per level the best 1000 (class, anchor) scores over 0.05 are decoded, then
per-class NMS keeps 300 detections per image. In training mode ``model(images, targets)``
gives torchvision's losses: anchors matched at IoU 0.5 / 0.4 (each box's best anchors kept),
``classification`` the sigmoid focal loss of the anchors not ignored and ``bbox_regression``
the L1 loss of the foreground anchors' box codes, each per image divided by its number of
foreground anchors, then averaged over the images."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, nn
from lucid.data.ops import (
    batched_nms,
    box_iou,
    clip_boxes_to_image,
    generalized_box_iou_loss,
    sigmoid_focal_loss,
)
from lucid.models._registry import register_model
from lucid.models.detection._utils import (
    BoxCoder,
    Matcher,
    check_targets,
    resnet50_fpn_backbone,
    resnet_fpn_backbone,
)
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.detection.transform import GeneralizedRCNNTransform
from lucid.models.ops import Conv2dNormActivation, LastLevelP6P7
from lucid.nn import functional as F

_PAPER = 'Lin et al., "Focal Loss for Dense Object Detection", ICCV 2017'


def _subnet(channels: int, norm_layer: Any = None) -> nn.Sequential:
    return nn.Sequential(*[Conv2dNormActivation(channels, channels, norm_layer=norm_layer)
                           for _ in range(4)])  # fmt: skip


class RetinaNetClassificationHead(nn.Module):
    """Four 3x3 conv + ReLU, then ``cls_logits`` (``A K`` per location; bias at the prior
    ``-log((1 - 0.01) / 0.01)``). Output ``(N, sum(H W A), K)``."""

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 prior_probability: float = 0.01, norm_layer: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.conv = _subnet(in_channels, norm_layer)
        self.cls_logits = nn.Conv2d(in_channels, num_anchors * num_classes, 3, padding=1)
        self.num_classes = num_classes
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.01)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        prior = -math.log((1 - prior_probability) / prior_probability)
        with lucid.no_grad():
            self.cls_logits.bias.fill_(prior)  # type: ignore[union-attr]

    def forward(self, x: list[Tensor]) -> Tensor:
        out = []
        for f in x:
            t = self.cls_logits(self.conv(f))
            n, _, h, w = t.shape
            out.append(t.reshape(n, -1, self.num_classes, h, w).permute(0, 3, 4, 1, 2)
                       .reshape(n, -1, self.num_classes))  # fmt: skip
        return lucid.cat(out, dim=1)

    def compute_loss(self, targets: list[dict[str, Tensor]], cls_logits: Tensor,
                     matched_idxs: list[Tensor]) -> Tensor:  # fmt: skip
        """Per image the summed sigmoid focal loss of the anchors not between the thresholds
        (one-hot targets of the matched labels) over its foreground count, averaged."""
        losses = []
        for t, logits, matched in zip(targets, cls_logits, matched_idxs):
            m = matched.numpy()
            fg = np.nonzero(m >= 0)[0]
            target = np.zeros(tuple(logits.shape), dtype=np.float32)
            target[fg, t["labels"].numpy()[m[fg]]] = 1.0
            valid = lucid.tensor(np.nonzero(m != Matcher.BETWEEN_THRESHOLDS)[0])
            loss = sigmoid_focal_loss(logits[valid], lucid.tensor(target).to(logits.dtype)[valid],
                                      reduction="sum")  # fmt: skip
            losses.append(loss / max(1, fg.size))
        return lucid.stack(losses).sum() / len(targets)


class RetinaNetRegressionHead(nn.Module):
    """Four 3x3 conv + ReLU, then ``bbox_reg`` (4 A per location). Output
    ``(N, sum(H W A), 4)``."""

    def __init__(self, in_channels: int, num_anchors: int, norm_layer: Any = None) -> None:
        super().__init__()
        self.conv = _subnet(in_channels, norm_layer)
        self.bbox_reg = nn.Conv2d(in_channels, num_anchors * 4, 3, padding=1)
        self._loss_type = "l1"  # "giou" in the v2 model
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.01)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: list[Tensor]) -> Tensor:
        out = []
        for f in x:
            t = self.bbox_reg(self.conv(f))
            n, _, h, w = t.shape
            out.append(t.reshape(n, -1, 4, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, 4))
        return lucid.cat(out, dim=1)

    def compute_loss(self, targets: list[dict[str, Tensor]], bbox_regression: Tensor,
                     anchors: list[Tensor], matched_idxs: list[Tensor],
                     box_coder: BoxCoder) -> Tensor:  # fmt: skip
        """Per image the summed L1 loss of the foreground anchors' codes (or, with
        ``_loss_type = "giou"``, the GIoU loss of their decoded boxes) over their count,
        averaged over the images."""
        losses = []
        for t, reg, an, matched in zip(targets, bbox_regression, anchors, matched_idxs):
            fg = lucid.where(matched >= 0)[0]
            gt = t["boxes"][matched[fg]]
            if self._loss_type == "giou":
                decoded = box_coder.decode_single(reg[fg], an[fg])
                loss = generalized_box_iou_loss(decoded, gt, reduction="sum")
            else:
                target = box_coder.encode_single(gt, an[fg])
                loss = F.l1_loss(reg[fg], target, reduction="sum")
            losses.append(loss / max(1, fg.shape[0]))
        return lucid.stack(losses).sum() / max(1, len(targets))


class RetinaNetHead(nn.Module):
    """The classification and regression subnets (``norm_layer``: the v2 model's GroupNorm)."""

    def __init__(self, in_channels: int, num_anchors: int, num_classes: int,
                 norm_layer: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.classification_head = RetinaNetClassificationHead(
            in_channels, num_anchors, num_classes, norm_layer=norm_layer)  # fmt: skip
        self.regression_head = RetinaNetRegressionHead(in_channels, num_anchors, norm_layer)

    def forward(self, x: list[Tensor]) -> dict[str, Tensor]:
        return {"cls_logits": self.classification_head(x),
                "bbox_regression": self.regression_head(x)}  # fmt: skip

    def compute_loss(self, targets: list[dict[str, Tensor]], head_outputs: dict[str, Tensor],
                     anchors: list[Tensor], matched_idxs: list[Tensor],
                     box_coder: BoxCoder) -> dict[str, Tensor]:  # fmt: skip
        return {
            "classification": self.classification_head.compute_loss(
                targets, head_outputs["cls_logits"], matched_idxs),
            "bbox_regression": self.regression_head.compute_loss(
                targets, head_outputs["bbox_regression"], anchors, matched_idxs, box_coder),
        }  # fmt: skip


class RetinaNet(nn.Module):
    """torchvision's ``RetinaNet``: ``model(images)`` with a list of ``(3, H, W)`` images in
    [0, 1] gives one ``{"boxes", "scores", "labels"}`` dict per image (eval mode);
    ``model(images, targets)`` in training mode the ``{"classification", "bbox_regression"}``
    losses."""

    def __init__(self, backbone: nn.Module, num_classes: int = 91, min_size: int = 800,
                 max_size: int = 1333, score_thresh: float = 0.05, nms_thresh: float = 0.5,
                 detections_per_img: int = 300, topk_candidates: int = 1000,
                 image_mean: list[float] | None = None,
                 image_std: list[float] | None = None, fg_iou_thresh: float = 0.5,
                 bg_iou_thresh: float = 0.4, anchor_generator: AnchorGenerator | None = None,
                 head: RetinaNetHead | None = None) -> None:  # fmt: skip
        super().__init__()
        sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3)))
                      for x in (32, 64, 128, 256, 512))  # fmt: skip
        self.anchor_generator = anchor_generator or AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * 5)
        self.backbone = backbone
        out = int(getattr(backbone, "out_channels"))
        self.head = head or RetinaNetHead(out, self.anchor_generator.num_anchors_per_location()[0],
                                          num_classes)  # fmt: skip
        self.transform = GeneralizedRCNNTransform(
            min_size, max_size, image_mean or [0.485, 0.456, 0.406],
            image_std or [0.229, 0.224, 0.225])  # fmt: skip
        self.box_coder = BoxCoder((1.0, 1.0, 1.0, 1.0))
        self.proposal_matcher = Matcher(fg_iou_thresh, bg_iou_thresh, True)
        self.score_thresh, self.nms_thresh = score_thresh, nms_thresh
        self.detections_per_img, self.topk_candidates = detections_per_img, topk_candidates

    def _detect_one(self, logits: list[Tensor], deltas: list[Tensor], anchors: list[Tensor],
                    size: tuple[int, int]) -> dict[str, Tensor]:  # fmt: skip
        boxes, scores, labels = [], [], []
        for lg, dl, an in zip(logits, deltas, anchors):
            k = lg.shape[-1]
            s = lucid.sigmoid(lg).flatten()
            idx = lucid.where(s > self.score_thresh)[0]
            s, top = s[idx].topk(min(self.topk_candidates, idx.shape[0]))
            idx = idx[top]
            anchor_idx = idx // k
            decoded = self.box_coder.decode_single(dl[anchor_idx], an[anchor_idx])
            boxes.append(clip_boxes_to_image(decoded, size))
            scores.append(s)
            labels.append(idx % k)
        b, s, lab = lucid.cat(boxes), lucid.cat(scores), lucid.cat(labels)
        keep = batched_nms(b, s, lab, self.nms_thresh)[: self.detections_per_img]
        return {"boxes": b[keep], "scores": s[keep], "labels": lab[keep]}

    def compute_loss(self, targets: list[dict[str, Tensor]], head_outputs: dict[str, Tensor],
                     anchors: list[Tensor]) -> dict[str, Tensor]:  # fmt: skip
        """Each image's anchors matched to its boxes (-1 for all when it has none), then the
        head's losses."""
        matched_idxs = []
        for an, t in zip(anchors, targets):
            if t["boxes"].shape[0] == 0:
                matched_idxs.append(lucid.full((an.shape[0],), -1, dtype=lucid.int64))
            else:
                matched_idxs.append(self.proposal_matcher(box_iou(t["boxes"], an)))
        return self.head.compute_loss(targets, head_outputs, anchors, matched_idxs,
                                      self.box_coder)  # fmt: skip

    def forward(self, images: list[Tensor], targets: list[dict[str, Tensor]] | None = None
                ) -> Any:  # fmt: skip
        if not isinstance(images, (list, tuple)) or not images:
            raise ValueError(f"RetinaNet expects a non-empty list of (3, H, W) image tensors, "
                             f"got {type(images).__name__}")  # fmt: skip
        if self.training:
            check_targets("RetinaNet", targets, len(images))
        original = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        batch, sizes = self.transform(list(images))
        feats = list(self.backbone(batch).values())
        out = self.head(feats)
        fsizes = [(int(f.shape[-2]), int(f.shape[-1])) for f in feats]
        anchors = self.anchor_generator((int(batch.shape[-2]), int(batch.shape[-1])), fsizes)
        if self.training:
            assert targets is not None
            resized = self.transform.resize_targets(list(targets), original, sizes)
            return self.compute_loss(resized, out, [anchors] * len(images))
        per_level = [h * w * 9 for h, w in fsizes]
        anchors_split = anchors.split(per_level)
        detections = []
        for i, (size, orig) in enumerate(zip(sizes, original)):
            det = self._detect_one(list(out["cls_logits"][i].split(per_level)),
                                   list(out["bbox_regression"][i].split(per_level)),
                                   list(anchors_split), size)  # fmt: skip
            det["boxes"] = GeneralizedRCNNTransform.resize_boxes(det["boxes"], size, orig)
            detections.append(det)
        return detections


@register_model(task="object-detection", paper=_PAPER, num_params=34_068_119,
                input_size=(3, 800, 800), reference="torchvision")  # fmt: skip
def retinanet_resnet50_fpn(
    num_classes: int = 91,
    trainable_backbone_layers: int | None = None,
    frozen_batch_norm: bool = False,
    **kwargs: Any,
) -> RetinaNet:
    """RetinaNet with a ResNet-50 + FPN (P3-P7) backbone (COCO's 91 classes); 34,068,119
    parameters, as torchvision's builder with ``weights=None`` (``frozen_batch_norm=True``:
    the layout of its COCO checkpoints, 34,014,999 parameters)."""
    layers = trainable_backbone_layers if trainable_backbone_layers is not None else (
        3 if frozen_batch_norm else 5)  # fmt: skip
    backbone = resnet50_fpn_backbone(layers, frozen_batch_norm, (2, 3, 4), LastLevelP6P7(256, 256))
    return RetinaNet(backbone, num_classes, **kwargs)


@register_model(task="object-detection",
                paper=f'{_PAPER}; Li et al., "Benchmarking Detection Transfer Learning with '
                      f'Vision Transformers", 2021 (the v2 recipe)',
                num_params=38_198_935, input_size=(3, 800, 800),
                reference="torchvision")  # fmt: skip
def retinanet_resnet50_fpn_v2(num_classes: int = 91, **kwargs: Any) -> RetinaNet:
    """torchvision's ``retinanet_resnet50_fpn_v2``: P6 from C5 (``LastLevelP6P7(2048,
    256)``), GroupNorm(32) in both subnets, the GIoU box loss; all of the ResNet-50 trains.
    38,198,935 parameters, as torchvision's builder with ``weights=None``."""
    backbone = resnet_fpn_backbone("resnet50", 5, (2, 3, 4), LastLevelP6P7(2048, 256))
    sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3)))
                  for x in (32, 64, 128, 256, 512))  # fmt: skip
    anchors = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * 5)
    head = RetinaNetHead(256, anchors.num_anchors_per_location()[0], num_classes,
                         norm_layer=lambda c: nn.GroupNorm(32, c))  # fmt: skip
    head.regression_head._loss_type = "giou"
    return RetinaNet(backbone, num_classes, anchor_generator=anchors, head=head, **kwargs)
