"""``lucid.models.detection``: torchvision's detection models (inference), with its layouts;
YOLO v1 to v4 (training and inference) and their Darknet backbones."""

from __future__ import annotations

from lucid.models.detection._utils import BoxCoder, FrozenBatchNorm2d
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.detection.faster_rcnn import FasterRCNN, fasterrcnn_resnet50_fpn
from lucid.models.detection.mask_rcnn import MaskRCNN, maskrcnn_resnet50_fpn
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
]
