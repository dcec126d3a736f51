"""PIL images without importing Pillow (an optional extra): is this a PIL image, its array."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_pil_image(img: Any) -> bool:
    """Whether ``img`` is a PIL image (none exists unless Pillow was imported)."""
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def pil_array(img: Any) -> np.ndarray:
    """The uint8 ``H x W`` (or ``H x W x C``) array of a PIL image (other modes as NumPy reads
    them; mode "1" as 0/1 bytes)."""
    arr = np.asarray(img)
    return arr.astype(np.uint8) if arr.dtype == np.bool_ else arr


def pil_chw(img: Any) -> np.ndarray:
    """A PIL image's array as ``C x H x W``."""
    arr = pil_array(img)
    return arr[None] if arr.ndim == 2 else np.ascontiguousarray(np.moveaxis(arr, -1, 0))
