"""CIFAR-10 and CIFAR-100 from the "python version" archive or its extracted folder."""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import pickle
import tarfile
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .utils import (
    IntegrityError,
    calculate_md5,
    download_url,
    extract_archive,
    md5_mismatch,
    record_verified,
    scan_archive,
    verified_md5,
)
from .vision import TrainTestDataset

__all__ = ["CIFAR10", "CIFAR100"]

# What a CIFAR batch pickle may reference: numpy array reconstruction, nothing else.
_ALLOWED_GLOBALS = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("_codecs", "encode"),
}


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles numpy arrays, lists, dicts and strings only: a crafted file cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(
                f"refusing to load {module}.{name}: a CIFAR batch holds only numpy arrays, "
                "lists and strings"
            )
        if module.startswith(("numpy.core", "numpy._core")):
            try:
                return getattr(importlib.import_module("numpy._core.multiarray"), name)
            except ImportError:  # numpy 1.x
                return getattr(importlib.import_module("numpy.core.multiarray"), name)
        return super().find_class(module, name)


def _unpickle(raw: bytes, where: str) -> dict[str, Any]:
    try:
        entry = _ArrayUnpickler(io.BytesIO(raw), encoding="latin1").load()
    except Exception as e:
        raise RuntimeError(f"{where}: cannot read this CIFAR batch file ({e})") from None
    if not isinstance(entry, dict):
        raise RuntimeError(f"{where}: expected a pickled dict, got {type(entry).__name__}")
    return {k.decode() if isinstance(k, bytes) else k: v for k, v in entry.items()}


class CIFAR10(TrainTestDataset):
    """CIFAR-10: 50,000 training and 10,000 test colour images, 32 x 32, 10 classes.

    Reads ``cifar-10-batches-py/`` (the extracted archive) or ``cifar-10-python.tar.gz`` (read
    directly, no extraction needed), found in ``root`` or ``root/cifar10``. With
    ``download=True`` the archive is fetched (md5-checked) and extracted into ``root``.

    Files are checked when opened: the archive once (the verdict is kept in the user's cache
    folder by size and mtime) by its published md5, else, for another packing of the data, by
    gzip's CRC over the whole stream and by the published md5s of its files; an extracted
    folder by the md5s recorded when lucid extracted it, else by the published ones. Where
    some file is the published one, every file must be. A mismatch raises ``IntegrityError``
    naming the file, the expected and the actual md5.

    ``data`` is a uint8 NumPy array (N x 32 x 32 x 3) and ``targets`` a list of ints, as in
    torchvision. Samples are ``(image, label)``: a ``32 x 32 x 3`` uint8 numpy array and an
    int.
    """

    base_folder: ClassVar[str] = "cifar-10-batches-py"
    urls: ClassVar[list[str]] = ["https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"]
    filename: ClassVar[str] = "cifar-10-python.tar.gz"
    tgz_md5: ClassVar[str] = "c58f30108f718f92721af3b95e74349a"
    file_md5: ClassVar[dict[str, str]] = {  # the published files (torchvision's list)
        "data_batch_1": "c99cafc152244af753f735de768cd75f",
        "data_batch_2": "d4bba439e000b95fd0a9bffe97cbabec",
        "data_batch_3": "54ebc095f3ab1f0389bbae665268c751",
        "data_batch_4": "634d18415352ddfa80567beed471001a",
        "data_batch_5": "482c414d41f54cd18b22e5b47cb7c3cb",
        "test_batch": "40351d587109b95175f43aff81a1287e",
        "batches.meta": "5ff9c542aee3614f3951f8cda6e48888",
    }
    train_list: ClassVar[list[str]] = [f"data_batch_{i}" for i in range(1, 6)]
    test_list: ClassVar[list[str]] = ["test_batch"]
    meta: ClassVar[dict[str, str]] = {"filename": "batches.meta", "key": "label_names"}
    labels_key: ClassVar[str] = "labels"
    folder_aliases: ClassVar[tuple[str, ...]] = ("cifar10", "cifar-10", "CIFAR10")

    def _load(self) -> None:
        files = self.train_list if self.train else self.test_list
        blobs = self._read_files([*files, self.meta["filename"]])
        data, targets = [], []
        for name in files:
            entry = _unpickle(blobs[name], name)
            images, labels = self._check_batch(entry, name)
            data.append(images)
            targets.append(labels)
        self.data = np.ascontiguousarray(
            np.concatenate(data).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        )
        self.targets = np.concatenate(targets).tolist()  # a list of ints, as torchvision
        meta = _unpickle(blobs[self.meta["filename"]], self.meta["filename"])
        self.classes = [str(c) for c in meta[self.meta["key"]]]

    def _check_batch(self, entry: dict[str, Any], name: str) -> tuple[np.ndarray, np.ndarray]:
        if "data" not in entry or self.labels_key not in entry:
            raise RuntimeError(
                f"{name}: expected keys 'data' and {self.labels_key!r}, got {sorted(entry)}"
            )
        images = np.asarray(entry["data"], dtype=np.uint8)
        labels = np.asarray(entry[self.labels_key], dtype=np.int64)
        if images.ndim != 2 or images.shape[1] != 3072 or len(images) != len(labels):
            raise RuntimeError(
                f"{name}: expected data of shape (N, 3072) and N labels, got data "
                f"{images.shape} and {len(labels)} labels"
            )
        return images, labels

    def _locate(self) -> Path | None:
        """The extracted folder, else the archive, in the first candidate folder having one."""
        for folder in self._folders():
            if (folder / self.base_folder / self.meta["filename"]).is_file():
                return folder / self.base_folder
            if (folder / self.meta["filename"]).is_file() and folder.name == self.base_folder:
                return folder
            if (folder / self.filename).is_file():
                return folder / self.filename
        return None

    def _read_files(self, names: list[str]) -> dict[str, bytes]:
        source = self._locate()
        if source is None:
            raise RuntimeError(self._not_found_message())
        if source.is_dir():
            return self._read_folder(source, names)
        return self._read_archive(source, names)

    def _read_folder(self, folder: Path, names: list[str]) -> dict[str, bytes]:
        missing = [n for n in names if not (folder / n).is_file()]
        if missing:
            raise RuntimeError(f"{folder}: missing {', '.join(missing)}")
        blobs = {n: (folder / n).read_bytes() for n in names}
        found = {n: hashlib.md5(b, usedforsecurity=False).hexdigest() for n, b in blobs.items()}
        recorded = _read_manifest(folder)
        if recorded is None:
            self._check_published(folder, found)
        for name, md5 in found.items():
            if recorded is not None and recorded.get(name, md5) != md5:
                raise md5_mismatch(str(folder / name), recorded[name], md5)
        return blobs

    def _check_published(self, where: Path, found: dict[str, str]) -> None:
        """Where some of the files ``found`` (name -> md5) are the published ones, all must be;
        where none is, they are another packing of the data that no published md5 covers."""
        if not any(self.file_md5.get(name) == md5 for name, md5 in found.items()):
            return
        for name, md5 in found.items():
            expected = self.file_md5.get(name, md5)
            if md5 != expected:
                raise md5_mismatch(f"{where}/{name}", expected, md5)

    def _read_archive(self, archive: Path, names: list[str]) -> dict[str, bytes]:
        wanted = {f"{self.base_folder}/{n}": n for n in names}
        if verified_md5(archive) is None:
            blobs = self._verify_archive(archive, wanted)
        else:
            blobs = self._stream_archive(archive, wanted)
        missing = [n for n in names if n not in blobs]
        if missing:
            raise RuntimeError(
                f"{archive}: expected {', '.join(wanted)} in the archive; missing "
                f"{', '.join(missing)}"
            )
        return blobs

    def _verify_archive(self, archive: Path, wanted: dict[str, str]) -> dict[str, bytes]:
        """The wanted files, read in the one pass that checks the whole archive."""
        try:
            scan = scan_archive(archive, wanted)
        except IntegrityError as e:
            raise IntegrityError(
                f"{e}: md5 expected {self.tgz_md5} (the published archive), got "
                f"{calculate_md5(archive)}; delete it and download it again (download=True)"
            ) from None
        if scan.md5 != self.tgz_md5:
            prefix = f"{self.base_folder}/"
            inside = {k[len(prefix) :]: v for k, v in scan.members.items() if k.startswith(prefix)}
            self._check_published(archive, inside)
        record_verified(archive, scan.md5)
        return {wanted[k]: v for k, v in scan.blobs.items()}

    def _stream_archive(self, archive: Path, wanted: dict[str, str]) -> dict[str, bytes]:
        """The wanted files of an archive already checked, stopping once they are read."""
        blobs: dict[str, bytes] = {}
        try:
            with tarfile.open(archive, "r|*") as tf:  # one sequential pass over the archive
                for member in tf:
                    if member.name in wanted and member.isfile():
                        f = tf.extractfile(member)
                        assert f is not None
                        blobs[wanted[member.name]] = f.read()
                        if len(blobs) == len(wanted):
                            break
        except (tarfile.TarError, OSError, EOFError) as e:
            raise RuntimeError(f"{archive}: corrupt or truncated archive ({e})") from None
        return blobs

    def _not_found_message(self) -> str:
        return self._not_found_text(
            f"{self.base_folder}/ or {self.filename}",
            f"fetch {self.urls[0]} elsewhere (md5 {self.tgz_md5}) and place it in {self.root} "
            "by hand",
        )

    def download(self) -> None:
        """Fetch the archive (md5-checked, atomic) and extract it into ``root``."""
        if self._locate() is not None:
            return
        archive = download_url(self.urls, self.root, self.filename, self.tgz_md5)
        extract_archive(archive, self.root)
        _write_manifest(Path(self.root) / self.base_folder)


# The md5 of each file of a folder lucid extracted (from an archive whose md5 it checked).
_MANIFEST = ".lucid-md5.json"


def _write_manifest(folder: Path) -> None:
    md5s = {p.name: calculate_md5(p) for p in sorted(folder.iterdir()) if p.is_file()}
    md5s.pop(_MANIFEST, None)
    (folder / _MANIFEST).write_text(json.dumps(md5s, indent=1))


def _read_manifest(folder: Path) -> dict[str, str] | None:
    try:
        recorded = json.loads((folder / _MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return recorded if isinstance(recorded, dict) else None


class CIFAR100(CIFAR10):
    """CIFAR-100: the same images format as CIFAR-10, 100 fine classes."""

    base_folder: ClassVar[str] = "cifar-100-python"
    urls: ClassVar[list[str]] = ["https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"]
    filename: ClassVar[str] = "cifar-100-python.tar.gz"
    tgz_md5: ClassVar[str] = "eb9058c3a382ffc7106e4002c42a8d85"
    file_md5: ClassVar[dict[str, str]] = {
        "train": "16019d7e3df5f24257cddd939b257f8d",
        "test": "f0ef6b0ae62326f3e7ffdfab6717acfc",
        "meta": "7973b15100ade9c7d40fb424638fde48",
    }
    train_list: ClassVar[list[str]] = ["train"]
    test_list: ClassVar[list[str]] = ["test"]
    meta: ClassVar[dict[str, str]] = {"filename": "meta", "key": "fine_label_names"}
    labels_key: ClassVar[str] = "fine_labels"
    folder_aliases: ClassVar[tuple[str, ...]] = ("cifar100", "cifar-100", "CIFAR100")
