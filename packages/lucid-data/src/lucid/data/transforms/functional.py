"""Image functions behind the transforms, on numpy arrays and lucid tensors.

Layouts: a ``uint8`` numpy array is an image as files store it, ``H x W`` or ``H x W x C``;
a lucid Tensor or a numpy array of any other dtype is ``C x H x W`` (or ``H x W``), as after
``to_tensor``. With ``batched=True`` every layout has a leading batch dimension ``N``. Results
have the type of the input (a Tensor stays a Tensor on its device).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

import numpy as np

import lucid

__all__ = [
    "InterpolationMode",
    "center_crop",
    "crop",
    "hflip",
    "normalize",
    "pad",
    "resize",
    "rotate",
    "to_tensor",
    "vflip",
]

Wrap = Callable[[np.ndarray], Any]


class InterpolationMode(Enum):
    """How image transforms resample: ``NEAREST`` or ``BILINEAR``, as torchvision's."""

    NEAREST = "nearest"
    BILINEAR = "bilinear"


def _interpolation(mode: InterpolationMode | str) -> InterpolationMode:
    try:
        return InterpolationMode(mode.value if isinstance(mode, InterpolationMode) else mode)
    except ValueError:
        raise ValueError(
            f"interpolation should be one of {[m.value for m in InterpolationMode]}, got {mode!r}"
        ) from None


def _identity(a: np.ndarray) -> np.ndarray:
    return a


def unwrap(img: Any) -> tuple[np.ndarray, Wrap]:
    """The numpy array inside ``img`` and a function that wraps a result the same way."""
    if isinstance(img, lucid.Tensor):
        device = img.device

        def wrap(a: np.ndarray) -> Any:
            t = lucid.from_numpy(np.ascontiguousarray(a))
            return t if device == "cpu" else t.to(device)

        return img.detach().numpy(), wrap
    if isinstance(img, np.ndarray):
        return img, _identity
    raise TypeError(f"img should be a numpy array or a lucid Tensor, got {type(img).__name__}")


def _is_hwc(img: Any, arr: np.ndarray) -> bool:
    return isinstance(img, np.ndarray) and arr.dtype == np.uint8


def spatial_axes(img: Any, arr: np.ndarray, batched: bool = False) -> tuple[int, int]:
    """The (height, width) axes of ``arr`` (negative), given the layout rules above."""
    min_ndim = 3 if batched else 2
    if arr.ndim < min_ndim:
        raise ValueError(
            f"expected an image with at least {min_ndim} dimensions "
            f"({'N x ' if batched else ''}H x W ...), got shape {arr.shape}"
        )
    if _is_hwc(img, arr) and arr.ndim > min_ndim:
        return -3, -2
    return -2, -1


def image_size(img: Any, batched: bool = False) -> tuple[int, int]:
    """(height, width) of an image (or of each image of a batch)."""
    arr, _ = unwrap(img)
    h, w = spatial_axes(img, arr, batched)
    return arr.shape[h], arr.shape[w]


def to_tensor(pic: Any, batched: bool = False) -> Any:
    """uint8 ``H x W x C`` (or ``H x W``) -> float32 ``C x H x W`` Tensor in [0, 1].

    Arrays of other dtypes are taken as ``C x H x W`` already and wrapped as they are.
    """
    if not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be a numpy array, got {type(pic).__name__}")
    if pic.dtype != np.uint8:
        return lucid.from_numpy(np.ascontiguousarray(pic))
    h_axis, _ = spatial_axes(pic, pic, batched)
    if h_axis == -2:  # no channel axis: add one
        chw = pic[..., None, :, :]
    else:  # transpose the bytes first: a contiguous multiply is faster than a strided one
        chw = np.ascontiguousarray(np.moveaxis(pic, -1, -3))
    out = np.empty(chw.shape, np.float32)
    np.multiply(chw, np.float32(1 / 255), out=out)
    return lucid.from_numpy(out)


def _per_channel(values: Sequence[float] | float, dtype: Any) -> np.ndarray:
    return np.asarray(values, dtype=dtype).reshape(-1, 1, 1)


def normalize(
    tensor: Any, mean: Sequence[float], std: Sequence[float], inplace: bool = False
) -> Any:
    """``(tensor - mean) / std`` per channel of a float ``(N x) C x H x W`` image."""
    arr, wrap = unwrap(tensor)
    if arr.dtype.kind != "f":
        raise TypeError(f"Input tensor should be a float tensor. Got {arr.dtype}.")
    if arr.ndim < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got shape {arr.shape}."
        )
    m = _per_channel(mean, arr.dtype)
    s = _per_channel(std, arr.dtype)
    if np.any(s == 0):
        raise ValueError(
            f"std evaluated to zero after conversion to {arr.dtype}, leading to division by zero."
        )
    channels = arr.shape[-3]
    for name, v in (("mean", m), ("std", s)):
        if v.shape[0] not in (1, channels):
            raise ValueError(
                f"{name} has {v.shape[0]} values but the image has {channels} channels"
            )
    if inplace and arr.flags.writeable:
        np.subtract(arr, m, out=arr)
        np.divide(arr, s, out=arr)
        return tensor
    out = np.subtract(arr, m)
    np.divide(out, s, out=out)  # one temporary, not two
    return wrap(out)


def crop(img: Any, top: int, left: int, height: int, width: int, batched: bool = False) -> Any:
    """The ``height x width`` window at (top, left); parts outside the image are zeros."""
    arr, wrap = unwrap(img)
    h_axis, w_axis = spatial_axes(img, arr, batched)
    big_h, big_w = arr.shape[h_axis], arr.shape[w_axis]
    if top < 0 or left < 0 or top + height > big_h or left + width > big_w:
        pads = [max(-top, 0), max(-left, 0), max(top + height - big_h, 0)]
        pads.append(max(left + width - big_w, 0))
        arr = _pad_array(arr, h_axis, (pads[1], pads[0], pads[3], pads[2]), 0, "constant")
        top, left = top + pads[0], left + pads[1]
    index = [slice(None)] * arr.ndim
    index[h_axis] = slice(top, top + height)
    index[w_axis] = slice(left, left + width)
    return wrap(arr[tuple(index)])


def _pair(size: int | Sequence[int], name: str) -> tuple[int, int]:
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, Sequence) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{name} should be an int or a sequence of one or two ints, got {size!r}")


def center_crop(img: Any, output_size: int | Sequence[int], batched: bool = False) -> Any:
    """The central window of ``output_size``; a larger window is padded with zeros."""
    h, w = _pair(output_size, "output_size")
    big_h, big_w = image_size(img, batched)
    top, left = int(round((big_h - h) / 2.0)), int(round((big_w - w) / 2.0))
    return crop(img, top, left, h, w, batched)


def hflip(img: Any, batched: bool = False) -> Any:
    """Mirror left-right."""
    arr, wrap = unwrap(img)
    return wrap(np.flip(arr, axis=spatial_axes(img, arr, batched)[1]))


def vflip(img: Any, batched: bool = False) -> Any:
    """Mirror top-bottom."""
    arr, wrap = unwrap(img)
    return wrap(np.flip(arr, axis=spatial_axes(img, arr, batched)[0]))


_PAD_MODES = {
    "constant": "constant",
    "edge": "edge",
    "reflect": "reflect",
    "symmetric": "symmetric",
}


def parse_padding(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a (horizontal, vertical) pair or a 4-tuple."""
    if isinstance(padding, numbers.Integral):
        p = int(padding)
        return p, p, p, p
    if isinstance(padding, Sequence) and len(padding) in (1, 2, 4):
        if len(padding) == 1:
            return parse_padding(int(padding[0]))
        if len(padding) == 2:
            return int(padding[0]), int(padding[1]), int(padding[0]), int(padding[1])
        left, top, right, bottom = (int(p) for p in padding)
        return left, top, right, bottom
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element sequence, got {padding!r}")


def _pad_array(
    arr: np.ndarray,
    h_axis: int,
    ltrb: tuple[int, int, int, int],
    fill: float,
    padding_mode: str,
) -> np.ndarray:
    if padding_mode not in _PAD_MODES:
        raise ValueError(
            f"Padding mode should be either constant, edge, reflect or symmetric, "
            f"got {padding_mode!r}"
        )
    left, top, right, bottom = ltrb
    if min(ltrb) < 0:
        raise ValueError(f"padding must be non-negative, got {ltrb}")
    widths = [(0, 0)] * arr.ndim
    widths[arr.ndim + h_axis] = (top, bottom)
    widths[arr.ndim + h_axis + 1] = (left, right)
    if padding_mode == "constant":
        return np.pad(arr, widths, mode="constant", constant_values=fill)
    out: np.ndarray = np.pad(arr, widths, mode=_PAD_MODES[padding_mode])  # type: ignore[call-overload]
    return out


def pad(
    img: Any,
    padding: int | Sequence[int],
    fill: float = 0,
    padding_mode: str = "constant",
    batched: bool = False,
) -> Any:
    """Pad the borders: ``padding`` as in ``parse_padding``; modes constant (with ``fill``),
    edge, reflect and symmetric."""
    arr, wrap = unwrap(img)
    h_axis, _ = spatial_axes(img, arr, batched)
    return wrap(_pad_array(arr, h_axis, parse_padding(padding), fill, padding_mode))


def resize_output_size(
    height: int, width: int, size: int | Sequence[int], max_size: int | None = None
) -> tuple[int, int]:
    """An int ``size`` sets the smaller edge (keeping the aspect ratio); a pair sets both."""
    if isinstance(size, Sequence) and len(size) == 2:
        return int(size[0]), int(size[1])
    short = _pair(size, "size")[0]
    if height <= width:
        new_h, new_w = short, int(short * width / height)
    else:
        new_h, new_w = int(short * height / width), short
    if max_size is not None and max(new_h, new_w) > max_size:
        scale = max_size / max(new_h, new_w)
        new_h, new_w = int(new_h * scale), int(new_w * scale)
    return new_h, new_w


def _axis_weights(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices and weights of half-pixel-centred linear interpolation."""
    src = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    src = np.clip(src, 0, n_in - 1)
    i0 = np.floor(src).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (src - i0).astype(np.float32)


def _lerp_axis(arr: np.ndarray, axis: int, n_out: int) -> np.ndarray:
    i0, i1, w = _axis_weights(arr.shape[axis], n_out)
    shape = [1] * arr.ndim
    shape[axis] = n_out
    w = w.reshape(shape)
    a: np.ndarray = np.take(arr, i0, axis=axis)
    out: np.ndarray = a + (np.take(arr, i1, axis=axis) - a) * w
    return out


def resize(
    img: Any,
    size: int | Sequence[int],
    interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
    max_size: int | None = None,
    batched: bool = False,
) -> Any:
    """Resize to ``size`` (see ``resize_output_size``) with nearest or bilinear sampling
    (half-pixel centres, no antialiasing); uint8 stays uint8 (rounded)."""
    mode = _interpolation(interpolation)
    arr, wrap = unwrap(img)
    h_axis, w_axis = spatial_axes(img, arr, batched)
    new_h, new_w = resize_output_size(arr.shape[h_axis], arr.shape[w_axis], size, max_size)
    if mode is InterpolationMode.NEAREST:
        rows = np.floor(np.arange(new_h) * (arr.shape[h_axis] / new_h)).astype(np.int64)
        cols = np.floor(np.arange(new_w) * (arr.shape[w_axis] / new_w)).astype(np.int64)
        out = np.take(np.take(arr, rows, axis=h_axis), cols, axis=w_axis)
        return wrap(out)
    work = arr.astype(np.float32) if arr.dtype.kind != "f" else arr
    out = _lerp_axis(_lerp_axis(work, h_axis, new_h), w_axis, new_w)
    if arr.dtype.kind in "ui":
        info = np.iinfo(arr.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return wrap(out.astype(arr.dtype, copy=False))


def rotate(
    img: Any,
    angle: float,
    interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
    center: Sequence[float] | None = None,
    fill: float = 0,
) -> Any:
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the image
    centre), keeping the size; uncovered pixels get ``fill``."""
    mode = _interpolation(interpolation)
    arr, wrap = unwrap(img)
    h_axis, w_axis = spatial_axes(img, arr)
    h, w = arr.shape[h_axis], arr.shape[w_axis]
    cx, cy = ((w - 1) / 2, (h - 1) / 2) if center is None else (center[0], center[1])
    theta = np.deg2rad(angle)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    # inverse map: the source pixel of each output pixel (y axis points down)
    cos, sin = np.cos(theta), np.sin(theta)
    src_x = cos * (xs - cx) - sin * (ys - cy) + cx
    src_y = sin * (xs - cx) + cos * (ys - cy) + cy
    moved = np.moveaxis(arr, (h_axis, w_axis), (0, 1)).astype(np.float32)
    if mode is InterpolationMode.NEAREST:
        out = _sample_nearest(moved, src_y, src_x, fill)
    else:
        out = _sample_bilinear(moved, src_y, src_x, fill)
    out = np.moveaxis(out, (0, 1), (h_axis, w_axis))
    if arr.dtype.kind in "ui":
        info = np.iinfo(arr.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return wrap(out.astype(arr.dtype, copy=False))


def _sample_nearest(arr: np.ndarray, sy: np.ndarray, sx: np.ndarray, fill: float) -> np.ndarray:
    iy, ix = np.rint(sy).astype(np.int64), np.rint(sx).astype(np.int64)
    inside = (iy >= 0) & (iy < arr.shape[0]) & (ix >= 0) & (ix < arr.shape[1])
    out: np.ndarray = arr[np.clip(iy, 0, arr.shape[0] - 1), np.clip(ix, 0, arr.shape[1] - 1)]
    out[~inside] = fill
    return out


def _sample_bilinear(arr: np.ndarray, sy: np.ndarray, sx: np.ndarray, fill: float) -> np.ndarray:
    h, w = arr.shape[0], arr.shape[1]
    padded = np.pad(
        arr, [(1, 1), (1, 1)] + [(0, 0)] * (arr.ndim - 2), constant_values=fill
    )  # a fill border makes out-of-image neighbours blend with ``fill``
    sy, sx = np.clip(sy + 1, 0, h + 1), np.clip(sx + 1, 0, w + 1)
    y0, x0 = np.floor(sy).astype(np.int64), np.floor(sx).astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, h + 1), np.minimum(x0 + 1, w + 1)
    wy, wx = (sy - y0).astype(np.float32), (sx - x0).astype(np.float32)
    extra = (slice(None), slice(None)) + (None,) * (arr.ndim - 2)
    wy, wx = wy[extra], wx[extra]
    top = padded[y0, x0] * (1 - wx) + padded[y0, x1] * wx
    bottom = padded[y1, x0] * (1 - wx) + padded[y1, x1] * wx
    return top * (1 - wy) + bottom * wy  # type: ignore[no-any-return]
