"""Semantic segmentation models (``torchvision.models.segmentation``): FCN, DeepLabV3 and
LR-ASPP, with torchvision's layouts, builders and weights enums."""

from __future__ import annotations

from lucid.models._tv_weights import (
    DeepLabV3_MobileNet_V3_Large_Weights,
    DeepLabV3_ResNet50_Weights,
    DeepLabV3_ResNet101_Weights,
    FCN_ResNet50_Weights,
    FCN_ResNet101_Weights,
    LRASPP_MobileNet_V3_Large_Weights,
)
from lucid.models.segmentation.deeplabv3 import (
    DeepLabV3,
    deeplabv3_mobilenet_v3_large,
    deeplabv3_resnet50,
    deeplabv3_resnet101,
)
from lucid.models.segmentation.fcn import FCN, fcn_resnet50, fcn_resnet101
from lucid.models.segmentation.lraspp import LRASPP, lraspp_mobilenet_v3_large

__all__ = [
    "DeepLabV3",
    "DeepLabV3_MobileNet_V3_Large_Weights",
    "DeepLabV3_ResNet101_Weights",
    "DeepLabV3_ResNet50_Weights",
    "FCN",
    "FCN_ResNet101_Weights",
    "FCN_ResNet50_Weights",
    "LRASPP",
    "LRASPP_MobileNet_V3_Large_Weights",
    "deeplabv3_mobilenet_v3_large",
    "deeplabv3_resnet101",
    "deeplabv3_resnet50",
    "fcn_resnet101",
    "fcn_resnet50",
    "lraspp_mobilenet_v3_large",
]
