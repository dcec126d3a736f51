"""MNIST and FashionMNIST from the four IDX files (gzipped or plain)."""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import zlib
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from lucid import from_numpy

from .utils import IntegrityError, download_url, md5_mismatch, record_verified, verified_md5
from .vision import TrainTestDataset

__all__ = ["MNIST", "FashionMNIST", "read_idx"]

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
        labels = self._read_checked(labels_path, labels_stem, ndim=1).astype(np.int64)
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
        names = [f"{stem}.gz", stem]
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
