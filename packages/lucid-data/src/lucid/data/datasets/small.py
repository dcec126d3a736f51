"""Datasets published as a few plain files: EuroSAT (a folder per class), Food101 (images and
JSON split lists), SEMEION (a text table) and USPS (bzip2 LIBSVM files)."""

from __future__ import annotations

import bz2
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._common import FileSamples, ItemDataset, fetch_extract, not_found, verify_str_arg
from .folder import ImageFolder, default_loader
from .utils import download_url

__all__ = ["USPS", "SEMEION", "EuroSAT", "Food101"]


class _ArraySamples(ItemDataset):
    """Gray images in ``data`` (N x H x W uint8), labels in ``labels`` or ``targets``."""

    def _label(self, index: int) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        return self._transformed(self.data[index], self._label(index))

    def __len__(self) -> int:
        return len(self.data)


class SEMEION(_ArraySamples):
    """SEMEION handwritten digits: 1,593 16 x 16 binary images from ``semeion.data`` in
    ``root``. ``data`` is a uint8 numpy array (N x 16 x 16, 0 or 255) and ``labels`` an int64
    numpy array, as in torchvision (whose ``download`` defaults to True too)."""

    url = "http://archive.ics.uci.edu/ml/machine-learning-databases/semeion/semeion.data"
    filename = "semeion.data"
    md5_checksum = "cb545d371d2ce14ec121470795a77432"

    def __init__(
        self,
        root: str | os.PathLike[str],
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = True,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        if download:
            self.download()
        path = Path(self.root) / self.filename
        if not path.is_file():
            raise not_found("SEMEION", f"{self.filename} in {self.root}", self.url)
        table = np.loadtxt(path)
        if table.ndim != 2 or table.shape[1] != 266:
            raise RuntimeError(
                f"{path}: expected rows of 266 numbers (256 pixels, 10 one-hot labels), got "
                f"shape {table.shape}"
            )
        self.data: np.ndarray = (table[:, :256] * 255).astype("uint8").reshape(-1, 16, 16)
        self.labels: np.ndarray = np.nonzero(table[:, 256:])[1]

    def _label(self, index: int) -> int:
        return int(self.labels[index])

    def download(self) -> None:
        """Fetch ``semeion.data`` (md5-checked) unless it is present."""
        if not (Path(self.root) / self.filename).is_file():
            download_url(self.url, self.root, self.filename, self.md5_checksum)


class USPS(_ArraySamples):
    """USPS handwritten digits, 16 x 16 gray, from LIBSVM's ``usps.bz2`` (train, 7,291) or
    ``usps.t.bz2`` (test, 2,007) in ``root``. ``data`` is a uint8 numpy array (N x 16 x 16)
    and ``targets`` a list of ints (0-9), as in torchvision."""

    split_list: dict[str, list[str]] = {  # noqa: RUF012 - torchvision's public attribute
        "train": [
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2",
            "usps.bz2",
            "ec16c51db3855ca6c91edd34d0e9b197",
        ],
        "test": [
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2",
            "usps.t.bz2",
            "8ea070ee2aca1ac39742fdd1ef5ed118",
        ],
    }

    def __init__(
        self,
        root: str | os.PathLike[str],
        train: bool = True,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        url, filename, checksum = self.split_list["train" if train else "test"]
        full_path = Path(self.root) / filename
        if download and not full_path.exists():
            download_url(url, self.root, filename, md5=checksum)
        if not full_path.is_file():
            raise not_found("USPS", f"{filename} in {self.root}", url)
        with bz2.open(full_path) as fp:
            raw_data = [line.decode().split() for line in fp.readlines()]
        values = [[x.split(":")[-1] for x in row[1:]] for row in raw_data]
        imgs = np.asarray(values, dtype=np.float32).reshape((-1, 16, 16))
        self.data: np.ndarray = ((imgs + 1) / 2 * 255).astype(dtype=np.uint8)
        self.targets: list[int] = [int(row[0]) - 1 for row in raw_data]

    def _label(self, index: int) -> int:
        return int(self.targets[index])


class EuroSAT(ImageFolder):
    """EuroSAT: 27,000 64 x 64 Sentinel-2 RGB tiles of 10 land-use classes, a folder per class
    in ``root/eurosat/2750`` (as torchvision; ``root`` stays the path given)."""

    url = (
        "https://huggingface.co/datasets/torchgeo/eurosat/resolve/"
        "c877bcd43f099cd0196738f714544e355477f3fd/EuroSAT.zip"
    )
    md5 = "c8fa014336c82ac7804f0398fcb19387"

    def __init__(
        self,
        root: str | os.PathLike[str],
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        given = os.path.expanduser(os.fspath(root))
        self._base_folder = os.path.join(given, "eurosat")
        self._data_folder = os.path.join(self._base_folder, "2750")
        if download:
            self.download()
        if not os.path.isdir(self._data_folder):
            raise not_found("EuroSAT", f"the class folders in {self._data_folder}", self.url)
        super().__init__(
            self._data_folder, transform=transform, target_transform=target_transform, loader=loader
        )
        self.root = given

    def __len__(self) -> int:
        return len(self.samples)

    def download(self) -> None:
        """Fetch and extract EuroSAT.zip (md5-checked) unless ``root/eurosat/2750`` exists."""
        if os.path.isdir(self._data_folder):
            return
        fetch_extract(self.url, self._base_folder, self.md5)


class Food101(FileSamples):
    """Food-101: 101,000 images of 101 dishes, from ``root/food-101`` (``images/<class>/<id>
    .jpg`` and ``meta/<split>.json``); ``split`` is ``train`` (75,750) or ``test`` (25,250).
    ``classes`` are sorted, samples are ``(loader(path), label)``, as in torchvision."""

    _URL = "http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz"
    _MD5 = "85eeb15f3717b99a5da872d97d918f87"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(self.root) / "food-101"
        self._meta_folder = self._base_folder / "meta"
        self._images_folder = self._base_folder / "images"
        if download:
            self._download()
        if not self._check_exists():
            raise not_found("Food101", f"meta/ and images/ in {self._base_folder}", self._URL)
        with open(self._meta_folder / f"{split}.json") as f:
            metadata: dict[str, list[str]] = json.load(f)
        self.classes = sorted(metadata)
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes)), strict=True))
        self._labels: list[int] = []
        self._image_files: list[Path] = []
        for class_label, im_rel_paths in metadata.items():
            self._labels += [self.class_to_idx[class_label]] * len(im_rel_paths)
            self._image_files += [
                self._images_folder.joinpath(*f"{rel}.jpg".split("/")) for rel in im_rel_paths
            ]
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}"

    def _check_exists(self) -> bool:
        return self._meta_folder.is_dir() and self._images_folder.is_dir()

    def _download(self) -> None:
        if self._check_exists():
            return
        fetch_extract(self._URL, self.root, self._MD5)
