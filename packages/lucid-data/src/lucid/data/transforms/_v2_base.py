"""The machinery of ``transforms.v2``: the ``Transform`` base class (it flattens a sample of
nested tuples, lists and dicts, draws one set of parameters, and transforms each input by its
kind), the sample queries (``query_size``, ``query_chw``, ``has_any``...), and the kernels that
resize, crop and pad every kind of input: images (``tv_tensors.Image``, a pure Tensor, a uint8
numpy image, a PIL image), videos, masks, bounding boxes and keypoints."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

from .. import tv_tensors
from .._pil import is_pil_image
from .._rng import numpy_rng
from ..ops import box_convert
from . import functional as F

__all__ = [
    "Transform",
    "check_type",
    "get_bounding_boxes",
    "get_keypoints",
    "has_all",
    "has_any",
    "query_chw",
    "query_size",
]

TypeOrCheck = type | Callable[[Any], bool]


# -- pytrees: tuples, lists and dicts of leaves ---------------------------------------------------


def _flatten(obj: Any) -> tuple[list[Any], Any]:
    if isinstance(obj, (tuple, list)):
        leaves: list[Any] = []
        specs = []
        for item in obj:
            sub, spec = _flatten(item)
            leaves += sub
            specs.append((len(sub), spec))
        return leaves, (type(obj), specs)
    if isinstance(obj, Mapping):
        leaves = []
        keyed = []
        for key, item in obj.items():
            sub, spec = _flatten(item)
            leaves += sub
            keyed.append((key, len(sub), spec))
        return leaves, (dict, keyed)
    return [obj], None


def _unflatten(leaves: list[Any], spec: Any) -> Any:
    if spec is None:
        return leaves[0]
    kind, specs = spec
    if kind is dict:
        out: dict[Any, Any] = {}
        pos = 0
        for key, n, sub in specs:
            out[key] = _unflatten(leaves[pos : pos + n], sub)
            pos += n
        return out
    items = []
    pos = 0
    for n, sub in specs:
        items.append(_unflatten(leaves[pos : pos + n], sub))
        pos += n
    if kind is list:
        return items
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


# -- what an input is ---------------------------------------------------------------------------


def is_pure_tensor(inpt: Any) -> bool:
    """A Tensor that is not a tv_tensor."""
    return isinstance(inpt, Tensor) and not isinstance(inpt, tv_tensors.TVTensor)


def _is_plain_image(inpt: Any) -> bool:
    # What lucid takes for torchvision's PIL images: a PIL image, or a uint8 numpy image.
    return is_pil_image(inpt) or (isinstance(inpt, np.ndarray) and inpt.dtype == np.uint8)


def check_type(obj: Any, types_or_checks: tuple[TypeOrCheck, ...]) -> bool:
    """Whether ``obj`` is an instance of one of the types or passes one of the checks."""
    for type_or_check in types_or_checks:
        if (
            isinstance(obj, type_or_check)
            if isinstance(type_or_check, type)
            else type_or_check(obj)
        ):
            return True
    return False


def has_any(flat_inputs: list[Any], *types_or_checks: TypeOrCheck) -> bool:
    """Whether some input is of one of the types (or passes one of the checks)."""
    return any(check_type(inpt, types_or_checks) for inpt in flat_inputs)


def has_all(flat_inputs: list[Any], *types_or_checks: TypeOrCheck) -> bool:
    """Whether each of the types (or checks) matches some input."""
    return all(any(check_type(inpt, (tc,)) for inpt in flat_inputs) for tc in types_or_checks)


def get_bounding_boxes(flat_inputs: list[Any]) -> tv_tensors.BoundingBoxes:
    """The (first) ``BoundingBoxes`` of the sample."""
    for inpt in flat_inputs:
        if isinstance(inpt, tv_tensors.BoundingBoxes):
            return inpt
    raise ValueError("No bounding boxes were found in the sample")


def get_keypoints(flat_inputs: list[Any]) -> tv_tensors.KeyPoints:
    """The (first) ``KeyPoints`` of the sample."""
    for inpt in flat_inputs:
        if isinstance(inpt, tv_tensors.KeyPoints):
            return inpt
    raise ValueError("No keypoints were found in the sample")


def _chw(inpt: Any) -> tuple[int, int, int]:
    if isinstance(inpt, tv_tensors.Video):
        c, h, w = inpt.shape[-3:]
        return int(c), int(h), int(w)
    c, h, w = F.get_dimensions(inpt)
    return c, h, w


def _size(inpt: Any) -> tuple[int, int]:
    if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints)):
        return inpt.canvas_size
    if isinstance(inpt, (tv_tensors.Mask, tv_tensors.Video)):
        return int(inpt.shape[-2]), int(inpt.shape[-1])
    return _chw(inpt)[1:]


def _sequence_to_str(items: Sequence[Any]) -> str:
    return ", ".join(str(tuple(i)) for i in items)


def query_chw(flat_inputs: list[Any]) -> tuple[int, int, int]:
    """``(channels, height, width)`` of the sample's images and videos (they must agree)."""
    chws = {
        _chw(inpt)
        for inpt in flat_inputs
        if check_type(inpt, (is_pure_tensor, tv_tensors.Image, _is_plain_image, tv_tensors.Video))
    }
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError(
            f"Found multiple CxHxW dimensions in the sample: {_sequence_to_str(sorted(chws))}"
        )
    return chws.pop()


def query_size(flat_inputs: list[Any]) -> tuple[int, int]:
    """``(height, width)`` of the sample's images, videos, masks, boxes and keypoints (they
    must agree)."""
    kinds: tuple[TypeOrCheck, ...] = (
        is_pure_tensor,
        tv_tensors.Image,
        _is_plain_image,
        tv_tensors.Video,
        tv_tensors.Mask,
        tv_tensors.BoundingBoxes,
        tv_tensors.KeyPoints,
    )
    sizes = {_size(inpt) for inpt in flat_inputs if check_type(inpt, kinds)}
    if not sizes:
        raise TypeError("No image, video, mask, bounding box of keypoint was found in the sample")
    if len(sizes) > 1:
        raise ValueError(
            f"Found multiple HxW dimensions in the sample: {_sequence_to_str(sorted(sizes))}"
        )
    return sizes.pop()


# -- the base class -------------------------------------------------------------------------------


class Transform:
    """Base class of the v2 transforms (and of your own): override :meth:`make_params` (one
    draw per call, from the inputs that will be transformed) and :meth:`transform` (one input
    and those parameters). Calling it with any nesting of tuples, lists and dicts transforms
    each leaf of the kinds in ``_transformed_types`` and passes the rest through. A pure
    Tensor is taken for the image only when the sample has no ``Image``, ``Video`` or PIL /
    uint8 numpy image, and only the first one. (torchvision's is an ``nn.Module``; lucid-data
    does not depend on lucid-nn, so this is a plain callable with ``forward``.)"""

    _transformed_types: tuple[TypeOrCheck, ...] = (Tensor, np.ndarray, is_pil_image)

    def check_inputs(self, flat_inputs: list[Any]) -> None:
        """Raise on a sample this transform cannot handle (nothing by default)."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        """The random parameters of one call (none by default)."""
        return {}

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        """``inpt`` transformed with ``params``."""
        raise NotImplementedError

    def _needs_transform_list(self, flat_inputs: list[Any]) -> list[bool]:
        transform_pure_tensor = not has_any(
            flat_inputs, tv_tensors.Image, tv_tensors.Video, _is_plain_image
        )
        needs = []
        for inpt in flat_inputs:
            need = check_type(inpt, self._transformed_types)
            if need and is_pure_tensor(inpt):
                need, transform_pure_tensor = transform_pure_tensor, False
            needs.append(need)
        return needs

    def forward(self, *inputs: Any) -> Any:
        """Transform a sample (one argument, or several taken as a tuple)."""
        flat_inputs, spec = _flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat_inputs)
        needs = self._needs_transform_list(flat_inputs)
        params = self.make_params([i for i, n in zip(flat_inputs, needs, strict=True) if n])
        flat_outputs = [
            self.transform(i, params) if n else i for i, n in zip(flat_inputs, needs, strict=True)
        ]
        return _unflatten(flat_outputs, spec)

    def __call__(self, *inputs: Any) -> Any:
        return self.forward(*inputs)

    def extra_repr(self) -> str:
        """The public scalar attributes, as torchvision's repr shows them."""
        extra = []
        for name, value in self.__dict__.items():
            if name.startswith("_") or name == "training":
                continue
            if isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)):
                extra.append(f"{name}={value}")
        return ", ".join(extra)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.extra_repr()})"


class _RandomApplyTransform(Transform):
    """A transform applied to the whole sample with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def forward(self, *inputs: Any) -> Any:
        sample = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, _ = _flatten(sample)
        self.check_inputs(flat_inputs)
        if numpy_rng().random() >= self.p:
            return sample
        return super().forward(*inputs)


# -- kernels: each kind of input ------------------------------------------------------------------


def _rewrap(out: Any, like: Any) -> Any:
    # A kernel's result in the tv_tensor class (and metadata) of its input.
    if isinstance(like, tv_tensors.TVTensor) and isinstance(out, Tensor):
        return tv_tensors.wrap(out, like=like)
    return out


def _plain(inpt: Any) -> Any:
    return inpt.as_tensor() if isinstance(inpt, tv_tensors.TVTensor) else inpt


def _box_fmt(boxes: tv_tensors.BoundingBoxes) -> str:
    if tv_tensors.is_rotated_bounding_format(boxes.format):
        raise NotImplementedError(
            f"lucid's box transforms handle axis-aligned boxes only, got {boxes.format}"
        )
    return boxes.format.value.lower()


def clamp_boxes(
    boxes: Tensor, fmt: str, canvas_size: tuple[int, int], clamping_mode: str | None
) -> Tensor:
    """Boxes (``fmt``) clamped to ``canvas_size``: x to ``[0, W]``, y to ``[0, H]`` (no change
    when ``clamping_mode`` is None)."""
    if clamping_mode is None:
        return boxes.clone()
    in_dtype = boxes.dtype
    xyxy = box_convert(boxes if boxes.is_floating_point() else boxes.float(), fmt, "xyxy")
    h, w = canvas_size
    x = xyxy[..., 0::2].clamp(min=0, max=w)
    y = xyxy[..., 1::2].clamp(min=0, max=h)
    xyxy = lucid.stack((x[..., 0], y[..., 0], x[..., 1], y[..., 1]), dim=-1)
    return box_convert(xyxy, "xyxy", fmt).to(in_dtype)


def _shift_boxes(boxes: Tensor, fmt: str, dx: float, dy: float) -> Tensor:
    shift = [dx, dy, dx, dy] if fmt == "xyxy" else [dx, dy, 0, 0]
    return boxes + lucid.tensor(shift, dtype=boxes.dtype, device=boxes.device)


def _resize_image(inpt: Any, size: Any, interpolation: Any, max_size: int | None) -> Any:
    plain = _plain(inpt)
    if isinstance(inpt, tv_tensors.Mask):
        squeeze = plain.ndim < 3
        plain = plain.unsqueeze(0) if squeeze else plain
        dtype = plain.dtype
        out = F.resize(plain.to(lucid.float32), size, F.InterpolationMode.NEAREST, max_size)
        out = out.to(dtype)
        return out.squeeze(0) if squeeze else out
    return F.resize(plain, size, interpolation, max_size)


def resize(
    inpt: Any,
    size: Any,
    interpolation: Any = F.InterpolationMode.BILINEAR,
    max_size: int | None = None,
    antialias: bool | None = True,
) -> Any:
    """Resize any kind of input (``antialias`` is accepted; lucid does not antialias): images
    and videos by ``interpolation``, masks by nearest neighbour, boxes and keypoints scaled
    to the new canvas."""
    if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints)):
        old_h, old_w = inpt.canvas_size
        if isinstance(size, int):
            size = [size]
        new_h, new_w = F.resize_output_size(old_h, old_w, size, max_size)
        if (new_h, new_w) == (old_h, old_w):
            return inpt
        ratios = [new_w / old_w, new_h / old_h]
        ratios = ratios * 2 if isinstance(inpt, tv_tensors.BoundingBoxes) else ratios
        if isinstance(inpt, tv_tensors.BoundingBoxes):
            _box_fmt(inpt)
        plain = inpt.as_tensor()
        out = (plain * lucid.tensor(ratios, device=plain.device)).to(plain.dtype)
        return tv_tensors.wrap(out, like=inpt, canvas_size=(new_h, new_w))
    return _rewrap(_resize_image(inpt, size, interpolation, max_size), inpt)


def crop(inpt: Any, top: int, left: int, height: int, width: int) -> Any:
    """Crop any kind of input to the ``height x width`` window at ``(top, left)`` (zeros
    outside the image); boxes are shifted and clamped (by their ``clamping_mode``),
    keypoints shifted."""
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        fmt = _box_fmt(inpt)
        out = _shift_boxes(inpt.as_tensor(), fmt, -left, -top)
        out = clamp_boxes(out, fmt, (height, width), inpt.clamping_mode)
        return tv_tensors.wrap(out, like=inpt, canvas_size=(height, width))
    if isinstance(inpt, tv_tensors.KeyPoints):
        plain = inpt.as_tensor()
        out = plain - lucid.tensor([left, top], dtype=plain.dtype, device=plain.device)
        return tv_tensors.wrap(out, like=inpt, canvas_size=(height, width))
    plain = _plain(inpt)
    if isinstance(inpt, tv_tensors.Mask) and plain.ndim < 3:
        return _rewrap(F.crop(plain.unsqueeze(0), top, left, height, width).squeeze(0), inpt)
    return _rewrap(F.crop(plain, top, left, height, width), inpt)


def _parse_pad(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    if isinstance(padding, int):
        return padding, padding, padding, padding
    p = [int(v) for v in padding]
    if len(p) == 1:
        return p[0], p[0], p[0], p[0]
    if len(p) == 2:
        return p[0], p[1], p[0], p[1]
    if len(p) == 4:
        return p[0], p[1], p[2], p[3]
    raise ValueError(
        f"Padding must be an int or a 1, 2, or 4 element of tuple or list, got {padding}."
    )


def _pad_image(plain: Any, padding: list[int], fill: Any, padding_mode: str) -> Any:
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) or padding_mode != "constant":
        return F.pad(
            plain, padding, float(fill) if isinstance(fill, (int, float)) else 0.0, padding_mode
        )
    values = [float(v) for v in fill]
    if len(values) == 1:
        return F.pad(plain, padding, values[0], padding_mode)
    # One fill value per channel: pad each channel with its own.
    chw, back = F._as_chw(plain)
    if chw.shape[-3] != len(values):
        raise ValueError(
            f"fill has {len(values)} values, expected one or one per channel ({chw.shape[-3]})"
        )
    pads = _parse_pad(padding)
    out = np.stack(
        [
            np.pad(
                chw[..., c, :, :],
                [(0, 0)] * (chw.ndim - 3) + [(pads[1], pads[3]), (pads[0], pads[2])],
                constant_values=values[c],
            )
            for c in range(chw.shape[-3])
        ],
        axis=-3,
    )
    return back(out.astype(chw.dtype))


def pad(
    inpt: Any,
    padding: int | Sequence[int],
    fill: Any = None,
    padding_mode: str = "constant",
) -> Any:
    """Pad any kind of input by ``padding`` (left, top, right, bottom as torchvision parses
    it): images with ``fill`` (a number or one per channel), masks with a number, boxes and
    keypoints shifted to the larger canvas."""
    left, top, right, bottom = _parse_pad(padding)
    if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints)):
        if padding_mode != "constant":
            kind = type(inpt).__name__
            raise ValueError(f"Padding mode '{padding_mode}' is not supported with {kind}")
        h, w = inpt.canvas_size
        canvas = (h + top + bottom, w + left + right)
        plain = inpt.as_tensor()
        if isinstance(inpt, tv_tensors.KeyPoints):
            shifted = plain + lucid.tensor([left, top], dtype=plain.dtype, device=plain.device)
            return tv_tensors.wrap(shifted, like=inpt, canvas_size=canvas)
        fmt = _box_fmt(inpt)
        out = clamp_boxes(_shift_boxes(plain, fmt, left, top), fmt, canvas, inpt.clamping_mode)
        return tv_tensors.wrap(out, like=inpt, canvas_size=canvas)
    plain = _plain(inpt)
    pads = [left, top, right, bottom]
    if isinstance(inpt, tv_tensors.Mask):
        if isinstance(fill, (tuple, list)):
            raise ValueError("Non-scalar fill value is not supported")
        squeeze = plain.ndim < 3
        out = _pad_image(plain.unsqueeze(0) if squeeze else plain, pads, fill, padding_mode)
        return _rewrap(out.squeeze(0) if squeeze else out, inpt)
    return _rewrap(_pad_image(plain, pads, fill, padding_mode), inpt)


def image_only(fn: Callable[..., Any], inpt: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn`` (an image function) on images and videos; boxes, masks and keypoints as they are."""
    if isinstance(inpt, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints, tv_tensors.Mask)):
        return inpt
    return _rewrap(fn(_plain(inpt), *args, **kwargs), inpt)
