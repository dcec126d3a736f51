"""Dataset files are checked when opened: flipped bytes raise IntegrityError naming the file,
the expected and the actual md5; good files are checked once (the verdict is cached)."""

from __future__ import annotations

import gzip
import hashlib
import pickle
import shutil
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest

from lucid.data.datasets import CIFAR10, MNIST, IntegrityError, cifar, utils


@pytest.fixture(autouse=True)
def _private_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def flip_byte(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x01]))


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- CIFAR-10


def test_real_archive_with_a_flipped_byte_is_refused(cifar10_archive: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy" / cifar10_archive.name
    copy.parent.mkdir()
    shutil.copyfile(cifar10_archive, copy)
    flip_byte(copy, int(copy.stat().st_size * 0.8))  # decodes without error: pixels change
    with pytest.raises(IntegrityError) as info:
        CIFAR10(copy.parent, train=False)
    text = str(info.value)
    assert str(copy) in text and f"expected {CIFAR10.tgz_md5}" in text and md5(copy) in text


def cifar_files(n: int = 4) -> dict[str, bytes]:
    """The files of a small CIFAR-10 (n images per batch) in the published pickle layout."""
    rng = np.random.default_rng(0)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    files = {
        name: pickle.dumps({"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                            "labels": rng.integers(0, 10, n).tolist()}, protocol=2)
        for name in names
    }  # fmt: skip
    files["batches.meta"] = pickle.dumps({"label_names": [f"c{i}" for i in range(10)]})
    return files


def _fake_archive(folder: Path) -> Path:
    staging = folder / "staging"
    staging.mkdir(parents=True)
    for name, data in cifar_files().items():
        (staging / name).write_bytes(data)
    archive = folder / "cifar-10-python.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(staging, arcname="cifar-10-batches-py")
    shutil.rmtree(staging)
    return archive


def test_a_damaged_compressed_archive_fails_gzips_crc(tmp_path: Path) -> None:
    archive = _fake_archive(tmp_path)
    flip_byte(archive, archive.stat().st_size - 6)  # inside the CRC trailer: only CRC sees it
    with pytest.raises(IntegrityError, match="corrupt or truncated archive"):
        CIFAR10(tmp_path, train=False)


def test_a_good_archive_is_scanned_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _fake_archive(tmp_path)
    first = CIFAR10(tmp_path, train=False)
    assert utils.verified_md5(archive) == md5(archive)

    def no_second_scan(*args: object) -> None:
        raise AssertionError("the archive was scanned again")

    monkeypatch.setattr(cifar, "scan_archive", no_second_scan)
    np.testing.assert_array_equal(CIFAR10(tmp_path, train=False).data, first.data)
    archive.touch()  # a new mtime: checked again
    with pytest.raises(AssertionError, match="scanned again"):
        CIFAR10(tmp_path, train=False)


def test_published_files_must_all_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = cifar_files()
    published = {name: hashlib.md5(data).hexdigest() for name, data in files.items()}
    monkeypatch.setattr(CIFAR10, "file_md5", published)
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    assert len(CIFAR10(tmp_path, train=False)) == 4
    flip_byte(folder / "test_batch", 200)
    with pytest.raises(IntegrityError) as info:
        CIFAR10(tmp_path, train=False)
    text = str(info.value)
    assert str(folder / "test_batch") in text and published["test_batch"] in text


def test_a_folder_lucid_extracted_is_checked_against_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _fake_archive(tmp_path / "source")

    def fetch(urls: object, root: str, filename: str, md5: str) -> Path:
        Path(root).mkdir(parents=True, exist_ok=True)
        return Path(shutil.copyfile(source, Path(root) / filename))

    monkeypatch.setattr(cifar, "download_url", fetch)
    assert len(CIFAR10(tmp_path / "data", download=True)) == 20
    batch = tmp_path / "data" / "cifar-10-batches-py" / "data_batch_2"
    good = md5(batch)
    flip_byte(batch, 300)
    with pytest.raises(IntegrityError) as info:
        CIFAR10(tmp_path / "data")
    assert str(batch) in str(info.value) and f"expected {good}, got {md5(batch)}" in str(info.value)


# ---------------------------------------------------------------- MNIST


def _plain_copy(mnist_dir: Path, folder: Path) -> None:
    folder.mkdir()
    for stem in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (folder / stem).write_bytes(gzip.decompress((mnist_dir / f"{stem}.gz").read_bytes()))


def test_real_uncompressed_mnist_with_a_flipped_byte_is_refused(
    mnist_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mnist"
    _plain_copy(mnist_dir, folder)
    assert len(MNIST(folder, train=False)) == 10000
    images = folder / "t10k-images-idx3-ubyte"
    flip_byte(images, 5000)
    with pytest.raises(IntegrityError) as info:
        MNIST(folder, train=False)
    expected = MNIST.content_md5["t10k-images-idx3-ubyte"][1]
    assert str(images) in str(info.value) and f"expected {expected}, got {md5(images)}" in str(
        info.value
    )


def test_a_damaged_gzip_names_the_published_md5(mnist_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mnist"
    folder.mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        shutil.copyfile(mnist_dir / name, folder / name)
    flip_byte(folder / "t10k-labels-idx1-ubyte.gz", 2000)
    with pytest.raises(IntegrityError, match="ec29112dd5afa0611ce80d1b7f02629c"):
        MNIST(folder, train=False)


def test_subsets_under_the_published_names_are_not_held_to_its_md5(
    mnist_dir: Path, tmp_path: Path
) -> None:
    for stem, count in [("train-images-idx3-ubyte", 3), ("train-labels-idx1-ubyte", 1)]:
        raw = gzip.decompress((mnist_dir / f"{stem}.gz").read_bytes())
        ndim = raw[3]
        shape = struct.unpack(f">{ndim}I", raw[4 : 4 + 4 * ndim])
        row = int(np.prod(shape[1:]))
        head = raw[:4] + struct.pack(f">{ndim}I", 100, *shape[1:])
        (tmp_path / stem).write_bytes(head + raw[4 + 4 * ndim : 4 + 4 * ndim + 100 * row])
        assert count == ndim
    assert len(MNIST(tmp_path)) == 100
