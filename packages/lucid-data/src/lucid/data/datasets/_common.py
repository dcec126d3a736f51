"""What the file-based datasets share: decoding an image file as an array, the
not-found errors, string-argument checks, fetching an archive, and the base classes of
datasets read item by item (from a list of paths, of ``(path, label)`` or of files)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from lucid import Tensor, from_numpy

from .folder import _PILLOW_MISSING
from .mnist import _verify_str_arg
from .utils import download_url, extract_archive
from .vision import VisionDataset

__all__ = [
    "FileSamples",
    "ItemDataset",
    "LoadedSamples",
    "as_tensor",
    "available",
    "fetch_extract",
    "missing",
    "not_found",
    "one_or_tuple",
    "open_image",
    "verify_str_arg",
]

verify_str_arg = _verify_str_arg


def open_image(path: str | os.PathLike[str] | BinaryIO, mode: str | None = None) -> np.ndarray:
    """The image file at ``path`` as a uint8 (uint16 for 16-bit PNGs) array, ``H x W`` or
    ``H x W x C``: converted to ``mode`` ("RGB", "L") when given, else as the file stores it
    (palette images give their palette indices, as torchvision's PIL ``P`` image does).

    Raises:
        ImportError: naming the ``lucid-data[images]`` extra when Pillow is not installed.
        FileNotFoundError, PIL.UnidentifiedImageError: as PIL raises them (each names the
            file); OSError naming the file for one that fails to decode.
    """
    try:
        from PIL import Image, UnidentifiedImageError  # optional: only image decoding needs it
    except ImportError:
        raise ImportError(_PILLOW_MISSING) from None
    try:
        with Image.open(path) as img:
            img = img.convert(mode) if mode is not None else img
            if img.mode in ("I;16", "I;16B", "I;16L"):
                return np.array(img, dtype=np.uint16)
            return np.array(img)
    except (FileNotFoundError, UnidentifiedImageError):
        raise
    except OSError as e:  # truncated or damaged data: PIL's message does not name the file
        raise OSError(f"cannot decode the image {path!r}: {e}") from e


def missing(name: str, what: str, how: str = "use download=True to download it") -> RuntimeError:
    """The error of a dataset whose files are not where they should be."""
    return RuntimeError(f"Dataset not found or corrupted: {name} needs {what}; {how}.")


def not_found(name: str, what: str, url: str) -> RuntimeError:
    """The error of a downloadable dataset whose files are missing: what it needs, and the
    URL to fetch by hand when offline."""
    return RuntimeError(
        f"Dataset not found: {name} needs {what}. Use download=True to download it, or, "
        f"offline, fetch {url} elsewhere and put its contents there by hand."
    )


def fetch_extract(url: str, folder: str | os.PathLike[str], md5: str | None = None) -> None:
    """Download ``url`` into ``folder`` (as its last path part, md5-checked when given) and
    extract the archive there."""
    archive = download_url(url, folder, os.path.basename(url), md5)
    extract_archive(archive, folder)


def available(
    present: Callable[[], bool],
    download: bool,
    url: str,
    folder: str | os.PathLike[str],
    md5: str | None = None,
) -> bool:
    """Whether ``present()`` holds, after fetching and extracting ``url`` into ``folder`` when
    ``download`` is set and it does not (the ``download`` argument of the datasets that are
    one archive)."""
    if download and not present():
        fetch_extract(url, folder, md5)
    return present()


def as_tensor(values: Any, dtype: Any = np.int64) -> Tensor:
    """``values`` as a Tensor of NumPy dtype ``dtype`` (int64: torch.tensor's of ints)."""
    return from_numpy(np.ascontiguousarray(np.asarray(values, dtype=dtype)))


def one_or_tuple(items: list[Any]) -> Any:
    """torchvision's multi-target rule: None for none, the item for one, else a tuple."""
    if not items:
        return None
    return items[0] if len(items) == 1 else tuple(items)


class ItemDataset(VisionDataset):
    """A dataset of items read one at a time (no batched fast path): ``__getitems__`` is a
    list of ``self[i]``; subclasses give ``__len__`` and ``__getitem__``."""

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not implement __len__")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __getitems__(self, indices: Sequence[int]) -> Sequence[Any]:
        return [self[i] for i in indices]

    def _transformed(self, image: Any, target: Any) -> tuple[Any, Any]:
        """``(transform(image), target_transform(target))``, each where given (the
        ``__getitem__`` of torchvision's datasets that take no ``transforms``)."""
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def _apply(self, image: Any, target: Any) -> tuple[Any, Any]:
        """``transforms`` on the pair (which holds ``transform``/``target_transform`` when
        those were given), as torchvision's datasets that take ``transforms`` do."""
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target


class FileSamples(ItemDataset):
    """Samples as ``(loader(path), label)`` from ``_image_files`` and ``_labels`` (the
    classification datasets that list their image files: Flowers102, Food101, DTD, GTSRB,
    FGVCAircraft, StanfordCars, SUN397, CLEVRClassification)."""

    _image_files: list[Path]
    _labels: list[Any]
    loader: Callable[[Any], Any]

    def __len__(self) -> int:
        return len(self._image_files)

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        return self._transformed(self.loader(self._image_files[idx]), self._labels[idx])


class LoadedSamples(ItemDataset):
    """Samples as ``(loader(path), label)`` from ``_samples``, a list of ``(path, label)``
    (RenderedSST2, Imagenette)."""

    _samples: list[tuple[str, Any]]
    loader: Callable[[str], Any]

    def __len__(self) -> int:
        return len(self._samples)

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        path, label = self._samples[idx]
        return self._transformed(self.loader(path), label)
