"""EuroSAT, Food101, SEMEION and USPS on files written here in their published layouts."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import numpy as np
import pytest

from lucid.data.datasets import SEMEION, USPS, EuroSAT, Food101


def test_semeion_reads_the_table(tmp_path: Path) -> None:
    rows = []
    for label in (3, 0):
        pixels = np.zeros(256)
        pixels[label] = 1
        onehot = np.eye(10)[label]
        rows.append(" ".join(f"{v:.4f}" for v in np.concatenate([pixels, onehot])))
    (tmp_path / "semeion.data").write_text("\n".join(rows) + "\n")
    ds = SEMEION(tmp_path)  # (download=True by default: the file is here, nothing fetched)
    assert ds.data.shape == (2, 16, 16) and ds.data.dtype == np.uint8
    assert ds.labels.tolist() == [3, 0]
    img, label = ds[0]
    assert label == 3 and img[0, 3] == 255 and img.sum() == 255


def test_semeion_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"semeion\.data"):
        SEMEION(tmp_path, download=False)


def test_usps_reads_libsvm_bz2(tmp_path: Path) -> None:
    lines = []
    for label, value in ((1, -1.0), (10, 1.0)):
        features = " ".join(f"{i}:{value}" for i in range(1, 257))
        lines.append(f"{label} {features}")
    (tmp_path / "usps.t.bz2").write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    ds = USPS(tmp_path, train=False)
    assert ds.data.shape == (2, 16, 16) and ds.data.dtype == np.uint8
    assert ds.targets == [0, 9] and isinstance(ds.targets, list)
    assert ds[0][0].max() == 0 and ds[1][0].min() == 255 and ds[1][1] == 9
    with pytest.raises(RuntimeError, match=r"usps\.bz2"):
        USPS(tmp_path, train=True)


def _png(path: Path, value: int) -> None:
    image = pytest.importorskip("PIL.Image")
    path.parent.mkdir(parents=True, exist_ok=True)
    image.fromarray(np.full((4, 4, 3), value, np.uint8)).save(path)


def test_eurosat_is_an_image_folder_under_eurosat_2750(tmp_path: Path) -> None:
    _png(tmp_path / "eurosat" / "2750" / "Forest" / "Forest_1.jpg", 10)
    _png(tmp_path / "eurosat" / "2750" / "River" / "River_1.jpg", 200)
    ds = EuroSAT(str(tmp_path))
    assert ds.classes == ["Forest", "River"] and ds.class_to_idx == {"Forest": 0, "River": 1}
    assert len(ds) == 2 and ds.root == str(tmp_path) and ds.targets == [0, 1]
    img, label = ds[1]
    assert img.shape == (4, 4, 3) and label == 1
    with pytest.raises(RuntimeError, match="2750"):
        EuroSAT(tmp_path / "nowhere")


def test_food101_reads_the_split_json(tmp_path: Path) -> None:
    base = tmp_path / "food-101"
    _png(base / "images" / "pizza" / "1.jpg", 50)
    _png(base / "images" / "apple_pie" / "7.jpg", 150)
    (base / "meta").mkdir()
    (base / "meta" / "test.json").write_text(
        json.dumps({"pizza": ["pizza/1"], "apple_pie": ["apple_pie/7"]})
    )
    ds = Food101(tmp_path, split="test")
    assert ds.classes == ["apple_pie", "pizza"]
    assert ds.class_to_idx == {"apple_pie": 0, "pizza": 1}
    assert len(ds) == 2
    img, label = ds[0]
    assert label == 1 and img.shape == (4, 4, 3)
    assert "split=test" in repr(ds)
    with pytest.raises(ValueError, match="split"):
        Food101(tmp_path, split="val")
