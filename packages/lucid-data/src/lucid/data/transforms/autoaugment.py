"""RandAugment and TrivialAugmentWide, as torchvision's (uint8 images: ``H x W x C`` numpy
arrays or ``C x H x W`` Tensors)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._rng import numpy_rng
from . import functional as F
from .functional import InterpolationMode

__all__ = ["RandAugment", "TrivialAugmentWide"]

Space = dict[str, tuple[np.ndarray, bool]]


def _apply_op(
    img: Any,
    op_name: str,
    magnitude: float,
    interpolation: InterpolationMode,
    fill: list[float] | None,
) -> Any:
    if op_name == "ShearX":
        shear = [math.degrees(math.atan(magnitude)), 0.0]
        return F.affine(img, 0.0, [0, 0], 1.0, shear, interpolation, fill, [0, 0])
    if op_name == "ShearY":
        shear = [0.0, math.degrees(math.atan(magnitude))]
        return F.affine(img, 0.0, [0, 0], 1.0, shear, interpolation, fill, [0, 0])
    if op_name == "TranslateX":
        return F.affine(img, 0.0, [int(magnitude), 0], 1.0, [0.0, 0.0], interpolation, fill)
    if op_name == "TranslateY":
        return F.affine(img, 0.0, [0, int(magnitude)], 1.0, [0.0, 0.0], interpolation, fill)
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    simple = {
        "Brightness": lambda: F.adjust_brightness(img, 1.0 + magnitude),
        "Color": lambda: F.adjust_saturation(img, 1.0 + magnitude),
        "Contrast": lambda: F.adjust_contrast(img, 1.0 + magnitude),
        "Sharpness": lambda: F.adjust_sharpness(img, 1.0 + magnitude),
        "Posterize": lambda: F.posterize(img, int(magnitude)),
        "Solarize": lambda: F.solarize(img, magnitude),
        "AutoContrast": lambda: F.autocontrast(img),
        "Equalize": lambda: F.equalize(img),
        "Invert": lambda: F.invert(img),
        "Identity": lambda: img,
    }
    if op_name not in simple:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return simple[op_name]()


def _fill_list(fill: float | Sequence[float] | None, channels: int) -> list[float] | None:
    if fill is None:
        return None
    if isinstance(fill, (int, float)):
        return [float(fill)] * channels
    return [float(f) for f in fill]


def _space(
    num_bins: int,
    shear: float,
    translate: tuple[float, float],
    rotate: float,
    color: float,
    bits: int,
) -> Space:
    zero = np.array(0.0)
    return {
        "Identity": (zero, False),
        "ShearX": (np.linspace(0.0, shear, num_bins), True),
        "ShearY": (np.linspace(0.0, shear, num_bins), True),
        "TranslateX": (np.linspace(0.0, translate[0], num_bins), True),
        "TranslateY": (np.linspace(0.0, translate[1], num_bins), True),
        "Rotate": (np.linspace(0.0, rotate, num_bins), True),
        "Brightness": (np.linspace(0.0, color, num_bins), True),
        "Color": (np.linspace(0.0, color, num_bins), True),
        "Contrast": (np.linspace(0.0, color, num_bins), True),
        "Sharpness": (np.linspace(0.0, color, num_bins), True),
        "Posterize": (
            8 - np.round(np.arange(num_bins) / ((num_bins - 1) / bits)).astype(np.int64),
            False,
        ),
        "Solarize": (np.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (zero, False),
        "Equalize": (zero, False),
    }


class RandAugment:
    """``num_ops`` operations drawn at random, each at ``magnitude`` (of
    ``num_magnitude_bins``) with a random sign, as torchvision's RandAugment."""

    def __init__(
        self,
        num_ops: int = 2,
        magnitude: int = 9,
        num_magnitude_bins: int = 31,
        interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
        fill: float | Sequence[float] | None = None,
    ) -> None:
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> Space:
        translate = (150.0 / 331.0 * image_size[1], 150.0 / 331.0 * image_size[0])
        return _space(num_bins, 0.3, translate, 30.0, 0.9, 4)

    def __call__(self, img: Any) -> Any:
        channels, height, width = F.get_dimensions(img)
        fill = _fill_list(self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        rng = numpy_rng()
        for _ in range(self.num_ops):
            op_name = list(op_meta)[int(rng.integers(len(op_meta)))]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude]) if magnitudes.ndim > 0 else 0.0
            if signed and rng.integers(2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
            f"num_magnitude_bins={self.num_magnitude_bins}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )


class TrivialAugmentWide:
    """One operation drawn at random at a random magnitude with a random sign, as
    torchvision's TrivialAugmentWide."""

    def __init__(
        self,
        num_magnitude_bins: int = 31,
        interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
        fill: float | Sequence[float] | None = None,
    ) -> None:
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int) -> Space:
        return _space(num_bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6)

    def __call__(self, img: Any) -> Any:
        channels, _, _ = F.get_dimensions(img)
        fill = _fill_list(self.fill, channels)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        rng = numpy_rng()
        op_name = list(op_meta)[int(rng.integers(len(op_meta)))]
        magnitudes, signed = op_meta[op_name]
        magnitude = (
            float(magnitudes[int(rng.integers(len(magnitudes)))]) if magnitudes.ndim > 0 else 0.0
        )
        if signed and rng.integers(2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, self.interpolation, fill)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )
