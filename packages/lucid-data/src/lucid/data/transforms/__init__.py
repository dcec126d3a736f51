"""Image transforms (``lucid.data.transforms``), named as in torchvision.transforms."""

from __future__ import annotations

from . import functional, v2
from .augment import (
    ConvertImageDtype,
    FiveCrop,
    GaussianBlur,
    Grayscale,
    PILToTensor,
    RandomAffine,
    RandomApply,
    RandomChoice,
    RandomErasing,
    RandomGrayscale,
    RandomInvert,
    RandomOrder,
    RandomPosterize,
    RandomResizedCrop,
    RandomSolarize,
    TenCrop,
)
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
    "ConvertImageDtype",
    "FiveCrop",
    "GaussianBlur",
    "Grayscale",
    "InterpolationMode",
    "Lambda",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandomAffine",
    "RandomApply",
    "RandomChoice",
    "RandomCrop",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomInvert",
    "RandomOrder",
    "RandomPosterize",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomSolarize",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
    "ToTensor",
    "batch_transform",
    "functional",
    "v2",
]
