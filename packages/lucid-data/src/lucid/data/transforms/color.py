"""ColorJitter: random brightness, contrast, saturation and hue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._rng import numpy_rng
from . import functional as F
from ._module import TransformModule

__all__ = ["ColorJitter"]


def _jitter_range(
    value: float | Sequence[float], name: str, center: float, bound: tuple[float, float]
) -> tuple[float, float]:
    if isinstance(value, (int, float, np.number)):
        v = float(value)
        if v < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        low, high = center - v, center + v
        low = max(low, bound[0])
    elif len(value) == 2:
        low, high = float(value[0]), float(value[1])
    else:
        raise ValueError(f"{name} should be a single number or a sequence of length 2.")
    if not bound[0] <= low <= high <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, got {(low, high)}")
    return low, high


class ColorJitter(TransformModule):
    """Randomly change brightness, contrast, saturation and hue.

    The factors are drawn per call and applied in a random order, as in torchvision. Works on
    float images in [0, 1] (``C x H x W``, 1 or 3 channels; hue and saturation leave 1-channel
    images alone) and on uint8 ``H x W x C`` images.
    """

    def __init__(
        self,
        brightness: float | Sequence[float] = 0,
        contrast: float | Sequence[float] = 0,
        saturation: float | Sequence[float] = 0,
        hue: float | Sequence[float] = 0,
    ) -> None:
        inf = float("inf")
        self.brightness = _jitter_range(brightness, "brightness", 1.0, (0.0, inf))
        self.contrast = _jitter_range(contrast, "contrast", 1.0, (0.0, inf))
        self.saturation = _jitter_range(saturation, "saturation", 1.0, (0.0, inf))
        self.hue = _jitter_range(hue, "hue", 0.0, (-0.5, 0.5))

    def __call__(self, img: Any) -> Any:
        arr, wrap = F.unwrap(img)
        hwc = isinstance(img, np.ndarray) and arr.dtype == np.uint8
        x = arr.astype(np.float32) / 255 if hwc else arr.astype(np.float32)
        if hwc:
            x = x[None] if x.ndim == 2 else np.moveaxis(x, -1, 0)
        rng = numpy_rng()
        neutral = (1.0, 1.0, 1.0, 0.0)
        ranges = (self.brightness, self.contrast, self.saturation, self.hue)
        for op in rng.permutation(4).tolist():
            low, high = ranges[op]
            if low == high == neutral[op]:
                continue
            x = _ADJUST[op](x, float(rng.uniform(low, high)))
        if hwc:
            x = x[0] if arr.ndim == 2 else np.moveaxis(x, 0, -1)
            return wrap(np.clip(np.rint(x * 255), 0, 255).astype(np.uint8))
        return wrap(x.astype(arr.dtype, copy=False))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(brightness={self.brightness}, contrast={self.contrast}, "
            f"saturation={self.saturation}, hue={self.hue})"
        )


def _gray(x: np.ndarray) -> np.ndarray:
    if x.shape[-3] == 1:
        return x
    r, g, b = x[..., 0, :, :], x[..., 1, :, :], x[..., 2, :, :]
    gray: np.ndarray = (0.299 * r + 0.587 * g + 0.114 * b)[..., None, :, :]
    return gray


def _blend(a: np.ndarray, b: np.ndarray | float, factor: float) -> np.ndarray:
    out: np.ndarray = np.clip(factor * a + (1 - factor) * b, 0, 1)
    return out


def _brightness(x: np.ndarray, factor: float) -> np.ndarray:
    return _blend(x, 0.0, factor)


def _contrast(x: np.ndarray, factor: float) -> np.ndarray:
    return _blend(x, float(_gray(x).mean()), factor)  # towards the mean grey level


def _saturation(x: np.ndarray, factor: float) -> np.ndarray:
    return _blend(x, _gray(x), factor)


def _hue(x: np.ndarray, shift: float) -> np.ndarray:
    return F.hue_shift(x, shift)


_ADJUST = (_brightness, _contrast, _saturation, _hue)
