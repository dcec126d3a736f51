"""``lucid.data.transforms.v2``: torchvision.transforms.v2's path to the same transforms, and
v2's own ``ToImage``, ``ToDtype``, ``ToPureTensor``, ``Identity``, ``GaussianNoise``, ``RGB``,
``RandomChannelPermutation``, ``MixUp`` and ``CutMix``.

The transforms v1 has act on images (uint8 ``H x W x C`` numpy arrays or PIL images,
``C x H x W`` Tensors) as v1's do; ``Compose``, the flips, ``Resize``, ``CenterCrop``, ``Pad``,
``ToImage``, ``ToDtype`` and ``ToPureTensor`` also take whole samples. The detection
transforms (``RandomIoUCrop``, ``RandomZoomOut``, ``ScaleJitter``, ``RandomShortestSize``,
``RandomResize``, ``RandomPhotometricDistort``, ``SanitizeBoundingBoxes``,
``ClampBoundingBoxes``, ``ConvertBoundingBoxFormat``...) are :class:`Transform`
subclasses: they take a whole sample (an image with its ``lucid.data.tv_tensors`` bounding
boxes, masks and keypoints, nested in tuples, lists and dicts) and transform each part by its
kind, as torchvision's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid

from .._rng import numpy_rng
from . import functional
from ._v2_base import (
    Transform,
    check_type,
    get_bounding_boxes,
    get_keypoints,
    has_all,
    has_any,
    query_chw,
    query_size,
)
from ._v2_detection import (
    JPEG,
    ClampBoundingBoxes,
    ClampKeyPoints,
    ConvertBoundingBoxFormat,
    RandomIoUCrop,
    RandomPhotometricDistort,
    RandomResize,
    RandomShortestSize,
    RandomZoomOut,
    SanitizeBoundingBoxes,
    SanitizeKeyPoints,
    ScaleJitter,
    SetClampingMode,
    ToPILImage,
    UniformTemporalSubsample,
)
from ._v2_sample import (
    CenterCrop,
    Compose,
    Pad,
    RandomHorizontalFlip,
    RandomVerticalFlip,
    Resize,
    ToDtype,
    ToImage,
    ToPureTensor,
)
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
from .autoaugment import AugMix, AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from .color import ColorJitter
from .functional import InterpolationMode
from .transforms import (
    Lambda,
    Normalize,
    RandomCrop,
    RandomRotation,
    ToTensor,
)

__all__ = [
    "AugMix",
    "AutoAugment",
    "AutoAugmentPolicy",
    "CenterCrop",
    "ClampBoundingBoxes",
    "ClampKeyPoints",
    "ColorJitter",
    "Compose",
    "ConvertBoundingBoxFormat",
    "ConvertImageDtype",
    "CutMix",
    "ElasticTransform",
    "FiveCrop",
    "GaussianBlur",
    "GaussianNoise",
    "Grayscale",
    "Identity",
    "InterpolationMode",
    "JPEG",
    "Lambda",
    "LinearTransformation",
    "MixUp",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RGB",
    "RandAugment",
    "RandomAdjustSharpness",
    "RandomAffine",
    "RandomApply",
    "RandomAutocontrast",
    "RandomChannelPermutation",
    "RandomChoice",
    "RandomCrop",
    "RandomEqualize",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomInvert",
    "RandomIoUCrop",
    "RandomOrder",
    "RandomPerspective",
    "RandomPhotometricDistort",
    "RandomPosterize",
    "RandomResize",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomShortestSize",
    "RandomSolarize",
    "RandomVerticalFlip",
    "RandomZoomOut",
    "Resize",
    "SanitizeBoundingBoxes",
    "SanitizeKeyPoints",
    "ScaleJitter",
    "SetClampingMode",
    "TenCrop",
    "ToDtype",
    "ToImage",
    "ToPILImage",
    "ToPureTensor",
    "ToTensor",
    "Transform",
    "TrivialAugmentWide",
    "UniformTemporalSubsample",
    "check_type",
    "functional",
    "get_bounding_boxes",
    "get_keypoints",
    "has_all",
    "has_any",
    "query_chw",
    "query_size",
]


class Identity:
    """Return the input as it is."""

    def __call__(self, inpt: Any) -> Any:
        return inpt

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


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


class RGB:
    """A 1-channel image repeated to 3 channels; a 3-channel image as it is."""

    def __call__(self, inpt: Any) -> Any:
        return functional.rgb_to_grayscale(inpt, 3) if _channels(inpt) == 1 else inpt

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _channels(inpt: Any) -> int:
    return functional.get_image_num_channels(inpt)


class RandomChannelPermutation:
    """The channels of an image in a random order."""

    def __call__(self, inpt: Any) -> Any:
        x, _ = functional.unwrap(inpt)
        order = numpy_rng().permutation(_channels(inpt))
        hwc = isinstance(inpt, np.ndarray) and x.dtype == np.uint8 and x.ndim >= 3
        return functional.unwrap(inpt)[1](x[..., order] if hwc else x[..., order, :, :])

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _BatchMix:
    """Shared by MixUp and CutMix: a batch ``(images, labels)`` (``N x C x H x W`` float
    Tensor, ``N`` int labels) -> mixed images and soft ``N x num_classes`` labels."""

    def __init__(self, *, alpha: float = 1.0, num_classes: int | None = None) -> None:
        if alpha <= 0:
            raise ValueError("Alpha param must be positive.")
        self.alpha = float(alpha)
        self.num_classes = num_classes

    def _split(self, inputs: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray, Any]:
        batch = inputs[0] if len(inputs) == 1 else inputs
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise ValueError(
                f"{type(self).__name__} expects (images, labels), got {type(batch).__name__}"
            )
        images, labels = batch
        arr, wrap = functional.unwrap(images)
        lab, _ = functional.unwrap(labels)
        if arr.ndim != 4:
            raise ValueError(f"Batch should be 4-d (N x C x H x W), got shape {arr.shape}")
        if lab.ndim != 1 or lab.shape[0] != arr.shape[0]:
            raise ValueError(
                f"Expected labels of shape ({arr.shape[0]},) for the batch, got {lab.shape}"
            )
        return arr, lab.astype(np.int64), wrap

    def _soft(self, labels: np.ndarray, lam: float, dtype: np.dtype[Any]) -> Any:
        n = self.num_classes if self.num_classes is not None else int(labels.max()) + 1
        one_hot = np.eye(n, dtype=dtype)[labels]
        return lucid.from_numpy(np.roll(one_hot, 1, axis=0) * (1 - lam) + one_hot * lam)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha}, num_classes={self.num_classes})"


class MixUp(_BatchMix):
    """Blend each image of a batch with the next one (``lam ~ Beta(alpha, alpha)``), and
    their one-hot labels alike, as torchvision.transforms.v2's."""

    def __call__(self, *inputs: Any) -> tuple[Any, Any]:
        images, labels, wrap = self._split(inputs)
        lam = float(numpy_rng().beta(self.alpha, self.alpha))
        mixed = np.roll(images, 1, axis=0) * (1.0 - lam) + images * lam
        return wrap(mixed.astype(images.dtype)), self._soft(labels, lam, images.dtype)


class CutMix(_BatchMix):
    """Paste a random box from the next image of the batch into each image (area fraction
    ``1 - lam``, ``lam ~ Beta(alpha, alpha)``) and mix the one-hot labels by the box's area,
    as torchvision.transforms.v2's."""

    def __call__(self, *inputs: Any) -> tuple[Any, Any]:
        images, labels, wrap = self._split(inputs)
        rng = numpy_rng()
        lam = float(rng.beta(self.alpha, self.alpha))
        h, w = images.shape[-2:]
        r_x, r_y = int(rng.integers(0, w)), int(rng.integers(0, h))
        r = 0.5 * float(np.sqrt(1.0 - lam))
        r_w_half, r_h_half = int(r * w), int(r * h)
        x1, y1 = max(r_x - r_w_half, 0), max(r_y - r_h_half, 0)
        x2, y2 = min(r_x + r_w_half, w), min(r_y + r_h_half, h)
        out = images.copy()
        out[..., y1:y2, x1:x2] = np.roll(images, 1, axis=0)[..., y1:y2, x1:x2]
        lam_adjusted = 1.0 - (x2 - x1) * (y2 - y1) / (w * h)
        return wrap(out), self._soft(labels, lam_adjusted, images.dtype)
