"""The evaluation presets of torchvision's pretrained weights (``torchvision.transforms._presets``).

``Weights.transforms()`` of ``lucid.models`` builds one of these: the preprocessing a set of
pretrained weights was evaluated with. As torchvision's, they accept a single ``C x H x W`` or
a batched ``B x C x H x W`` image Tensor (uint8 or float) and, in place of a ``PIL.Image``, a
uint8 ``H x W x C`` numpy image (lucid's stand-in for PIL images). They are plain callables
(lucid-data does not depend on lucid-nn): call them as torchvision's ``nn.Module`` presets are
called. With ``antialias=True`` (their default) they resize as torchvision's do, with the
antialiasing filters of torch's ``interpolate(antialias=True)`` (PIL's: a triangle, or Keys'
cubic with a = -0.5, widened by the downscaling factor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid.kernels.reference import antialias_weights

from . import functional as F
from .functional import InterpolationMode

__all__ = [
    "ImageClassification",
    "ObjectDetection",
    "OpticalFlow",
    "SemanticSegmentation",
    "VideoClassification",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def _as_tensor(img: Any) -> Any:
    """A Tensor image: a numpy uint8 ``H x W x C`` image (PIL's stand-in) as ``C x H x W``."""
    if isinstance(img, lucid.Tensor):
        return img
    if isinstance(img, np.ndarray):
        return F.pil_to_tensor(img)
    raise TypeError(
        f"expected a Tensor image (C x H x W or B x C x H x W) or a uint8 H x W x C numpy image, "
        f"got {type(img).__name__}"
    )


def _batched(img: Any) -> bool:
    return isinstance(img, lucid.Tensor) and img.ndim >= 4


def _resize(img: Any, size: list[int], interpolation: InterpolationMode, antialias: bool | None,
            batched: bool) -> Any:  # fmt: skip
    """torchvision's ``F.resize``; antialiased as torch's where ``antialias`` (bilinear and
    bicubic), else lucid's ``resize``."""
    if not antialias or interpolation is InterpolationMode.NEAREST:
        return F.resize(img, size, interpolation, batched=batched)
    arr, wrap = F.unwrap(img)
    h_axis, w_axis = F.spatial_axes(img, arr, batched)
    new_h, new_w = F.resize_output_size(arr.shape[h_axis], arr.shape[w_axis], size)
    cubic = interpolation is InterpolationMode.BICUBIC
    out = arr.astype(np.float32)
    for axis, n in ((h_axis, new_h), (w_axis, new_w)):
        n_in = out.shape[axis]
        mode = "bicubic" if cubic else "bilinear"
        m = antialias_weights(np, n_in, n, n_in / n, mode).astype(np.float32)
        out = np.moveaxis(np.tensordot(np.moveaxis(out, axis, -1), m.T, axes=1), -1, axis)
    if arr.dtype.kind in "ui":
        info = np.iinfo(arr.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return wrap(np.ascontiguousarray(out.astype(arr.dtype, copy=False)))


class ObjectDetection:
    """torchvision's ``ObjectDetection`` preset: the image as float in ``[0, 1]``."""

    def __call__(self, img: Any) -> Any:
        return F.convert_image_dtype(_as_tensor(img), lucid.float32)

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def describe(self) -> str:
        """A sentence on what the preset does, as torchvision's docs print it."""
        return (
            "Accepts batched ``(B, C, H, W)`` and single ``(C, H, W)`` image Tensors and uint8 "
            "``(H, W, C)`` numpy images. The images are rescaled to ``[0.0, 1.0]``."
        )


class ImageClassification:
    """torchvision's ``ImageClassification`` preset: resize the smaller edge to
    ``resize_size``, crop the centre ``crop_size`` square, rescale to ``[0, 1]`` and normalize
    with ``mean`` and ``std``."""

    def __init__(
        self,
        *,
        crop_size: int,
        resize_size: int = 256,
        mean: tuple[float, ...] = IMAGENET_MEAN,
        std: tuple[float, ...] = IMAGENET_STD,
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def __call__(self, img: Any) -> Any:
        batched = _batched(img)
        img = _resize(img, self.resize_size, self.interpolation, self.antialias, batched)
        img = F.center_crop(img, self.crop_size, batched=batched)
        img = F.convert_image_dtype(_as_tensor(img), lucid.float32)
        return F.normalize(img, self.mean, self.std)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n"
            f"    resize_size={self.resize_size}\n    mean={self.mean}\n    std={self.std}\n"
            f"    interpolation={self.interpolation}\n)"
        )

    def describe(self) -> str:
        """A sentence on what the preset does, as torchvision's docs print it."""
        return (
            "Accepts batched ``(B, C, H, W)`` and single ``(C, H, W)`` image Tensors and uint8 "
            f"``(H, W, C)`` numpy images. The images are resized to "
            f"``resize_size={self.resize_size}`` using ``interpolation={self.interpolation}``, "
            f"followed by a central crop of ``crop_size={self.crop_size}``. Finally the values "
            f"are first rescaled to ``[0.0, 1.0]`` and then normalized using "
            f"``mean={self.mean}`` and ``std={self.std}``."
        )


class VideoClassification:
    """torchvision's ``VideoClassification`` preset: ``(B, T, C, H, W)`` or ``(T, C, H, W)``
    frames resized, centre-cropped, rescaled, normalized and permuted to ``(..., C, T, H, W)``."""

    def __init__(
        self,
        *,
        crop_size: tuple[int, int],
        resize_size: tuple[int] | tuple[int, int],
        mean: tuple[float, ...] = (0.43216, 0.394666, 0.37645),
        std: tuple[float, ...] = (0.22803, 0.22145, 0.216989),
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
    ) -> None:
        self.crop_size = list(crop_size)
        self.resize_size = list(resize_size)
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation

    def __call__(self, vid: Any) -> Any:
        if not isinstance(vid, lucid.Tensor):
            raise TypeError(f"expected a video Tensor (T, C, H, W), got {type(vid).__name__}")
        squeeze = vid.ndim < 5
        if squeeze:
            vid = vid.unsqueeze(0)
        n, t, c, h, w = vid.shape
        vid = vid.reshape(-1, c, h, w)
        vid = F.resize(vid, self.resize_size, self.interpolation, batched=True)
        vid = F.center_crop(vid, self.crop_size, batched=True)
        vid = F.convert_image_dtype(vid, lucid.float32)
        vid = F.normalize(vid, self.mean, self.std)
        ch, cw = self.crop_size
        vid = vid.reshape(n, t, c, ch, cw).permute(0, 2, 1, 3, 4)
        return vid.squeeze(0) if squeeze else vid

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n"
            f"    resize_size={self.resize_size}\n    mean={self.mean}\n    std={self.std}\n"
            f"    interpolation={self.interpolation}\n)"
        )

    def describe(self) -> str:
        """A sentence on what the preset does, as torchvision's docs print it."""
        return (
            "Accepts batched ``(B, T, C, H, W)`` and single ``(T, C, H, W)`` video frame Tensors. "
            f"The frames are resized to ``resize_size={self.resize_size}`` using "
            f"``interpolation={self.interpolation}``, followed by a central crop of "
            f"``crop_size={self.crop_size}``. Finally the values are first rescaled to "
            f"``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
            f"``std={self.std}``. Finally the output dimensions are permuted to "
            "``(..., C, T, H, W)`` tensors."
        )


class SemanticSegmentation:
    """torchvision's ``SemanticSegmentation`` preset: resize the smaller edge to
    ``resize_size`` (unless None), rescale to ``[0, 1]`` and normalize."""

    def __init__(
        self,
        *,
        resize_size: int | None,
        mean: tuple[float, ...] = IMAGENET_MEAN,
        std: tuple[float, ...] = IMAGENET_STD,
        interpolation: InterpolationMode = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def __call__(self, img: Any) -> Any:
        if isinstance(self.resize_size, list):
            img = _resize(img, self.resize_size, self.interpolation, self.antialias, _batched(img))
        img = F.convert_image_dtype(_as_tensor(img), lucid.float32)
        return F.normalize(img, self.mean, self.std)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(\n    resize_size={self.resize_size}\n"
            f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)"
        )

    def describe(self) -> str:
        """A sentence on what the preset does, as torchvision's docs print it."""
        return (
            "Accepts batched ``(B, C, H, W)`` and single ``(C, H, W)`` image Tensors and uint8 "
            f"``(H, W, C)`` numpy images. The images are resized to "
            f"``resize_size={self.resize_size}`` using ``interpolation={self.interpolation}``. "
            f"Finally the values are first rescaled to ``[0.0, 1.0]`` and then normalized using "
            f"``mean={self.mean}`` and ``std={self.std}``."
        )


class OpticalFlow:
    """torchvision's ``OpticalFlow`` preset: both images as float, mapped to ``[-1, 1]``."""

    def __call__(self, img1: Any, img2: Any) -> tuple[Any, Any]:
        half: Sequence[float] = [0.5, 0.5, 0.5]
        out = []
        for img in (img1, img2):
            img = F.convert_image_dtype(_as_tensor(img), lucid.float32)
            out.append(F.normalize(img, half, half).contiguous())
        return out[0], out[1]

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def describe(self) -> str:
        """A sentence on what the preset does, as torchvision's docs print it."""
        return (
            "Accepts batched ``(B, C, H, W)`` and single ``(C, H, W)`` image Tensors and uint8 "
            "``(H, W, C)`` numpy images. The images are rescaled to ``[-1.0, 1.0]``."
        )
