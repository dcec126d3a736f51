"""Image grids, PNG files and drawings, as in ``torchvision.utils``: ``make_grid``,
``save_image``, ``draw_bounding_boxes``, ``draw_segmentation_masks``, ``draw_keypoints`` and
``flow_to_image``.

The PNG is written with the standard library (zlib + struct): 8-bit RGB (RGBA for four
channels), one zlib stream, no dependency on an imaging library. The box, keypoint and label
drawings use Pillow's ``ImageDraw`` (the ``lucid-data[images]`` extra), as torchvision does.
"""

from __future__ import annotations

import math
import os
import struct
import warnings
import zlib
from typing import IO, Any, TypeAlias

import numpy as np

import lucid

__all__ = [
    "draw_bounding_boxes",
    "draw_keypoints",
    "draw_segmentation_masks",
    "flow_to_image",
    "make_grid",
    "save_image",
]

Color: TypeAlias = str | tuple[int, int, int]

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


def _pil_draw() -> tuple[Any, Any, Any]:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError(
            "drawing boxes and keypoints needs Pillow, which is not installed: "
            "pip install 'lucid-data[images]' (or pillow)"
        ) from None
    return Image, ImageDraw, ImageFont


def _generate_color_palette(num_objects: int) -> list[tuple[int, int, int]]:
    palette = np.array([2**25 - 1, 2**15 - 1, 2**21 - 1], dtype=np.int64)
    return [tuple(int(v) for v in (i * palette) % 255) for i in range(num_objects)]  # type: ignore[misc]


def _parse_colors(
    colors: Color | list[Color] | None, *, num_objects: int, floating: bool = False
) -> list[tuple[float, ...]]:
    """One RGB tuple per object, from None (torchvision's palette), one color or a list."""
    if colors is None:
        listed: list[Color] = list(_generate_color_palette(num_objects))
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(
                f"Number of colors must be equal or larger than the number of objects, but got "
                f"{len(colors)} < {num_objects}."
            )
        listed = colors
    elif not isinstance(colors, tuple | str):
        raise ValueError(
            f"colors must be a tuple or a string, or a list thereof, but got {colors}."
        )
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        listed = [colors] * num_objects
    if any(isinstance(c, str) for c in listed):
        _pil_draw()  # (named colors need Pillow's ImageColor)
    rgb: list[tuple[float, ...]] = []
    for color in listed:
        if isinstance(color, str):
            from PIL import ImageColor

            color = ImageColor.getrgb(color)[:3]
        rgb.append(tuple(v / 255 for v in color) if floating else tuple(color))
    return rgb


def _image_array(image: Any, channels: tuple[int, ...]) -> np.ndarray:
    """Check a ``C x H x W`` uint8 or float image as torchvision does; its numpy array."""
    if not isinstance(image, lucid.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    arr: np.ndarray = image.detach().numpy()
    if not (arr.dtype == np.uint8 or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if arr.ndim != 3:
        raise ValueError("Pass individual images, not batches")
    if arr.shape[0] not in channels:
        raise ValueError(
            "Only grayscale and RGB images are supported"
            if channels == (1, 3)
            else "Pass an RGB image. Other Image formats are not supported"
        )
    return arr


def _to_uint8(arr: np.ndarray) -> np.ndarray:
    """A float image in [0, 1] as uint8 (torchvision's ``to_dtype(scale=True)``)."""
    if arr.dtype == np.uint8:
        return arr
    return np.asarray(np.clip(arr, 0.0, 1.0) * 255.0, dtype=np.uint8)  # (truncating)


def _from_uint8(arr: np.ndarray, dtype: np.dtype[Any]) -> lucid.Tensor:
    out = arr if dtype == np.uint8 else (arr.astype(dtype) / 255).astype(dtype)
    return lucid.from_numpy(np.ascontiguousarray(out))


def draw_bounding_boxes(
    image: lucid.Tensor,
    boxes: lucid.Tensor,
    labels: list[str] | None = None,
    colors: list[Color] | Color | None = None,
    fill: bool | None = False,
    width: int = 1,
    font: str | None = None,
    font_size: int | None = None,
    label_colors: list[Color] | Color | None = None,
    label_background_colors: list[Color] | Color | None = None,
    fill_labels: bool = False,
) -> lucid.Tensor:
    """Draw boxes (``N x 4`` xyxy, or ``N x 8`` corner points) and their labels on a
    ``C x H x W`` image (uint8, or float in [0, 1]); as torchvision's, with Pillow.

    Oriented (``N x 8``) boxes are drawn as closed polygons (torchvision dashes their first
    edge).
    """
    arr = _image_array(image, (1, 3))
    box_arr = boxes.detach().numpy() if isinstance(boxes, lucid.Tensor) else np.asarray(boxes)
    if box_arr.shape[-1] == 4 and (
        (box_arr[:, 0] > box_arr[:, 2]).any() or (box_arr[:, 1] > box_arr[:, 3]).any()
    ):
        raise ValueError(
            "Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
            "lucid.data.ops.box_convert to convert them"
        )
    num_boxes = box_arr.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn", stacklevel=2)
        return image
    label_list: list[str | None] = list(labels) if labels is not None else [None] * num_boxes
    if len(label_list) != num_boxes:
        raise ValueError(
            f"Number of boxes ({num_boxes}) and labels ({len(label_list)}) mismatch. Please "
            "specify labels for each box."
        )
    pil_image, image_draw, image_font = _pil_draw()
    box_colors = [tuple(int(v) for v in c) for c in _parse_colors(colors, num_objects=num_boxes)]
    if label_colors or fill_labels:
        text_colors = [
            tuple(int(v) for v in c)
            for c in _parse_colors(label_colors or "black", num_objects=num_boxes)
        ]
    else:
        text_colors = list(box_colors)
    if fill_labels and label_background_colors:
        background = [
            tuple(int(v) for v in c)
            for c in _parse_colors(label_background_colors, num_objects=num_boxes)
        ]
    else:
        background = list(box_colors)
    if font is None:
        if font_size is not None:
            warnings.warn(
                "Argument 'font_size' will be ignored since 'font' is not set.", stacklevel=2
            )
        txt_font = image_font.load_default()
    else:
        txt_font = image_font.truetype(font=font, size=font_size or 10)
    if arr.shape[0] == 1:
        arr = np.tile(arr, (3, 1, 1))
    canvas = pil_image.fromarray(np.ascontiguousarray(_to_uint8(arr).transpose(1, 2, 0)))
    draw = image_draw.Draw(canvas, "RGBA") if fill else image_draw.Draw(canvas)
    for bbox, color, label, text_color, bg_color in zip(
        box_arr.astype(np.int64).tolist(),
        box_colors,
        label_list,
        text_colors,
        background,
        strict=True,
    ):
        fill_color = (*color, 100) if fill else None
        if len(bbox) > 4:
            draw.polygon(bbox, fill=fill_color, outline=color, width=width)
        else:
            draw.rectangle(bbox, width=width, outline=color, fill=fill_color)
        if label is not None:
            margin = width + 1
            corner = (bbox[0] + margin, bbox[1] + margin)
            if fill_labels:
                left, top, right, bottom = draw.textbbox(corner, label, font=txt_font)
                draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=bg_color)
            draw.text(corner, label, fill=text_color, font=txt_font)
    out = np.asarray(canvas, dtype=np.uint8).transpose(2, 0, 1)
    return _from_uint8(out, arr.dtype)


def draw_segmentation_masks(
    image: lucid.Tensor,
    masks: lucid.Tensor,
    alpha: float = 0.8,
    colors: list[Color] | Color | None = None,
) -> lucid.Tensor:
    """Blend boolean masks (``N x H x W`` or ``H x W``) onto a ``3 x H x W`` image (uint8, or
    float in [0, 1]) with opacity ``alpha``; pixels under several masks turn black."""
    arr = _image_array(image, (3,))
    mask_arr = masks.detach().numpy() if isinstance(masks, lucid.Tensor) else np.asarray(masks)
    if mask_arr.ndim == 2:
        mask_arr = mask_arr[None]
    if mask_arr.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if mask_arr.dtype != np.bool_:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if mask_arr.shape[-2:] != arr.shape[-2:]:
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = mask_arr.shape[0]
    if num_masks == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn", stacklevel=2)
        return image
    floating = arr.dtype != np.uint8
    parsed = _parse_colors(colors, num_objects=num_masks, floating=floating)
    drawn = arr.copy()
    for mask, color in zip(mask_arr, parsed, strict=False):
        drawn[:, mask] = np.asarray(color, dtype=arr.dtype)[:, None]
    drawn[:, mask_arr.sum(axis=0) > 1] = 0
    out = arr.astype(np.float32) * (1 - alpha) + drawn.astype(np.float32) * alpha
    return lucid.from_numpy(np.ascontiguousarray(out.astype(arr.dtype)))


def draw_keypoints(
    image: lucid.Tensor,
    keypoints: lucid.Tensor,
    connectivity: list[tuple[int, int]] | None = None,
    colors: Color | None = None,
    radius: int = 2,
    width: int = 3,
    visibility: lucid.Tensor | None = None,
) -> lucid.Tensor:
    """Draw keypoints (``N x K x 2``, x y) as discs of ``radius`` and the ``connectivity``
    pairs as lines of ``width`` on a ``3 x H x W`` image; invisible points are skipped."""
    arr = _image_array(image, (3,))
    kpts = (
        keypoints.detach().numpy() if isinstance(keypoints, lucid.Tensor) else np.asarray(keypoints)
    )
    if kpts.ndim != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    if visibility is None:
        vis = np.ones(kpts.shape[:-1], dtype=bool)
    else:
        vis = (
            visibility.detach().numpy()
            if isinstance(visibility, lucid.Tensor)
            else np.asarray(visibility)
        )
    if vis.ndim == 3:
        vis = vis.squeeze(-1)
    if vis.ndim != 2:
        raise ValueError(f"visibility must be of shape (num_instances, K). Got ndim={vis.ndim}")
    if vis.shape != kpts.shape[:-1]:
        raise ValueError(
            "keypoints and visibility must have the same dimensionality for num_instances and "
            f"K. Got visibility.shape={vis.shape} and keypoints.shape={kpts.shape}"
        )
    pil_image, image_draw, _ = _pil_draw()
    canvas = pil_image.fromarray(np.ascontiguousarray(_to_uint8(arr).transpose(1, 2, 0)))
    draw = image_draw.Draw(canvas)
    for inst, vis_inst in zip(
        kpts.astype(np.int64).tolist(), vis.astype(bool).tolist(), strict=True
    ):
        for (x, y), visible in zip(inst, vis_inst, strict=True):
            if visible:
                draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors, width=0)
        for start, end in connectivity or []:
            if vis_inst[start] and vis_inst[end]:
                draw.line((tuple(inst[start]), tuple(inst[end])), width=width)
    out = np.asarray(canvas, dtype=np.uint8).transpose(2, 0, 1)
    return _from_uint8(out, arr.dtype)


def _make_colorwheel() -> np.ndarray:
    """Baker et al.'s optical-flow color wheel (55 x 3, float), as torchvision builds it."""
    ry, yg, gc, cb, bm, mr = 15, 6, 4, 11, 13, 6
    wheel = np.zeros((ry + yg + gc + cb + bm + mr, 3), np.float32)
    col = 0
    wheel[0:ry, 0] = 255
    wheel[0:ry, 1] = np.floor(255 * np.arange(ry) / ry)
    col += ry
    wheel[col : col + yg, 0] = 255 - np.floor(255 * np.arange(yg) / yg)
    wheel[col : col + yg, 1] = 255
    col += yg
    wheel[col : col + gc, 1] = 255
    wheel[col : col + gc, 2] = np.floor(255 * np.arange(gc) / gc)
    col += gc
    wheel[col : col + cb, 1] = 255 - np.floor(255 * np.arange(cb) / cb)
    wheel[col : col + cb, 2] = 255
    col += cb
    wheel[col : col + bm, 2] = 255
    wheel[col : col + bm, 0] = np.floor(255 * np.arange(bm) / bm)
    col += bm
    wheel[col : col + mr, 2] = 255 - np.floor(255 * np.arange(mr) / mr)
    wheel[col : col + mr, 0] = 255
    return wheel


def flow_to_image(flow: lucid.Tensor) -> lucid.Tensor:
    """An optical flow (``2 x H x W`` or ``N x 2 x H x W``, float32) as a uint8 RGB image,
    hue for direction and saturation for magnitude (torchvision's color wheel)."""
    arr = flow.detach().numpy() if isinstance(flow, lucid.Tensor) else np.asarray(flow)
    if arr.dtype != np.float32:
        raise ValueError(f"Flow should be of dtype lucid.float32, got {flow.dtype}.")
    orig_shape = arr.shape
    if arr.ndim == 3:
        arr = arr[None]
    if arr.ndim != 4 or arr.shape[1] != 2:
        raise ValueError(
            f"Input flow should have shape (2, H, W) or (N, 2, H, W), got {tuple(orig_shape)}."
        )
    max_norm = np.sqrt((arr**2).sum(axis=1)).max()
    normalized = arr / (max_norm + np.finfo(np.float32).eps)
    wheel = _make_colorwheel()
    num_cols = wheel.shape[0]
    norm = np.sqrt((normalized**2).sum(axis=1))
    angle = np.arctan2(-normalized[:, 1], -normalized[:, 0]) / np.float32(np.pi)
    fk = (angle + 1) / 2 * (num_cols - 1)
    k0 = np.floor(fk).astype(np.int64)
    k1 = k0 + 1
    k1[k1 == num_cols] = 0
    frac = fk - k0
    image = np.zeros((arr.shape[0], 3, *arr.shape[2:]), np.uint8)
    for c in range(3):
        col = (1 - frac) * (wheel[k0, c] / 255.0) + frac * (wheel[k1, c] / 255.0)
        col = 1 - norm * (1 - col)
        image[:, c] = np.floor(255 * col).astype(np.uint8)
    return lucid.from_numpy(image[0] if len(orig_shape) == 3 else image)
