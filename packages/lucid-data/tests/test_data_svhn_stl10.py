"""SVHN and Flowers102 (MATLAB level-5 .mat files, written here byte by byte) and STL10 (its
binary files): torchvision's attributes, types and samples."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from lucid.data.datasets import STL10, SVHN, Flowers102
from lucid.data.datasets._matfile import load_mat

_MI = {np.dtype(np.uint8): (2, 9), np.dtype(np.float64): (9, 6)}  # dtype -> (miType, mxClass)


def _element(mtype: int, payload: bytes) -> bytes:
    pad = -len(payload) % 8
    return struct.pack("<II", mtype, len(payload)) + payload + b"\0" * pad


def _matrix(name: str, arr: np.ndarray) -> bytes:
    mi_type, mx_class = _MI[arr.dtype]
    body = (
        _element(6, struct.pack("<II", mx_class, 0))
        + _element(5, struct.pack(f"<{arr.ndim}i", *arr.shape))
        + _element(1, name.encode())
        + _element(mi_type, arr.tobytes(order="F"))
    )
    return _element(14, body)


def write_mat(path: Path, arrays: dict[str, np.ndarray], compress: bool = True) -> None:
    """A MATLAB level-5 file as MATLAB writes it: 128-byte header, (compressed) matrices."""
    header = b"MATLAB 5.0 MAT-file, written by a test".ljust(116, b" ")
    header += b"\0" * 8 + struct.pack("<H", 0x0100) + b"IM"
    body = b""
    for name, arr in arrays.items():
        element = _matrix(name, arr)
        if compress:
            packed = zlib.compress(element)
            element = struct.pack("<II", 15, len(packed)) + packed
        body += element
    path.write_bytes(header + body)


def _svhn_arrays(n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8)
    y = np.array([[10], [1], [2], [10], [9]], dtype=np.float64)[:n]
    return x, y


@pytest.mark.parametrize("compress", [True, False])
def test_load_mat_reads_numeric_matrices(tmp_path: Path, compress: bool) -> None:
    x, y = _svhn_arrays()
    write_mat(tmp_path / "a.mat", {"X": x, "y": y}, compress=compress)
    loaded = load_mat(tmp_path / "a.mat")
    np.testing.assert_array_equal(loaded["X"], x)
    np.testing.assert_array_equal(loaded["y"], y)
    assert loaded["X"].dtype == np.uint8 and loaded["y"].dtype == np.float64


def test_svhn_attributes_and_samples(tmp_path: Path) -> None:
    x, y = _svhn_arrays()
    write_mat(tmp_path / "test_32x32.mat", {"X": x, "y": y})
    ds = SVHN(str(tmp_path), split="test")
    assert len(ds) == 5 and ds.split == "test" and ds.filename == "test_32x32.mat"
    assert isinstance(ds.data, np.ndarray) and ds.data.shape == (5, 3, 32, 32)
    assert ds.data.dtype == np.uint8
    assert isinstance(ds.labels, np.ndarray) and ds.labels.dtype == np.int64
    assert ds.labels.tolist() == [0, 1, 2, 0, 9]  # the files' 10 is the digit 0
    img, label = ds[1]
    assert img.shape == (32, 32, 3) and label == 1
    np.testing.assert_array_equal(img, x[:, :, :, 1])
    assert "Split: test" in repr(ds)


def test_svhn_missing_file_and_bad_split(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"train_32x32\.mat"):
        SVHN(tmp_path)
    with pytest.raises(ValueError, match="split"):
        SVHN(tmp_path, split="valid")


def _write_stl10(root: Path, n_train: int = 4, n_unlabeled: int = 2) -> np.ndarray:
    folder = root / "stl10_binary"
    folder.mkdir()
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (n_train, 3, 96, 96), dtype=np.uint8)  # N, C, H, W
    # the files hold each channel column-major
    images.transpose(0, 1, 3, 2).tofile(folder / "train_X.bin")
    np.array([1, 2, 10, 3], np.uint8)[:n_train].tofile(folder / "train_y.bin")
    images[:2].transpose(0, 1, 3, 2).tofile(folder / "test_X.bin")
    np.array([5, 6], np.uint8).tofile(folder / "test_y.bin")
    rng.integers(0, 256, (n_unlabeled, 3, 96, 96), dtype=np.uint8).tofile(
        folder / "unlabeled_X.bin"
    )
    (folder / "class_names.txt").write_text("airplane\nbird\ncar\ncat\ndeer\ndog\nhorse\n")
    (folder / "fold_indices.txt").write_text("0 2\n1 3\n" * 5)
    return images


def test_stl10_splits_folds_and_samples(tmp_path: Path) -> None:
    images = _write_stl10(tmp_path)
    ds = STL10(tmp_path)
    assert ds.data.shape == (4, 3, 96, 96) and ds.data.dtype == np.uint8
    assert ds.labels is not None and ds.labels.tolist() == [0, 1, 9, 2]
    assert ds.classes[:2] == ["airplane", "bird"]
    img, label = ds[2]
    assert img.shape == (96, 96, 3) and label == 9
    np.testing.assert_array_equal(img, images[2].transpose(1, 2, 0))
    fold = STL10(tmp_path, split="train", folds=1)
    assert len(fold) == 2 and fold.labels is not None and fold.labels.tolist() == [1, 2]
    both = STL10(tmp_path, split="train+unlabeled")
    assert len(both) == 6 and both.labels is not None and both.labels[-1] == -1
    unlabeled = STL10(tmp_path, split="unlabeled")
    assert len(unlabeled) == 2 and unlabeled[0][1] == -1
    assert STL10(tmp_path, split="test").labels.tolist() == [4, 5]  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="folds"):
        STL10(tmp_path, folds=10)


def test_stl10_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"test_X\.bin, test_y\.bin"):
        STL10(tmp_path, split="test")


def _jpg(path: Path, value: int) -> None:
    image = pytest.importorskip("PIL.Image")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.fromarray(np.full((4, 4, 3), value, np.uint8)).save(path)


def test_flowers102_splits_from_the_mat_files(tmp_path: Path) -> None:
    base = tmp_path / "flowers-102"
    for i in (1, 2, 3):
        _jpg(base / "jpg" / f"image_{i:05d}.jpg", 60 * i)
    write_mat(base / "imagelabels.mat", {"labels": np.array([[77.0, 1.0, 102.0]])})
    write_mat(
        base / "setid.mat",
        {
            "trnid": np.array([[3.0, 1.0]]),
            "valid": np.array([[2.0]]),
            "tstid": np.array([[1.0]]),
        },
    )
    ds = Flowers102(tmp_path)
    assert len(ds) == 2 and len(ds.classes) == 102
    img, label = ds[0]
    assert label == 101 and img.shape == (4, 4, 3)
    assert ds[1][1] == 76
    val = Flowers102(tmp_path, split="val")
    assert [val[i][1] for i in range(len(val))] == [0]
    assert "split=train" in repr(ds)
    with pytest.raises(RuntimeError, match="setid.mat"):
        Flowers102(tmp_path / "nowhere")
