"""SVHN (house-number digits, MATLAB ``.mat`` files) and STL10 (``stl10_binary`` files)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._matfile import load_mat
from .mnist import _verify_str_arg
from .utils import download_url, extract_archive
from .vision import VisionDataset

__all__ = ["STL10", "SVHN"]


def _not_found(name: str, folder: Path, files: Sequence[str], url: str) -> RuntimeError:
    return RuntimeError(
        f"Dataset not found: {name} needs {', '.join(files)} in {folder}. "
        f"Use download=True to download it, or, offline, fetch {url} elsewhere and put the "
        f"files in {folder} by hand."
    )


class SVHN(VisionDataset):
    """The Street View House Numbers, cropped 32 x 32 digits: ``split`` ``train`` (73,257),
    ``test`` (26,032) or ``extra`` (531,131), from ``<split>_32x32.mat`` in ``root``.

    As torchvision: ``data`` is a uint8 numpy array ``N x 3 x 32 x 32``, ``labels`` an int64
    numpy array with the digit 0 labelled 0 (the files say 10). A sample is ``(image, label)``
    with the image a ``32 x 32 x 3`` uint8 array. The .mat files are read with SciPy when it is
    installed, else with lucid's reader of MATLAB level-5 numeric arrays.
    """

    split_list: dict[str, list[str]] = {  # noqa: RUF012 - torchvision's public attribute
        "train": [
            "http://ufldl.stanford.edu/housenumbers/train_32x32.mat",
            "train_32x32.mat",
            "e26dedcc434d2e4c54c9b2d4a06d8373",
        ],
        "test": [
            "http://ufldl.stanford.edu/housenumbers/test_32x32.mat",
            "test_32x32.mat",
            "eb5a983be6a315427106f1b164d9cef3",
        ],
        "extra": [
            "http://ufldl.stanford.edu/housenumbers/extra_32x32.mat",
            "extra_32x32.mat",
            "a93ce644f1a588dc4d68dda5feec44a7",
        ],
    }
    classes: list[str] = [str(d) for d in range(10)]  # noqa: RUF012

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = _verify_str_arg(split, "split", tuple(self.split_list))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        path = Path(self.root) / self.filename
        if not path.is_file():
            raise _not_found("SVHN", Path(self.root), [self.filename], self.url)
        loaded = load_mat(path)
        if "X" not in loaded or "y" not in loaded:
            raise RuntimeError(f"{path}: expected the arrays X and y, got {sorted(loaded)}")
        self.data: np.ndarray = np.ascontiguousarray(np.transpose(loaded["X"], (3, 2, 0, 1)))
        self.labels: np.ndarray = loaded["y"].astype(np.int64).squeeze(axis=-1)
        np.place(self.labels, self.labels == 10, 0)
        if len(self.data) != len(self.labels):
            raise RuntimeError(
                f"{path} holds {len(self.data)} images but {len(self.labels)} labels"
            )

    @property
    def targets(self) -> np.ndarray:
        """The labels (torchvision's SVHN calls them ``labels`` only)."""
        return self.labels

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = np.transpose(self.data[index], (1, 2, 0))
        target: Any = int(self.labels[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return len(self.data)

    def download(self) -> None:
        """Fetch the split's .mat file (md5-checked) unless it is present."""
        if not (Path(self.root) / self.filename).is_file():
            download_url(self.url, self.root, self.filename, self.file_md5)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"


class STL10(VisionDataset):
    """STL-10: 96 x 96 colour images of 10 classes, from the ``stl10_binary`` folder in
    ``root``: ``split`` ``train`` (5,000; ``folds`` 0-9 picks one of the ten 1,000-image
    folds), ``test`` (8,000), ``unlabeled`` (100,000, label -1) or ``train+unlabeled``.

    As torchvision: ``data`` is a uint8 numpy array ``N x 3 x 96 x 96``, ``labels`` a numpy
    array (0-based); ``classes`` is read from ``class_names.txt``. A sample is ``(image,
    label)`` with the image a ``96 x 96 x 3`` uint8 array.
    """

    base_folder = "stl10_binary"
    url = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
    filename = "stl10_binary.tar.gz"
    tgz_md5 = "91f7769df0f17e558f3565bffb0c7dfb"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    train_list = [  # noqa: RUF012
        ["train_X.bin", "918c2871b30a85fa023e0c44e0bee87f"],
        ["train_y.bin", "5a34089d4802c674881badbb80307741"],
        ["unlabeled_X.bin", "5242ba1fed5e4be9e1e742405eb56ca4"],
    ]
    test_list = [  # noqa: RUF012
        ["test_X.bin", "7f263ba9f9e0b06b93213547f721ac82"],
        ["test_y.bin", "36f9794fa4beb8a2c72628de14fa638e"],
    ]
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        folds: int | None = None,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = _verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        if download:
            self.download()
        missing = [name for name in self._needed() if not (self._folder / name).is_file()]
        if missing:
            raise _not_found("STL10", self._folder, missing, self.url)
        self.labels: np.ndarray | None
        if self.split in ("train", "train+unlabeled"):
            self.data, self.labels = self._loadfile("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if self.split == "train+unlabeled":
                unlabeled, _ = self._loadfile("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                assert self.labels is not None
                self.labels = np.concatenate((self.labels, np.asarray([-1] * unlabeled.shape[0])))
        elif self.split == "unlabeled":
            self.data, _ = self._loadfile("unlabeled_X.bin")
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self._loadfile("test_X.bin", "test_y.bin")
        class_file = self._folder / self.class_names_file
        if class_file.is_file():
            self.classes = class_file.read_text().splitlines()

    @property
    def _folder(self) -> Path:
        return Path(self.root) / self.base_folder

    def _needed(self) -> list[str]:
        if self.split == "test":
            return ["test_X.bin", "test_y.bin"]
        names = [] if self.split == "unlabeled" else ["train_X.bin", "train_y.bin"]
        if "unlabeled" in self.split:
            names.append("unlabeled_X.bin")
        if self.folds is not None and self.split != "unlabeled":
            names.append(self.folds_list_file)
        return names

    def _verify_folds(self, folds: int | None) -> int | None:
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError(
                f"Value for argument folds should be in the range [0, 10), but got {folds}."
            )
        raise ValueError(
            f"Expected type None or int for argument folds, but got type {type(folds)}."
        )

    def _loadfile(
        self, data_file: str, labels_file: str | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        labels = None
        if labels_file:
            labels = np.fromfile(self._folder / labels_file, dtype=np.uint8) - 1  # 0-based
        everything = np.fromfile(self._folder / data_file, dtype=np.uint8)
        if everything.size % (3 * 96 * 96):
            raise RuntimeError(
                f"{self._folder / data_file}: {everything.size} bytes is not a whole number of "
                f"3 x 96 x 96 images (truncated file?)"
            )
        images = np.transpose(everything.reshape(-1, 3, 96, 96), (0, 1, 3, 2))
        if labels is not None and len(labels) != len(images):
            raise RuntimeError(
                f"{self._folder / data_file} holds {len(images)} images but "
                f"{labels_file} holds {len(labels)} labels"
            )
        return np.ascontiguousarray(images), labels

    def _load_folds(self, folds: int | None) -> None:
        if folds is None:
            return
        lines = (self._folder / self.folds_list_file).read_text().splitlines()
        list_idx = np.array(lines[folds].split(), dtype=np.int64)
        self.data = self.data[list_idx]
        if self.labels is not None:
            self.labels = self.labels[list_idx]

    @property
    def targets(self) -> np.ndarray | None:
        """The labels (torchvision's STL10 calls them ``labels`` only)."""
        return self.labels

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = np.transpose(self.data[index], (1, 2, 0))
        target: Any = int(self.labels[index]) if self.labels is not None else None
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def download(self) -> None:
        """Fetch and extract the archive (md5-checked) unless the split's files are here."""
        if all((self._folder / name).is_file() for name in self._needed()):
            return
        archive = download_url(self.url, self.root, self.filename, self.tgz_md5)
        extract_archive(archive, self.root)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
