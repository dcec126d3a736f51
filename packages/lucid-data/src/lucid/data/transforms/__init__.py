"""Image transforms (``lucid.data.transforms``), named as in torchvision.transforms."""

from __future__ import annotations

from . import functional
from .functional import InterpolationMode
from .transforms import (
    CenterCrop,
    ColorJitter,
    Compose,
    Lambda,
    Normalize,
    Pad,
    RandomCrop,
    RandomHorizontalFlip,
    RandomRotation,
    RandomVerticalFlip,
    Resize,
    ToTensor,
    batch_transform,
)

__all__ = [
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "InterpolationMode",
    "Lambda",
    "Normalize",
    "Pad",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomRotation",
    "RandomVerticalFlip",
    "Resize",
    "ToTensor",
    "batch_transform",
    "functional",
]
