"""FakeData, ImageFolder/DatasetFolder and the MNIST family (KMNIST, EMNIST, QMNIST)."""

from __future__ import annotations

import gzip
import lzma
import struct
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import (
    EMNIST,
    IMG_EXTENSIONS,
    KMNIST,
    QMNIST,
    DatasetFolder,
    FakeData,
    ImageFolder,
    default_loader,
    find_classes,
    has_file_allowed_extension,
    make_dataset,
)

# ---------------------------------------------------------------- FakeData


def test_fakedata_same_sample_for_same_index_and_offset_changes_it() -> None:
    ds = FakeData(size=5, image_size=(3, 6, 7), num_classes=4)
    img, label = ds[2]
    assert img.dtype == np.uint8 and img.shape == (6, 7, 3)
    assert isinstance(label, int) and 0 <= label < 4
    again, label2 = ds[2]
    np.testing.assert_array_equal(img, again)
    assert label == label2
    assert not np.array_equal(ds[1][0], img)
    shifted = FakeData(size=5, image_size=(3, 6, 7), num_classes=4, random_offset=1)
    np.testing.assert_array_equal(shifted[1][0], img)  # seed index + offset


def test_fakedata_follows_torchvisions_recipe_through_lucids_generator() -> None:
    ds = FakeData(size=3, image_size=(1, 4, 5), num_classes=7, random_offset=10)
    gen = lucid.Generator()
    gen.manual_seed(11)
    draw = lucid.randn(1, 4, 5, generator=gen).numpy()
    label = int(lucid.randint(0, 7, (1,), generator=gen).item())
    expected = (np.trunc(draw.astype(np.float64) * 255).astype(np.int64) % 256).astype(np.uint8)
    img, got = ds[1]
    assert img.shape == (4, 5)  # one channel: H x W, as a PIL "L" image
    np.testing.assert_array_equal(img, expected[0])
    assert got == label


def test_fakedata_leaves_the_default_generator_alone_and_bounds() -> None:
    lucid.manual_seed(0)
    a = lucid.rand(3).numpy()
    lucid.manual_seed(0)
    FakeData(size=2, image_size=(3, 4, 4))[1]
    np.testing.assert_array_equal(lucid.rand(3).numpy(), a)
    with pytest.raises(IndexError, match="FakeData index out of range"):
        FakeData(size=2)[2]
    with pytest.raises(ValueError, match="image_size"):
        FakeData(image_size=(5, 4, 4))
    assert len(FakeData()) == 1000 and FakeData().image_size == (3, 224, 224)


def test_fakedata_through_to_tensor_and_the_dataloader() -> None:
    ds = FakeData(size=6, image_size=(3, 8, 8), transform=T.ToTensor(), target_transform=None)
    x, y = next(iter(DataLoader(ds, batch_size=4, shuffle=True)))
    assert tuple(x.shape) == (4, 3, 8, 8) and x.dtype == lucid.float32
    assert tuple(y.shape) == (4,)
    assert "Root location" not in repr(ds) and "Number of datapoints: 6" in repr(ds)


# ---------------------------------------------------------------- models


def test_models_is_lucid_models_reached_lazily() -> None:
    import subprocess
    import sys

    pytest.importorskip("lucid.models")  # (lucid-models installed: the iso-data env has not)
    code = (
        "import sys, lucid.data as tv\n"
        "assert 'lucid.models' not in sys.modules, 'lucid.data imported lucid.models'\n"
        "import lucid.models\n"
        "from lucid.data.models import resnet18\n"
        "assert tv.models.resnet18 is lucid.models.resnet18 is resnet18\n"
        "assert 'resnet18' in dir(tv.models)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    # pytorch/examples' imagenet/main.py lists the builders from the module's __dict__
    code = (
        "import lucid.data.models as models\n"
        "names = sorted(n for n in models.__dict__ if n.islower() and not n.startswith('__')\n"
        "               and callable(models.__dict__[n]))\n"
        "assert {'resnet18', 'vgg16', 'mobilenet_v3_small'} <= set(names), names\n"
        "assert all(not n.startswith('_') for n in names), names\n"
        "assert vars(models)['resnet18'] is models.resnet18\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_models_without_lucid_models_says_what_to_install() -> None:
    import subprocess
    import sys

    # a fresh process: this one may have filled lucid.data.models' __dict__ already
    code = (
        "import sys\n"
        "sys.modules['lucid.models'] = None  # as if lucid-models were not installed\n"
        "import lucid.data\n"
        "assert 'resnet18' not in vars(lucid.data.models)\n"
        "try:\n"
        "    lucid.data.models.resnet18\n"
        "except AttributeError as e:\n"
        "    assert 'pip install lucid-models' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- DatasetFolder / ImageFolder


def _write_images(root: Path) -> dict[str, np.ndarray]:
    image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(3)
    written = {}
    for cls, names in {"dog": ["b.png", "a.PNG"], "cat": ["x.bmp", "sub/y.png"]}.items():
        for name in names:
            path = root / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            arr = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
            image.fromarray(arr).save(path)
            written[str(path)] = arr
    (root / "dog" / "notes.txt").write_text("not an image")
    return written


def test_image_folder_reads_classes_samples_and_images(tmp_path: Path) -> None:
    written = _write_images(tmp_path)
    ds = ImageFolder(str(tmp_path), target_transform=lambda t: t * 10)
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    paths = [p for p, _ in ds.samples]
    assert paths == [
        str(tmp_path / "cat" / "x.bmp"),
        str(tmp_path / "cat" / "sub" / "y.png"),
        str(tmp_path / "dog" / "a.PNG"),
        str(tmp_path / "dog" / "b.png"),
    ]  # os.walk's (folder, files) sorted: a folder's files before its subfolders'
    assert ds.targets == [0, 0, 1, 1] and isinstance(ds.targets, list) and ds.imgs is ds.samples
    img, target = ds[1]
    assert img.dtype == np.uint8 and img.shape == (5, 4, 3) and target == 0
    np.testing.assert_array_equal(img, written[paths[1]])
    assert ds[2][1] == 10
    x, y = next(iter(DataLoader(ImageFolder(tmp_path, transform=T.ToTensor()), batch_size=4)))
    assert tuple(x.shape) == (4, 3, 5, 4) and y.tolist() == [0, 0, 1, 1]


def test_dataset_folder_rules(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "1.npy").write_bytes(b"x")
    with pytest.raises(FileNotFoundError, match="no valid file for the classes b"):
        DatasetFolder(tmp_path, loader=open, extensions=(".npy",))
    ds = DatasetFolder(tmp_path, loader=lambda p: p, extensions=(".npy",), allow_empty=True)
    assert ds.samples == [(str(tmp_path / "a" / "1.npy"), 0)] and ds[0][0].endswith("1.npy")
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        make_dataset(tmp_path, {"a": 0})
    with pytest.raises(ValueError, match="at least one entry"):
        make_dataset(tmp_path, {}, extensions=".npy")
    assert make_dataset(tmp_path, {"a": 0}, is_valid_file=lambda p: p.endswith("1.npy")) == [
        (str(tmp_path / "a" / "1.npy"), 0)
    ]
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        find_classes(tmp_path / "a")
    assert ".png" in IMG_EXTENSIONS and has_file_allowed_extension("X.JPG", IMG_EXTENSIONS)


def test_default_loader_without_pillow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "1.png").write_bytes(b"\x89PNG")
    monkeypatch.setitem(sys.modules, "PIL", None)
    ds = ImageFolder(tmp_path)
    with pytest.raises(ImportError, match=r"pip install 'lucid-data\[images\]'"):
        ds[0]
    assert default_loader is not None


# ---------------------------------------------------------------- KMNIST, EMNIST, QMNIST


def _idx(arr: np.ndarray, code: int) -> bytes:
    header = struct.pack(">BBBB", 0, 0, code, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(">i4" if code == 0x0C else np.uint8).tobytes()


def test_kmnist_reads_mnist_files_in_its_own_folder(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    raw = tmp_path / "KMNIST" / "raw"
    raw.mkdir(parents=True)
    arrays = {
        "train": (rng.integers(0, 256, (6, 28, 28)), rng.integers(0, 10, 6)),
        "t10k": (rng.integers(0, 256, (3, 28, 28)), rng.integers(0, 10, 3)),
    }
    for prefix, (images, labels) in arrays.items():
        (raw / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(images, 8)))
        (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(_idx(labels, 8))
    ds = KMNIST(tmp_path, train=False)
    assert isinstance(ds.data, lucid.Tensor) and ds.data.dtype == lucid.uint8
    assert ds.targets.dtype == lucid.int64 and ds.classes[1] == "ki"
    np.testing.assert_array_equal(ds.data.numpy(), arrays["t10k"][0])
    img, label = ds[2]
    np.testing.assert_array_equal(img, arrays["t10k"][0][2])
    assert label == int(arrays["t10k"][1][2])


def test_emnist_split_files_and_classes(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    images, labels = rng.integers(0, 256, (4, 28, 28)), rng.integers(1, 27, 4)
    (tmp_path / "emnist-letters-train-images-idx3-ubyte.gz").write_bytes(
        gzip.compress(_idx(images, 8))
    )
    (tmp_path / "emnist-letters-train-labels-idx1-ubyte.gz").write_bytes(
        gzip.compress(_idx(labels, 8))
    )
    ds = EMNIST(tmp_path, split="letters")
    assert ds.classes[:3] == ["N/A", "a", "b"] and len(ds) == 4
    assert [ds[i][1] for i in range(4)] == labels.tolist()
    assert "Split: letters" in repr(ds)
    assert len(EMNIST.classes_split_dict["byclass"]) == 62
    assert len(EMNIST.classes_split_dict["balanced"]) == 47
    with pytest.raises(ValueError, match="Unknown value 'nope' for argument split"):
        EMNIST(tmp_path, split="nope")
    with pytest.raises(RuntimeError, match="emnist-letters-test-images-idx3-ubyte"):
        EMNIST(tmp_path, split="letters", train=False)


def test_qmnist_subsets_compat_and_xz_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    images = rng.integers(0, 256, (10005, 2, 2))  # (small images: the reader takes any size)
    rows = rng.integers(0, 100000, (10005, 8))
    (tmp_path / "qmnist-test-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx(images, 8)))
    (tmp_path / "qmnist-test-labels-idx2-int.xz").write_bytes(lzma.compress(_idx(rows, 0x0C)))
    ds = QMNIST(tmp_path, train=False)
    assert ds.what == "test" and len(ds) == 10005
    assert tuple(ds.targets.shape) == (10005, 8) and ds.targets.dtype == lucid.int64
    np.testing.assert_array_equal(ds.targets.numpy(), rows)
    assert ds[3][1] == int(rows[3, 0])
    full = QMNIST(tmp_path, what="test50k", compat=False)
    assert len(full) == 5
    img, row = full[1]
    np.testing.assert_array_equal(img, images[10001])
    np.testing.assert_array_equal(row.numpy(), rows[10001])
    assert len(QMNIST(tmp_path, what="test10k")) == 10000
    with pytest.raises(ValueError, match="argument what"):
        QMNIST(tmp_path, what="val")
    with pytest.raises(RuntimeError, match="qmnist-train-images-idx3-ubyte"):
        QMNIST(tmp_path)
