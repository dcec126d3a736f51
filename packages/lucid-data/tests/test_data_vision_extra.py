"""FakeData, ImageFolder/DatasetFolder and the MNIST family (KMNIST, EMNIST, QMNIST)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import (
    IMG_EXTENSIONS,
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

    code = (
        "import sys, lucid.data as tv\n"
        "assert 'lucid.models' not in sys.modules, 'lucid.data imported lucid.models'\n"
        "import lucid.models\n"
        "from lucid.data.models import resnet18\n"
        "assert tv.models.resnet18 is lucid.models.resnet18 is resnet18\n"
        "assert 'resnet18' in dir(tv.models)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_models_without_lucid_models_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    import lucid.data

    monkeypatch.delattr(lucid, "models", raising=False)
    monkeypatch.setitem(sys.modules, "lucid.models", None)
    with pytest.raises(AttributeError, match="pip install lucid-models"):
        lucid.data.models.resnet18  # noqa: B018


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
