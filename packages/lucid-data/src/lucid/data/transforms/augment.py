"""More of torchvision.transforms: random choices of transforms, resized crops, affine maps,
grey levels, erasing, blur and the pixel-value transforms.

Each works on a uint8 ``H x W x C`` (or ``H x W``) numpy image and on a ``C x H x W`` Tensor
(or float array), as the functions of ``functional`` do; random draws come from the default
``lucid.Generator`` (``lucid.manual_seed`` makes them reproducible).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid

from .._rng import numpy_rng
from . import functional as F
from ._module import TransformModule
from .functional import InterpolationMode
from .transforms import _setup_angle, _size_pair

__all__ = [
    "ConvertImageDtype",
    "ElasticTransform",
    "FiveCrop",
    "GaussianBlur",
    "Grayscale",
    "LinearTransformation",
    "PILToTensor",
    "RandomAdjustSharpness",
    "RandomAffine",
    "RandomApply",
    "RandomAutocontrast",
    "RandomChoice",
    "RandomEqualize",
    "RandomErasing",
    "RandomGrayscale",
    "RandomInvert",
    "RandomOrder",
    "RandomPerspective",
    "RandomPosterize",
    "RandomResizedCrop",
    "RandomSolarize",
    "TenCrop",
]


def _repr_list(name: str, transforms: Sequence[Any], extra: str = "") -> str:
    lines = "".join(f"\n    {t}" for t in transforms)
    return f"{name}({extra}{lines}\n)"


class RandomApply(TransformModule):
    """Apply all ``transforms`` with probability ``p``, else none."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]], p: float = 0.5) -> None:
        self.transforms = transforms
        self.p = p

    def __call__(self, img: Any) -> Any:
        if self.p < numpy_rng().random():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        return _repr_list(type(self).__name__, self.transforms, f"\n    p={self.p}")


class RandomChoice:
    """Apply one of ``transforms``, drawn with probabilities ``p`` (default uniform)."""

    def __init__(
        self, transforms: Sequence[Callable[..., Any]], p: Sequence[float] | None = None
    ) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1.0] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(
                f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}"
            )
        total = float(sum(p))
        self.transforms = transforms
        self.p = [float(w) / total for w in p]

    def __call__(self, *args: Any) -> Any:
        idx = int(numpy_rng().choice(len(self.transforms), p=self.p))
        return self.transforms[idx](*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(transforms={self.transforms}, p={self.p})"


class RandomOrder:
    """Apply ``transforms`` in a random order."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for i in numpy_rng().permutation(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img

    def __repr__(self) -> str:
        return _repr_list(type(self).__name__, self.transforms)


class RandomResizedCrop(TransformModule):
    """Crop a random area (a ``scale`` fraction, ``ratio`` aspect) and resize it to ``size``,
    with torchvision's draws (ten tries, then a centre crop)."""

    def __init__(
        self,
        size: int | Sequence[int],
        scale: tuple[float, float] = (0.08, 1.0),
        ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
        interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
        antialias: bool | None = True,
    ) -> None:
        self.size = _size_pair(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = F._interpolation(interpolation)
        self.antialias = antialias

    @staticmethod
    def get_params(
        img: Any, scale: Sequence[float], ratio: Sequence[float]
    ) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop."""
        height, width = F.image_size(img)
        area = height * width
        rng = numpy_rng()
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * float(rng.uniform(scale[0], scale[1]))
            aspect = math.exp(float(rng.uniform(log_ratio[0], log_ratio[1])))
            w = round(math.sqrt(target_area * aspect))
            h = round(math.sqrt(target_area / aspect))
            if 0 < w <= width and 0 < h <= height:
                i = int(rng.integers(0, height - h + 1))
                j = int(rng.integers(0, width - w + 1))
                return i, j, h, w
        in_ratio = width / height
        if in_ratio < min(ratio):
            w, h = width, round(width / min(ratio))
        elif in_ratio > max(ratio):
            h, w = height, round(height * max(ratio))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img: Any) -> Any:
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(size={self.size}, scale={self.scale}, ratio={self.ratio}, "
            f"interpolation={self.interpolation.value})"
        )


class FiveCrop(TransformModule):
    """The four corners and the centre, a tuple of five images."""

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _size_pair(size)

    def __call__(self, img: Any) -> tuple[Any, ...]:
        return F.five_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size})"


class TenCrop(TransformModule):
    """``FiveCrop`` of the image and of its flip, a tuple of ten images."""

    def __init__(self, size: int | Sequence[int], vertical_flip: bool = False) -> None:
        self.size = _size_pair(size)
        self.vertical_flip = vertical_flip

    def __call__(self, img: Any) -> tuple[Any, ...]:
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


def _range_pair(value: Sequence[float] | None, name: str, low: float, high: float) -> None:
    if value is None:
        return
    if len(value) != 2:
        raise ValueError(f"{name} should be a list or tuple and it must be of length 2.")
    for v in value:
        if not low <= v <= high:
            raise ValueError(f"{name} values should be between {low:g} and {high:g}")


class RandomAffine(TransformModule):
    """A random affine map keeping the centre: rotation from ``degrees``, translation up to
    ``translate`` fractions of the size, scale from ``scale``, shear from ``shear`` (x range,
    or x then y ranges), with torchvision's draws and sampling (see ``functional.affine``)."""

    def __init__(
        self,
        degrees: float | Sequence[float],
        translate: tuple[float, float] | None = None,
        scale: tuple[float, float] | None = None,
        shear: float | Sequence[float] | None = None,
        interpolation: InterpolationMode | str = InterpolationMode.NEAREST,
        fill: float | Sequence[float] = 0,
        center: Sequence[int] | None = None,
    ) -> None:
        self.degrees = _setup_angle(degrees, "degrees")
        _range_pair(translate, "translate", 0.0, 1.0)
        if scale is not None:
            if len(scale) != 2:
                raise ValueError("scale should be a list or tuple and it must be of length 2.")
            if min(scale) <= 0:
                raise ValueError("scale values should be positive")
        self.translate = translate
        self.scale = scale
        self.shear: list[float] | None
        if shear is None:
            self.shear = None
        elif isinstance(shear, (int, float, np.number)):
            self.shear = _setup_angle(shear, "shear")
        elif len(shear) in (2, 4):
            self.shear = [float(s) for s in shear]
        else:
            raise ValueError("shear should be a sequence of length 2 or 4.")
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill
        self.center = center

    @staticmethod
    def get_params(
        degrees: Sequence[float],
        translate: Sequence[float] | None,
        scale_ranges: Sequence[float] | None,
        shears: Sequence[float] | None,
        img_size: Sequence[int],
    ) -> tuple[float, tuple[int, int], float, tuple[float, float]]:
        """``(angle, (tx, ty), scale, (shear_x, shear_y))``; ``img_size`` is ``[width,
        height]``."""
        rng = numpy_rng()
        angle = float(rng.uniform(float(degrees[0]), float(degrees[1])))
        tx = ty = 0
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = round(float(rng.uniform(-max_dx, max_dx)))
            ty = round(float(rng.uniform(-max_dy, max_dy)))
        scale = (
            1.0
            if scale_ranges is None
            else float(rng.uniform(float(scale_ranges[0]), float(scale_ranges[1])))
        )
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(rng.uniform(shears[0], shears[1]))
            if len(shears) == 4:
                shear_y = float(rng.uniform(shears[2], shears[3]))
        return angle, (tx, ty), scale, (shear_x, shear_y)

    def __call__(self, img: Any) -> Any:
        angle, translations, scale, shear = self.get_params(
            self.degrees, self.translate, self.scale, self.shear, F.get_image_size(img)
        )
        return F.affine(
            img, angle, translations, scale, shear, self.interpolation, self.fill, self.center
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(degrees={self.degrees}, translate={self.translate}, "
            f"scale={self.scale}, shear={self.shear})"
        )


class RandomPerspective(TransformModule):
    """With probability ``p``, move each corner inwards by up to ``distortion_scale`` of half
    the size and warp (``functional.perspective``), with torchvision's draws."""

    def __init__(
        self,
        distortion_scale: float = 0.5,
        p: float = 0.5,
        interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
        fill: float | Sequence[float] = 0,
    ) -> None:
        self.p = p
        self.interpolation = F._interpolation(interpolation)
        self.distortion_scale = distortion_scale
        self.fill = fill

    @staticmethod
    def get_params(
        width: int, height: int, distortion_scale: float
    ) -> tuple[list[list[int]], list[list[int]]]:
        """``(startpoints, endpoints)``: the corners and where they move."""
        rng = numpy_rng()
        dw, dh = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))

        def draw(low: int, high: int) -> int:
            return int(rng.integers(low, high))

        topleft = [draw(0, dw + 1), draw(0, dh + 1)]
        topright = [draw(width - dw - 1, width), draw(0, dh + 1)]
        botright = [draw(width - dw - 1, width), draw(height - dh - 1, height)]
        botleft = [draw(0, dw + 1), draw(height - dh - 1, height)]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [topleft, topright, botright, botleft]

    def __call__(self, img: Any) -> Any:
        if numpy_rng().random() >= self.p:
            return img
        width, height = F.get_image_size(img)
        start, end = self.get_params(width, height, self.distortion_scale)
        return F.perspective(img, start, end, self.interpolation, self.fill)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class ElasticTransform(TransformModule):
    """Displace pixels by smooth random fields: uniform noise in [-1, 1] blurred by a
    Gaussian of ``sigma`` and scaled by ``alpha``, with torchvision's recipe."""

    def __init__(
        self,
        alpha: float | Sequence[float] = 50.0,
        sigma: float | Sequence[float] = 5.0,
        interpolation: InterpolationMode | str = InterpolationMode.BILINEAR,
        fill: float | Sequence[float] = 0,
    ) -> None:
        alphas = [float(alpha)] * 2 if isinstance(alpha, (int, float)) else list(alpha)
        sigmas = [float(sigma)] * 2 if isinstance(sigma, (int, float)) else list(sigma)
        if len(alphas) == 1:
            alphas = alphas * 2
        if len(sigmas) == 1:
            sigmas = sigmas * 2
        if len(alphas) != 2:
            raise ValueError(f"If alpha is a sequence its length should be 2. Got {len(alphas)}")
        if len(sigmas) != 2:
            raise ValueError(f"If sigma is a sequence its length should be 2. Got {len(sigmas)}")
        self.alpha = [float(a) for a in alphas]
        self.sigma = [float(s) for s in sigmas]
        self.interpolation = F._interpolation(interpolation)
        self.fill = fill

    @staticmethod
    def get_params(alpha: Sequence[float], sigma: Sequence[float], size: Sequence[int]) -> Any:
        """The displacement field, a ``1 x H x W x 2`` Tensor (``size`` is ``[H, W]``)."""
        rng = numpy_rng()
        fields = []
        for k in range(2):
            d = rng.random((1, 1, size[0], size[1])) * 2 - 1
            if sigma[k] > 0.0:
                ks = int(8 * sigma[k] + 1)
                ks += 1 - ks % 2  # (odd)
                d = F.gaussian_blur(d, [ks, ks], [sigma[k], sigma[k]])
            fields.append(d * alpha[k] / size[k])  # (x scaled by H, y by W: torchvision's)
        disp = np.concatenate(fields, axis=1).transpose(0, 2, 3, 1).astype(np.float32)
        return lucid.from_numpy(np.ascontiguousarray(disp))

    def __call__(self, img: Any) -> Any:
        _, height, width = F.get_dimensions(img)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(img, displacement, self.interpolation, self.fill)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(alpha={self.alpha}, sigma={self.sigma})"


class Grayscale(TransformModule):
    """To grey levels (``functional.rgb_to_grayscale``), 1 or 3 channels out."""

    def __init__(self, num_output_channels: int = 1) -> None:
        self.num_output_channels = num_output_channels

    def __call__(self, img: Any) -> Any:
        return F.rgb_to_grayscale(img, self.num_output_channels)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(TransformModule):
    """To grey levels with probability ``p``, keeping the number of channels."""

    def __init__(self, p: float = 0.1) -> None:
        self.p = p

    def __call__(self, img: Any) -> Any:
        if numpy_rng().random() < self.p:
            return F.rgb_to_grayscale(img, F.get_image_num_channels(img))
        return img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomErasing(TransformModule):
    """Erase a random rectangle (a ``scale`` fraction, ``ratio`` aspect) with probability
    ``p``: set it to ``value`` (a number, one per channel, or ``"random"`` for normal noise),
    as torchvision's (a ``C x H x W`` Tensor, after ``ToTensor``)."""

    def __init__(
        self,
        p: float = 0.5,
        scale: tuple[float, float] = (0.02, 0.33),
        ratio: tuple[float, float] = (0.3, 3.3),
        value: float | str | Sequence[float] = 0,
        inplace: bool = False,
    ) -> None:
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence) or not isinstance(ratio, Sequence):
            raise TypeError("Scale and ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value: Any = value
        self.inplace = inplace

    @staticmethod
    def get_params(
        img: Any,
        scale: Sequence[float],
        ratio: Sequence[float],
        value: Sequence[float] | None = None,
    ) -> tuple[int, int, int, int, Any]:
        """``(top, left, height, width, values)`` of the rectangle (the whole image and the
        image itself when ten tries found none)."""
        img_c, img_h, img_w = F.get_dimensions(img)
        area = img_h * img_w
        rng = numpy_rng()
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * float(rng.uniform(scale[0], scale[1]))
            aspect = math.exp(float(rng.uniform(log_ratio[0], log_ratio[1])))
            h = round(math.sqrt(erase_area * aspect))
            w = round(math.sqrt(erase_area / aspect))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = rng.standard_normal((img_c, h, w)).astype(np.float32)
            else:
                v = np.asarray(value, np.float32).reshape(-1, 1, 1)
            i = int(rng.integers(0, img_h - h + 1))
            j = int(rng.integers(0, img_w - w + 1))
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def __call__(self, img: Any) -> Any:
        if numpy_rng().random() >= self.p:
            return img
        value: list[float] | None
        if isinstance(self.value, str):
            value = None
        elif isinstance(self.value, (int, float)):
            value = [float(self.value)]
        else:
            value = [float(v) for v in self.value]
        channels = F.get_image_num_channels(img)
        if value is not None and len(value) not in (1, channels):
            raise ValueError(
                "If value is a sequence, it should have either a single value or "
                f"{channels} (number of input channels)"
            )
        x, y, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        if v is img:
            return img
        return F.erase(img, x, y, h, w, v, self.inplace)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
            f"value={self.value}, inplace={self.inplace})"
        )


class GaussianBlur(TransformModule):
    """Blur with a Gaussian of odd ``kernel_size`` and a sigma drawn from ``sigma`` (a range,
    or a fixed value)."""

    def __init__(
        self, kernel_size: int | Sequence[int], sigma: float | Sequence[float] = (0.1, 2.0)
    ) -> None:
        self.kernel_size = _size_pair(kernel_size)
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, (int, float)):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            self.sigma = (float(sigma), float(sigma))
        elif len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
            self.sigma = (float(sigma[0]), float(sigma[1]))
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        """A sigma drawn uniformly from ``[sigma_min, sigma_max]``."""
        return float(numpy_rng().uniform(sigma_min, sigma_max))

    def __call__(self, img: Any) -> Any:
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class _RandomPixelOp(TransformModule):
    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def _apply(self, img: Any) -> Any:
        raise NotImplementedError

    def __call__(self, img: Any) -> Any:
        return self._apply(img) if numpy_rng().random() < self.p else img

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"


class RandomInvert(_RandomPixelOp):
    """Invert the colours (``functional.invert``) with probability ``p``."""

    def _apply(self, img: Any) -> Any:
        return F.invert(img)


class RandomPosterize(_RandomPixelOp):
    """Keep ``bits`` bits per channel (uint8 images) with probability ``p``."""

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p)
        self.bits = bits

    def _apply(self, img: Any) -> Any:
        return F.posterize(img, self.bits)


class RandomSolarize(_RandomPixelOp):
    """Invert the values at or above ``threshold`` with probability ``p``."""

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.threshold = threshold

    def _apply(self, img: Any) -> Any:
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomPixelOp):
    """Adjust the sharpness by ``sharpness_factor`` with probability ``p``."""

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p)
        if sharpness_factor < 0:
            raise ValueError("sharpness_factor should be non-negative")
        self.sharpness_factor = sharpness_factor

    def _apply(self, img: Any) -> Any:
        return F.adjust_sharpness(img, self.sharpness_factor)


class RandomAutocontrast(_RandomPixelOp):
    """Stretch each channel's contrast (``functional.autocontrast``) with probability ``p``."""

    def _apply(self, img: Any) -> Any:
        return F.autocontrast(img)


class RandomEqualize(_RandomPixelOp):
    """Equalize the histogram of a uint8 image with probability ``p``."""

    def _apply(self, img: Any) -> Any:
        return F.equalize(img)


class LinearTransformation(TransformModule):
    """Flatten a ``C x H x W`` Tensor image, subtract ``mean_vector``, multiply by the square
    ``transformation_matrix`` (``D x D``, ``D = C * H * W``; e.g. ZCA whitening), reshape."""

    def __init__(self, transformation_matrix: Any, mean_vector: Any) -> None:
        matrix, _ = F.unwrap(transformation_matrix)
        mean, _ = F.unwrap(mean_vector)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(
                "transformation_matrix should be square. Got "
                f"{tuple(matrix.shape)} rectangular matrix."
            )
        if mean.shape[0] != matrix.shape[0]:
            raise ValueError(
                f"mean_vector should have the same length {mean.shape[0]} as any one of the "
                f"dimensions of the transformation_matrix [{tuple(matrix.shape)}]"
            )
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def __call__(self, tensor: Any) -> Any:
        arr, wrap = F.unwrap(tensor)
        matrix, _ = F.unwrap(self.transformation_matrix)
        mean, _ = F.unwrap(self.mean_vector)
        n = int(np.prod(arr.shape[-3:]))
        if n != matrix.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{arr.shape[-3]} x {arr.shape[-2]} x {arr.shape[-1]}] != {matrix.shape[0]}"
            )
        flat = arr.reshape(-1, n) - mean.astype(arr.dtype)
        out = (flat @ matrix.astype(arr.dtype)).reshape(arr.shape)
        return wrap(out)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(transformation_matrix=..., mean_vector=...)"


class ConvertImageDtype(TransformModule):
    """A Tensor image in ``dtype``, its values rescaled (``functional.convert_image_dtype``)."""

    def __init__(self, dtype: Any) -> None:
        self.dtype = dtype

    def __call__(self, image: Any) -> Any:
        return F.convert_image_dtype(image, self.dtype)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.dtype})"


class PILToTensor:
    """A uint8 ``H x W x C`` numpy image (what lucid's datasets give for PIL images) as a
    uint8 ``C x H x W`` Tensor, unscaled."""

    def __call__(self, pic: Any) -> Any:
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
