"""``transforms.v2``' transforms of detection samples (an image with its ``BoundingBoxes``,
``Mask`` and ``KeyPoints``) and the other v2-only ones: box and keypoint metadata, SSD's
zoom-out and IoU crop, the multi-scale resizes, photometric distortion, JPEG, temporal
subsampling and ``ToPILImage``; as torchvision 0.28's."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

from .. import tv_tensors
from .._pil import is_pil_image
from .._rng import numpy_rng
from ..io import decode_jpeg, encode_jpeg
from ..ops import box_convert, box_iou
from . import functional as F
from ._v2_base import (
    Transform,
    _box_fmt,
    _flatten,
    _is_plain_image,
    _plain,
    _RandomApplyTransform,
    _rewrap,
    _unflatten,
    clamp_boxes,
    crop,
    get_bounding_boxes,
    get_keypoints,
    has_all,
    has_any,
    image_only,
    is_pure_tensor,
    pad,
    query_chw,
    query_size,
    resize,
)

__all__ = [
    "ClampBoundingBoxes",
    "ClampKeyPoints",
    "ConvertBoundingBoxFormat",
    "JPEG",
    "RandomIoUCrop",
    "RandomPhotometricDistort",
    "RandomResize",
    "RandomShortestSize",
    "RandomZoomOut",
    "SanitizeBoundingBoxes",
    "SanitizeKeyPoints",
    "ScaleJitter",
    "SetClampingMode",
    "ToPILImage",
    "UniformTemporalSubsample",
]


class ConvertBoundingBoxFormat(Transform):
    """Boxes converted to ``format`` (``"XYXY"``, ``"XYWH"``, ``"CXCYWH"`` or the enum)."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, format: str | tv_tensors.BoundingBoxFormat) -> None:
        self.format = format

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        new = tv_tensors._box_format(self.format)
        if tv_tensors.is_rotated_bounding_format(new):
            raise NotImplementedError(
                f"lucid's box transforms handle axis-aligned boxes only, got {new}"
            )
        out = box_convert(inpt.as_tensor(), _box_fmt(inpt), new.value.lower())
        return tv_tensors.wrap(out.to(inpt.dtype), like=inpt, format=new)


_CLAMP_MODES = ("soft", "hard", "auto", None)


class ClampBoundingBoxes(Transform):
    """Boxes clamped to their canvas (x to ``[0, W]``, y to ``[0, H]``); ``clamping_mode``
    ``"auto"`` uses each box tensor's own ``clamping_mode``, None leaves them."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, clamping_mode: str | None = "auto") -> None:
        if clamping_mode not in _CLAMP_MODES:
            raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
        self.clamping_mode = clamping_mode

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        mode = inpt.clamping_mode if self.clamping_mode == "auto" else self.clamping_mode
        out = clamp_boxes(inpt.as_tensor(), _box_fmt(inpt), inpt.canvas_size, mode)
        return tv_tensors.wrap(out, like=inpt)


class ClampKeyPoints(Transform):
    """Keypoints clamped to their canvas: x to ``[0, W - 1]``, y to ``[0, H - 1]``."""

    _transformed_types = (tv_tensors.KeyPoints,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        plain = inpt.as_tensor()
        h, w = inpt.canvas_size
        pts = plain if plain.is_floating_point() else plain.float()
        x = pts[..., 0].clamp(min=0, max=w - 1)
        y = pts[..., 1].clamp(min=0, max=h - 1)
        return tv_tensors.wrap(lucid.stack((x, y), dim=-1).to(plain.dtype), like=inpt)


class SetClampingMode(Transform):
    """Set the boxes' ``clamping_mode`` (``"soft"``, ``"hard"`` or None) for later transforms."""

    _transformed_types = (tv_tensors.BoundingBoxes,)

    def __init__(self, clamping_mode: str | None) -> None:
        if clamping_mode not in (None, "soft", "hard"):
            raise ValueError(f"clamping_mode must be soft, hard or None, got {clamping_mode}")
        self.clamping_mode = clamping_mode

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return tv_tensors.wrap(
            inpt.as_tensor().clone(), like=inpt, clamping_mode=self.clamping_mode
        )


def _find_labels_default_heuristic(inputs: Any) -> Any:
    # torchvision's: the second item of a pair (a labels tensor, or a dict with a "labels"-like
    # key), or a dict's "labels"-like key.
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if is_pure_tensor(inputs):
        return inputs
    if not isinstance(inputs, Mapping):
        raise ValueError(
            "When using the default labels_getter, the input passed to forward must be a "
            "dictionary or a two-tuple whose second item is a dictionary or a tensor, but got "
            f"{inputs} instead."
        )
    key = next((k for k in inputs if k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs if "label" in k.lower()), None)
    if key is None:
        raise ValueError(
            "Could not infer where the labels are in the sample. Try passing a callable as the "
            "labels_getter parameter?If there are no labels in the sample by design, pass "
            "labels_getter=None."
        )
    return inputs[key]


def _parse_labels_getter(labels_getter: Any) -> Callable[[Any], Any]:
    if labels_getter == "default":
        return _find_labels_default_heuristic
    if callable(labels_getter):
        return labels_getter  # type: ignore[no-any-return]
    if labels_getter is None:
        return lambda _: None
    raise ValueError(
        f"labels_getter should either be 'default', a callable, or None, but got {labels_getter}."
    )


class _Sanitize(Transform):
    """Shared by SanitizeBoundingBoxes and SanitizeKeyPoints: drop the invalid entries of the
    boxes (keypoints), masks and labels along their first dimension."""

    _kinds: tuple[type, ...] = ()
    _labels_getter: Callable[[Any], Any]

    def _labels(self, inputs: Any) -> tuple[Tensor, ...] | None:
        labels = self._labels_getter(inputs)
        if labels is None:
            return None
        msg = "The labels in the input to forward() must be a tensor or None, got {type} instead."
        if isinstance(labels, Tensor):
            return (labels,)
        if isinstance(labels, (tuple, list)):
            for entry in labels:
                if not isinstance(entry, Tensor):
                    raise ValueError(msg.format(type=type(entry)))
            return tuple(labels)
        raise ValueError(msg.format(type=type(labels)))

    def _valid(self, flat_inputs: list[Any], labels: tuple[Tensor, ...] | None) -> np.ndarray:
        raise NotImplementedError

    def forward(self, *inputs: Any) -> Any:
        sample = inputs if len(inputs) > 1 else inputs[0]
        labels = self._labels(sample)
        flat_inputs, spec = _flatten(sample)
        valid = self._valid(flat_inputs, labels)
        params = {"valid": valid, "labels": labels}
        return _unflatten([self.transform(i, params) for i in flat_inputs], spec)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        labels = params["labels"]
        is_label = labels is not None and any(inpt is label for label in labels)
        if not (is_label or isinstance(inpt, self._kinds)):
            return inpt
        idx = lucid.tensor(np.nonzero(params["valid"])[0])
        plain = _plain(inpt)
        if plain.ndim == 0 or plain.shape[0] != params["valid"].shape[0]:
            return inpt
        out = plain[idx]
        return out if is_label else _rewrap(out, inpt)


class SanitizeBoundingBoxes(_Sanitize):
    """Remove degenerate boxes (smaller than ``min_size`` on a side or ``min_area`` in area,
    outside the canvas) and, at the same positions, the masks and labels (found by
    ``labels_getter``: ``"default"`` looks for a ``"labels"`` key)."""

    _kinds = (tv_tensors.BoundingBoxes, tv_tensors.Mask)

    def __init__(
        self,
        min_size: float = 1.0,
        min_area: float = 1.0,
        labels_getter: Callable[[Any], Any] | str | None = "default",
    ) -> None:
        if min_size < 1:
            raise ValueError(f"min_size must be >= 1, got {min_size}.")
        if min_area < 1:
            raise ValueError(f"min_area must be >= 1, got {min_area}.")
        self.min_size = min_size
        self.min_area = min_area
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def _valid(self, flat_inputs: list[Any], labels: tuple[Tensor, ...] | None) -> np.ndarray:
        boxes = get_bounding_boxes(flat_inputs)
        for label in labels or ():
            if boxes.shape[0] != label.shape[0]:
                raise ValueError(
                    f"Number of boxes (shape={tuple(boxes.shape)}) and must match the number of "
                    f"labels.Found labels with shape={tuple(label.shape)})."
                )
        xyxy = box_convert(boxes.as_tensor(), _box_fmt(boxes), "xyxy").numpy()
        ws, hs = xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]
        h, w = boxes.canvas_size
        valid = (ws >= self.min_size) & (hs >= self.min_size) & (xyxy >= 0).all(axis=-1)
        valid &= ws * hs >= self.min_area
        valid &= (xyxy[:, 0] <= w) & (xyxy[:, 2] <= w) & (xyxy[:, 1] <= h) & (xyxy[:, 3] <= h)
        return np.asarray(valid, dtype=bool)


class SanitizeKeyPoints(_Sanitize):
    """Remove keypoints (or whole groups of them, for ``[N, K, 2]``) outside the canvas and,
    at the same positions, the labels ``labels_getter`` finds (none by default)."""

    _kinds = (tv_tensors.KeyPoints,)

    def __init__(self, labels_getter: Callable[[Any], Any] | str | None = None) -> None:
        self.labels_getter = labels_getter
        self._labels_getter = _parse_labels_getter(labels_getter)

    def _valid(self, flat_inputs: list[Any], labels: tuple[Tensor, ...] | None) -> np.ndarray:
        points = get_keypoints(flat_inputs)
        for label in labels or ():
            if points.shape[0] != label.shape[0]:
                raise ValueError(
                    f"Number of kepyoints (shape={tuple(points.shape)}) must match the number "
                    f"of labels.Found labels with shape={tuple(label.shape)})."
                )
        h, w = points.canvas_size
        p = points.as_tensor().numpy()
        x, y = p[..., 0], p[..., 1]
        valid = (x >= 0) & (x < w) & (y >= 0) & (y < h)
        if valid.ndim > 1:
            valid = valid.reshape(valid.shape[0], -1).all(axis=1)
        return np.asarray(valid, dtype=bool)


def _fill_arg(fill: Any) -> dict[Any, Any]:
    def check(v: Any) -> None:
        if v is not None and not isinstance(v, (int, float, tuple, list)):
            raise TypeError(
                "Got inappropriate fill arg, only Numbers, tuples, lists and dicts are allowed."
            )

    if isinstance(fill, dict):
        for v in fill.values():
            check(v)
        return dict(fill)
    check(fill)
    return {"others": fill}


def _get_fill(fill: dict[Any, Any], inpt: Any) -> Any:
    for kind in type(inpt).__mro__:
        if kind in fill:
            return fill[kind]
    return fill.get("others")


class RandomZoomOut(_RandomApplyTransform):
    """SSD's zoom out: place the sample on a canvas ``r`` times larger (``r`` uniform in
    ``side_range``) at a random position, the rest filled with ``fill`` (a number, one per
    channel, or a dict by tv_tensor type), with probability ``p``."""

    def __init__(
        self,
        fill: Any = 0,
        side_range: Sequence[float] = (1.0, 4.0),
        p: float = 0.5,
    ) -> None:
        super().__init__(p=p)
        self.fill = fill
        self._fill = _fill_arg(fill)
        if not isinstance(side_range, Sequence) or len(side_range) != 2:
            raise ValueError(f"side_range should be a sequence of length 2, got {side_range}")
        self.side_range = side_range
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError(f"Invalid side range provided {side_range}.")

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_h, orig_w = query_size(flat_inputs)
        rng = numpy_rng()
        r = self.side_range[0] + rng.random() * (self.side_range[1] - self.side_range[0])
        canvas_width, canvas_height = int(orig_w * r), int(orig_h * r)
        r2 = rng.random(2)
        left = int((canvas_width - orig_w) * r2[0])
        top = int((canvas_height - orig_h) * r2[1])
        right = canvas_width - (left + orig_w)
        bottom = canvas_height - (top + orig_h)
        return {"padding": [left, top, right, bottom]}

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return pad(inpt, params["padding"], fill=_get_fill(self._fill, inpt))


class RandomIoUCrop(Transform):
    """SSD's random crop: a crop (scale in ``[min_scale, max_scale]``, aspect ratio in
    ``[min_aspect_ratio, max_aspect_ratio]``) that keeps the centre of some box and overlaps
    a kept box with IoU at least a threshold drawn from ``sampler_options`` (``>= 1``: no
    crop); boxes whose centres fall outside become zeros (follow with
    ``SanitizeBoundingBoxes``). Needs an image and boxes."""

    def __init__(
        self,
        min_scale: float = 0.3,
        max_scale: float = 1.0,
        min_aspect_ratio: float = 0.5,
        max_aspect_ratio: float = 2.0,
        sampler_options: list[float] | None = None,
        trials: int = 40,
    ) -> None:
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.min_aspect_ratio = min_aspect_ratio
        self.max_aspect_ratio = max_aspect_ratio
        if sampler_options is None:
            sampler_options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
        self.options = sampler_options
        self.trials = trials

    def check_inputs(self, flat_inputs: list[Any]) -> None:
        if not (
            has_all(flat_inputs, tv_tensors.BoundingBoxes)
            and has_any(flat_inputs, _is_plain_image, tv_tensors.Image, is_pure_tensor)
        ):
            raise TypeError(
                f"{type(self).__name__}() requires input sample to contain tensor or PIL images "
                "and bounding boxes. Sample can also contain masks."
            )

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_h, orig_w = query_size(flat_inputs)
        boxes = get_bounding_boxes(flat_inputs)
        xyxy_all = box_convert(boxes.as_tensor(), _box_fmt(boxes), "xyxy")
        xyxy_np = xyxy_all.numpy().astype(np.float64)
        rng = numpy_rng()
        while True:
            min_jaccard_overlap = self.options[int(rng.integers(len(self.options)))]
            if min_jaccard_overlap >= 1.0:  # the leave-as-is option
                return {}
            for _ in range(self.trials):
                r = self.min_scale + (self.max_scale - self.min_scale) * rng.random(2)
                new_w, new_h = int(orig_w * r[0]), int(orig_h * r[1])
                if new_h == 0 or not (
                    self.min_aspect_ratio <= new_w / new_h <= self.max_aspect_ratio
                ):
                    continue
                r = rng.random(2)
                left = int((orig_w - new_w) * r[0])
                top = int((orig_h - new_h) * r[1])
                right, bottom = left + new_w, top + new_h
                if left == right or top == bottom:
                    continue
                cx = 0.5 * (xyxy_np[..., 0] + xyxy_np[..., 2])
                cy = 0.5 * (xyxy_np[..., 1] + xyxy_np[..., 3])
                within = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not within.any():
                    continue
                crop_box = lucid.tensor([[left, top, right, bottom]], dtype=xyxy_all.dtype)
                kept = xyxy_all[lucid.tensor(np.nonzero(within)[0])]
                if float(box_iou(kept, crop_box).max()) < min_jaccard_overlap:
                    continue
                return {
                    "top": top,
                    "left": left,
                    "height": new_h,
                    "width": new_w,
                    "is_within_crop_area": within,
                }

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if len(params) < 1:
            return inpt
        output = crop(inpt, params["top"], params["left"], params["height"], params["width"])
        if isinstance(output, tv_tensors.BoundingBoxes):
            keep = lucid.tensor(params["is_within_crop_area"].astype(output.numpy().dtype))
            plain = output.as_tensor() * keep[:, None]
            output = tv_tensors.wrap(plain, like=output)
        return output


class _ResizeTransform(Transform):
    """Shared by the random resizes: ``make_params`` picks ``size``; every input is resized."""

    interpolation: Any
    antialias: bool | None

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return resize(inpt, params["size"], self.interpolation, antialias=self.antialias)


class ScaleJitter(_ResizeTransform):
    """Large-scale jitter (Ghiasi et al., 2021): resize so the image fits ``target_size =
    (width, height)``, times a scale uniform in ``scale_range``."""

    def __init__(
        self,
        target_size: tuple[int, int],
        scale_range: tuple[float, float] = (0.1, 2.0),
        interpolation: F.InterpolationMode | str | int = "bilinear",
        antialias: bool | None = True,
    ) -> None:
        self.target_size = target_size
        self.scale_range = scale_range
        self.interpolation = interpolation
        self.antialias = antialias

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_height, orig_width = query_size(flat_inputs)
        lo, hi = self.scale_range
        scale = lo + numpy_rng().random() * (hi - lo)
        r = min(self.target_size[1] / orig_height, self.target_size[0] / orig_width) * scale
        return {"size": (int(orig_height * r), int(orig_width * r))}


class RandomShortestSize(_ResizeTransform):
    """Resize the shorter side to one of ``min_size`` (drawn at random), the longer side at
    most ``max_size``, keeping the aspect ratio."""

    def __init__(
        self,
        min_size: list[int] | tuple[int] | int,
        max_size: int | None = None,
        interpolation: F.InterpolationMode | str | int = "bilinear",
        antialias: bool | None = True,
    ) -> None:
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        self.interpolation = interpolation
        self.antialias = antialias

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        orig_height, orig_width = query_size(flat_inputs)
        min_size = self.min_size[int(numpy_rng().integers(len(self.min_size)))]
        r = min_size / min(orig_height, orig_width)
        if self.max_size is not None:
            r = min(r, self.max_size / max(orig_height, orig_width))
        return {"size": (int(orig_height * r), int(orig_width * r))}


class RandomResize(_ResizeTransform):
    """Resize the shorter side to a size drawn uniformly from ``[min_size, max_size)``."""

    def __init__(
        self,
        min_size: int,
        max_size: int,
        interpolation: F.InterpolationMode | str | int = "bilinear",
        antialias: bool | None = True,
    ) -> None:
        self.min_size = min_size
        self.max_size = max_size
        self.interpolation = interpolation
        self.antialias = antialias

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        return {"size": [int(numpy_rng().integers(self.min_size, self.max_size))]}


def _permute_channels(img: Any, permutation: np.ndarray) -> Any:
    chw, back = F._as_chw(img)
    return back(np.ascontiguousarray(chw[..., permutation, :, :]))


class RandomPhotometricDistort(Transform):
    """SSD's photometric distortion: brightness, contrast (before or after the rest),
    saturation and hue each changed with probability ``p`` by a factor uniform in its range,
    and the channels permuted with probability ``p``. Boxes, masks and keypoints pass."""

    def __init__(
        self,
        brightness: tuple[float, float] = (0.875, 1.125),
        contrast: tuple[float, float] = (0.5, 1.5),
        saturation: tuple[float, float] = (0.5, 1.5),
        hue: tuple[float, float] = (-0.05, 0.05),
        p: float = 0.5,
    ) -> None:
        self.brightness = brightness
        self.contrast = contrast
        self.hue = hue
        self.saturation = saturation
        self.p = p

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        num_channels, _, _ = query_chw(flat_inputs)
        rng = numpy_rng()
        params: dict[str, Any] = {}
        for key, (lo, hi) in (
            ("brightness_factor", self.brightness),
            ("contrast_factor", self.contrast),
            ("saturation_factor", self.saturation),
            ("hue_factor", self.hue),
        ):
            params[key] = float(rng.uniform(lo, hi)) if rng.random() < self.p else None
        params["contrast_before"] = bool(rng.random() < 0.5)
        permute = rng.random() < self.p
        params["channel_permutation"] = rng.permutation(num_channels) if permute else None
        return params

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        steps: list[tuple[Callable[..., Any], Any]] = []
        if params["brightness_factor"] is not None:
            steps.append((F.adjust_brightness, params["brightness_factor"]))
        if params["contrast_factor"] is not None and params["contrast_before"]:
            steps.append((F.adjust_contrast, params["contrast_factor"]))
        if params["saturation_factor"] is not None:
            steps.append((F.adjust_saturation, params["saturation_factor"]))
        if params["hue_factor"] is not None:
            steps.append((F.adjust_hue, params["hue_factor"]))
        if params["contrast_factor"] is not None and not params["contrast_before"]:
            steps.append((F.adjust_contrast, params["contrast_factor"]))
        if params["channel_permutation"] is not None:
            steps.append((_permute_channels, params["channel_permutation"]))
        for fn, arg in steps:
            inpt = image_only(fn, inpt, arg)
        return inpt


def _jpeg(img: Any, quality: int) -> Any:
    chw, back = F._as_chw(img)
    if chw.dtype != np.uint8:
        raise TypeError(f"Input tensor dtype should be uint8, got {chw.dtype}.")
    flat = chw.reshape((-1, *chw.shape[-3:]))
    out = []
    for x in flat:
        encoded = encode_jpeg(lucid.from_numpy(np.ascontiguousarray(x)), quality=quality)
        assert isinstance(encoded, Tensor)  # one image in, one file out
        decoded = decode_jpeg(encoded)
        assert isinstance(decoded, Tensor)
        out.append(decoded.numpy())
    return back(np.stack(out).reshape(chw.shape))


class JPEG(Transform):
    """JPEG compression artefacts: encode and decode uint8 images at a quality drawn from
    ``quality`` (an int or a ``[min, max]`` range, 1 to 100). Needs Pillow."""

    def __init__(self, quality: int | Sequence[int]) -> None:
        if isinstance(quality, int):
            if isinstance(quality, bool):
                raise TypeError("quality can't be bool")
            quality = [quality, quality]
        elif not isinstance(quality, Sequence) or len(quality) != 2:
            raise TypeError(f"quality should be a sequence of length 2, got {quality}")
        if not (
            isinstance(quality[0], int)
            and isinstance(quality[1], int)
            and 1 <= quality[0] <= quality[1] <= 100
        ):
            raise ValueError(f"quality must be an integer from 1 to 100, got quality ={quality}")
        self.quality = quality

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        return {"quality": int(numpy_rng().integers(self.quality[0], self.quality[1] + 1))}

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return image_only(_jpeg, inpt, params["quality"])


class UniformTemporalSubsample(Transform):
    """``num_samples`` evenly spaced frames of a video ``[..., T, C, H, W]`` (nearest frames,
    repeated, when there are fewer)."""

    _transformed_types = (Tensor,)

    def __init__(self, num_samples: int) -> None:
        self.num_samples = num_samples

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints, tv_tensors.Mask)):
            return inpt
        plain = _plain(inpt)
        if plain.ndim < 4:
            raise ValueError(f"Expected a video [..., T, C, H, W], got shape {tuple(plain.shape)}")
        t_max = plain.shape[-4] - 1
        idx = np.linspace(0, t_max, self.num_samples, dtype=np.float32).astype(np.int64)
        return _rewrap(plain.index_select(-4, lucid.tensor(idx, device=plain.device)), inpt)


class ToPILImage(Transform):
    """An image (a ``C x H x W`` Tensor or ``tv_tensors.Image``, a numpy array) as a PIL image
    of ``mode``; needs Pillow (the ``lucid-data[images]`` extra)."""

    _transformed_types = (tv_tensors.Image, np.ndarray, is_pure_tensor)

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if is_pil_image(inpt):
            return inpt
        return F.to_pil_image(_plain(inpt), mode=self.mode)
