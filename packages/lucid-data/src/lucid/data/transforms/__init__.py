"""Image transforms (``lucid.data.transforms``), named as in torchvision.transforms."""

from __future__ import annotations

from . import functional
from .color import ColorJitter
from .functional import InterpolationMode
from .transforms import (
    CenterCrop,
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
