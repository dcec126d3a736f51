"""``lucid.data.tv_tensors``: torchvision's ``tv_tensors``, the Tensor subclasses that tell the
v2 transforms what an input is.

``Image`` (``[..., C, H, W]``), ``Video`` (``[..., T, C, H, W]``), ``Mask`` (``[..., H, W]``),
``BoundingBoxes`` (``[N, K]`` in a :class:`BoundingBoxFormat`, with the ``canvas_size`` of
their image and a ``clamping_mode``) and ``KeyPoints`` (``[..., 2]`` ``(x, y)`` points, with a
``canvas_size``). Each is a :class:`lucid.Tensor` sharing its data's memory; as with
torchvision's default return type, an operation on one gives a plain Tensor, and
:func:`wrap` puts a result back in the type (and metadata) of a reference.

Example:
    >>> import lucid
    >>> from lucid.data import tv_tensors
    >>> boxes = tv_tensors.BoundingBoxes([[1, 2, 5, 6]], format="XYXY", canvas_size=(8, 8))
    >>> boxes.format, boxes.canvas_size
    (<BoundingBoxFormat.XYXY: 'XYXY'>, (8, 8))
"""

from __future__ import annotations

from enum import Enum
from typing import Any, TypeVar

import lucid
from lucid import Tensor

from ._pil import is_pil_image, pil_chw

__all__ = [
    "BoundingBoxFormat",
    "BoundingBoxes",
    "Image",
    "KeyPoints",
    "Mask",
    "TVTensor",
    "Video",
    "is_rotated_bounding_format",
    "set_return_type",
    "wrap",
]

_T = TypeVar("_T", bound="TVTensor")


class TVTensor(Tensor):
    """The base of the tv_tensors: a :class:`lucid.Tensor` whose class (and metadata) the v2
    transforms dispatch on."""

    @staticmethod
    def _to_tensor(
        data: Any, dtype: Any = None, device: Any = None, requires_grad: bool | None = None
    ) -> Tensor:
        if isinstance(data, Tensor):
            t = data.detach()
        else:
            t = lucid.as_tensor(data)
        if dtype is not None or device is not None:
            t = t.to(device=device, dtype=dtype)
        if requires_grad is not None:
            t.requires_grad_(requires_grad)
        return t

    @classmethod
    def _make(cls: type[_T], tensor: Tensor) -> _T:
        # A new object of this class that holds `tensor`'s array (no copy) outside any graph.
        out = object.__new__(cls)
        out._set_fields(tensor.array, tensor.backend, tensor.requires_grad)
        return out

    @classmethod
    def wrap(cls: type[_T], tensor: Tensor, like: TVTensor, **kwargs: Any) -> _T:
        """``tensor`` as this class, with ``like``'s metadata (``kwargs`` override it)."""
        return cls._make(tensor)

    def as_tensor(self) -> Tensor:
        """This tv_tensor as a plain :class:`lucid.Tensor` (the same memory)."""
        return Tensor.from_backend_array(self.array, self.backend)

    def _meta_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        body = repr(self.as_tensor())
        body = body[len("tensor(") : -1] if body.startswith("tensor(") else body
        meta = self._meta_repr()
        return f"{type(self).__name__}({body}{', ' + meta if meta else ''})"


def _image_tensor(data: Any, dtype: Any, device: Any, requires_grad: bool | None) -> Tensor:
    if is_pil_image(data):
        data = pil_chw(data)
    return TVTensor._to_tensor(data, dtype, device, requires_grad)


class Image(TVTensor):
    """An image (or batch), ``[..., C, H, W]``; a 2-d input is given a channel, a PIL image is
    read as ``pil_to_tensor`` reads it."""

    def __init__(
        self,
        data: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool | None = None,
    ) -> None:
        t = _image_tensor(data, dtype, device, requires_grad)
        if t.ndim < 2:
            raise ValueError(f"Image expects at least 2 dimensions (H, W), got {t.ndim}")
        if t.ndim == 2:
            t = t.unsqueeze(0)
        self._set_fields(t.array, t.backend, t.requires_grad)


class Video(TVTensor):
    """A video (or batch), ``[..., T, C, H, W]``."""

    def __init__(
        self,
        data: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool | None = None,
    ) -> None:
        t = self._to_tensor(data, dtype, device, requires_grad)
        if t.ndim < 4:
            raise ValueError(f"Video expects at least 4 dimensions (T, C, H, W), got {t.ndim}")
        self._set_fields(t.array, t.backend, t.requires_grad)


class Mask(TVTensor):
    """A segmentation or detection mask, ``[..., H, W]`` (a PIL image's first channel)."""

    def __init__(
        self,
        data: Any,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool | None = None,
    ) -> None:
        if is_pil_image(data):
            data = pil_chw(data)[0]
        t = self._to_tensor(data, dtype, device, requires_grad)
        self._set_fields(t.array, t.backend, t.requires_grad)


class BoundingBoxFormat(Enum):
    """Box coordinate formats: ``XYXY`` (corners), ``XYWH`` (corner, size), ``CXCYWH`` (centre,
    size), and torchvision's rotated ``XYWHR``, ``CXCYWHR``, ``XYXYXYXY`` (named so that code
    naming them imports; lucid's box transforms refuse them)."""

    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"
    XYWHR = "XYWHR"
    CXCYWHR = "CXCYWHR"
    XYXYXYXY = "XYXYXYXY"


def is_rotated_bounding_format(format: BoundingBoxFormat | str) -> bool:
    """Whether ``format`` is one of the rotated box formats."""
    fmt = _box_format(format)
    return fmt in (BoundingBoxFormat.XYWHR, BoundingBoxFormat.CXCYWHR, BoundingBoxFormat.XYXYXYXY)


def _box_format(format: BoundingBoxFormat | str) -> BoundingBoxFormat:
    if isinstance(format, BoundingBoxFormat):
        return format
    if isinstance(format, str) and format.upper() in BoundingBoxFormat.__members__:
        return BoundingBoxFormat[format.upper()]
    raise ValueError(
        f"format should be a BoundingBoxFormat or one of {list(BoundingBoxFormat.__members__)}, "
        f"got {format!r}"
    )


_CLAMPING_MODES = ("soft", "hard", None)


def _canvas(canvas_size: Any) -> tuple[int, int]:
    size = tuple(int(s) for s in canvas_size)
    if len(size) != 2:
        raise ValueError(f"canvas_size should be (height, width), got {canvas_size!r}")
    return (size[0], size[1])


class BoundingBoxes(TVTensor):
    """Boxes ``[N, K]`` (a 1-d input is one box) in ``format`` on an image of ``canvas_size =
    (height, width)``; ``clamping_mode`` (``"soft"``, ``"hard"`` or None) says how transforms
    clamp them to the canvas (the two modes are the same for axis-aligned boxes)."""

    format: BoundingBoxFormat
    canvas_size: tuple[int, int]
    clamping_mode: str | None

    def __init__(
        self,
        data: Any,
        *,
        format: BoundingBoxFormat | str,
        canvas_size: tuple[int, int],
        clamping_mode: str | None = "soft",
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool | None = None,
    ) -> None:
        t = self._to_tensor(data, dtype, device, requires_grad)
        if t.ndim == 1:
            t = t.unsqueeze(0)
        elif t.ndim != 2:
            raise ValueError(f"Expected a 1D or 2D tensor, got {t.ndim}D")
        if clamping_mode not in _CLAMPING_MODES:
            raise ValueError(f"clamping_mode must be None, hard or soft, got {clamping_mode}.")
        self._set_fields(t.array, t.backend, t.requires_grad)
        self.format = _box_format(format)
        self.canvas_size = _canvas(canvas_size)
        self.clamping_mode = clamping_mode

    @classmethod
    def wrap(  # type: ignore[override]
        cls,
        tensor: Tensor,
        like: TVTensor,
        *,
        format: BoundingBoxFormat | str | None = None,
        canvas_size: tuple[int, int] | None = None,
        clamping_mode: Any = "unset",
    ) -> BoundingBoxes:
        """``tensor`` as boxes with ``like``'s format, canvas size and clamping mode."""
        out = cls._make(tensor)
        if out.ndim == 1:
            out = cls._make(tensor.unsqueeze(0))
        out.format = _box_format(format if format is not None else getattr(like, "format"))
        size = canvas_size if canvas_size is not None else getattr(like, "canvas_size")
        out.canvas_size = _canvas(size)
        mode = getattr(like, "clamping_mode", "soft") if clamping_mode == "unset" else clamping_mode
        out.clamping_mode = mode
        return out

    def _meta_repr(self) -> str:
        return (
            f"format={self.format}, canvas_size={self.canvas_size}, "
            f"clamping_mode={self.clamping_mode}"
        )


class KeyPoints(TVTensor):
    """Points ``[..., 2]`` of ``(x, y)`` (a 1-d input is one point) on an image of
    ``canvas_size = (height, width)``; ``[N, K, 2]`` holds ``N`` groups (polygons, skeletons)
    of ``K`` points."""

    canvas_size: tuple[int, int]

    def __init__(
        self,
        data: Any,
        *,
        canvas_size: tuple[int, int],
        dtype: Any = None,
        device: Any = None,
        requires_grad: bool | None = None,
    ) -> None:
        t = self._to_tensor(data, dtype, device, requires_grad)
        if t.ndim == 0 or t.shape[-1] != 2:
            raise ValueError(f"Expected a tensor of shape (..., 2), not {tuple(t.shape)}")
        if t.ndim == 1:
            t = t.unsqueeze(0)
        self._set_fields(t.array, t.backend, t.requires_grad)
        self.canvas_size = _canvas(canvas_size)

    @classmethod
    def wrap(  # type: ignore[override]
        cls, tensor: Tensor, like: TVTensor, *, canvas_size: tuple[int, int] | None = None
    ) -> KeyPoints:
        """``tensor`` as keypoints with ``like``'s canvas size (or ``canvas_size``)."""
        out = cls._make(tensor)
        out.canvas_size = _canvas(canvas_size or getattr(like, "canvas_size"))
        return out

    def _meta_repr(self) -> str:
        return f"canvas_size={self.canvas_size}"


def wrap(wrappee: Tensor, *, like: TVTensor, **kwargs: Any) -> Any:
    """``wrappee`` as the tv_tensor class of ``like``, with its metadata (``format``,
    ``canvas_size``...) unless ``kwargs`` override it."""
    if not isinstance(like, TVTensor):
        raise TypeError(f"wrap: like should be a TVTensor, got {type(like).__name__}")
    if not isinstance(wrappee, Tensor):
        raise TypeError(f"wrap: wrappee should be a Tensor, got {type(wrappee).__name__}")
    return type(like).wrap(wrappee, like, **kwargs)


class _ReturnTypeCM:
    """What :func:`set_return_type` returns: usable as a context manager (a no-op here)."""

    def __enter__(self) -> _ReturnTypeCM:
        return self

    def __exit__(self, *args: object) -> None:
        return None


def set_return_type(return_type: str) -> _ReturnTypeCM:
    """The type operations on a tv_tensor return: ``"Tensor"`` (the default, and the only one
    lucid has; ``"TVTensor"`` is refused: wrap results with :func:`wrap`)."""
    mode = return_type.lower() if isinstance(return_type, str) else None
    if mode not in ("tensor", "tvtensor"):
        raise ValueError(f"return_type must be 'TVTensor' or 'Tensor', got {return_type}")
    if mode == "tvtensor":
        raise NotImplementedError(
            "set_return_type('TVTensor'): lucid's operations on a tv_tensor always give a plain "
            "Tensor (lucid has no __torch_function__); put results back with tv_tensors.wrap"
        )
    return _ReturnTypeCM()
