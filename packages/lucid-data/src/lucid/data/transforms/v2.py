"""``lucid.data.transforms.v2``: torchvision.transforms.v2's path to the same transforms, and
v2's own ``ToImage``, ``ToDtype``, ``ToPureTensor``, ``Identity`` and ``GaussianNoise``.

v2's transforms act on images (uint8 ``H x W x C`` numpy arrays, ``C x H x W`` Tensors) as
v1's do; bounding boxes, masks and the other ``tv_tensors`` are not supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid

from .._rng import numpy_rng
from . import functional
from .augment import (
    ConvertImageDtype,
    ElasticTransform,
    FiveCrop,
    GaussianBlur,
    Grayscale,
    LinearTransformation,
    PILToTensor,
    RandomAdjustSharpness,
    RandomAffine,
    RandomApply,
    RandomAutocontrast,
    RandomChoice,
    RandomEqualize,
    RandomErasing,
    RandomGrayscale,
    RandomInvert,
    RandomOrder,
    RandomPerspective,
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
)

__all__ = [
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ConvertImageDtype",
    "ElasticTransform",
    "FiveCrop",
    "GaussianBlur",
    "GaussianNoise",
    "Grayscale",
    "Identity",
    "InterpolationMode",
    "Lambda",
    "LinearTransformation",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandomAdjustSharpness",
    "RandomAffine",
    "RandomApply",
    "RandomAutocontrast",
    "RandomChoice",
    "RandomCrop",
    "RandomEqualize",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomInvert",
    "RandomOrder",
    "RandomPerspective",
    "RandomPosterize",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomSolarize",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
    "ToDtype",
    "ToImage",
    "ToPureTensor",
    "ToTensor",
    "functional",
]


class Identity:
    """Return the input as it is."""

    def __call__(self, inpt: Any) -> Any:
        return inpt

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToImage:
    """An image as a ``C x H x W`` Tensor: a uint8 ``H x W x C`` numpy image unscaled (as
    ``PILToTensor``), a Tensor as it is, another array wrapped."""

    def __call__(self, inpt: Any) -> Any:
        if isinstance(inpt, lucid.Tensor):
            return inpt
        if isinstance(inpt, np.ndarray) and inpt.dtype == np.uint8:
            return functional.pil_to_tensor(inpt)
        if isinstance(inpt, np.ndarray):
            return lucid.from_numpy(np.ascontiguousarray(inpt))
        raise TypeError(f"ToImage expects a numpy array or a Tensor, got {type(inpt).__name__}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToPureTensor:
    """Return the input as it is (lucid has no ``tv_tensors`` to unwrap)."""

    def __call__(self, inpt: Any) -> Any:
        return inpt

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToDtype:
    """A Tensor in ``dtype``; with ``scale=True`` its values rescaled between the integer and
    float ranges (``functional.convert_image_dtype``)."""

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        if isinstance(dtype, dict):
            raise TypeError(
                "ToDtype(dtype=dict) is for tv_tensors, which lucid does not have: pass a dtype"
            )
        self.dtype = dtype
        self.scale = scale

    def __call__(self, inpt: Any) -> Any:
        if not isinstance(inpt, lucid.Tensor):
            raise TypeError(f"ToDtype expects a Tensor, got {type(inpt).__name__}")
        if self.scale:
            return functional.convert_image_dtype(inpt, self.dtype)
        return inpt.to(self.dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.dtype}, scale={self.scale})"


class GaussianNoise:
    """Add Gaussian noise (``mean``, ``sigma``) to a float image, clipped to [0, 1] when
    ``clip``."""

    def __init__(self, mean: float = 0.0, sigma: float = 0.1, clip: bool = True) -> None:
        self.mean = mean
        self.sigma = sigma
        self.clip = clip

    def __call__(self, inpt: Any) -> Any:
        arr, wrap = functional.unwrap(inpt)
        if arr.dtype.kind != "f":
            raise ValueError(f"Input tensor is expected to be in float dtype, got {arr.dtype}")
        if self.sigma < 0:
            raise ValueError(f"sigma shouldn't be negative. Got {self.sigma}")
        noise = numpy_rng().standard_normal(arr.shape) * self.sigma + self.mean
        out = arr + noise.astype(arr.dtype)
        return wrap(np.clip(out, 0, 1) if self.clip else out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, sigma={self.sigma}, clip={self.clip})"
