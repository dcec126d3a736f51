"""Video classification models (``torchvision.models.video``): R3D-18, MC3-18, R(2+1)D-18,
S3D, MViT-V1-B/V2-S and Swin3D-T/S/B, with torchvision's layouts, builders and weights enums.
Inputs are ``(N, 3, T, H, W)`` clips (the ``VideoClassification`` preset makes them from frames)."""

from __future__ import annotations

from lucid.models._tv_weights import (
    MC3_18_Weights,
    MViT_V1_B_Weights,
    MViT_V2_S_Weights,
    R2Plus1D_18_Weights,
    R3D_18_Weights,
    S3D_Weights,
    Swin3D_B_Weights,
    Swin3D_S_Weights,
    Swin3D_T_Weights,
)
from lucid.models.video.mvit import MViT, mvit_v1_b, mvit_v2_s
from lucid.models.video.resnet import VideoResNet, mc3_18, r2plus1d_18, r3d_18
from lucid.models.video.s3d import S3D, s3d
from lucid.models.video.swin_transformer import SwinTransformer3d, swin3d_b, swin3d_s, swin3d_t

__all__ = [
    "MC3_18_Weights",
    "MViT",
    "MViT_V1_B_Weights",
    "MViT_V2_S_Weights",
    "mvit_v1_b",
    "mvit_v2_s",
    "R2Plus1D_18_Weights",
    "R3D_18_Weights",
    "S3D",
    "S3D_Weights",
    "Swin3D_B_Weights",
    "Swin3D_S_Weights",
    "Swin3D_T_Weights",
    "SwinTransformer3d",
    "VideoResNet",
    "mc3_18",
    "r2plus1d_18",
    "r3d_18",
    "s3d",
    "swin3d_b",
    "swin3d_s",
    "swin3d_t",
]
