"""Country211, FER2013, MovingMNIST, DTD, GTSRB, RenderedSST2, FGVCAircraft and Imagenette on
files written here in their published layouts (Flowers102, which reads .mat files, is
tested with SVHN's)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data.datasets import (
    DTD,
    FER2013,
    GTSRB,
    Country211,
    FGVCAircraft,
    Imagenette,
    MovingMNIST,
    RenderedSST2,
)


def _jpg(path: Path, value: int) -> None:
    image = pytest.importorskip("PIL.Image")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.fromarray(np.full((4, 4, 3), value, np.uint8)).save(path)


def test_country211_is_an_image_folder_per_split(tmp_path: Path) -> None:
    _jpg(tmp_path / "country211" / "valid" / "AD" / "1.jpg", 1)
    _jpg(tmp_path / "country211" / "valid" / "ZW" / "2.jpg", 2)
    ds = Country211(tmp_path, split="valid")
    assert ds.classes == ["AD", "ZW"] and len(ds) == 2 and ds.root == str(tmp_path)
    assert ds[1][1] == 1
    with pytest.raises(RuntimeError, match="train"):
        Country211(tmp_path)


def test_fer2013_split_files_and_the_combined_file(tmp_path: Path) -> None:
    folder = tmp_path / "fer2013"
    folder.mkdir()
    face = " ".join(str(v % 256) for v in range(48 * 48))
    with open(folder / "test.csv", "w", newline="") as f:
        csv.writer(f).writerows([["pixels"], [face]])
    test = FER2013(tmp_path, split="test")
    img, target = test[0]
    assert img.shape == (48, 48) and img.dtype == np.uint8 and target is None
    assert img[0, 5] == 5
    with open(folder / "fer2013.csv", "w", newline="") as f:
        csv.writer(f).writerows(
            [["emotion", "pixels", "Usage"], [3, face, "Training"], [6, face, "PublicTest"]]
        )
    train = FER2013(tmp_path, split="train")
    assert len(train) == 1 and train[0][1] == 3
    test_rows = FER2013(tmp_path, split="test")
    assert [test_rows[i][1] for i in range(len(test_rows))] == [6]


def test_fer2013_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"train\.csv not found"):
        FER2013(tmp_path)


def test_moving_mnist_sequences(tmp_path: Path) -> None:
    folder = tmp_path / "MovingMNIST"
    folder.mkdir()
    frames = np.arange(20 * 3 * 64 * 64, dtype=np.int64).reshape(20, 3, 64, 64) % 256
    np.save(folder / "mnist_test_seq.npy", frames.astype(np.uint8))
    ds = MovingMNIST(tmp_path)
    assert isinstance(ds.data, lucid.Tensor) and tuple(ds.data.shape) == (3, 20, 1, 64, 64)
    assert ds.data.dtype == lucid.uint8
    np.testing.assert_array_equal(ds[1].numpy()[4, 0], frames[4, 1].astype(np.uint8))
    train = MovingMNIST(tmp_path, split="train", split_ratio=5)
    assert tuple(train[0].shape) == (5, 1, 64, 64)
    assert tuple(MovingMNIST(tmp_path, split="test", split_ratio=5)[0].shape) == (15, 1, 64, 64)
    with pytest.raises(ValueError, match="split_ratio"):
        MovingMNIST(tmp_path, split_ratio=20)


def test_dtd_reads_its_split_lists(tmp_path: Path) -> None:
    data = tmp_path / "dtd" / "dtd"
    _jpg(data / "images" / "striped" / "s_1.jpg", 10)
    _jpg(data / "images" / "banded" / "b_1.jpg", 20)
    (data / "labels").mkdir()
    (data / "labels" / "val3.txt").write_text("striped/s_1.jpg\nbanded/b_1.jpg\n")
    ds = DTD(tmp_path, split="val", partition=3)
    assert ds.classes == ["banded", "striped"] and len(ds) == 2
    assert [ds[i][1] for i in range(len(ds))] == [1, 0]
    assert "partition=3" in repr(ds)
    with pytest.raises(ValueError, match="partition"):
        DTD(tmp_path, partition=11)


def test_gtsrb_train_folders_and_test_csv(tmp_path: Path) -> None:
    image = pytest.importorskip("PIL.Image")
    base = tmp_path / "gtsrb" / "GTSRB"
    for cls, value in (("00000", 30), ("00002", 90)):
        (base / "Training" / cls).mkdir(parents=True)
        image.fromarray(np.full((5, 6, 3), value, np.uint8)).save(
            base / "Training" / cls / "00000_00000.ppm"
        )
    train = GTSRB(tmp_path)
    assert len(train) == 2 and [train[i][1] for i in range(len(train))] == [0, 1]
    img, _ = train[1]
    assert img.shape == (5, 6, 3) and img[0, 0, 0] == 90
    (base / "Final_Test" / "Images").mkdir(parents=True)
    image.fromarray(np.zeros((5, 6, 3), np.uint8)).save(
        base / "Final_Test" / "Images" / "00000.ppm"
    )
    (tmp_path / "gtsrb" / "GT-final_test.csv").write_text(
        "Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId\n00000.ppm;6;5;0;0;5;4;16\n"
    )
    test = GTSRB(tmp_path, split="test")
    assert len(test) == 1 and test[0][1] == 16


def test_rendered_sst2_split_folders(tmp_path: Path) -> None:
    folder = tmp_path / "rendered-sst2" / "valid"
    _jpg(folder / "negative" / "0.png", 0)
    _jpg(folder / "positive" / "1.png", 255)
    ds = RenderedSST2(tmp_path, split="val")
    assert ds.classes == ["negative", "positive"] and len(ds) == 2
    assert [ds[i][1] for i in range(len(ds))] == [0, 1]
    with pytest.raises(RuntimeError, match="negative/ and positive/"):
        RenderedSST2(tmp_path)


def test_fgvc_aircraft_annotation_levels(tmp_path: Path) -> None:
    data = tmp_path / "fgvc-aircraft-2013b" / "data"
    _jpg(data / "images" / "0001.jpg", 10)
    _jpg(data / "images" / "0002.jpg", 20)
    (data / "families.txt").write_text("Boeing 707\nA320\n")
    (data / "images_family_test.txt").write_text("0001 A320\n0002 Boeing 707\n")
    ds = FGVCAircraft(tmp_path, split="test", annotation_level="family")
    assert ds.classes == ["Boeing 707", "A320"] and ds.class_to_idx["A320"] == 1
    assert [ds[i][1] for i in range(len(ds))] == [1, 0]
    with pytest.raises(ValueError, match="annotation_level"):
        FGVCAircraft(tmp_path, annotation_level="model")


def test_imagenette_wnid_folders(tmp_path: Path) -> None:
    val = tmp_path / "imagenette2-160" / "val"
    _jpg(val / "n01440764" / "a.JPEG", 10)
    _jpg(val / "n03888257" / "b.JPEG", 20)
    ds = Imagenette(tmp_path, split="val", size="160px")
    assert ds.wnids == ["n01440764", "n03888257"]
    assert ds.classes == [("tench", "Tinca tinca"), ("parachute", "chute")]
    assert ds.class_to_idx["chute"] == 1 and ds.class_to_idx["tench"] == 0
    assert [ds[i][1] for i in range(len(ds))] == [0, 1]
    with pytest.raises(RuntimeError, match="imagenette2"):
        Imagenette(tmp_path)


def test_items_pass_through_transform_and_target_transform(tmp_path: Path) -> None:
    """The item step the datasets share: ``(transform(image), target_transform(target))`` of
    the plain item, and a batch of indices is the list of those items."""
    face = " ".join(str(v % 256) for v in range(48 * 48))
    (tmp_path / "fer2013").mkdir()
    with open(tmp_path / "fer2013" / "train.csv", "w", newline="") as f:
        csv.writer(f).writerows([["emotion", "pixels"], [4, face], [1, face]])
    sst = tmp_path / "rendered-sst2" / "test"
    _jpg(sst / "negative" / "0.png", 40)
    _jpg(sst / "positive" / "1.png", 80)
    nette = tmp_path / "imagenette2" / "train"
    _jpg(nette / "n01440764" / "a.JPEG", 10)
    _jpg(nette / "n03888257" / "b.JPEG", 200)
    dtd = tmp_path / "dtd" / "dtd"
    _jpg(dtd / "images" / "striped" / "s_1.jpg", 120)
    _jpg(dtd / "images" / "banded" / "b_1.jpg", 30)
    (dtd / "labels").mkdir()
    (dtd / "labels" / "train1.txt").write_text("striped/s_1.jpg\nbanded/b_1.jpg\n")

    def image_fn(img: np.ndarray) -> float:
        return float(img.mean())

    def target_fn(target: int) -> str:
        return f"label {target}"

    for cls, kwargs in (
        (FER2013, {}),
        (RenderedSST2, {"split": "test"}),
        (Imagenette, {}),
        (DTD, {}),
    ):
        plain = cls(tmp_path, **kwargs)
        both = cls(tmp_path, transform=image_fn, target_transform=target_fn, **kwargs)
        only_target = cls(tmp_path, target_transform=target_fn, **kwargs)
        assert len(plain) == len(both) == 2
        for i in range(2):
            img, target = plain[i]
            assert both[i] == (image_fn(img), target_fn(target)), cls.__name__
            np.testing.assert_array_equal(only_target[i][0], img)
            assert only_target[i][1] == target_fn(target)
        assert list(both.__getitems__([1, 0])) == [both[1], both[0]]
    assert [FER2013(tmp_path)[i][1] for i in range(2)] == [4, 1]
