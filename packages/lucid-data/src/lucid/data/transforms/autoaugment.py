"""AutoAugment, RandAugment, TrivialAugmentWide and AugMix, as torchvision's (uint8 images:
``H x W x C`` numpy arrays or PIL images, ``C x H x W`` Tensors). ``transforms.v2`` uses the
same classes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np

from .._rng import numpy_rng
from . import functional as F
from ._module import TransformModule
from .functional import InterpolationMode

__all__ = ["AugMix", "AutoAugment", "AutoAugmentPolicy", "RandAugment", "TrivialAugmentWide"]

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


class RandAugment(TransformModule):
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


class TrivialAugmentWide(TransformModule):
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


class AutoAugmentPolicy(Enum):
    """AutoAugment policies learned on different datasets: IMAGENET, CIFAR10 and SVHN."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


_Policy = list[tuple[tuple[str, float, int | None], tuple[str, float, int | None]]]

# (op, probability, magnitude bin) pairs of Cubuk et al. (2019), torchvision's tables.
_POLICIES: dict[AutoAugmentPolicy, _Policy] = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
        (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)),
        (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)),
        (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)),
        (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)),
        (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)),
        (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)),
        (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
        (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
        (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
        (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
        (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
        (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
        (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
        (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
        (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
        (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
        (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
        (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
        (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)),
        (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)),
        (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)),
        (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)),
        (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)),
        (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)),
        (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)),
        (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)),
        (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


class AutoAugment(TransformModule):
    """One of ``policy``'s 25 sub-policies drawn at random: two operations, each applied with
    its probability at its magnitude (a random sign for the signed ones), as torchvision's
    AutoAugment (Cubuk et al., 2019)."""

    def __init__(
        self,
        policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
        interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
        fill: float | Sequence[float] | None = None,
    ) -> None:
        self.policy = policy
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy: AutoAugmentPolicy) -> _Policy:
        try:
            return _POLICIES[AutoAugmentPolicy(policy)]
        except ValueError:
            raise ValueError(f"The provided policy {policy} is not recognized.") from None

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> Space:
        translate = (150.0 / 331.0 * image_size[1], 150.0 / 331.0 * image_size[0])
        space = _space(num_bins, 0.3, translate, 30.0, 0.9, 4)
        del space["Identity"]
        space["Invert"] = (np.array(0.0), False)
        return space

    @staticmethod
    def get_params(transform_num: int) -> tuple[int, np.ndarray, np.ndarray]:
        """A sub-policy index, the two operations' uniform draws and their signs (0: negate)."""
        rng = numpy_rng()
        return int(rng.integers(transform_num)), rng.random(2), rng.integers(0, 2, 2)

    def __call__(self, img: Any) -> Any:
        channels, height, width = F.get_dimensions(img)
        fill = _fill_list(self.fill, channels)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = float(magnitudes[magnitude_id]) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, self.interpolation, fill)
        return img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(policy={self.policy}, fill={self.fill})"


class AugMix(TransformModule):
    """AugMix (Hendrycks et al., 2020): ``mixture_width`` chains of ``chain_depth`` random
    operations (1 to 3 when negative) at severities below ``severity``, mixed with Dirichlet
    weights and blended with the original by a Beta(``alpha``, ``alpha``) weight, as
    torchvision's. A Tensor may carry leading batch dimensions (each image draws its own
    weights; the chains are shared)."""

    _PARAMETER_MAX = 10

    def __init__(
        self,
        severity: int = 3,
        mixture_width: int = 3,
        chain_depth: int = -1,
        alpha: float = 1.0,
        all_ops: bool = True,
        interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
        fill: float | Sequence[float] | None = None,
    ) -> None:
        if not (1 <= severity <= self._PARAMETER_MAX):
            raise ValueError(
                f"The severity must be between [1, {self._PARAMETER_MAX}]. Got {severity} instead."
            )
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]) -> Space:
        full = _space(num_bins, 0.3, (image_size[1] / 3.0, image_size[0] / 3.0), 30.0, 0.9, 4)
        names = ["ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Posterize"]
        names += ["Solarize", "AutoContrast", "Equalize"]
        if self.all_ops:
            names += ["Brightness", "Color", "Contrast", "Sharpness"]
        space = {name: full[name] for name in names}
        bits = 4 - np.round(np.arange(num_bins) / ((num_bins - 1) / 4)).astype(np.int64)
        space["Posterize"] = (bits, False)
        return space

    def __call__(self, orig_img: Any) -> Any:
        channels, height, width = F.get_dimensions(orig_img)
        fill = _fill_list(self.fill, channels)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        orig, wrap = F._as_chw(orig_img)
        batch = orig.reshape((-1, *orig.shape[-3:]))
        n = batch.shape[0]
        rng = numpy_rng()
        # Beta weights of original vs augmented (a 2-Dirichlet), and the chains' weights.
        m = rng.dirichlet([self.alpha, self.alpha], size=n)
        combined = rng.dirichlet([self.alpha] * self.mixture_width, size=n) * m[:, 1:2]
        mix = m[:, 0, None, None, None] * batch.astype(np.float64)
        for i in range(self.mixture_width):
            aug = orig_img
            depth = self.chain_depth if self.chain_depth > 0 else int(rng.integers(1, 4))
            for _ in range(depth):
                op_name = list(op_meta)[int(rng.integers(len(op_meta)))]
                magnitudes, signed = op_meta[op_name]
                magnitude = (
                    float(magnitudes[int(rng.integers(self.severity))])
                    if magnitudes.ndim > 0
                    else 0.0
                )
                if signed and rng.integers(2):
                    magnitude *= -1.0
                aug = _apply_op(aug, op_name, magnitude, self.interpolation, fill)
            aug_chw = F._as_chw(aug)[0].reshape(batch.shape)
            mix += combined[:, i, None, None, None] * aug_chw
        # Back to the image's dtype by truncation, as torch's .to(uint8).
        return wrap(mix.reshape(orig.shape).astype(orig.dtype))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(severity={self.severity}, mixture_width={self.mixture_width}"
            f", chain_depth={self.chain_depth}, alpha={self.alpha}, all_ops={self.all_ops}"
            f", interpolation={self.interpolation}, fill={self.fill})"
        )
