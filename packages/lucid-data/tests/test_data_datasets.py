"""MNIST / FashionMNIST / CIFAR readers on small files written here in the exact formats."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import CIFAR10, CIFAR100, MNIST, FashionMNIST, read_idx

# ---------------------------------------------------------------- writers


def idx_bytes(arr: np.ndarray) -> bytes:
    header = struct.pack(">BBBB", 0, 0, 0x08, arr.ndim)
    return header + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.astype(np.uint8).tobytes()


def fake_mnist(n_train: int = 12, n_test: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }


def write_mnist(folder: Path, arrays: dict[str, np.ndarray], gz: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for stem, arr in arrays.items():
        raw = idx_bytes(arr)
        if gz:
            (folder / f"{stem}.gz").write_bytes(gzip.compress(raw))
        else:
            (folder / stem).write_bytes(raw)


def cifar_batch(n: int, seed: int, labels_key: str = "labels") -> dict[str, object]:
    rng = np.random.default_rng(seed)
    return {
        "batch_label": "testing batch",
        labels_key: rng.integers(0, 10, n).tolist(),
        "data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
        "filenames": [f"img_{i}.png" for i in range(n)],
    }


def cifar10_files(n: int = 4) -> dict[str, bytes]:
    files = {f"data_batch_{i}": pickle.dumps(cifar_batch(n, i), protocol=2) for i in range(1, 6)}
    files["test_batch"] = pickle.dumps(cifar_batch(n, 9), protocol=2)
    names = [
        "airplane",
        "automobile",
        "bird",
        "cat",
        "deer",
        "dog",
        "frog",
        "horse",
        "ship",
        "truck",
    ]
    files["batches.meta"] = pickle.dumps({"label_names": names, "num_vis": 3072}, protocol=2)
    return files


def write_tar(path: Path, folder: str, files: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


# ---------------------------------------------------------------- MNIST


@pytest.mark.parametrize("layout", [".", "MNIST/raw", "mnist"])
@pytest.mark.parametrize("gz", [True, False])
def test_mnist_reads_every_layout(tmp_path: Path, layout: str, gz: bool) -> None:
    arrays = fake_mnist()
    write_mnist(tmp_path / layout, arrays, gz)
    train, test = MNIST(tmp_path), MNIST(tmp_path, train=False)
    assert len(train) == 12 and len(test) == 5
    np.testing.assert_array_equal(train.data, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(test.targets, arrays["t10k-labels-idx1-ubyte"])
    img, label = train[3]
    assert img.shape == (28, 28) and img.dtype == np.uint8 and isinstance(label, int)
    assert label == arrays["train-labels-idx1-ubyte"][3]
    assert train.class_to_idx["3 - three"] == 3
    assert "Split: Test" in repr(test)


def test_mnist_attributes_have_torchvisions_types(tmp_path: Path) -> None:
    # torchvision's MNIST.data is a uint8 Tensor and .targets an int64 Tensor: programs call
    # Tensor methods on them (pytorch/examples siamese_network: data.unsqueeze(1).clone())
    arrays = fake_mnist()
    write_mnist(tmp_path, arrays, True)
    ds = MNIST(tmp_path)
    assert isinstance(ds.data, lucid.Tensor) and ds.data.dtype == lucid.uint8
    assert isinstance(ds.targets, lucid.Tensor) and ds.targets.dtype == lucid.int64
    assert ds.data.unsqueeze(1).clone().shape == (12, 1, 28, 28)
    labels = arrays["train-labels-idx1-ubyte"]
    np.testing.assert_array_equal((ds.targets == 3).numpy(), labels == 3)
    # a program may replace them (a subset by mask), and samples follow
    keep = ds.targets < 5
    ds.data, ds.targets = ds.data[keep], ds.targets[keep]
    assert len(ds) == int((labels < 5).sum())
    batch = ds.__getitems__([0, 1])
    assert [t for _, t in batch] == labels[labels < 5][:2].tolist()


def test_mnist_transforms_and_batched_getitems_match_per_sample(tmp_path: Path) -> None:
    write_mnist(tmp_path, fake_mnist())
    ds = MNIST(
        tmp_path,
        transform=T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]),
        target_transform=lambda y: y + 100,
    )
    batch = ds.__getitems__([4, 0, 7])
    for (img, target), i in zip(batch, [4, 0, 7]):
        ref_img, ref_target = ds[i]
        np.testing.assert_allclose(img.numpy(), ref_img.numpy(), rtol=1e-6, atol=1e-6)
        assert target == ref_target == int(ds.targets[i]) + 100
    x, y = next(iter(DataLoader(ds, batch_size=5)))
    assert x.shape == (5, 1, 28, 28) and x.dtype == lucid.float32 and y.dtype == lucid.int64


def test_mnist_batched_path_used_when_transforms_allow(tmp_path: Path) -> None:
    write_mnist(tmp_path, fake_mnist())
    ds = MNIST(tmp_path, transform=T.Compose([T.RandomCrop(28, padding=2), T.ToTensor()]))
    calls = []
    ds.__getitem__ = lambda i: calls.append(i)  # type: ignore[method-assign]
    x = [s[0] for s in ds.__getitems__([0, 1, 2])]
    assert len(x) == 3 and x[0].shape == (1, 28, 28) and not calls


def test_fashion_mnist_layouts_and_classes(tmp_path: Path) -> None:
    write_mnist(tmp_path / "FashionMNIST" / "raw", fake_mnist())
    ds = FashionMNIST(tmp_path)
    assert len(ds) == 12 and ds.classes[9] == "Ankle boot"
    write_mnist(tmp_path / "b" / "fashion-mnist", fake_mnist())
    assert len(FashionMNIST(tmp_path / "b", train=False)) == 5


def test_missing_files_say_where_and_how(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError) as info:
        MNIST(tmp_path)
    msg = str(info.value)
    assert "train-images-idx3-ubyte" in msg and str(tmp_path / "MNIST" / "raw") in msg
    assert "download=True" in msg and "by hand" in msg


def test_wrong_magic_names_the_file_and_the_expected_magic(tmp_path: Path) -> None:
    arrays = fake_mnist()
    write_mnist(tmp_path, arrays)
    labels = tmp_path / "train-labels-idx1-ubyte.gz"
    labels.write_bytes(gzip.compress(idx_bytes(arrays["train-images-idx3-ubyte"])))
    with pytest.raises(
        RuntimeError, match=r"train-labels-idx1-ubyte.gz: expected an IDX file with 1 dim"
    ):
        MNIST(tmp_path)
    labels.write_bytes(gzip.compress(b"PK\x03\x04garbage"))
    with pytest.raises(RuntimeError, match=r"not an IDX file: expected magic number 0x00000801"):
        MNIST(tmp_path)


def test_truncated_files_are_reported(tmp_path: Path) -> None:
    arrays = fake_mnist()
    write_mnist(tmp_path, arrays, gz=False)
    images = tmp_path / "train-images-idx3-ubyte"
    images.write_bytes(images.read_bytes()[:-100])
    with pytest.raises(
        RuntimeError, match=r"train-images-idx3-ubyte: truncated or corrupt IDX file"
    ):
        MNIST(tmp_path)
    gz = tmp_path / "g" / "train-images-idx3-ubyte.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress(idx_bytes(arrays["train-images-idx3-ubyte"]))[:-50])
    with pytest.raises(RuntimeError, match="corrupt or truncated gzip file"):
        read_idx(gz)


def test_image_and_label_counts_must_agree(tmp_path: Path) -> None:
    arrays = fake_mnist()
    arrays["train-labels-idx1-ubyte"] = arrays["train-labels-idx1-ubyte"][:-1]
    write_mnist(tmp_path, arrays)
    with pytest.raises(RuntimeError, match="holds 12 images but .* holds 11 labels"):
        MNIST(tmp_path)


# ---------------------------------------------------------------- CIFAR


def test_cifar10_from_archive_and_from_folder_agree(tmp_path: Path) -> None:
    files = cifar10_files()
    write_tar(tmp_path / "a" / "cifar-10-python.tar.gz", "cifar-10-batches-py", files)
    folder = tmp_path / "b" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    from_tar, from_dir = CIFAR10(tmp_path / "a"), CIFAR10(tmp_path / "b")
    assert len(from_tar) == 20 and from_tar.data.shape == (20, 32, 32, 3)
    np.testing.assert_array_equal(from_tar.data, from_dir.data)
    np.testing.assert_array_equal(from_tar.targets, from_dir.targets)
    assert from_tar.classes[3] == "cat"
    first = pickle.loads(files["data_batch_1"])
    np.testing.assert_array_equal(
        from_tar.data[0], first["data"][0].reshape(3, 32, 32).transpose(1, 2, 0)
    )
    assert from_tar[0][1] == first["labels"][0]
    test = CIFAR10(tmp_path / "a", train=False)
    assert len(test) == 4


def test_cifar10_found_in_a_cifar10_subfolder(tmp_path: Path) -> None:
    write_tar(
        tmp_path / "cifar10" / "cifar-10-python.tar.gz", "cifar-10-batches-py", cifar10_files()
    )
    assert len(CIFAR10(tmp_path, train=False)) == 4


def test_cifar100_reads_fine_labels(tmp_path: Path) -> None:
    files = {
        "train": pickle.dumps(cifar_batch(6, 0, "fine_labels"), protocol=2),
        "test": pickle.dumps(cifar_batch(3, 1, "fine_labels"), protocol=2),
        "meta": pickle.dumps({"fine_label_names": [f"c{i}" for i in range(100)]}, protocol=2),
    }
    write_tar(tmp_path / "cifar-100-python.tar.gz", "cifar-100-python", files)
    ds = CIFAR100(tmp_path)
    assert len(ds) == 6 and len(ds.classes) == 100
    assert ds.targets == pickle.loads(files["train"])["fine_labels"]  # a list, as torchvision


def test_cifar_batch_path_matches_per_sample(tmp_path: Path) -> None:
    write_tar(tmp_path / "cifar-10-python.tar.gz", "cifar-10-batches-py", cifar10_files())
    ds = CIFAR10(
        tmp_path, transform=T.Compose([T.ToTensor(), T.Normalize((0.5,) * 3, (0.25,) * 3)])
    )
    for (img, y), i in zip(ds.__getitems__([3, 1]), [3, 1]):
        np.testing.assert_allclose(img.numpy(), ds[i][0].numpy(), rtol=1e-6, atol=1e-6)
        assert y == ds[i][1]


class Evil:
    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, ("echo pwned",))


def test_cifar_refuses_pickles_that_would_run_code(tmp_path: Path) -> None:
    files = cifar10_files()
    files["data_batch_1"] = pickle.dumps({"data": Evil(), "labels": []}, protocol=2)
    write_tar(tmp_path / "cifar-10-python.tar.gz", "cifar-10-batches-py", files)
    with pytest.raises(
        RuntimeError, match=r"data_batch_1: cannot read .*refusing to load (posix|nt).system"
    ):
        CIFAR10(tmp_path)


def test_cifar_missing_and_malformed(tmp_path: Path) -> None:
    with pytest.raises(
        RuntimeError,
        match="Dataset not found: CIFAR10 needs cifar-10-batches-py/ or cifar-10-python.tar.gz",
    ):
        CIFAR10(tmp_path)
    files = cifar10_files()
    del files["test_batch"]
    write_tar(tmp_path / "cifar-10-python.tar.gz", "cifar-10-batches-py", files)
    with pytest.raises(RuntimeError, match="missing test_batch"):
        CIFAR10(tmp_path, train=False)
    files = cifar10_files()
    files["test_batch"] = pickle.dumps({"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]})
    write_tar(tmp_path / "x" / "cifar-10-python.tar.gz", "cifar-10-batches-py", files)
    with pytest.raises(RuntimeError, match=r"test_batch: expected data of shape \(N, 3072\)"):
        CIFAR10(tmp_path / "x", train=False)
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "cifar-10-python.tar.gz").write_bytes(b"\x1f\x8b\x08not really")
    with pytest.raises(RuntimeError, match="corrupt or truncated archive"):
        CIFAR10(tmp_path / "y")


def test_random_split_of_mnist_loads_through_the_batched_path(tmp_path: Path) -> None:
    from lucid.data import random_split

    write_mnist(tmp_path, fake_mnist(n_train=20))
    ds = MNIST(tmp_path, transform=T.Compose([T.ToTensor(), T.Normalize((0.5,), (0.5,))]))
    train, val = random_split(ds, [0.75, 0.25], generator=lucid.Generator().manual_seed(0))
    x, y = next(iter(DataLoader(val, batch_size=5)))
    assert x.shape == (5, 1, 28, 28) and y.dtype == lucid.int64
    expected = [int(ds.targets[i]) for i in val.indices]
    assert y.numpy().tolist() == expected
    np.testing.assert_allclose(x.numpy()[2], ds[val.indices[2]][0].numpy(), rtol=1e-6, atol=1e-6)
