"""Image grids and PNG files, as in ``torchvision.utils``: ``make_grid`` and ``save_image``.

The PNG is written with the standard library (zlib + struct): 8-bit RGB (RGBA for four
channels), one zlib stream, no dependency on an imaging library.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from typing import IO, Any

import numpy as np

import lucid

__all__ = ["make_grid", "save_image"]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_COLOR_TYPE = {1: 0, 3: 2, 4: 6}  # channels -> gray, RGB, RGBA


def _as_images(tensor: Any) -> np.ndarray:
    """A Tensor, array, or list of ``C x H x W`` images as one float ``N x C x H x W`` array."""
    if isinstance(tensor, list | tuple):
        return np.stack([_as_images(t)[0] for t in tensor])
    arr = tensor.detach().numpy() if isinstance(tensor, lucid.Tensor) else np.asarray(tensor)
    arr = arr.astype(np.float32, copy=True)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim == 3:
        arr = arr[None]
    if arr.ndim != 4:
        raise ValueError(
            f"make_grid expects an image (H x W or C x H x W) or a batch (N x C x H x W), "
            f"got a tensor of shape {tuple(arr.shape)}"
        )
    return np.repeat(arr, 3, axis=1) if arr.shape[1] == 1 else arr


def _rescale(images: np.ndarray, value_range: tuple[float, float] | None) -> np.ndarray:
    """Clamp to ``value_range`` (default: the images' min and max) and map it onto [0, 1]."""
    low, high = value_range if value_range is not None else (images.min(), images.max())
    clamped: np.ndarray = np.clip(images, low, high)
    return (clamped - low) / max(float(high - low), 1e-5)


def make_grid(
    tensor: Any,
    nrow: int = 8,
    padding: int = 2,
    normalize: bool = False,
    value_range: tuple[float, float] | None = None,
    scale_each: bool = False,
    pad_value: float = 0.0,
) -> lucid.Tensor:
    """Tile a batch of images into one ``C x H' x W'`` image, ``nrow`` images per row.

    The arguments are torchvision's: one-channel images become three-channel ones;
    ``normalize`` maps ``value_range`` (default: the min and max, of each image when
    ``scale_each``) onto [0, 1]; ``padding`` pixels of ``pad_value`` separate the images.

    Example:
        >>> import lucid
        >>> make_grid(lucid.zeros(10, 1, 28, 28), nrow=5).shape
        (3, 62, 152)
    """
    images = _as_images(tensor)
    if normalize:
        scale = [_rescale(img, value_range) for img in images] if scale_each else None
        images = np.stack(scale) if scale is not None else _rescale(images, value_range)
    if images.shape[0] == 1:
        single: lucid.Tensor = lucid.from_numpy(np.ascontiguousarray(images[0]))
        return single
    count, channels, height, width = images.shape
    columns = min(nrow, count)
    rows = math.ceil(count / columns)
    cell_h, cell_w = height + padding, width + padding
    grid = np.full(
        (channels, cell_h * rows + padding, cell_w * columns + padding), pad_value, np.float32
    )
    for k, image in enumerate(images):
        top, left = (k // columns) * cell_h + padding, (k % columns) * cell_w + padding
        grid[:, top : top + height, left : left + width] = image
    tiled: lucid.Tensor = lucid.from_numpy(grid)
    return tiled


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def encode_png(pixels: np.ndarray) -> bytes:
    """The PNG file of a uint8 ``H x W x C`` array (C = 1, 3 or 4)."""
    height, width, channels = pixels.shape
    if pixels.dtype != np.uint8 or channels not in _PNG_COLOR_TYPE:
        raise ValueError(
            f"a PNG holds uint8 pixels with 1, 3 or 4 channels, got {pixels.dtype} with "
            f"{channels} channels"
        )
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOR_TYPE[channels], 0, 0, 0)
    rows = np.concatenate([np.zeros((height, 1), np.uint8), pixels.reshape(height, -1)], axis=1)
    return b"".join(
        [
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)),
            _png_chunk(b"IEND", b""),
        ]
    )


def _check_png(fp: str | os.PathLike[str] | IO[bytes], format: str | None) -> None:
    name = os.fspath(fp) if isinstance(fp, str | os.PathLike) else None
    kind = (format or (os.path.splitext(name)[1].lstrip(".") if name else "png")).lower()
    if kind != "png":
        raise ValueError(
            f"save_image writes PNG files: expected format='png' or a '.png' file name, "
            f"got {'format=' + repr(format) if format else repr(name)}"
        )


def save_image(
    tensor: Any,
    fp: str | os.PathLike[str] | IO[bytes],
    format: str | None = None,
    **kwargs: Any,
) -> None:
    """Save an image or a batch of images (tiled by :func:`make_grid`) as a PNG file.

    Values are taken as in [0, 1] (``normalize=True`` rescales them first); ``kwargs`` go to
    ``make_grid``. ``fp`` is a path or a binary file object. As torchvision's ``save_image``.

    Example:
        >>> import io, lucid
        >>> buf = io.BytesIO()
        >>> save_image(lucid.rand(4, 1, 8, 8), buf)
        >>> buf.getvalue()[:4]
        b'\\x89PNG'
    """
    _check_png(fp, format)
    grid = make_grid(tensor, **kwargs).numpy()
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    data = encode_png(np.ascontiguousarray(pixels))
    if isinstance(fp, str | os.PathLike):
        with open(fp, "wb") as f:
            f.write(data)
    else:
        fp.write(data)
