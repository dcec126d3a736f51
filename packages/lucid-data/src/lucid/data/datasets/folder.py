"""DatasetFolder and ImageFolder: samples as files in one folder per class, as torchvision's.

Images are decoded by Pillow, an optional dependency: ``pip install 'lucid-data[images]'``.
``default_loader`` gives an RGB image as a uint8 ``H x W x 3`` numpy array, as lucid's other
datasets give images (not a PIL image; see docs/differences.md, "Data").
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .vision import VisionDataset

__all__ = [
    "IMG_EXTENSIONS",
    "DatasetFolder",
    "ImageFolder",
    "default_loader",
    "find_classes",
    "has_file_allowed_extension",
    "is_image_file",
    "make_dataset",
    "pil_loader",
]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")

_PILLOW_MISSING = (
    "decoding image files needs Pillow, an optional dependency of lucid-data that is not "
    "installed: pip install 'lucid-data[images]' (or pass a loader of your own)"
)


def has_file_allowed_extension(filename: str, extensions: str | tuple[str, ...]) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (lowercase), case-insensitively."""
    suffixes = extensions if isinstance(extensions, str) else tuple(extensions)
    return filename.lower().endswith(suffixes)


def is_image_file(filename: str) -> bool:
    """Whether ``filename`` has one of the ``IMG_EXTENSIONS``."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory: str | os.PathLike[str]) -> tuple[list[str], dict[str, int]]:
    """The class folders of ``directory``, sorted, and each one's index.

    Raises:
        FileNotFoundError: when ``directory`` holds no folder.
    """
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(
    directory: str | os.PathLike[str],
    class_to_idx: dict[str, int] | None = None,
    extensions: str | tuple[str, ...] | None = None,
    is_valid_file: Callable[[str], bool] | None = None,
    allow_empty: bool = False,
) -> list[tuple[str, int]]:
    """``(path, class_index)`` of every valid file under each class folder, in sorted order
    (subfolders included, symbolic links followed).

    Exactly one of ``extensions`` and ``is_valid_file`` says which files count.

    Raises:
        ValueError: for an empty ``class_to_idx``, or when both or neither of ``extensions``
            and ``is_valid_file`` are given.
        FileNotFoundError: when a class has no valid file and ``allow_empty`` is False.
    """
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError(
            "Both extensions and is_valid_file cannot be None or not None at the same time"
        )
    if extensions is not None:
        allowed = extensions
        valid: Callable[[str], bool] = lambda path: has_file_allowed_extension(path, allowed)  # noqa: E731
    else:
        assert is_valid_file is not None
        valid = is_valid_file
    instances: list[tuple[str, int]] = []
    available: set[str] = set()
    for target_class in sorted(class_to_idx):
        class_index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if valid(path):
                    instances.append((path, class_index))
                    available.add(target_class)
    empty = set(class_to_idx) - available
    if empty and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            shown = extensions if isinstance(extensions, str) else ", ".join(extensions)
            msg += f"Supported extensions are: {shown}"
        raise FileNotFoundError(msg)
    return instances


def pil_loader(path: str | os.PathLike[str]) -> np.ndarray:
    """The image file at ``path`` decoded by Pillow, as an RGB uint8 ``H x W x 3`` array.

    Raises:
        ImportError: naming the ``lucid-data[images]`` extra when Pillow is not installed.
    """
    try:
        from PIL import Image  # optional dependency: only the image decoders need it
    except ImportError:
        raise ImportError(_PILLOW_MISSING) from None
    with open(path, "rb") as f:
        img = Image.open(f)
        rgb: np.ndarray = np.array(img.convert("RGB"), dtype=np.uint8)
        return rgb


def default_loader(path: str | os.PathLike[str]) -> np.ndarray:
    """The loader ``ImageFolder`` uses: ``pil_loader``."""
    return pil_loader(path)


class DatasetFolder(VisionDataset):
    """Samples stored as files, one folder per class: ``root/<class>/.../<file>``.

    ``classes`` (sorted folder names), ``class_to_idx``, ``samples`` (``(path, class_index)``
    pairs) and ``targets`` (the class indices, a list) are as in torchvision; ``dataset[i]`` is
    ``(loader(path), class_index)``, each through its transform if given. Override
    ``find_classes`` or ``make_dataset`` for another layout.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        loader: Callable[[str], Any],
        extensions: tuple[str, ...] | None = None,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(
            self.root,
            class_to_idx=class_to_idx,
            extensions=extensions,
            is_valid_file=is_valid_file,
            allow_empty=allow_empty,
        )
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(
        directory: str | os.PathLike[str],
        class_to_idx: dict[str, int],
        extensions: tuple[str, ...] | None = None,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> list[tuple[str, int]]:
        """``(path, class_index)`` pairs of the dataset (see the module's ``make_dataset``).

        Raises:
            ValueError: when ``class_to_idx`` is None, and as ``make_dataset``.
        """
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(
            directory,
            class_to_idx,
            extensions=extensions,
            is_valid_file=is_valid_file,
            allow_empty=allow_empty,
        )

    def find_classes(self, directory: str | os.PathLike[str]) -> tuple[list[str], dict[str, int]]:
        """The class folders of ``directory`` and their indices (see ``find_classes``)."""
        return find_classes(directory)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(sample, target)`` of item ``index``, the target its class index."""
        path, target = self.samples[index]
        sample: Any = self.loader(path)
        out_target: Any = target
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            out_target = self.target_transform(target)
        return sample, out_target

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(DatasetFolder):
    """Images in one folder per class (``root/dog/xxx.png``, ``root/cat/123.png``, ...), the
    files with one of ``IMG_EXTENSIONS`` unless ``is_valid_file`` says which; ``imgs`` is
    ``samples``. Images come from ``loader`` (``default_loader``: an RGB uint8 ``H x W x 3``
    numpy array, decoded by Pillow from the ``lucid-data[images]`` extra).

    Example:
        >>> import tempfile, os
        >>> root = tempfile.mkdtemp(); os.makedirs(os.path.join(root, "cat"))
        >>> ImageFolder(root, allow_empty=True).classes
        ['cat']
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
        is_valid_file: Callable[[str], bool] | None = None,
        allow_empty: bool = False,
    ) -> None:
        super().__init__(
            root,
            loader,
            IMG_EXTENSIONS if is_valid_file is None else None,
            transform=transform,
            target_transform=target_transform,
            is_valid_file=is_valid_file,
            allow_empty=allow_empty,
        )
        self.imgs = self.samples
