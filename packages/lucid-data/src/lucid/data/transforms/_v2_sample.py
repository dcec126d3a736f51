"""The v2 forms of the transforms a detection pipeline runs around its detection transforms:
``Compose`` (several inputs), the flips, ``Resize``, ``CenterCrop``, ``Pad``, ``ToImage``,
``ToDtype`` (one dtype or one per tv_tensor type) and ``ToPureTensor``.

Each takes one image as v1's transform of the same name does (its ``batch`` form included),
and a whole sample (an image with its ``tv_tensors``, in tuples, lists and dicts) as the v2
:class:`Transform` does: the boxes, masks and keypoints follow the image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from lucid import Tensor

from .. import tv_tensors
from .._pil import is_pil_image
from .._rng import numpy_rng
from ..ops import box_convert
from . import functional as F
from . import transforms as v1
from ._v2_base import (
    Transform,
    _box_fmt,
    _plain,
    _rewrap,
    _size,
    crop,
    is_pure_tensor,
    pad,
    resize,
)

__all__ = [
    "CenterCrop",
    "Compose",
    "Pad",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "Resize",
    "ToDtype",
    "ToImage",
    "ToPureTensor",
]


def _one_image(inpt: Any) -> bool:
    return (
        isinstance(inpt, (np.ndarray, tv_tensors.Image, tv_tensors.Video))
        or is_pure_tensor(inpt)
        or is_pil_image(inpt)
    )


class _Samples(Transform):
    """Mixin before a v1 class: one image goes through the v1 transform (a tv_tensor image
    comes back as one), anything else through :meth:`Transform.forward`."""

    def __call__(self, *inputs: Any) -> Any:
        if len(inputs) == 1 and _one_image(inputs[0]):
            inpt = inputs[0]
            return _rewrap(super().__call__(_plain(inpt)), inpt)
        return self.forward(*inputs)


class Compose(v1.Compose):
    """Apply transforms one after the other; several inputs are passed on as a tuple (each
    transform called with them unpacked), one input as it is."""

    def __call__(self, *inputs: Any) -> Any:
        if not inputs:
            raise TypeError("Compose expects at least one input")
        unpack = len(inputs) > 1
        outputs: Any = inputs if unpack else inputs[0]
        for t in self.transforms:
            outputs = t(*outputs) if unpack else t(outputs)
        return outputs


def _flip_boxes(boxes: tv_tensors.BoundingBoxes, horizontal: bool) -> Tensor:
    fmt = _box_fmt(boxes)
    h, w = boxes.canvas_size
    xyxy = box_convert(boxes.as_tensor(), fmt, "xyxy")
    x1, y1, x2, y2 = xyxy.unbind(-1)
    if horizontal:
        x1, x2 = w - x2, w - x1
    else:
        y1, y2 = h - y2, h - y1
    return box_convert(lucid.stack((x1, y1, x2, y2), dim=-1), "xyxy", fmt).to(boxes.dtype)


def _flip(inpt: Any, horizontal: bool) -> Any:
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return tv_tensors.wrap(_flip_boxes(inpt, horizontal), like=inpt)
    if isinstance(inpt, tv_tensors.KeyPoints):
        plain = inpt.as_tensor()
        h, w = inpt.canvas_size
        x, y = plain[..., 0], plain[..., 1]
        pts = (w - 1 - x, y) if horizontal else (x, h - 1 - y)
        return tv_tensors.wrap(lucid.stack(pts, dim=-1).to(plain.dtype), like=inpt)
    plain = _plain(inpt)
    if isinstance(inpt, (tv_tensors.Mask, tv_tensors.Video)) or is_pure_tensor(inpt):
        axis = -1 if horizontal else -2  # a tensor's last two axes are H, W
        return _rewrap(plain.flip([axis]), inpt)
    return _rewrap(F.hflip(plain) if horizontal else F.vflip(plain), inpt)


class RandomHorizontalFlip(_Samples, v1.RandomHorizontalFlip):
    """Mirror left-right with probability ``p``: the image, and its boxes, masks and
    keypoints with it."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        return {"flip": bool(numpy_rng().random() < self.p)}

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _flip(inpt, horizontal=True) if params["flip"] else inpt


class RandomVerticalFlip(_Samples, v1.RandomVerticalFlip):
    """Mirror top-bottom with probability ``p``: the image, and its boxes, masks and
    keypoints with it."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        return {"flip": bool(numpy_rng().random() < self.p)}

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return _flip(inpt, horizontal=False) if params["flip"] else inpt


class Resize(_Samples, v1.Resize):
    """Resize to ``size`` (an int sets the smaller edge): images by ``interpolation``, masks by
    nearest neighbour, boxes and keypoints scaled."""

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return resize(inpt, self.size, self.interpolation, self.max_size, self.antialias)


class CenterCrop(_Samples, v1.CenterCrop):
    """Crop the centre (zeros where the image is smaller); boxes and keypoints shifted."""

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        h, w = _size(inpt)
        ch, cw = self.size
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        return crop(inpt, top, left, ch, cw)


class Pad(_Samples, v1.Pad):
    """Pad the borders (boxes and keypoints shifted; masks padded with ``fill``, boxes and
    keypoints only in constant mode)."""

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return pad(inpt, self.padding, self.fill, self.padding_mode)


class ToImage(Transform):
    """An image as a ``tv_tensors.Image`` (``C x H x W``): a uint8 numpy or PIL image moved
    from ``H x W x C`` (unscaled, as ``PILToTensor``), a Tensor as it is, another numpy
    array (lucid's ``C x H x W`` layout) wrapped."""

    _transformed_types = (is_pure_tensor, np.ndarray, is_pil_image)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if isinstance(inpt, Tensor):
            return tv_tensors.Image(inpt)
        if is_pil_image(inpt) or (isinstance(inpt, np.ndarray) and inpt.dtype == np.uint8):
            return tv_tensors.Image(F.pil_to_tensor(inpt))
        if isinstance(inpt, np.ndarray):
            return tv_tensors.Image(lucid.from_numpy(np.ascontiguousarray(inpt)))
        raise TypeError(f"ToImage expects a numpy array or a Tensor, got {type(inpt).__name__}")

    def __call__(self, *inputs: Any) -> Any:
        if (
            len(inputs) == 1
            and not _one_image(inputs[0])
            and not isinstance(inputs[0], (tuple, list, dict))
        ):
            raise TypeError(
                f"ToImage expects a numpy array or a Tensor, got {type(inputs[0]).__name__}"
            )
        return self.forward(*inputs)


class ToPureTensor(Transform):
    """Every tv_tensor of the sample as a plain Tensor (the same memory)."""

    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return inpt.as_tensor()


class ToDtype(Transform):
    """Tensors in ``dtype``: one dtype converts the images and videos (the first pure Tensor
    when there is no image); a dict maps tv_tensor types (and ``"others"``) to dtypes, None
    to leave one. ``scale=True`` rescales images and videos between the integer and float
    ranges (``functional.convert_image_dtype``)."""

    _transformed_types = (Tensor,)

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        if not isinstance(dtype, (dict, lucid.dtype)):
            raise ValueError(f"dtype must be a dict or a lucid.dtype, got {type(dtype)} instead")
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        scalable = is_pure_tensor(inpt) or isinstance(inpt, (tv_tensors.Image, tv_tensors.Video))
        if isinstance(self.dtype, dict):
            if type(inpt) in self.dtype:
                dtype = self.dtype[type(inpt)]
            elif "others" in self.dtype:
                dtype = self.dtype["others"]
            else:
                raise ValueError(
                    f"No dtype was specified for type {type(inpt)}. If you only need to convert "
                    "the dtype of images or videos, you can just pass e.g. dtype=lucid.float32. "
                    'If you\'re passing a dict as dtype, you can use "others" as a catch-all key '
                    'e.g. dtype={tv_tensors.Mask: lucid.int64, "others": None} to pass-through '
                    "the rest of the inputs."
                )
        else:
            if not scalable:
                return inpt
            dtype = self.dtype
        if dtype is None:
            return inpt
        plain = _plain(inpt)
        out = F.convert_image_dtype(plain, dtype) if self.scale and scalable else plain.to(dtype)
        return _rewrap(out, inpt)

    def __call__(self, *inputs: Any) -> Any:
        if len(inputs) == 1 and not isinstance(inputs[0], (Tensor, tuple, list, dict)):
            raise TypeError(f"ToDtype expects a Tensor, got {type(inputs[0]).__name__}")
        return self.forward(*inputs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.dtype}, scale={self.scale})"
