"""Mask R-CNN (He et al., "Mask R-CNN", ICCV 2017) with a ResNet-50 + FPN backbone, as
torchvision's ``maskrcnn_resnet50_fpn`` builds it: Faster R-CNN's detections, then a
mask branch (14x14 multi-scale RoI Align, four 3x3 convs, a 2x2 transposed conv, per-class 1x1
logits) whose 28x28 probabilities of each detection's class are pasted into the image:
``masks`` ``(K, 1, H, W)`` in each dict, next to ``boxes``, ``labels`` and ``scores``. In
training mode ``model(images, targets)`` (targets with ``masks`` ``(N, H, W)`` uint8 too) gives
Faster R-CNN's losses and ``loss_mask`` (torchvision's ``maskrcnn_loss``)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.detection._utils import resnet_fpn_backbone
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.detection.faster_rcnn import _PAPER_V2, FasterRCNN, _backbone
from lucid.models.detection.roi_heads import FastRCNNConvFCHead
from lucid.models.detection.rpn import RPNHead
from lucid.models.detection.transform import GeneralizedRCNNTransform
from lucid.models.ops import Conv2dNormActivation, MultiScaleRoIAlign
from lucid.nn import functional as F

_PAPER = 'He et al., "Mask R-CNN", ICCV 2017'


class MaskRCNNHeads(nn.Sequential):
    """3x3 conv + ReLU layers of ``layers`` widths (torchvision's ``mask_head.0.0`` ...)."""

    def __init__(self, in_channels: int, layers: tuple[int, ...], dilation: int = 1,
                 norm_layer: Any = None) -> None:  # fmt: skip
        blocks, cin = [], in_channels
        for width in layers:
            blocks.append(Conv2dNormActivation(cin, width, kernel_size=3, padding=dilation,
                                               dilation=dilation,
                                               norm_layer=norm_layer))  # fmt: skip
            cin = width
        super().__init__(*blocks)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)


class MaskRCNNPredictor(nn.Sequential):
    """``conv5_mask`` (2x2 transposed conv, stride 2), ReLU, ``mask_fcn_logits`` (1x1)."""

    def __init__(self, in_channels: int, dim_reduced: int, num_classes: int) -> None:
        super().__init__(OrderedDict([
            ("conv5_mask", nn.ConvTranspose2d(in_channels, dim_reduced, 2, 2, 0)),
            ("relu", nn.ReLU(inplace=True)),
            ("mask_fcn_logits", nn.Conv2d(dim_reduced, num_classes, 1, 1, 0)),
        ]))  # fmt: skip
        for name, p in self.named_parameters():
            if "weight" in name:
                nn.init.kaiming_normal_(p, mode="fan_out", nonlinearity="relu")


def paste_masks_in_image(masks: Tensor, boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """torchvision's ``paste_masks_in_image``: each ``(1, M, M)`` mask padded by one pixel, its
    box widened to match, the mask resized (bilinear) to the box's integer size and placed in
    an ``(H, W)`` canvas of zeros: ``(K, 1, H, W)``."""
    h, w = size
    if masks.shape[0] == 0:
        return lucid.zeros((0, 1, h, w), dtype=masks.dtype)
    m = masks.shape[-1]
    scale = float(m + 2) / m
    padded = F.pad(masks, (1, 1, 1, 1))
    half_w = (boxes[:, 2] - boxes[:, 0]) * 0.5 * scale
    half_h = (boxes[:, 3] - boxes[:, 1]) * 0.5 * scale
    cx, cy = (boxes[:, 2] + boxes[:, 0]) * 0.5, (boxes[:, 3] + boxes[:, 1]) * 0.5
    expanded = lucid.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], dim=1)
    out = []
    for mask, box in zip(padded, expanded.to(lucid.int64).tolist()):
        bw, bh = max(int(box[2] - box[0] + 1), 1), max(int(box[3] - box[1] + 1), 1)
        resized = F.interpolate(mask[None], size=(bh, bw), mode="bilinear", align_corners=False)
        canvas = lucid.zeros((h, w), dtype=masks.dtype)
        x0, x1 = max(box[0], 0), min(box[2] + 1, w)
        y0, y1 = max(box[1], 0), min(box[3] + 1, h)
        if x1 > x0 and y1 > y0:
            canvas[y0:y1, x0:x1] = resized[
                0, 0, y0 - box[1] : y1 - box[1], x0 - box[0] : x1 - box[0]
            ]
        out.append(canvas[None])
    return lucid.stack(out)


class MaskRCNN(FasterRCNN):
    """torchvision's ``MaskRCNN``: :class:`FasterRCNN` plus ``roi_heads.mask_roi_pool``,
    ``mask_head`` and ``mask_predictor``; each output dict also has ``masks`` ``(K, 1, H, W)``
    (probabilities, in the original image's pixels)."""

    def __init__(self, backbone: nn.Module, num_classes: int = 91,
                 mask_head: nn.Module | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(backbone, num_classes, **kwargs)
        out = int(getattr(backbone, "out_channels"))
        self.roi_heads.mask_roi_pool = MultiScaleRoIAlign(["0", "1", "2", "3"], 14, 2)
        self.roi_heads.mask_head = mask_head or MaskRCNNHeads(out, (256, 256, 256, 256), 1)
        self.roi_heads.mask_predictor = MaskRCNNPredictor(256, 256, num_classes)

    def forward(self, images: list[Tensor], targets: list[dict[str, Tensor]] | None = None
                ) -> Any:  # fmt: skip
        self._check_inputs(images, targets, masks=True)
        original = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        features, sizes, detections, losses = self.detect(list(images), targets)
        if self.training:
            return losses
        heads = self.roi_heads
        boxes = [d["boxes"] for d in detections]
        x = heads.mask_predictor(heads.mask_head(heads.mask_roi_pool(features, boxes, sizes)))
        labels = lucid.cat([d["labels"] for d in detections])
        probs = lucid.sigmoid(x)[lucid.arange(labels.shape[0]), labels][:, None]
        for det, p, new, orig in zip(detections, probs.split([b.shape[0] for b in boxes]), sizes,
                                     original):  # fmt: skip
            det["boxes"] = GeneralizedRCNNTransform.resize_boxes(det["boxes"], new, orig)
            det["masks"] = paste_masks_in_image(p, det["boxes"], orig)
        return detections


@register_model(task="instance-segmentation", paper=_PAPER, num_params=44_454_513,
                input_size=(3, 800, 800), reference="torchvision")  # fmt: skip
def maskrcnn_resnet50_fpn(num_classes: int = 91, trainable_backbone_layers: int | None = None,
                          frozen_batch_norm: bool = False, **kwargs: Any) -> MaskRCNN:  # fmt: skip
    """Mask R-CNN with a ResNet-50 + FPN backbone (COCO's 91 classes); 44,454,513 parameters,
    as torchvision's builder with ``weights=None`` (``frozen_batch_norm=True``: the layout of
    its COCO checkpoints, 44,401,393 parameters)."""
    backbone = _backbone(trainable_backbone_layers, frozen_batch_norm)
    return MaskRCNN(backbone, num_classes, **kwargs)


@register_model(task="instance-segmentation", paper=f"{_PAPER}; {_PAPER_V2}",
                num_params=46_359_409, input_size=(3, 800, 800),
                reference="torchvision")  # fmt: skip
def maskrcnn_resnet50_fpn_v2(num_classes: int = 91, **kwargs: Any) -> MaskRCNN:
    """torchvision's ``maskrcnn_resnet50_fpn_v2``: :func:`fasterrcnn_resnet50_fpn_v2`'s
    layout plus a batch-normed four-conv mask head; 46,359,409 parameters, as torchvision's
    builder with ``weights=None``."""
    backbone = resnet_fpn_backbone("resnet50", 5, norm_layer=nn.BatchNorm2d)
    anchors = AnchorGenerator(((32,), (64,), (128,), (256,), (512,)), ((0.5, 1.0, 2.0),) * 5)
    rpn_head = RPNHead(256, anchors.num_anchors_per_location()[0], conv_depth=2)
    box_head = FastRCNNConvFCHead((256, 7, 7), [256, 256, 256, 256], [1024], nn.BatchNorm2d)
    mask_head = MaskRCNNHeads(256, (256, 256, 256, 256), 1, nn.BatchNorm2d)
    return MaskRCNN(backbone, num_classes, mask_head=mask_head, anchor_generator=anchors,
                    rpn_head=rpn_head, box_head=box_head, **kwargs)  # fmt: skip
