"""``lucid.models.detection``: torchvision's detection models (inference), with its layouts;
YOLO v1 to v4 (training and inference) and their Darknet backbones; DETR (transformers' layout)
with its Hungarian matcher and set-prediction loss; EfficientDet; MaskFormer and Mask2Former."""

from __future__ import annotations

from lucid.models.detection._utils import BoxCoder, FrozenBatchNorm2d
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.detection.detr import (
    DetrForObjectDetection,
    DetrLoss,
    detr_resnet50,
    detr_resnet101,
    post_process_object_detection,
)
from lucid.models.detection.efficientdet import (
    EfficientDet,
    efficientdet_d0,
    efficientdet_d1,
    efficientdet_d2,
    efficientdet_d3,
    efficientdet_d4,
    efficientdet_d5,
    efficientdet_d6,
    efficientdet_d7,
)
from lucid.models.detection.faster_rcnn import FasterRCNN, fasterrcnn_resnet50_fpn
from lucid.models.detection.mask2former import (
    Mask2FormerForUniversalSegmentation,
    Mask2FormerLoss,
    mask2former_resnet50,
    mask2former_resnet101,
)
from lucid.models.detection.mask_rcnn import MaskRCNN, maskrcnn_resnet50_fpn
from lucid.models.detection.maskformer import (
    MaskFormerForInstanceSegmentation,
    MaskFormerLoss,
    maskformer_resnet50,
    maskformer_resnet101,
)
from lucid.models.detection.matcher import HungarianMatcher, linear_sum_assignment
from lucid.models.detection.retinanet import RetinaNet, retinanet_resnet50_fpn
from lucid.models.detection.yolo import (
    YOLOv1,
    YOLOv2,
    YOLOv3,
    YOLOv3Tiny,
    YOLOv4,
    yolo_v1,
    yolo_v2,
    yolo_v3,
    yolo_v3_tiny,
    yolo_v4,
)

__all__ = [
    "AnchorGenerator",
    "BoxCoder",
    "FasterRCNN",
    "FrozenBatchNorm2d",
    "fasterrcnn_resnet50_fpn",
    "MaskRCNN",
    "maskrcnn_resnet50_fpn",
    "RetinaNet",
    "retinanet_resnet50_fpn",
    # YOLO v1-v4
    "YOLOv1",
    "YOLOv2",
    "YOLOv3",
    "YOLOv3Tiny",
    "YOLOv4",
    "yolo_v1",
    "yolo_v2",
    "yolo_v3",
    "yolo_v3_tiny",
    "yolo_v4",
    # DETR
    "DetrForObjectDetection",
    "DetrLoss",
    "HungarianMatcher",
    "detr_resnet50",
    "detr_resnet101",
    "linear_sum_assignment",
    "post_process_object_detection",
    # EfficientDet
    "EfficientDet",
    "efficientdet_d0",
    "efficientdet_d1",
    "efficientdet_d2",
    "efficientdet_d3",
    "efficientdet_d4",
    "efficientdet_d5",
    "efficientdet_d6",
    "efficientdet_d7",
    # MaskFormer
    "MaskFormerForInstanceSegmentation",
    "MaskFormerLoss",
    "maskformer_resnet50",
    "maskformer_resnet101",
    # Mask2Former
    "Mask2FormerForUniversalSegmentation",
    "Mask2FormerLoss",
    "mask2former_resnet50",
    "mask2former_resnet101",
]

# --- torchvision R-CNN / RetinaNet training parts and builders (wt-rcnn) ---
from lucid.models.detection._utils import (  # noqa: E402
    BalancedPositiveNegativeSampler,
    Matcher,
    resnet_fpn_backbone,
)
from lucid.models.detection.faster_rcnn import (  # noqa: E402
    fasterrcnn_mobilenet_v3_large_320_fpn,
    fasterrcnn_mobilenet_v3_large_fpn,
    fasterrcnn_resnet50_fpn_v2,
)
from lucid.models.detection.mask_rcnn import maskrcnn_resnet50_fpn_v2  # noqa: E402
from lucid.models.detection.retinanet import retinanet_resnet50_fpn_v2  # noqa: E402

__all__ += [
    "BalancedPositiveNegativeSampler",
    "Matcher",
    "resnet_fpn_backbone",
    "fasterrcnn_mobilenet_v3_large_320_fpn",
    "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_resnet50_fpn_v2",
    "maskrcnn_resnet50_fpn_v2",
    "retinanet_resnet50_fpn_v2",
]
