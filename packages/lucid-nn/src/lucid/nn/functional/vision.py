"""Resampling and rearranging images: interpolate/upsample, pixel_shuffle.

Interpolation is separable: along each spatial dim the output gathers one (nearest) or two
(linear) input slices with ``index_select`` and blends them, all with lucid ops, so autograd
and double backward come for free. Source coordinates follow PyTorch's rules exactly
(``align_corners``, ``scale_factor`` vs ``size``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.kernels.reference import antialias_weights
from lucid.ops.shape import index_int

__all__ = [
    "interpolate",
    "pixel_shuffle",
    "pixel_unshuffle",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}
_INTERPOLATING = {**_LINEAR, "bicubic": 2}
_MODES = ("nearest", "nearest-exact", "area", *_INTERPOLATING, "lanczos")
_CUBIC_A = -0.75  # PyTorch's bicubic coefficient


def _output_sizes(
    x: Tensor, nd: int, size: Any, scale_factor: Any
) -> tuple[tuple[int, ...], list[float | None]]:
    in_size = x.shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined, not both or neither")
    if size is not None:
        one = index_int(size)
        sizes = (one,) * nd if one is not None else tuple(size)
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, "
                             f"but got input with spatial dimensions of {list(in_size)} and "
                             f"output size of {list(sizes)}. Please provide input tensor in "
                             "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")  # fmt: skip
        return tuple(int(s) for s in sizes), [None] * nd
    scales = (
        (float(scale_factor),) * nd
        if isinstance(scale_factor, (int, float))
        else tuple(float(s) for s in scale_factor)
    )
    if len(scales) != nd:
        raise ValueError(f"Input and scale_factor must have the same number of spatial "
                         f"dimensions, but got input with spatial dimensions of {list(in_size)} "
                         f"and scale_factor of shape {list(scales)}.")  # fmt: skip
    return tuple(math.floor(i * s) for i, s in zip(in_size, scales)), list(scales)


def _scale(in_len: int, out_len: int, align_corners: bool, scale: float | None) -> float:
    """PyTorch's area_pixel_compute_scale: source step per output step."""
    if align_corners:
        return (in_len - 1) / (out_len - 1) if out_len > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_len / out_len


def _nearest_index(in_len: int, out_len: int, scale: float, exact: bool) -> list[int]:
    offset = 0.5 if exact else 0.0
    return [min(math.floor((i + offset) * scale), in_len - 1) for i in range(out_len)]


def _linear_taps(
    in_len: int, out_len: int, scale: float, align_corners: bool
) -> tuple[list[int], list[int], list[float]]:
    i0s, i1s, lams = [], [], []
    for i in range(out_len):
        src = i * scale if align_corners else max((i + 0.5) * scale - 0.5, 0.0)
        i0 = min(int(src), in_len - 1)
        i1 = min(i0 + 1, in_len - 1)
        i0s.append(i0)
        i1s.append(i1)
        lams.append(src - i0 if i1 != i0 else 0.0)
    return i0s, i1s, lams


def cubic_weights(t: Any) -> tuple[Any, Any, Any, Any]:
    """Keys' cubic convolution weights of the 4 taps around a source point (PyTorch's A), for
    the fraction ``t`` in [0, 1) past the second tap (a float, or a Tensor of them)."""
    a = _CUBIC_A

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_along(y: Tensor, dim: int, in_len: int, out_len: int, scale: float,
                 align_corners: bool) -> Tensor:  # fmt: skip
    """Bicubic resampling along one dim: 4 gathered slices, blended (edges replicated)."""
    idx: list[list[int]] = [[], [], [], []]
    wts: list[list[float]] = [[], [], [], []]
    for i in range(out_len):
        src = i * scale if align_corners else (i + 0.5) * scale - 0.5  # not clamped at 0
        base = math.floor(src)
        for k, w in enumerate(cubic_weights(src - base)):
            idx[k].append(min(max(base - 1 + k, 0), in_len - 1))
            wts[k].append(w)
    out: Tensor | None = None
    for k in range(4):
        term = y.index_select(dim, _index(idx[k], y)) * _weights(wts[k], dim, y)
        out = term if out is None else out + term
    assert out is not None
    return out


def _index(values: list[int], like: Tensor) -> Tensor:
    out: Tensor = lucid.tensor(values, dtype=lucid.int64, device=like.device)
    return out


def _weights(values: list[float], dim: int, like: Tensor) -> Tensor:
    shape = [1] * like.ndim
    shape[dim] = len(values)
    out: Tensor = lucid.tensor(values, dtype=like.dtype, device=like.device).reshape(shape)
    return out


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``, as torch's.

    Modes: "nearest", "nearest-exact", "area" (adaptive average pooling), "linear" (3-D input),
    "bilinear" and "bicubic" (4-D), "trilinear" (5-D).

    >>> interpolate(lucid.randn(1, 3, 4, 4), scale_factor=2, mode="bilinear").shape
    (1, 3, 8, 8)
    """
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported; expected one "
                                  f"of {', '.join(_MODES)}")  # fmt: skip
    if antialias and (mode not in ("bilinear", "bicubic", "lanczos") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")  # fmt: skip
    if mode == "lanczos" and not antialias:
        raise ValueError("Lanczos mode requires antialias=True")
    nd = input.ndim - 2
    if nd < 1:
        raise ValueError(f"interpolate expects a batched input (N, C, ...), got size "
                         f"{list(input.shape)}")  # fmt: skip
    if mode in _INTERPOLATING and _INTERPOLATING[mode] != nd:
        want = _INTERPOLATING[mode] + 2
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {want}D input")
    if align_corners is not None and mode not in _INTERPOLATING:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")  # fmt: skip
    out_size, scales = _output_sizes(input, nd, size, scale_factor)
    if recompute_scale_factor:
        scales = [None] * nd
    if any(o <= 0 for o in out_size):
        raise ValueError(f"interpolate: output size {list(out_size)} must be positive (input "
                         f"size {list(input.shape)})")  # fmt: skip
    if mode == "area":
        return _area(input, out_size)
    if antialias:
        return _antialiased(input, out_size, scales, mode, bool(align_corners))
    if not input.dtype.is_floating_point and mode in _INTERPOLATING:
        return _resample_uint8(input, out_size, scales, mode, bool(align_corners))
    y = input
    for a in range(nd):
        y = _resample_along(y, 2 + a, out_size[a], scales[a], mode, bool(align_corners))
    return y


def _antialiased(
    x: Tensor, out_size: tuple[int, ...], scales: list[float | None], mode: str, corners: bool
) -> Tensor:
    """``interpolate(..., antialias=True)`` of a 4-D input: one resampling matrix a spatial
    dim, applied as a product (its gradient the transposed product); integer images computed
    in float32, rounded and clamped to their dtype."""
    y = x if x.dtype.is_floating_point else x.to(lucid.float32)
    for a in range(2):
        dim, in_len = 2 + a, y.shape[2 + a]
        scale = _scale(in_len, out_size[a], corners, scales[a])
        m = antialias_weights(np, in_len, out_size[a], scale, mode)
        mt = lucid.tensor(m.T, dtype=y.dtype, device=y.device)
        y = (y.movedim(dim, -1) @ mt).movedim(-1, dim)
    if x.dtype.is_floating_point:
        return y
    info = lucid.iinfo(x.dtype)
    return y.round().clamp(info.min, info.max).to(x.dtype)


def _resample_along(
    y: Tensor, dim: int, out_len: int, scale_factor: float | None, mode: str, corners: bool
) -> Tensor:
    """Resample ``y`` along one dim to ``out_len`` (the other dims are left as they are)."""
    in_len = y.shape[dim]
    if in_len == out_len and scale_factor in (None, 1.0):
        return y
    scale = _scale(in_len, out_len, corners and mode in _INTERPOLATING, scale_factor)
    if mode == "bicubic":
        return _cubic_along(y, dim, in_len, out_len, scale, corners)
    if mode in _LINEAR:
        i0, i1, lam = _linear_taps(in_len, out_len, scale, corners)
        w1 = _weights(lam, dim, y)
        lo = y.index_select(dim, _index(i0, y))
        hi = y.index_select(dim, _index(i1, y))
        out: Tensor = lo + (hi - lo) * w1
        return out
    idx = _nearest_index(in_len, out_len, scale, mode == "nearest-exact")
    return y.index_select(dim, _index(idx, y))


def _resample_uint8(
    x: Tensor, out_size: tuple[int, ...], scales: list[float | None], mode: str, corners: bool
) -> Tensor:
    """torch's uint8 image resampling: one pass per dim, width first, each computed in float
    and rounded (and clamped) back to uint8."""
    if x.dtype != lucid.uint8 or mode not in ("bilinear", "bicubic"):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented for "
                                  f"{x.dtype.name} input (uint8 supports bilinear and bicubic; "
                                  f"convert to a floating point dtype)")  # fmt: skip
    y = x.float()
    for a in reversed(range(x.ndim - 2)):
        y = _resample_along(y, 2 + a, out_size[a], scales[a], mode, corners)
        y = y.round().clamp(0, 255)
    return y.to(lucid.uint8)


def _area(x: Tensor, out_size: tuple[int, ...]) -> Tensor:
    from lucid.nn.functional import pooling

    pool = (pooling.adaptive_avg_pool1d, pooling.adaptive_avg_pool2d,
            pooling.adaptive_avg_pool3d)[x.ndim - 3]  # fmt: skip
    return pool(x, out_size)


def upsample(
    input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
    align_corners: bool | None = None
) -> Tensor:  # fmt: skip
    """Deprecated alias of :func:`interpolate` (kept for PyTorch compatibility)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated alias of ``interpolate(..., mode="nearest")``."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated alias of ``interpolate(..., mode="bilinear", align_corners=True)``."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C * r^2, H, W) -> (*, C, H * r, W * r)``, as torch's.

    >>> pixel_shuffle(lucid.randn(1, 8, 3, 3), 2).shape
    (1, 2, 6, 6)
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")  # fmt: skip
    *lead, c, h, w = input.shape
    if r <= 0 or c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")  # fmt: skip
    n = len(lead)
    y = input.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    out: Tensor = y.reshape(*lead, c // (r * r), h * r, w * r)
    return out


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H * r, W * r) -> (*, C * r^2, H, W)``, the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")  # fmt: skip
    *lead, c, h, w = input.shape
    if r <= 0 or h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but input.size(-2)={h} and input.size(-1)={w} "
                           f"are not divisible by {r}")  # fmt: skip
    n = len(lead)
    y = input.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    out: Tensor = y.reshape(*lead, c * r * r, h // r, w // r)
    return out
