"""Image functions behind the transforms, on numpy arrays and lucid tensors.

Layouts: a ``uint8`` numpy array is an image as files store it, ``H x W`` or ``H x W x C``;
a lucid Tensor or a numpy array of any other dtype is ``C x H x W`` (or ``H x W``), as after
``to_tensor``. With ``batched=True`` every layout has a leading batch dimension ``N``. Results
have the type of the input (a Tensor stays a Tensor on its device). A PIL image (Pillow, the
``lucid-data[images]`` extra) is taken as its uint8 ``H x W x C`` array and given back as a PIL
image.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

import numpy as np

import lucid

from .._pil import is_pil_image, pil_array

__all__ = [
    "InterpolationMode",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "adjust_sharpness",
    "autocontrast",
    "affine",
    "center_crop",
    "convert_image_dtype",
    "crop",
    "elastic_transform",
    "equalize",
    "erase",
    "five_crop",
    "gaussian_blur",
    "get_dimensions",
    "get_image_num_channels",
    "get_image_size",
    "hflip",
    "invert",
    "normalize",
    "pad",
    "perspective",
    "pil_modes_mapping",
    "pil_to_tensor",
    "posterize",
    "resize",
    "resized_crop",
    "rgb_to_grayscale",
    "rotate",
    "solarize",
    "ten_crop",
    "to_grayscale",
    "to_pil_image",
    "to_tensor",
    "vflip",
]

Wrap = Callable[[np.ndarray], Any]


class InterpolationMode(Enum):
    """How image transforms resample, torchvision's seven modes: ``resize`` does ``NEAREST``,
    ``NEAREST_EXACT``, ``BILINEAR`` and ``BICUBIC``, the geometric transforms ``NEAREST`` and
    ``BILINEAR`` (``BICUBIC`` sampled bilinearly); ``BOX``, ``HAMMING`` and ``LANCZOS`` (PIL's
    filters) are named, and refused as torchvision refuses them for tensors."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation(mode: InterpolationMode | str) -> InterpolationMode:
    try:
        return InterpolationMode(mode.value if isinstance(mode, InterpolationMode) else mode)
    except ValueError:
        raise ValueError(
            f"interpolation should be one of {[m.value for m in InterpolationMode]}, got {mode!r}"
        ) from None


def _supported(mode: InterpolationMode, *modes: InterpolationMode) -> InterpolationMode:
    if mode not in modes:
        raise ValueError(f"Interpolation mode '{mode.value}' is unsupported with Tensor input")
    return mode


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
    if is_pil_image(img):
        return pil_array(img), _to_pil_like
    raise TypeError(
        f"img should be a numpy array, a lucid Tensor or a PIL image, got {type(img).__name__}"
    )


def _to_pil_like(a: np.ndarray) -> Any:
    return to_pil_image(a[..., 0] if a.ndim == 3 and a.shape[-1] == 1 else a)


def _is_hwc(img: Any, arr: np.ndarray) -> bool:
    return (isinstance(img, np.ndarray) or is_pil_image(img)) and arr.dtype == np.uint8


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
    if is_pil_image(pic):
        pic = pil_array(pic)
    if not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be a numpy array or a PIL image, got {type(pic).__name__}")
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


def _cubic_axis(arr: np.ndarray, axis: int, n_out: int) -> np.ndarray:
    """Keys' cubic convolution (a = -0.75, torch's) along ``axis``, half-pixel centres, the
    border replicated: torch's ``interpolate(mode="bicubic", align_corners=False)``."""
    n_in = arr.shape[axis]
    src = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    a = -0.75

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        out: np.ndarray = ((a + 2) * x - (a + 3)) * x * x + 1
        return out

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        out: np.ndarray = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return out

    shape = [1] * arr.ndim
    shape[axis] = n_out
    out: np.ndarray | None = None
    for k, w in enumerate((far(t + 1), near(t), near(1 - t), far(2 - t))):
        idx = np.clip(i0 + k - 1, 0, n_in - 1)
        term = np.take(arr, idx, axis=axis) * w.astype(np.float32).reshape(shape)
        out = term if out is None else out + term
    assert out is not None
    return out


def resize(
    img: Any,
    size: int | Sequence[int],
    interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
    max_size: int | None = None,
    batched: bool = False,
) -> Any:
    """Resize to ``size`` (see ``resize_output_size``) with nearest, bilinear or bicubic
    sampling (half-pixel centres, no antialiasing); uint8 stays uint8 (rounded)."""
    mode = _supported(
        _interpolation(interpolation),
        InterpolationMode.NEAREST,
        InterpolationMode.NEAREST_EXACT,
        InterpolationMode.BILINEAR,
        InterpolationMode.BICUBIC,
    )
    arr, wrap = unwrap(img)
    h_axis, w_axis = spatial_axes(img, arr, batched)
    new_h, new_w = resize_output_size(arr.shape[h_axis], arr.shape[w_axis], size, max_size)
    if mode in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
        # nearest: floor(i * scale); nearest-exact: floor((i + 0.5) * scale), clamped
        half = 0.5 if mode is InterpolationMode.NEAREST_EXACT else 0.0
        n_h, n_w = arr.shape[h_axis], arr.shape[w_axis]
        rows = np.floor((np.arange(new_h) + half) * (n_h / new_h)).astype(np.int64)
        cols = np.floor((np.arange(new_w) + half) * (n_w / new_w)).astype(np.int64)
        rows, cols = np.minimum(rows, n_h - 1), np.minimum(cols, n_w - 1)
        out = np.take(np.take(arr, rows, axis=h_axis), cols, axis=w_axis)
        return wrap(out)
    work = arr.astype(np.float32) if arr.dtype.kind != "f" else arr
    along = _cubic_axis if mode is InterpolationMode.BICUBIC else _lerp_axis
    out = along(along(work, h_axis, new_h), w_axis, new_w)
    if arr.dtype.kind in "ui":
        info = np.iinfo(arr.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return wrap(out.astype(arr.dtype, copy=False))


def _inverse_affine_matrix(
    center: Sequence[float],
    angle: float,
    translate: Sequence[float],
    scale: float,
    shear: Sequence[float],
) -> list[float]:
    """torchvision's inverse of ``T * C * RotateScaleShear * C^-1`` (output -> source)."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [v / scale for v in (d, -b, 0.0, -c, a, 0.0)]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m


def _as_chw(img: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """``img`` as a ``... x C x H x W`` array (a uint8 numpy image moved from ``H x W x C``,
    a 2-d image given a channel) and the function that puts a result back in its layout."""
    arr, wrap = unwrap(img)
    if arr.ndim < 2:
        raise ValueError(f"expected an image with at least 2 dimensions (H x W), got {arr.shape}")
    if _is_hwc(img, arr):
        if arr.ndim == 2:
            return arr[None], lambda a: wrap(np.ascontiguousarray(a[0]))
        return np.moveaxis(arr, -1, -3), lambda a: wrap(
            np.ascontiguousarray(np.moveaxis(a, -3, -1))
        )
    if arr.ndim == 2:
        return arr[None], lambda a: wrap(a[0])
    return arr, wrap


def _bound(arr: np.ndarray) -> float:
    """The largest value of an image: 1.0 for floats, the type's maximum for integers."""
    return 1.0 if arr.dtype.kind == "f" else float(np.iinfo(arr.dtype).max)


def _cast_back(out: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """A float result in ``dtype``: integers rounded and clipped, as torchvision casts back."""
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return out.astype(dtype, copy=False)


def _fill_values(fill: float | Sequence[float] | None, channels: int) -> np.ndarray | None:
    if fill is None:
        return None
    values = [float(fill)] if isinstance(fill, (int, float)) else [float(v) for v in fill]
    if len(values) not in (1, channels):
        raise ValueError(
            "The number of elements in 'fill' does not match the number of channels of the "
            f"image ({len(values)} != {channels})"
        )
    return np.asarray(values, np.float64).reshape(-1, 1, 1)


def _grid_sample(x: np.ndarray, sx: np.ndarray, sy: np.ndarray, nearest: bool) -> np.ndarray:
    """``x`` (``... x H x W``) sampled at pixel coordinates ``(sy, sx)`` as ``grid_sample``
    with ``align_corners=False`` and zero padding samples."""
    h, w = x.shape[-2], x.shape[-1]
    if nearest:
        iy, ix = np.rint(sy).astype(np.int64), np.rint(sx).astype(np.int64)
        inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
        vals: np.ndarray = x[..., np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)] * inside
        return vals
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    wx, wy = sx - x0, sy - y0
    out = np.zeros(x.shape[:-2] + sx.shape, np.float64)
    for dy, fy in ((0, 1 - wy), (1, wy)):
        for dx, fx in ((0, 1 - wx), (1, wx)):
            yy, xx = y0 + dy, x0 + dx
            valid = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            out += x[..., np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)] * (fy * fx * valid)
    return out


def _apply_affine(
    img: Any,
    matrix: Sequence[float],
    interpolation: InterpolationMode | str,
    fill: float | Sequence[float] | None,
) -> Any:
    h, w = image_size(img)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    xc, yc = xs - (w - 1) / 2, ys - (h - 1) / 2
    sx = matrix[0] * xc + matrix[1] * yc + matrix[2] + (w - 1) / 2
    sy = matrix[3] * xc + matrix[4] * yc + matrix[5] + (h - 1) / 2
    return _apply_grid(img, sx, sy, interpolation, fill)


def _apply_grid(
    img: Any,
    sx: np.ndarray,
    sy: np.ndarray,
    interpolation: InterpolationMode | str,
    fill: float | Sequence[float] | None,
) -> Any:
    """Each output pixel sampled at source pixel ``(sy, sx)``, torchvision's fill mask."""
    mode = _supported(  # bicubic samples bilinearly, as before
        _interpolation(interpolation),
        InterpolationMode.NEAREST,
        InterpolationMode.BILINEAR,
        InterpolationMode.BICUBIC,
    )
    x, restore = _as_chw(img)
    h, w = x.shape[-2], x.shape[-1]
    nearest = mode is InterpolationMode.NEAREST
    work = x.astype(np.float64)
    out = _grid_sample(work, sx, sy, nearest)
    fills = _fill_values(fill, x.shape[-3])
    if fills is not None:  # torchvision's mask: where the source lay outside, the fill
        mask = _grid_sample(np.ones((1, h, w)), sx, sy, nearest)
        out = np.where(mask < 0.5, fills, out) if nearest else out * mask + (1 - mask) * fills
    return restore(_cast_back(out, x.dtype))


def rotate(
    img: Any,
    angle: float,
    interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
    expand: bool = False,
    center: Sequence[float] | None = None,
    fill: float | Sequence[float] | None = None,
) -> Any:
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (pixel coordinates;
    default the image centre), keeping the size; pixels from outside get ``fill`` (None:
    zeros, blended at the border), as torchvision's tensor ``rotate``.

    Raises:
        NotImplementedError: for ``expand=True`` (lucid keeps the size).
    """
    if expand:
        raise NotImplementedError("rotate(expand=True) is not supported: lucid keeps the size")
    h, w = image_size(img)
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, (w, h))]
    matrix = _inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return _apply_affine(img, matrix, interpolation, fill)


def affine(
    img: Any,
    angle: float,
    translate: Sequence[int],
    scale: float,
    shear: float | Sequence[float],
    interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
    fill: float | Sequence[float] | None = None,
    center: Sequence[int] | None = None,
) -> Any:
    """Rotate by ``angle`` degrees, translate by ``translate`` pixels, scale and shear
    (degrees, one value for x or an (x, y) pair), keeping the image centre, as torchvision's
    tensor ``affine`` (the same inverse matrix and sampling)."""
    if not isinstance(translate, Sequence) or len(translate) != 2:
        raise ValueError(f"Argument translate should be a sequence of length 2, got {translate!r}")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    shears = [float(shear), 0.0] if isinstance(shear, numbers.Number) else list(shear)  # type: ignore[arg-type]
    if len(shears) == 1:
        shears = [float(shears[0]), 0.0]
    if len(shears) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear!r}")
    h, w = image_size(img)
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, (w, h))]
    translate_f = [float(t) for t in translate]
    matrix = _inverse_affine_matrix(center_f, angle, translate_f, scale, shears)
    return _apply_affine(img, matrix, interpolation, fill)


def get_dimensions(img: Any) -> list[int]:
    """``[channels, height, width]`` of an image."""
    x, _ = _as_chw(img)
    return [int(x.shape[-3]), int(x.shape[-2]), int(x.shape[-1])]


def get_image_size(img: Any) -> list[int]:
    """``[width, height]`` of an image (torchvision's order)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img: Any) -> int:
    """The number of channels of an image."""
    return get_dimensions(img)[0]


def pil_to_tensor(pic: Any) -> Any:
    """A uint8 ``H x W x C`` (or ``H x W``) numpy image as a uint8 ``C x H x W`` Tensor (no
    scaling), what torchvision's ``pil_to_tensor`` gives for a PIL image."""
    if is_pil_image(pic):
        pic = pil_array(pic)
    if not isinstance(pic, np.ndarray):
        raise TypeError(
            f"pic should be a numpy array image or a PIL image, got {type(pic).__name__}"
        )
    chw = pic[None] if pic.ndim == 2 else np.moveaxis(pic, -1, -3)
    return lucid.from_numpy(np.ascontiguousarray(chw))


def convert_image_dtype(image: Any, dtype: Any = lucid.float32) -> Any:
    """A Tensor image in another dtype, rescaled: integers span ``[0, max]``, floats
    ``[0, 1]`` (float to int as torchvision: times ``max + 1 - 0.001``, truncated)."""
    if not isinstance(image, lucid.Tensor):
        raise TypeError(f"Input img should be Tensor Image, got {type(image).__name__}")
    if image.dtype == dtype:
        return image
    arr = image.detach().numpy()
    target = np.dtype(lucid.empty(0, dtype=dtype).numpy().dtype)
    if arr.dtype.kind == "f":
        if target.kind == "f":
            out = arr.astype(target)
        else:
            max_val = float(np.iinfo(target).max)
            out = (arr.astype(np.float64) * (max_val + 1.0 - 1e-3)).astype(target)
    elif target.kind == "f":
        out = (arr / float(np.iinfo(arr.dtype).max)).astype(target)
    else:
        in_max, out_max = int(np.iinfo(arr.dtype).max), int(np.iinfo(target).max)
        if in_max > out_max:
            factor = (in_max + 1) // (out_max + 1)
            out = (arr // factor).astype(target)
        else:
            factor = (out_max + 1) // (in_max + 1)
            out = arr.astype(target) * factor
    t = lucid.from_numpy(np.ascontiguousarray(out))
    return t if image.device == "cpu" else t.to(image.device)


def resized_crop(
    img: Any,
    top: int,
    left: int,
    height: int,
    width: int,
    size: int | Sequence[int],
    interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
    antialias: bool | None = True,
) -> Any:
    """``crop`` then ``resize`` (no antialiasing, see ``resize``)."""
    return resize(crop(img, top, left, height, width), size, interpolation)


def five_crop(img: Any, size: int | Sequence[int]) -> tuple[Any, Any, Any, Any, Any]:
    """The four corner crops and the centre crop of ``size``."""
    crop_h, crop_w = _pair(size, "size")
    image_h, image_w = image_size(img)
    if crop_w > image_w or crop_h > image_h:
        raise ValueError(
            f"Requested crop size {(crop_h, crop_w)} is bigger than input size {(image_h, image_w)}"
        )
    tl = crop(img, 0, 0, crop_h, crop_w)
    tr = crop(img, 0, image_w - crop_w, crop_h, crop_w)
    bl = crop(img, image_h - crop_h, 0, crop_h, crop_w)
    br = crop(img, image_h - crop_h, image_w - crop_w, crop_h, crop_w)
    return tl, tr, bl, br, center_crop(img, (crop_h, crop_w))


def ten_crop(img: Any, size: int | Sequence[int], vertical_flip: bool = False) -> tuple[Any, ...]:
    """``five_crop`` of the image and of its flip (horizontal, or vertical)."""
    flipped = vflip(img) if vertical_flip else hflip(img)
    return five_crop(img, size) + five_crop(flipped, size)


def rgb_to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """Luma ``0.2989 R + 0.587 G + 0.114 B`` (a 1-channel image is kept), repeated to
    ``num_output_channels`` (1 or 3; one channel of a uint8 numpy image is ``H x W``, as
    PIL's "L" mode); integer images are rounded (PIL's rounding) for uint8
    numpy images, truncated (torchvision's tensor cast) for Tensors."""
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    x, _ = _as_chw(img)
    if x.shape[-3] not in (1, 3):
        raise TypeError(
            f"Input image tensor permitted channel values are [1, 3], but found {x.shape[-3]}"
        )
    if x.shape[-3] == 3:
        r, g, b = (x[..., c : c + 1, :, :].astype(np.float64) for c in range(3))
        gray = 0.2989 * r + 0.587 * g + 0.114 * b
        if x.dtype.kind in "ui":
            gray = np.rint(gray) if not isinstance(img, lucid.Tensor) else np.trunc(gray)
        gray = gray.astype(x.dtype)
    else:
        gray = x
    out = np.repeat(gray, num_output_channels, axis=-3) if num_output_channels == 3 else gray
    arr, wrap = unwrap(img)
    if _is_hwc(img, arr):
        if num_output_channels == 1:
            return wrap(np.ascontiguousarray(out[..., 0, :, :]))  # an "L" image: H x W
        return wrap(np.ascontiguousarray(np.moveaxis(out, -3, -1)))
    return wrap(np.ascontiguousarray(out))


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """``rgb_to_grayscale`` (torchvision's name for PIL images)."""
    return rgb_to_grayscale(img, num_output_channels)


def erase(img: Any, i: int, j: int, h: int, w: int, v: Any, inplace: bool = False) -> Any:
    """``img`` with rows ``i:i+h`` and columns ``j:j+w`` set to ``v`` (a value, per-channel
    values or a ``C x h x w`` block)."""
    x, restore = _as_chw(img)
    out = x if inplace else x.copy()
    block = v.detach().numpy() if isinstance(v, lucid.Tensor) else np.asarray(v)
    out[..., i : i + h, j : j + w] = block
    if inplace and isinstance(img, lucid.Tensor) and img.device == "cpu":
        return img
    return restore(out)


def _gaussian_kernel1d(kernel_size: int, sigma: float) -> np.ndarray:
    half = (kernel_size - 1) * 0.5
    x = np.linspace(-half, half, kernel_size)
    pdf = np.exp(-0.5 * (x / sigma) ** 2)
    out: np.ndarray = pdf / pdf.sum()
    return out


def gaussian_blur(
    img: Any, kernel_size: int | Sequence[int], sigma: float | Sequence[float] | None = None
) -> Any:
    """Blur with a Gaussian kernel (odd ``kernel_size`` (x, y); ``sigma`` default
    ``0.3 * ((k - 1) * 0.5 - 1) + 0.8``), reflect-padded borders, as torchvision's."""
    ks = [kernel_size] * 2 if isinstance(kernel_size, int) else [int(k) for k in kernel_size]
    if len(ks) == 1:
        ks = [ks[0], ks[0]]
    if len(ks) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(ks)}")
    for k in ks:
        if k % 2 == 0 or k < 0:
            raise ValueError(
                f"kernel_size should have odd and positive integers. Got {kernel_size}"
            )
    if sigma is None:
        sig = [k * 0.15 + 0.35 for k in ks]
    elif isinstance(sigma, numbers.Number):
        sig = [float(sigma)] * 2  # type: ignore[arg-type]
    else:
        sig = [float(v) for v in sigma]  # type: ignore[union-attr]
        sig = sig * 2 if len(sig) == 1 else sig
    if len(sig) != 2 or min(sig) <= 0:
        raise ValueError(f"sigma should have positive values, got {sigma!r}")
    x, restore = _as_chw(img)
    work = x.astype(np.float64 if x.dtype == np.float64 else np.float32)
    kx, ky = _gaussian_kernel1d(ks[0], sig[0]), _gaussian_kernel1d(ks[1], sig[1])
    px, py = ks[0] // 2, ks[1] // 2
    widths = [(0, 0)] * (work.ndim - 2) + [(py, py), (px, px)]
    padded = np.pad(work, widths, mode="reflect")
    h, w = work.shape[-2], work.shape[-1]
    rows = sum(ky[k] * padded[..., k : k + h, :] for k in range(ks[1]))
    out = sum(kx[k] * rows[..., :, k : k + w] for k in range(ks[0]))  # separable: rows, columns
    return restore(_cast_back(np.asarray(out), x.dtype))


def invert(img: Any) -> Any:
    """``max - img`` (max 1.0 for floats, 255 for uint8)."""
    arr, wrap = unwrap(img)
    bound = _bound(arr)
    return wrap(
        (bound - arr).astype(arr.dtype)
        if arr.dtype.kind == "f"
        else (int(bound) - arr).astype(arr.dtype)
    )


def posterize(img: Any, bits: int) -> Any:
    """Keep the ``bits`` high bits of each value of a uint8 image."""
    arr, wrap = unwrap(img)
    if arr.dtype != np.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {arr.dtype}")
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
    return wrap(arr & mask)


def solarize(img: Any, threshold: float) -> Any:
    """Invert the values at or above ``threshold``."""
    arr, wrap = unwrap(img)
    if threshold > _bound(arr):
        raise TypeError("Threshold should be less than bound of img.")
    return wrap(np.where(arr >= threshold, unwrap(invert(arr))[0], arr))


def _color_op(img: Any, op: Callable[[np.ndarray], np.ndarray]) -> Any:
    x, restore = _as_chw(img)
    scale = _bound(x)
    out = op(x.astype(np.float32) / scale) * scale
    return restore(_cast_back(out, x.dtype))


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    """Scale brightness: 0 black, 1 unchanged."""
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    return _color_op(img, lambda x: np.clip(x * brightness_factor, 0, 1))


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    """Blend with the mean grey level: 0 grey, 1 unchanged."""
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    return _color_op(img, lambda x: _blend_gray(x, contrast_factor, mean=True))


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    """Blend with the grey image: 0 grey, 1 unchanged."""
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    return _color_op(img, lambda x: _blend_gray(x, saturation_factor, mean=False))


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Shift the hue by ``hue_factor`` in [-0.5, 0.5] (a 1-channel image is kept)."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    return _color_op(img, lambda x: hue_shift(x, hue_factor))


def hue_shift(x: np.ndarray, shift: float) -> np.ndarray:
    """A float ``... x 3 x H x W`` image in [0, 1] with its hue turned by ``shift`` (of a
    turn); other channel counts are returned as they are."""
    if x.shape[-3] != 3:
        return x
    h, s, v = _rgb_to_hsv(x)
    return _hsv_to_rgb((h + shift) % 1.0, s, v)


def _rgb_to_hsv(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r, g, b = x[..., 0, :, :], x[..., 1, :, :], x[..., 2, :, :]
    maxc, minc = x.max(axis=-3), x.min(axis=-3)
    delta = maxc - minc
    safe = np.where(delta > 0, delta, 1)
    s = np.where(maxc > 0, delta / np.where(maxc > 0, maxc, 1), 0)
    rc, gc, bc = (maxc - r) / safe, (maxc - g) / safe, (maxc - b) / safe
    h = np.where(r == maxc, bc - gc, np.where(g == maxc, 2 + rc - bc, 4 + gc - rc))
    h = np.where(delta > 0, (h / 6.0) % 1.0, 0.0)
    return h, s, maxc


def _hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    i = i.astype(np.int64) % 6
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    channels = [np.select([i == k for k in range(6)], [c[ch] for c in choices]) for ch in range(3)]
    out: np.ndarray = np.stack(channels, axis=-3).astype(np.float32)
    return out


def _blend_gray(x: np.ndarray, factor: float, mean: bool) -> np.ndarray:
    if x.shape[-3] == 3:
        gray = 0.2989 * x[..., 0:1, :, :] + 0.587 * x[..., 1:2, :, :] + 0.114 * x[..., 2:3, :, :]
    else:
        gray = x
    other = gray.mean(axis=(-3, -2, -1), keepdims=True) if mean else gray
    out: np.ndarray = np.clip(factor * x + (1 - factor) * other, 0, 1)
    return out


def _blend_same(img: np.ndarray, other: np.ndarray, ratio: float) -> np.ndarray:
    """torchvision's ``_blend``: ``ratio * img + (1 - ratio) * other`` clamped, cast back
    (truncating, as ``Tensor.to``)."""
    work = _work_float(img)  # (torch computes in float32 for integer images)
    mixed = np.float32(ratio) * work + np.float32(1.0 - ratio) * other.astype(work.dtype)
    out: np.ndarray = np.clip(mixed, 0, _bound(img)).astype(img.dtype)
    return out


def _work_float(x: np.ndarray) -> np.ndarray:
    """``x`` as the float array torchvision computes in: its own float dtype, else float32."""
    return x if x.dtype.kind == "f" else x.astype(np.float32)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    """Blend with a smoothed copy (kernel ``[[1,1,1],[1,5,1],[1,1,1]] / 13`` on the inner
    pixels): 0 blurred, 1 unchanged, 2 sharper, as torchvision's."""
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    x, restore = _as_chw(img)
    h, w = x.shape[-2], x.shape[-1]
    if h <= 2 or w <= 2:
        return img
    kernel = np.ones((3, 3))
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    work = x.astype(np.float64)
    inner = sum(
        kernel[dy, dx] * work[..., dy : dy + h - 2, dx : dx + w - 2]
        for dy in range(3)
        for dx in range(3)
    )
    blurred = work.copy()
    blurred[..., 1:-1, 1:-1] = _cast_back(np.asarray(inner), x.dtype)
    return restore(_blend_same(x, blurred, sharpness_factor))


def autocontrast(img: Any) -> Any:
    """Stretch each channel to span the full range (a constant channel is kept)."""
    x, restore = _as_chw(img)
    bound = _bound(x)
    work = _work_float(x)
    low = work.min(axis=(-2, -1), keepdims=True)
    high = work.max(axis=(-2, -1), keepdims=True)
    flat = high == low
    # bound / (high - low) as torch computes a scalar over a tensor: reciprocal, then times
    recip = work.dtype.type(1) / np.where(flat, 1, high - low)
    scale = np.where(flat, 1, recip * work.dtype.type(bound))
    low = np.where(flat, 0, low)
    return restore(np.clip((work - low) * scale, 0, bound).astype(x.dtype))


def _equalize_channel(chan: np.ndarray) -> np.ndarray:
    hist = np.bincount(chan.reshape(-1), minlength=256)
    nonzero = hist[hist != 0]
    step = int(nonzero[:-1].sum()) // 255
    if step == 0:
        return chan
    lut = (np.cumsum(hist) + step // 2) // step
    lut = np.clip(np.concatenate([[0], lut[:-1]]), 0, 255)
    out: np.ndarray = lut[chan.astype(np.int64)].astype(np.uint8)
    return out


def equalize(img: Any) -> Any:
    """Equalize the histogram of each channel of a uint8 image, as torchvision's."""
    x, restore = _as_chw(img)
    if x.dtype != np.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {x.dtype}")
    flat = x.reshape((-1, *x.shape[-2:]))
    out = np.stack([_equalize_channel(c) for c in flat]).reshape(x.shape)
    return restore(out)


def adjust_gamma(img: Any, gamma: float, gain: float = 1) -> Any:
    """``gain * img ** gamma`` on values scaled to [0, 1], clamped."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    return _color_op(img, lambda v: np.clip(gain * np.power(v, gamma), 0, 1))


def _perspective_coeffs(
    startpoints: Sequence[Sequence[int]], endpoints: Sequence[Sequence[int]]
) -> list[float]:
    """The 8 coefficients mapping ``endpoints`` to ``startpoints`` (least squares, rounded
    to float32 as torchvision's)."""
    a = np.zeros((2 * len(startpoints), 8))
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, np.float64).reshape(-1)
    res = np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32)
    return [float(v) for v in res]


def perspective(
    img: Any,
    startpoints: Sequence[Sequence[int]],
    endpoints: Sequence[Sequence[int]],
    interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
    fill: float | Sequence[float] | None = None,
) -> Any:
    """Warp so that the four corners ``startpoints`` (``[x, y]``: top-left, top-right,
    bottom-right, bottom-left) move to ``endpoints``, as torchvision's tensor
    ``perspective``."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(
            f"Please provide only four points for startpoints and endpoints, got "
            f"{len(startpoints)} and {len(endpoints)}"
        )
    c = _perspective_coeffs(startpoints, endpoints)
    h, w = image_size(img)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64) + 0.5
    den = c[6] * xs + c[7] * ys + 1.0
    sx = (c[0] * xs + c[1] * ys + c[2]) / den - 0.5
    sy = (c[3] * xs + c[4] * ys + c[5]) / den - 0.5
    return _apply_grid(img, sx, sy, interpolation, fill)


def elastic_transform(
    img: Any,
    displacement: Any,
    interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
    fill: float | Sequence[float] | None = None,
) -> Any:
    """Move each pixel by ``displacement`` (``1 x H x W x 2``, in ``grid_sample``'s
    normalised [-1, 1] units, x then y), as torchvision's tensor ``elastic_transform``."""
    disp, _ = unwrap(displacement)
    h, w = image_size(img)
    if disp.shape != (1, h, w, 2):
        raise ValueError(
            f"Argument displacement shape should be (1, {h}, {w}, 2), but given {disp.shape}"
        )
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    sx = xs + disp[0, ..., 0].astype(np.float64) * w / 2
    sy = ys + disp[0, ..., 1].astype(np.float64) * h / 2
    return _apply_grid(img, sx, sy, interpolation, fill)


# PIL's resampling filter numbers of the interpolation modes lucid has (torchvision's table).
pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
}

_PILLOW_MISSING = (
    "to_pil_image needs Pillow, which lucid-data does not install by default: "
    "pip install 'lucid-data[images]' (or pip install pillow)"
)


def to_pil_image(pic: Any, mode: str | None = None) -> Any:
    """A ``C x H x W`` Tensor or an ``H x W x C`` numpy array as a PIL image, as torchvision's.

    Floating values are scaled by 255 to uint8 (unless ``mode='F'``); one channel gives mode
    ``"L"`` (``"I;16"``, ``"I"``, ``"F"`` for int16, int32, float32), two ``"LA"``, three
    ``"RGB"``, four ``"RGBA"``. Needs Pillow (the ``lucid-data[images]`` extra).
    """
    if isinstance(pic, lucid.Tensor):
        arr = pic.detach().cpu().numpy()
        if arr.ndim == 3:
            arr = np.transpose(arr, (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        arr = pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if arr.ndim == 2:
        arr = np.expand_dims(arr, 2)
    if arr.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {arr.ndim} dimensions.")
    if arr.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    if np.issubdtype(arr.dtype, np.floating) and mode != "F":
        arr = (arr * 255).astype(np.uint8)
    if arr.shape[2] == 1:
        arr = arr[:, :, 0]
        expected = {
            np.dtype(np.uint8): "L",
            np.dtype(np.int16): "I;16" if sys.byteorder == "little" else "I;16B",
            np.dtype(np.int32): "I",
            np.dtype(np.float32): "F",
        }.get(arr.dtype)
        if mode is not None and mode != expected:
            raise ValueError(
                f"Incorrect mode ({mode}) supplied for input type {arr.dtype}. Should be {expected}"
            )
        mode = expected
    else:
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}[
            arr.shape[2]
        ]
        if mode is not None and mode not in permitted:
            raise ValueError(
                f"Only modes {permitted} are supported for {arr.shape[2]}D inputs, got {mode}"
            )
        if mode is None and arr.dtype == np.uint8:
            mode = permitted[0]
    if mode is None:
        raise TypeError(f"Input type {arr.dtype} is not supported")
    try:
        from PIL import Image  # noqa: PLC0415 - the optional extra, imported on use
    except ImportError:
        raise ImportError(_PILLOW_MISSING) from None
    arr = np.ascontiguousarray(arr)
    img = Image.fromarray(arr)
    if img.mode != mode:
        # The bytes read in the asked mode (YCbCr, HSV, CMYK, RGBX, I;16), as fromarray(mode=).
        img = Image.frombytes(mode, (arr.shape[1], arr.shape[0]), arr.tobytes())
    return img
