"""MNIST and FashionMNIST from the four IDX files (gzipped or plain)."""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import string
import struct
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from lucid import Tensor, from_numpy

from .utils import IntegrityError, download_url, md5_mismatch, record_verified, verified_md5
from .vision import TrainTestDataset

__all__ = ["EMNIST", "KMNIST", "MNIST", "QMNIST", "FashionMNIST", "read_idx"]

_IDX_DTYPES: dict[int, np.dtype[Any]] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def _read_bytes(path: Path, gz_md5: str | None = None) -> bytes:
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] == b"\xfd7zXZ\x00":  # QMNIST's NIST files come xz-compressed
        try:
            return lzma.decompress(raw)
        except lzma.LZMAError as e:
            raise IntegrityError(f"{path}: corrupt or truncated xz file ({e})") from None
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)  # (checks gzip's CRC: a damaged file cannot pass)
    except (EOFError, OSError, zlib.error) as e:
        got = hashlib.md5(raw, usedforsecurity=False).hexdigest()
        known = f"; md5 expected {gz_md5} (the published file), got {got}" if gz_md5 else ""
        raise IntegrityError(f"{path}: corrupt or truncated gzip file ({e}){known}") from None


def read_idx(path: str | os.PathLike[str], ndim: int | None = None) -> np.ndarray:
    """Read an IDX file (gzipped or not) into a numpy array, checking its header and size.

    Raises:
        RuntimeError: naming the file, for a wrong magic number, a wrong number of
            dimensions, or a size that does not match the header (truncated file).
    """
    path = Path(path)
    return _parse_idx(_read_bytes(path), path, ndim)


def _parse_idx(raw: bytes, path: Path, ndim: int | None) -> np.ndarray:
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        expected = f"0x00000{8:X}{ndim:02X}" if ndim else "0x0000TTDD"
        got = raw[:4].hex().upper() if len(raw) >= 4 else f"{len(raw)} bytes"
        raise RuntimeError(
            f"{path}: not an IDX file: expected magic number {expected} "
            f"(ubyte, {ndim or 'D'} dimensions), got 0x{got}"
        )
    file_ndim, dtype = raw[3], _IDX_DTYPES[raw[2]]
    if ndim is not None and file_ndim != ndim:
        raise RuntimeError(
            f"{path}: expected an IDX file with {ndim} dimensions (magic 0x0000{raw[2]:02X}"
            f"{ndim:02X}), got {file_ndim} dimensions (magic 0x{raw[:4].hex().upper()})"
        )
    header = 4 + 4 * file_ndim
    if len(raw) < header:
        raise RuntimeError(f"{path}: truncated IDX header ({len(raw)} bytes)")
    dims = struct.unpack(f">{file_ndim}I", raw[4:header])
    expected_bytes = header + int(np.prod(dims)) * dtype.itemsize
    if len(raw) != expected_bytes:
        raise RuntimeError(
            f"{path}: truncated or corrupt IDX file: its header says shape {dims} "
            f"({expected_bytes} bytes), the file has {len(raw)} bytes"
        )
    arr = np.frombuffer(raw, dtype=dtype, offset=header).reshape(dims)
    native: np.ndarray = arr.astype(dtype.newbyteorder("="))
    return native  # native byte order, and a writable copy


class MNIST(TrainTestDataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images, 28 x 28 uint8.

    The four files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each gzipped ``.gz`` or plain) are
    looked for in ``root``, ``root/MNIST/raw`` (torchvision's layout) and ``root/mnist``. With
    ``download=True`` missing files are fetched from ``mirrors`` (tried in order, md5-checked)
    into ``root/MNIST/raw``.

    ``data`` is a uint8 Tensor (N x 28 x 28) and ``targets`` an int64 Tensor, as in
    torchvision. Samples are ``(image, label)``: a ``28 x 28`` uint8 numpy array and an int.
    A file of the published size must have the published md5 (of its uncompressed bytes;
    checked once per file version), else ``IntegrityError`` names it; subsets are not held
    to it.

    MNIST is by Yann LeCun and Corinna Cortes, under the CC BY-SA 3.0 licence.
    """

    mirrors: ClassVar[list[str]] = [
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    # The published files, uncompressed: stem -> (size, md5). A file of that size (the full
    # split) must have that md5; a file of another size (a subset) is not the published one.
    content_md5: ClassVar[dict[str, tuple[int, str]]] = {
        "train-images-idx3-ubyte": (47_040_016, "6bbc9ace898e44ae57da46a324031adb"),
        "train-labels-idx1-ubyte": (60_008, "a25bea736e30d166cdddb491f175f624"),
        "t10k-images-idx3-ubyte": (7_840_016, "2646ac647ad5339dbf082846283269ea"),
        "t10k-labels-idx1-ubyte": (10_008, "27ae3e4e09519cfbb04c329615203637"),
    }
    folder_aliases: ClassVar[tuple[str, ...]] = ("mnist",)
    _label_ndim: ClassVar[int] = 1
    classes: list[str] = [  # noqa: RUF012 - torchvision's public attribute
        "0 - zero",
        "1 - one",
        "2 - two",
        "3 - three",
        "4 - four",
        "5 - five",
        "6 - six",
        "7 - seven",
        "8 - eight",
        "9 - nine",
    ]

    def _load(self) -> None:
        images_path, labels_path = self._split_files()
        images_stem, labels_stem = self._stems(self.train)
        # torchvision's types: a uint8 Tensor of the images, an int64 Tensor of the labels
        # (sharing the arrays read: no copy)
        self.data = from_numpy(self._read_checked(images_path, images_stem, ndim=3))
        labels = self._read_checked(labels_path, labels_stem, ndim=self._label_ndim)
        labels = labels.astype(np.int64)
        self.targets = from_numpy(labels)
        if len(self.data) != len(self.targets):
            raise RuntimeError(
                f"{images_path} holds {len(self.data)} images but {labels_path} holds "
                f"{len(self.targets)} labels: expected the same number"
            )

    def _read_checked(self, path: Path, stem: str, ndim: int) -> np.ndarray:
        """The IDX file at ``path``, checked against the published md5 of ``stem``."""
        raw = _read_bytes(path, dict(self.resources).get(f"{stem}.gz"))
        size, md5 = self.content_md5.get(stem, (-1, ""))
        if len(raw) == size and verified_md5(path) != md5:  # (checked once per file version)
            got = hashlib.md5(raw, usedforsecurity=False).hexdigest()
            if got != md5:
                raise md5_mismatch(f"{path} (uncompressed)", md5, got)
            record_verified(path, md5)
        return _parse_idx(raw, path, ndim)

    @property
    def raw_folder(self) -> Path:
        """Where ``download=True`` puts the files (torchvision's layout)."""
        return Path(self.root) / type(self).__name__ / "raw"

    def _folders(self) -> list[Path]:
        root, *aliases = super()._folders()
        return [root, self.raw_folder, *aliases]

    def _find(self, stem: str) -> Path | None:
        names = [f"{stem}.gz", stem, f"{stem}.xz"]
        dotted = stem.replace("-idx", ".idx")  # the names some unpackers produce
        names += [f"{dotted}.gz", dotted]
        for folder in self._folders():
            for name in names:
                if (folder / name).is_file():
                    return folder / name
        return None

    def _stems(self, train: bool) -> tuple[str, str]:
        prefix = "train" if train else "t10k"
        return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"

    def _split_files(self) -> tuple[Path, Path]:
        found = [self._find(stem) for stem in self._stems(self.train)]
        if found[0] is None or found[1] is None:
            raise RuntimeError(self._not_found_message())
        return found[0], found[1]

    def _not_found_message(self) -> str:
        files = ", ".join(f for f, _ in self.resources)
        return self._not_found_text(
            f"{', '.join(self._stems(self.train))} (gzipped .gz or plain)",
            f"fetch the files ({files}) from {self.mirrors[0]} elsewhere and place them in "
            f"{self.raw_folder} by hand",
        )

    def _check_exists(self) -> bool:
        stems = [*self._stems(True), *self._stems(False)]
        return all(self._find(stem) is not None for stem in stems)

    def download(self) -> None:
        """Fetch the files that are not present yet (md5-checked, written atomically)."""
        if self._check_exists():
            return
        for filename, md5 in self.resources:
            stem = filename.removesuffix(".gz")
            if self._find(stem) is None:
                urls = [mirror + filename for mirror in self.mirrors]
                download_url(urls, self.raw_folder, filename, md5)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the same format and sizes as MNIST, 10 kinds of clothing."""

    mirrors: ClassVar[list[str]] = [
        "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    ]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    content_md5: ClassVar[dict[str, tuple[int, str]]] = {}  # (only the .gz md5s are published)
    folder_aliases: ClassVar[tuple[str, ...]] = ("fashionmnist", "fashion-mnist", "fashion_mnist")
    classes: list[str] = [  # noqa: RUF012
        "T-shirt/top",
        "Trouser",
        "Pullover",
        "Dress",
        "Coat",
        "Sandal",
        "Shirt",
        "Sneaker",
        "Bag",
        "Ankle boot",
    ]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: cursive Japanese characters, MNIST's format and sizes, 10 classes.

    Files as MNIST's (``root``, ``root/KMNIST/raw`` or ``root/kmnist``).
    """

    mirrors: ClassVar[list[str]] = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources: ClassVar[list[tuple[str, str]]] = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    content_md5: ClassVar[dict[str, tuple[int, str]]] = {}
    folder_aliases: ClassVar[tuple[str, ...]] = ("kmnist",)
    classes: list[str] = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]  # noqa: RUF012


def _verify_str_arg(value: str, name: str, valid: Sequence[str]) -> str:
    if not isinstance(value, str):
        raise ValueError(f"Expected type str for argument {name}, but got type {type(value)}.")
    if value not in valid:
        raise ValueError(
            f"Unknown value '{value}' for argument {name}. "
            f"Valid values are {{{', '.join(repr(v) for v in valid)}}}."
        )
    return value


_EMNIST_MERGED = set("cijklmopsuvwxyz")
_EMNIST_ALL = set(string.digits + string.ascii_letters)


class EMNIST(MNIST):
    """EMNIST: handwritten digits and letters from NIST Special Database 19, in six splits
    (``byclass``, ``bymerge``, ``balanced``, ``letters``, ``digits``, ``mnist``).

    The split's two files (``emnist-<split>-train-images-idx3-ubyte`` and ``...-labels-
    idx1-ubyte``, ``test`` for the test set; gzipped or plain) are looked for in ``root``,
    ``root/EMNIST/raw`` and ``root/emnist``; ``download=True`` fetches the whole archive
    (``gzip.zip``) and extracts its files into ``root/EMNIST/raw``. Images are as the files
    hold them (transposed relative to MNIST's), as in torchvision.
    """

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    classes_split_dict: ClassVar[dict[str, list[str]]] = {
        "byclass": sorted(_EMNIST_ALL),
        "bymerge": sorted(_EMNIST_ALL - _EMNIST_MERGED),
        "balanced": sorted(_EMNIST_ALL - _EMNIST_MERGED),
        "letters": ["N/A", *string.ascii_lowercase],
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }
    resources: ClassVar[list[tuple[str, str]]] = []
    content_md5: ClassVar[dict[str, tuple[int, str]]] = {}
    folder_aliases: ClassVar[tuple[str, ...]] = ("emnist",)

    def __init__(self, root: str | os.PathLike[str], split: str, **kwargs: Any) -> None:
        self.split = _verify_str_arg(split, "split", self.splits)
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    def _stems(self, train: bool) -> tuple[str, str]:
        prefix = f"emnist-{self.split}-{'train' if train else 'test'}"
        return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"

    def _check_exists(self) -> bool:
        return all(self._find(stem) is not None for stem in self._stems(self.train))

    def _not_found_message(self) -> str:
        return self._not_found_text(
            f"{', '.join(self._stems(self.train))} (gzipped .gz or plain)",
            f"fetch {self.url} elsewhere and extract its gzip/ files into {self.raw_folder}",
        )

    def download(self) -> None:
        """Fetch the archive (md5-checked) and extract its files, unless the split is here."""
        if self._check_exists():
            return
        archive = download_url(self.url, self.raw_folder, "gzip.zip", self.md5)
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                name = os.path.basename(member)
                if name.endswith(".gz"):  # keep them gzipped: the reader unpacks them
                    (self.raw_folder / name).write_bytes(zf.read(member))
        archive.unlink()

    def extra_repr(self) -> str:
        return f"Split: {self.split}\n{super().extra_repr()}"


class QMNIST(MNIST):
    """QMNIST: MNIST's images with their NIST writer and class information, and the 50,000
    test digits MNIST left out.

    ``what`` is ``train``, ``test`` (60,000 digits), ``test10k`` (the first 10,000, MNIST's
    test set), ``test50k`` (the other 50,000) or ``nist`` (all NIST digits); by default
    ``train`` or ``test`` after ``train``. ``targets`` is an int64 Tensor of 8 columns per
    digit (class, NIST series, writer id, ...); with ``compat=True`` (the default) a sample's
    target is the class alone, else its row as a Tensor. Files (``qmnist-<train|test>-images-
    idx3-ubyte`` and ``...-labels-idx2-int``, ``xnist-...`` for ``nist``; gzipped, xz or plain)
    are looked for in ``root``, ``root/QMNIST/raw`` and ``root/qmnist``.
    """

    subsets: ClassVar[dict[str, str]] = {
        "train": "train",
        "test": "test",
        "test10k": "test",
        "test50k": "test",
        "nist": "nist",
    }
    qmnist_resources: ClassVar[dict[str, list[tuple[str, str]]]] = {
        "train": [
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "qmnist-train-images-idx3-ubyte.gz",
                "ed72d4157d28c017586c42bc6afe6370",
            ),
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "qmnist-train-labels-idx2-int.gz",
                "0058f8dd561b90ffdd0f734c6a30e5e4",
            ),
        ],
        "test": [
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "qmnist-test-images-idx3-ubyte.gz",
                "1394631089c404de565df7b7aeaf9412",
            ),
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "qmnist-test-labels-idx2-int.gz",
                "5b5b05890a5e13444e108efe57b788aa",
            ),
        ],
        "nist": [
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "xnist-images-idx3-ubyte.xz",
                "7f124b3b8ab81486c9d8c2749c17f834",
            ),
            (
                "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
                "xnist-labels-idx2-int.xz",
                "5ed0e788978e45d4a8bd4b7caec3d79d",
            ),
        ],
    }
    resources: ClassVar[list[tuple[str, str]]] = []
    content_md5: ClassVar[dict[str, tuple[int, str]]] = {}
    folder_aliases: ClassVar[tuple[str, ...]] = ("qmnist",)
    _label_ndim: ClassVar[int] = 2

    def __init__(
        self,
        root: str | os.PathLike[str],
        what: str | None = None,
        compat: bool = True,
        train: bool = True,
        **kwargs: Any,
    ) -> None:
        if what is None:
            what = "train" if train else "test"
        self.what = _verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        super().__init__(root, train, **kwargs)

    def _stems(self, train: bool) -> tuple[str, str]:
        images, labels = (
            os.path.basename(url).rsplit(".", 1)[0]
            for url, _ in self.qmnist_resources[self.subsets[self.what]]
        )
        return images, labels

    def _load(self) -> None:
        super()._load()
        if self.what == "test10k":
            self.data, self.targets = self.data[:10000].clone(), self.targets[:10000].clone()
        elif self.what == "test50k":
            self.data, self.targets = self.data[10000:].clone(), self.targets[10000:].clone()

    def _not_found_message(self) -> str:
        urls = ", ".join(url for url, _ in self.qmnist_resources[self.subsets[self.what]])
        return self._not_found_text(
            f"{', '.join(self._stems(self.train))} (gzipped .gz, .xz or plain)",
            f"fetch {urls} elsewhere and place them in {self.raw_folder} by hand",
        )

    def download(self) -> None:
        """Fetch the files of ``what`` (md5-checked) unless they are present."""
        if self._check_exists():
            return
        for url, md5 in self.qmnist_resources[self.subsets[self.what]]:
            download_url(url, self.raw_folder, os.path.basename(url), md5)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, target)``: the target the class (``compat``) or the digit's 8-int row."""
        img: Any = self.data.numpy()[index]
        row: Tensor = self.targets[index]
        target: Any = int(row[0].item()) if self.compat else row
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        return [self[i] for i in indices]

    def extra_repr(self) -> str:
        return f"Split: {self.what}"
