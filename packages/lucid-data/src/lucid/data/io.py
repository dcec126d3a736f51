"""Image files to tensors and back, as in ``torchvision.io``: ``read_file``/``write_file``,
``decode_image``/``decode_png``/``decode_jpeg``/``read_image`` and ``encode_png``/
``encode_jpeg``/``write_png``/``write_jpeg``.

Images are ``C x H x W`` uint8 tensors (uint16 for 16-bit PNGs) as torchvision gives them;
encoded files are 1-d uint8 tensors of their bytes. The codecs are Pillow's (the
``lucid-data[images]`` extra); without Pillow the decoders and encoders raise ImportError.
Video (``read_video``, ``write_video``, ``VideoReader``) raises NotImplementedError: lucid has
no video codec, and torchvision 0.28 moved its own out of ``torchvision.io``.
"""

from __future__ import annotations

import io as _io
import os
from enum import Enum
from typing import Any

import numpy as np

import lucid

__all__ = [
    "ImageReadMode",
    "VideoReader",
    "decode_avif",
    "decode_gif",
    "decode_heic",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "encode_jpeg",
    "encode_png",
    "read_file",
    "read_image",
    "read_video",
    "read_video_timestamps",
    "write_file",
    "write_jpeg",
    "write_png",
    "write_video",
]


class ImageReadMode(Enum):
    """The channels to decode an image into (torchvision's values).

    ``UNCHANGED`` keeps the file's channels (a palette image becomes RGB, or RGBA with
    transparency); ``GRAY``, ``GRAY_ALPHA``, ``RGB`` and ``RGB_ALPHA`` (alias ``RGBA``)
    convert to 1, 2, 3 and 4 channels.
    """

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA  # noqa: PIE796 - torchvision's alias


_PIL_MODE = {
    ImageReadMode.GRAY: "L",
    ImageReadMode.GRAY_ALPHA: "LA",
    ImageReadMode.RGB: "RGB",
    ImageReadMode.RGB_ALPHA: "RGBA",
}


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            "lucid.data.io decodes and encodes images with Pillow, which is not installed: "
            "pip install 'lucid-data[images]' (or pillow)"
        ) from None
    return Image


def _mode(mode: ImageReadMode | str) -> ImageReadMode:
    if isinstance(mode, str):
        try:
            return ImageReadMode[mode.upper()]
        except KeyError:
            valid = ", ".join(m.name for m in ImageReadMode)
            raise ValueError(f"unknown image read mode {mode!r}: expected one of {valid}") from None
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode must be an ImageReadMode or a str, got {type(mode).__name__}")
    return mode


def _bytes_of(data: Any, what: str) -> bytes:
    """The raw bytes of a 1-d uint8 tensor (or array)."""
    arr = data.detach().numpy() if isinstance(data, lucid.Tensor) else np.asarray(data)
    if arr.dtype != np.uint8 or arr.ndim != 1:
        raise ValueError(
            f"{what} expects a one-dimensional uint8 tensor of the encoded bytes, got dtype "
            f"{arr.dtype} and shape {tuple(arr.shape)}"
        )
    return arr.tobytes()


def _tensor_of(raw: bytes) -> lucid.Tensor:
    return lucid.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())


def read_file(path: str | os.PathLike[str]) -> lucid.Tensor:
    """The bytes of the file at ``path`` as a 1-d uint8 tensor."""
    with open(path, "rb") as f:
        return _tensor_of(f.read())


def write_file(filename: str | os.PathLike[str], data: lucid.Tensor) -> None:
    """Write the bytes of a 1-d uint8 tensor to ``filename``."""
    raw = _bytes_of(data, "write_file")
    with open(filename, "wb") as f:
        f.write(raw)


def _orient(img: Any, apply_exif_orientation: bool) -> Any:
    if not apply_exif_orientation:
        return img
    from PIL import ImageOps

    return ImageOps.exif_transpose(img)


def _to_chw(img: Any, mode: ImageReadMode) -> lucid.Tensor:
    """A Pillow image as a ``C x H x W`` tensor in ``mode``'s channels."""
    if mode is ImageReadMode.UNCHANGED:
        if img.mode in ("I;16", "I;16B", "I;16L", "I"):  # 16-bit PNG: uint16, as torchvision
            arr16 = np.asarray(img).astype(np.uint16)
            return lucid.from_numpy(np.ascontiguousarray(arr16[None]))
        if img.mode == "P":
            img = img.convert("RGBA" if "transparency" in img.info else "RGB")
        elif img.mode == "PA":
            img = img.convert("RGBA")
        elif img.mode not in ("L", "LA", "RGB", "RGBA"):
            img = img.convert("RGB")  # 1-bit, CMYK, YCbCr, ...
    else:
        if img.mode == "P" and "transparency" in img.info:
            img = img.convert("RGBA")
        img = img.convert(_PIL_MODE[mode])
    arr = np.asarray(img, dtype=np.uint8)
    arr = arr[:, :, None] if arr.ndim == 2 else arr
    return lucid.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def _decode(
    data: Any, mode: ImageReadMode | str, apply_exif_orientation: bool, what: str, fmt: str | None
) -> lucid.Tensor:
    image, read_mode = _pil(), _mode(mode)
    raw = _bytes_of(data, what)
    try:
        img = image.open(_io.BytesIO(raw))
        img.load()
    except Exception as e:
        kind = f"a {fmt} image" if fmt else "an image"
        raise RuntimeError(f"{what}: the bytes are not {kind} Pillow can decode ({e})") from None
    if fmt is not None and img.format != fmt:
        raise RuntimeError(f"{what}: expected {fmt} bytes, got a {img.format} image")
    return _to_chw(_orient(img, apply_exif_orientation), read_mode)


def decode_png(
    input: lucid.Tensor,
    mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> lucid.Tensor:
    """Decode PNG bytes into a ``C x H x W`` uint8 tensor (uint16 for 16-bit PNGs)."""
    return _decode(input, mode, apply_exif_orientation, "decode_png", "PNG")


def decode_jpeg(
    input: lucid.Tensor | list[lucid.Tensor],
    mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
    device: str | Any = "cpu",
    apply_exif_orientation: bool = False,
) -> lucid.Tensor | list[lucid.Tensor]:
    """Decode JPEG bytes (or a list of them) into ``C x H x W`` uint8 tensors."""
    if str(device) != "cpu":
        raise NotImplementedError(
            f"decode_jpeg decodes on the CPU only (device={device!r}); move the result instead"
        )
    if isinstance(input, list):
        if not input:
            raise ValueError("Input list must contain at least one element")
        return [_decode(t, mode, apply_exif_orientation, "decode_jpeg", "JPEG") for t in input]
    return _decode(input, mode, apply_exif_orientation, "decode_jpeg", "JPEG")


def decode_image(
    input: lucid.Tensor | str | os.PathLike[str],
    mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> lucid.Tensor:
    """Decode an image (JPEG, PNG, GIF, WebP, ...) from its bytes or its path."""
    if not isinstance(input, lucid.Tensor):
        input = read_file(input)
    return _decode(input, mode, apply_exif_orientation, "decode_image", None)


def read_image(
    path: str | os.PathLike[str],
    mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
    apply_exif_orientation: bool = False,
) -> lucid.Tensor:
    """Read and decode the image file at ``path`` (torchvision: use ``decode_image``)."""
    return decode_image(read_file(path), mode, apply_exif_orientation=apply_exif_orientation)


def decode_gif(input: lucid.Tensor) -> lucid.Tensor:
    """Decode a GIF into ``C x H x W`` (one frame) or ``N x C x H x W`` (N frames), RGB."""
    image = _pil()
    raw = _bytes_of(input, "decode_gif")
    try:
        img = image.open(_io.BytesIO(raw))
    except Exception as e:
        raise RuntimeError(f"decode_gif: the bytes are not a GIF Pillow can decode ({e})") from None
    if img.format != "GIF":
        raise RuntimeError(f"decode_gif: expected GIF bytes, got a {img.format} image")
    frames = []
    for index in range(getattr(img, "n_frames", 1)):
        img.seek(index)
        frames.append(_to_chw(img.convert("RGB"), ImageReadMode.RGB).numpy())
    if len(frames) == 1:
        return lucid.from_numpy(frames[0])
    return lucid.from_numpy(np.stack(frames))


def decode_webp(
    input: lucid.Tensor, mode: ImageReadMode | str = ImageReadMode.UNCHANGED
) -> lucid.Tensor:
    """Decode WebP bytes into a ``C x H x W`` uint8 tensor."""
    return _decode(input, mode, False, "decode_webp", "WEBP")


def decode_avif(
    input: lucid.Tensor, mode: ImageReadMode | str = ImageReadMode.UNCHANGED
) -> lucid.Tensor:
    """Decode AVIF bytes (needs a Pillow built with AVIF support, Pillow >= 11.2)."""
    return _decode(input, mode, False, "decode_avif", "AVIF")


def decode_heic(
    input: lucid.Tensor, mode: ImageReadMode | str = ImageReadMode.UNCHANGED
) -> lucid.Tensor:
    """Decode HEIC bytes (needs a Pillow HEIF plugin, such as pillow-heif, registered)."""
    return _decode(input, mode, False, "decode_heic", "HEIF")


def _hwc(input: Any, what: str, channels: tuple[int, ...]) -> np.ndarray:
    arr = input.detach().numpy() if isinstance(input, lucid.Tensor) else np.asarray(input)
    if arr.dtype != np.uint8:
        raise ValueError(f"{what} expects a uint8 image tensor, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[0] not in channels:
        raise ValueError(
            f"{what} expects a C x H x W image with C in {channels}, got shape {tuple(arr.shape)}"
        )
    hwc = arr.transpose(1, 2, 0)
    return np.ascontiguousarray(hwc[:, :, 0] if hwc.shape[2] == 1 else hwc)


def encode_png(input: lucid.Tensor, compression_level: int = 6) -> lucid.Tensor:
    """The PNG file of a ``C x H x W`` uint8 image (C of 1, 2, 3 or 4) as 1-d uint8 bytes."""
    if not 0 <= compression_level <= 9:
        raise ValueError(f"Compression level should be between 0 and 9, got {compression_level}")
    arr = _hwc(input, "encode_png", (1, 2, 3, 4))
    buf = _io.BytesIO()
    _pil().fromarray(arr).save(buf, format="PNG", compress_level=compression_level)
    return _tensor_of(buf.getvalue())


def write_png(
    input: lucid.Tensor, filename: str | os.PathLike[str], compression_level: int = 6
) -> None:
    """Encode a ``C x H x W`` uint8 image as PNG and write it to ``filename``."""
    write_file(filename, encode_png(input, compression_level))


def _encode_jpeg_one(input: lucid.Tensor, quality: int) -> lucid.Tensor:
    arr = _hwc(input, "encode_jpeg", (1, 3))
    buf = _io.BytesIO()
    _pil().fromarray(arr).save(buf, format="JPEG", quality=quality)
    return _tensor_of(buf.getvalue())


def encode_jpeg(
    input: lucid.Tensor | list[lucid.Tensor], quality: int = 75
) -> lucid.Tensor | list[lucid.Tensor]:
    """The JPEG file of a ``C x H x W`` uint8 image (C of 1 or 3), or of a list of them."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is passed")
        return [_encode_jpeg_one(t, quality) for t in input]
    return _encode_jpeg_one(input, quality)


def write_jpeg(input: lucid.Tensor, filename: str | os.PathLike[str], quality: int = 75) -> None:
    """Encode a ``C x H x W`` uint8 image as JPEG and write it to ``filename``."""
    output = encode_jpeg(input, quality)
    assert isinstance(output, lucid.Tensor)
    write_file(filename, output)


def _no_video(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"lucid.data.io.{name}: lucid has no video decoder (torchvision 0.28 dropped its own "
        "from torchvision.io; use TorchCodec or PyAV to decode frames into numpy arrays, then "
        "lucid.from_numpy)"
    )


def read_video(*args: Any, **kwargs: Any) -> Any:
    """Not available: lucid has no video decoder (raises NotImplementedError)."""
    raise _no_video("read_video")


def read_video_timestamps(*args: Any, **kwargs: Any) -> Any:
    """Not available: lucid has no video decoder (raises NotImplementedError)."""
    raise _no_video("read_video_timestamps")


def write_video(*args: Any, **kwargs: Any) -> Any:
    """Not available: lucid has no video encoder (raises NotImplementedError)."""
    raise _no_video("write_video")


class VideoReader:
    """Not available: lucid has no video decoder (constructing one raises
    NotImplementedError)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_video("VideoReader")
