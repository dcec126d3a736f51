"""Transform classes, as in torchvision.transforms, on numpy images and lucid tensors.

Each transform is a callable on one image. The ones that can also act on a whole stacked
batch at once define ``batch(images)`` (random ones then draw per-image parameters for the
batch in one go); datasets such as MNIST and CIFAR10 use it to transform a batch with a few
numpy calls instead of one Python call per image. Random draws come from the default
``lucid.Generator``, so ``lucid.manual_seed`` makes them reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._rng import numpy_rng
from . import functional as F
from ._module import TransformModule
from .functional import InterpolationMode


def batch_transform(transform: Any) -> Callable[[Any], Any] | None:
    """The batched form of ``transform`` (a callable on a stacked batch), or None."""
    if transform is None:
        return None
    if isinstance(transform, Compose):
        return transform.batch if transform.supports_batch else None
    batch = getattr(transform, "batch", None)
    return batch if callable(batch) else None


class Compose:
    """Apply transforms one after the other.

    Example:
        >>> import numpy as np
        >>> t = Compose([ToTensor(), Normalize((0.5,), (0.5,))])
        >>> t(np.zeros((2, 2), np.uint8)).numpy().ravel().tolist()
        [-1.0, -1.0, -1.0, -1.0]
    """

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    @property
    def supports_batch(self) -> bool:
        """Whether every transform has a batched form (``batch``)."""
        return all(batch_transform(t) is not None for t in self.transforms)

    def batch(self, images: Any) -> Any:
        """Each transform's batched form, in order, on a whole batch of images."""
        for t in self.transforms:
            fn = batch_transform(t)
            if fn is None:
                raise TypeError(f"{type(t).__name__} cannot transform a batch at once")
            images = fn(images)
        return images

    def __repr__(self) -> str:
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({lines}\n)"


class ToTensor:
    """uint8 ``H x W x C`` / ``H x W`` numpy image -> float32 ``C x H x W`` Tensor in [0, 1]."""

    def __call__(self, pic: Any) -> Any:
        return F.to_tensor(pic)

    def batch(self, pics: Any) -> Any:
        """The transform of a whole batch of images at once."""
        return F.to_tensor(pics, batched=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ToPILImage:
    """A ``C x H x W`` Tensor or ``H x W x C`` numpy array -> a PIL image of ``mode`` (inferred
    from the channels and dtype when None), as torchvision's. Needs Pillow (the
    ``lucid-data[images]`` extra); lucid's transforms take PIL images as they take uint8
    numpy images."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic: Any) -> Any:
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(mode={self.mode})" if self.mode else f"{type(self).__name__}()"
        )


class Normalize(TransformModule):
    """``(x - mean) / std`` per channel of a float ``C x H x W`` image."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False):
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace

    def __call__(self, tensor: Any) -> Any:
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def batch(self, tensors: Any) -> Any:
        """The transform of a whole batch of tensors at once."""
        return F.normalize(tensors, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """Apply a user function."""

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _size_pair(size: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(size, (int, np.integer)):
        return int(size), int(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for size, got {size!r}")
    return int(size[0]), int(size[1])


class CenterCrop(TransformModule):
    """Crop the centre (padding with zeros where the image is smaller)."""

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _size_pair(size)

    def __call__(self, img: Any) -> Any:
        return F.center_crop(img, self.size)

    def batch(self, images: Any) -> Any:
        """The transform of a whole batch of images at once."""
        return F.center_crop(images, self.size, batched=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


class Pad(TransformModule):
    """Pad the borders (modes: constant, edge, reflect, symmetric)."""

    def __init__(
        self, padding: int | Sequence[int], fill: float = 0, padding_mode: str = "constant"
    ) -> None:
        F.parse_padding(padding)
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(
                "Padding mode should be either constant, edge, reflect or symmetric, "
                f"got {padding_mode!r}"
            )
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def __call__(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def batch(self, images: Any) -> Any:
        """The transform of a whole batch of images at once."""
        return F.pad(images, self.padding, self.fill, self.padding_mode, batched=True)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(padding={self.padding}, fill={self.fill}, "
            f"padding_mode={self.padding_mode})"
        )


class RandomCrop(TransformModule):
    """Crop at a random position, after optional padding.

    Example:
        >>> import numpy as np
        >>> RandomCrop(28, padding=4)(np.zeros((28, 28, 3), np.uint8)).shape
        (28, 28, 3)
    """

    def __init__(
        self,
        size: int | Sequence[int],
        padding: int | Sequence[int] | None = None,
        pad_if_needed: bool = False,
        fill: float = 0,
        padding_mode: str = "constant",
    ) -> None:
        self.size = _size_pair(size)
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode
        if padding is not None:
            F.parse_padding(padding)

    def _prepare(self, img: Any, batched: bool) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode, batched)
        h, w = F.image_size(img, batched)
        th, tw = self.size
        if self.pad_if_needed and (h < th or w < tw):
            dh, dw = max(th - h, 0), max(tw - w, 0)
            img = F.pad(img, (dw, dh), self.fill, self.padding_mode, batched)
            h, w = h + dh, w + dw
        if h < th or w < tw:
            raise ValueError(
                f"Required crop size {(th, tw)} is larger than input image size {(h, w)}"
            )
        return img

    def __call__(self, img: Any) -> Any:
        img = self._prepare(img, batched=False)
        h, w = F.image_size(img)
        th, tw = self.size
        rng = numpy_rng()
        top = int(rng.integers(0, h - th + 1))
        left = int(rng.integers(0, w - tw + 1))
        return F.crop(img, top, left, th, tw)

    def batch(self, images: Any) -> Any:
        """The transform of a whole batch of images at once (one crop for each image)."""
        images = self._prepare(images, batched=True)
        arr, wrap = F.unwrap(images)
        h_axis, w_axis = F.spatial_axes(images, arr, batched=True)
        h, w = arr.shape[h_axis], arr.shape[w_axis]
        th, tw = self.size
        rng = numpy_rng()
        tops = rng.integers(0, h - th + 1, size=len(arr))
        lefts = rng.integers(0, w - tw + 1, size=len(arr))
        shape = list(arr.shape)
        shape[h_axis], shape[w_axis] = th, tw
        out = np.empty(shape, arr.dtype)
        index: list[Any] = [slice(None)] * (arr.ndim - 1)
        for i, (top, left) in enumerate(zip(tops.tolist(), lefts.tolist())):
            index[h_axis] = slice(top, top + th)
            index[w_axis] = slice(left, left + tw)
            out[i] = arr[i][tuple(index)]
        return wrap(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, padding={self.padding})"


class _RandomFlip(TransformModule):
    _axis = 1  # index into (height axis, width axis)

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img: Any) -> Any:
        if numpy_rng().random() < self.p:
            arr, wrap = F.unwrap(img)
            return wrap(np.flip(arr, axis=F.spatial_axes(img, arr)[self._axis]))
        return img

    def batch(self, images: Any) -> Any:
        arr, wrap = F.unwrap(images)
        flip = numpy_rng().random(len(arr)) < self.p
        if not flip.any():
            return images
        axis = F.spatial_axes(images, arr, batched=True)[self._axis]
        out = arr.copy()
        out[flip] = np.flip(arr[flip], axis=axis)
        return wrap(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomHorizontalFlip(_RandomFlip):
    """Mirror left-right with probability ``p``."""

    _axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Mirror top-bottom with probability ``p``."""

    _axis = 0


class Resize(TransformModule):
    """Resize to ``size`` (an int sets the smaller edge), nearest or bilinear."""

    def __init__(
        self,
        size: int | Sequence[int],
        interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
        max_size: int | None = None,
        antialias: bool | None = True,
    ) -> None:
        self.size = size
        self.interpolation = F._interpolation(interpolation)
        self.max_size = max_size
        self.antialias = antialias  # accepted; lucid's resize does not antialias

    def __call__(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation, self.max_size)

    def batch(self, images: Any) -> Any:
        """The transform of a whole batch of images at once."""
        return F.resize(images, self.size, self.interpolation, self.max_size, batched=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, interpolation={self.interpolation.value})"


def _setup_angle(x: float | Sequence[float], name: str) -> list[float]:
    if isinstance(x, (int, float, np.number)):
        if float(x) < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        return [-float(x), float(x)]
    if len(x) != 2:
        raise ValueError(f"If {name} is a sequence, it must be of len 2.")
    return [float(d) for d in x]


class RandomRotation(TransformModule):
    """Rotate by an angle drawn uniformly from ``degrees`` (a range, or ``(-d, d)``), as
    torchvision's tensor ``rotate`` (see ``functional.rotate``)."""

    def __init__(
        self,
        degrees: float | Sequence[float],
        interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
        expand: bool = False,
        center: Sequence[float] | None = None,
        fill: float | Sequence[float] = 0,
    ) -> None:
        self.degrees = _setup_angle(degrees, "degrees")
        self.interpolation = F._interpolation(interpolation)
        self.expand = expand
        self.center = center
        self.fill = fill

    @staticmethod
    def get_params(degrees: Sequence[float]) -> float:
        """An angle drawn uniformly from ``degrees``."""
        return float(numpy_rng().uniform(float(degrees[0]), float(degrees[1])))

    def __call__(self, img: Any) -> Any:
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(degrees={self.degrees})"
