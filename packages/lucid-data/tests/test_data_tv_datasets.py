"""torchvision's file-based datasets built from tiny fixtures in their real formats (COCO
JSON, VOC XML, .mat files, text tables, PNG/JPEG images): lengths, item types and values,
and the errors for a missing or corrupt root."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("PIL")

import lucid
from lucid.data import datasets
from lucid.data.datasets import _classification


def _load_formats() -> Any:
    """The fixture writers next to this file (tests run in importlib mode: no sibling
    imports)."""
    import importlib.util

    path = Path(__file__).with_name("_fixture_formats.py")
    spec = importlib.util.spec_from_file_location("_lucid_fixture_formats", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_formats = _load_formats()
Sparse, write_image, write_mat = _formats.Sparse, _formats.write_image, _formats.write_mat

RNG = np.random.default_rng(0)


def _img(path: Path, h: int = 4, w: int = 5, gray: bool = False, seed: int = 0) -> np.ndarray:
    shape = (h, w) if gray else (h, w, 3)
    arr = np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)
    write_image(path, arr)
    return arr


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- detection and segmentation ----------------------------------------------------------------


def test_coco_detection_and_captions(tmp_path: Path) -> None:
    a = _img(tmp_path / "a.png", seed=1)
    _img(tmp_path / "b.png", seed=2)
    ann = {
        "images": [{"id": 7, "file_name": "b.png"}, {"id": 3, "file_name": "a.png"}],
        "annotations": [
            {"id": 1, "image_id": 3, "category_id": 2, "bbox": [0, 0, 2, 2], "area": 4,
             "iscrowd": 0, "caption": "a cat"},
            {"id": 2, "image_id": 3, "category_id": 1, "bbox": [1, 1, 1, 1], "area": 1,
             "iscrowd": 0, "caption": "a dog"},
        ],
        "categories": [{"id": 1, "name": "dog", "supercategory": "animal"},
                       {"id": 2, "name": "cat", "supercategory": "animal"}],
    }  # fmt: skip
    ann_file = _write(tmp_path / "ann.json", json.dumps(ann))
    ds = datasets.CocoDetection(str(tmp_path), str(ann_file))
    assert len(ds) == 2 and ds.ids == [3, 7]
    img, target = ds[0]
    np.testing.assert_array_equal(img, a)
    assert [t["id"] for t in target] == [1, 2] and target[0]["bbox"] == [0, 0, 2, 2]
    assert ds[1][1] == []
    assert ds.coco.getCatIds(catNms=["cat"]) == [2]
    assert ds.coco.getAnnIds(imgIds=[3], catIds=[1]) == [2]
    assert sorted(ds.coco.getImgIds(catIds=[2])) == [3]
    caps = datasets.CocoCaptions(str(tmp_path), str(ann_file))
    assert caps[0][1] == ["a cat", "a dog"]
    with pytest.raises(ValueError, match="Index must be of type integer"):
        ds["0"]  # type: ignore[index]
    both = datasets.CocoDetection(
        str(tmp_path), str(ann_file), transforms=lambda i, t: (i.shape, len(t))
    )
    assert both[0] == ((4, 5, 3), 2)
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform"):
        datasets.CocoDetection(str(tmp_path), str(ann_file), transform=id, transforms=id)
    _write(tmp_path / "bad.json", "{not json")
    with pytest.raises(RuntimeError, match="cannot read the COCO annotation file"):
        datasets.CocoDetection(str(tmp_path), str(tmp_path / "bad.json"))


def _voc(root: Path) -> tuple[np.ndarray, np.ndarray]:
    base = root / "VOCdevkit" / "VOC2012"
    img = _img(base / "JPEGImages" / "x1.png")
    os.rename(base / "JPEGImages" / "x1.png", base / "JPEGImages" / "x1.jpg")  # PNG bytes: exact
    _write(base / "ImageSets" / "Main" / "train.txt", "x1\n")
    _write(base / "ImageSets" / "Segmentation" / "train.txt", "x1\n")
    _write(
        base / "Annotations" / "x1.xml",
        "<annotation><filename>x1.jpg</filename><size><width>5</width><height>4</height>"
        "</size><object><name>dog</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax>"
        "<ymax>4</ymax></bndbox></object></annotation>",
    )
    from PIL import Image

    mask = np.array([[0, 1, 2, 255, 0]] * 4, dtype=np.uint8)
    pal = Image.fromarray(mask, mode="P")
    pal.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0] + [255, 255, 255] * 253)
    (base / "SegmentationClass").mkdir()
    pal.save(base / "SegmentationClass" / "x1.png")
    return img, mask


def test_voc_detection_and_segmentation(tmp_path: Path) -> None:
    img, mask = _voc(tmp_path)
    det = datasets.VOCDetection(str(tmp_path), year="2012", image_set="train")
    assert len(det) == 1
    image, target = det[0]
    np.testing.assert_array_equal(image, img)
    ann = target["annotation"]
    assert ann["size"] == {"width": "5", "height": "4"}
    assert ann["object"] == [
        {"name": "dog", "bndbox": {"xmin": "1", "ymin": "2", "xmax": "3", "ymax": "4"}}
    ]
    seg = datasets.VOCSegmentation(str(tmp_path), image_set="train")
    assert seg.masks == seg.targets
    _, m = seg[0]
    assert m.dtype == np.uint8
    np.testing.assert_array_equal(m, mask)
    with pytest.raises(ValueError, match="Unknown value 'test' for argument image_set"):
        datasets.VOCDetection(str(tmp_path), image_set="test")
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.VOCDetection(str(tmp_path), year="2011")


def test_sbd(tmp_path: Path) -> None:
    img = _img(tmp_path / "img" / "s1.png")
    os.rename(tmp_path / "img" / "s1.png", tmp_path / "img" / "s1.jpg")
    _write(tmp_path / "train.txt", "s1\n")
    seg = RNG.integers(0, 21, (4, 5)).astype(np.uint8)
    bounds = [Sparse((RNG.random((4, 5)) > 0.7).astype(float)) for _ in range(20)]
    (tmp_path / "cls").mkdir()
    gtcls = {"Segmentation": seg, "Boundaries": tuple(bounds), "CategoriesPresent": 1.0}
    write_mat(tmp_path / "cls" / "s1.mat", {"GTcls": gtcls})  # a 20 x 1 cell, as SBD's
    ds = datasets.SBDataset(str(tmp_path), mode="segmentation")
    image, target = ds[0]
    np.testing.assert_array_equal(image, img)
    np.testing.assert_array_equal(target, seg)
    ds = datasets.SBDataset(str(tmp_path), mode="boundaries")
    _, b = ds[0]
    assert b.shape == (20, 4, 5)
    np.testing.assert_array_equal(b[3], bounds[3].dense)
    with pytest.raises(RuntimeError, match="SBDataset needs val.txt"):
        datasets.SBDataset(str(tmp_path), image_set="val")


def test_widerface(tmp_path: Path) -> None:
    base = tmp_path / "widerface"
    for name in ("WIDER_train", "WIDER_val", "WIDER_test", "wider_face_split"):
        (base / name).mkdir(parents=True)
    _img(base / "WIDER_train" / "images" / "0--P" / "a.jpg")
    _img(base / "WIDER_train" / "images" / "0--P" / "b.jpg")
    _img(base / "WIDER_test" / "images" / "0--P" / "c.jpg")
    _write(
        base / "wider_face_split" / "wider_face_train_bbx_gt.txt",
        "0--P/a.jpg\n2\n1 2 3 4 0 0 0 0 0 0 \n5 6 7 8 1 1 0 2 0 1 \n"
        "0--P/b.jpg\n0\n0 0 0 0 0 0 0 0 0 0 \n",
    )
    _write(base / "wider_face_split" / "wider_face_test_filelist.txt", "0--P/c.jpg\n")
    ds = datasets.WIDERFace(str(tmp_path), split="train")
    assert len(ds) == 2
    img, target = ds[0]
    assert img.shape == (4, 5, 3)
    assert isinstance(target["bbox"], lucid.Tensor) and target["bbox"].dtype == lucid.int64
    np.testing.assert_array_equal(target["bbox"].numpy(), [[1, 2, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(target["invalid"].numpy(), [0, 1])
    assert tuple(ds[1][1]["bbox"].shape) == (1, 4)
    test = datasets.WIDERFace(str(tmp_path), split="test")
    assert len(test) == 1 and test[0][1] is None
    with pytest.raises(RuntimeError, match="Dataset not found"):
        datasets.WIDERFace(str(tmp_path / "nowhere"))


def test_kitti(tmp_path: Path) -> None:
    raw = tmp_path / "Kitti" / "raw" / "training"
    _img(raw / "image_2" / "000000.png")
    _write(
        raw / "label_2" / "000000.txt",
        "Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.70 -1.59\n",
    )
    ds = datasets.Kitti(str(tmp_path))
    img, target = ds[0]
    assert len(ds) == 1 and img.shape == (4, 5, 3)
    assert target[0]["type"] == "Car" and target[0]["occluded"] == 0
    assert target[0]["bbox"] == [587.01, 173.33, 614.12, 200.12]
    with pytest.raises(RuntimeError, match="Kitti needs"):
        datasets.Kitti(str(tmp_path), train=False)


def test_cityscapes(tmp_path: Path) -> None:
    img = _img(tmp_path / "leftImg8bit" / "train" / "aachen" / "aachen_0_0_leftImg8bit.png")
    sem = RNG.integers(0, 34, (4, 5)).astype(np.uint8)
    write_image(tmp_path / "gtFine" / "train" / "aachen" / "aachen_0_0_gtFine_labelIds.png", sem)
    _write(
        tmp_path / "gtFine" / "train" / "aachen" / "aachen_0_0_gtFine_polygons.json",
        json.dumps({"imgHeight": 4, "objects": []}),
    )
    ds = datasets.Cityscapes(str(tmp_path), target_type=["semantic", "polygon"])
    image, (s, poly) = ds[0]
    np.testing.assert_array_equal(image, img)
    np.testing.assert_array_equal(s, sem)
    assert poly == {"imgHeight": 4, "objects": []}
    assert datasets.Cityscapes.classes[7].name == "road"
    with pytest.raises(ValueError, match="Unknown value 'test' for argument split"):
        datasets.Cityscapes(str(tmp_path), mode="coarse", split="test")
    with pytest.raises(RuntimeError, match="Dataset not found or incomplete"):
        datasets.Cityscapes(str(tmp_path), split="val")


# -- classification ---------------------------------------------------------------------------


def test_caltech(tmp_path: Path) -> None:
    cats = tmp_path / "caltech101" / "101_ObjectCategories"
    _img(cats / "BACKGROUND_Google" / "image_0001.jpg")
    _img(cats / "Faces" / "image_0001.jpg")
    _img(cats / "ant" / "image_0001.jpg")
    _img(cats / "ant" / "image_0002.jpg", gray=True)
    contour = np.arange(6.0).reshape(2, 3)
    (tmp_path / "caltech101" / "Annotations" / "ant").mkdir(parents=True)
    write_mat(
        tmp_path / "caltech101" / "Annotations" / "ant" / "annotation_0002.mat",
        {"box_coord": np.array([[1.0, 2, 3, 4]]), "obj_contour": contour},
    )
    ds = datasets.Caltech101(str(tmp_path), target_type=["category", "annotation"])
    assert ds.categories == ["Faces", "ant"] and ds.annotation_categories == ["Faces_2", "ant"]
    assert len(ds) == 3
    img, (cat, ann) = ds[2]
    assert img.shape == (4, 5) and cat == 1
    np.testing.assert_array_equal(ann, contour)
    assert datasets.Caltech101(str(tmp_path))[0][1] == 0
    c256 = tmp_path / "caltech256" / "256_ObjectCategories"
    _img(c256 / "001.ak47" / "001_0001.jpg")
    _img(c256 / "002.bat" / "002_0001.jpg")
    ds256 = datasets.Caltech256(str(tmp_path))
    assert len(ds256) == 2 and ds256[1][1] == 1
    with pytest.raises(RuntimeError, match="Caltech256 needs"):
        datasets.Caltech256(str(tmp_path / "x"))


def test_celeba(tmp_path: Path) -> None:
    base = tmp_path / "celeba"
    for name in ("a.jpg", "b.jpg", "c.jpg"):
        _img(base / "img_align_celeba" / name)
    _write(base / "list_eval_partition.txt", "a.jpg 0\nb.jpg 1\nc.jpg 0\n")
    _write(base / "identity_CelebA.txt", "a.jpg 10\nb.jpg 11\nc.jpg 12\n")
    _write(
        base / "list_bbox_celeba.txt",
        "3\nimage_id x_1 y_1 width height\na.jpg 1 2 3 4\nb.jpg 5 6 7 8\nc.jpg 9 10 11 12\n",
    )
    _write(base / "list_landmarks_align_celeba.txt", "3\nlx ly\na.jpg 1 2\nb.jpg 3 4\nc.jpg 5 6\n")
    _write(
        base / "list_attr_celeba.txt", "3\nSmiling Young\na.jpg  1 -1\nb.jpg -1  1\nc.jpg  1  1\n"
    )
    ds = datasets.CelebA(str(tmp_path), split="train", target_type=["attr", "identity", "bbox"])
    assert (
        len(ds) == 2 and ds.filename == ["a.jpg", "c.jpg"] and ds.attr_names == ["Smiling", "Young"]
    )
    assert ds.attr.dtype == lucid.int64
    img, (attr, ident, bbox) = ds[1]
    np.testing.assert_array_equal(attr.numpy(), [1, 1])
    assert int(ident.item()) == 12 and ident.ndim == 0
    np.testing.assert_array_equal(bbox.numpy(), [9, 10, 11, 12])
    everything = datasets.CelebA(str(tmp_path), split="all", target_type=[])
    assert len(everything) == 3 and everything[0][1] is None
    with pytest.raises(RuntimeError, match="CelebA needs"):
        datasets.CelebA(str(tmp_path / "nowhere"))
    _write(base / "identity_CelebA.txt", "a.jpg x\n")
    with pytest.raises(RuntimeError, match="expected a table of integers"):
        datasets.CelebA(str(tmp_path))


def test_oxford_pet(tmp_path: Path) -> None:
    base = tmp_path / "oxford-iiit-pet"
    _img(base / "images" / "Abyssinian_1.jpg")
    _img(base / "images" / "great_pyrenees_2.jpg")
    write_image(base / "annotations" / "trimaps" / "Abyssinian_1.png", np.full((4, 5), 2, np.uint8))
    _write(base / "annotations" / "trainval.txt", "Abyssinian_1 1 1 1\ngreat_pyrenees_2 2 2 1\n")
    ds = datasets.OxfordIIITPet(
        str(tmp_path), target_types=["category", "binary-category", "segmentation"]
    )
    assert ds.classes == ["Abyssinian", "Great Pyrenees"] and ds.bin_classes == ["Cat", "Dog"]
    img, (cat, binary, seg) = ds[0]
    assert cat == 0 and binary == 0 and seg.shape == (4, 5) and int(seg[0, 0]) == 2
    assert datasets.OxfordIIITPet(str(tmp_path))[1][1] == 1
    with pytest.raises(RuntimeError, match="OxfordIIITPet needs"):
        datasets.OxfordIIITPet(str(tmp_path / "x"))


def test_stanford_cars(tmp_path: Path) -> None:
    base = tmp_path / "stanford_cars"
    _img(base / "cars_train" / "00001.jpg")
    _img(base / "cars_train" / "00002.jpg")
    (base / "devkit").mkdir()
    annos = [
        {"bbox_x1": 1.0, "class": np.array([[2]], np.uint8), "fname": "00001.jpg"},
        {"bbox_x1": 2.0, "class": np.array([[1]], np.uint8), "fname": "00002.jpg"},
    ]
    write_mat(base / "devkit" / "cars_train_annos.mat", {"annotations": annos})
    write_mat(base / "devkit" / "cars_meta.mat", {"class_names": ["AM General Hummer", "Acura RL"]})
    ds = datasets.StanfordCars(str(tmp_path))
    assert ds.classes == ["AM General Hummer", "Acura RL"] and len(ds) == 2
    assert ds[0][1] == 1 and ds[1][1] == 0 and ds[0][0].shape == (4, 5, 3)
    with pytest.raises(ValueError, match="cannot be downloaded anymore"):
        datasets.StanfordCars(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="StanfordCars needs"):
        datasets.StanfordCars(str(tmp_path), split="test")


def test_flickr(tmp_path: Path) -> None:
    _img(tmp_path / "1000_abc.jpg")
    html = _write(
        tmp_path / "ann.html",
        "<html><table><tr><td><a href='x'>http://x/1000/</a></td><td><ul><li>A dog.</li>"
        "<li>A brown dog.</li></ul></td></tr></table></html>",
    )
    ds8 = datasets.Flickr8k(str(tmp_path), str(html))
    assert len(ds8) == 1 and ds8[0][1] == ["A dog.", "A brown dog."]
    ann = _write(tmp_path / "results.token", "1000_abc.jpg#0\tOne.\n1000_abc.jpg#1\tTwo.\n")
    ds30 = datasets.Flickr30k(str(tmp_path), str(ann))
    assert ds30.ids == ["1000_abc.jpg"] and ds30[0][1] == ["One.", "Two."]


def test_lfw(tmp_path: Path) -> None:
    base = tmp_path / "lfw-py"
    for name, n in (("Ann", 2), ("Bob", 1)):
        for i in range(1, n + 1):
            _img(base / "lfw_funneled" / name / f"{name}_{i:04d}.jpg", seed=i)
    _write(base / "lfw-names.txt", "Ann 2\nBob 1\n")
    _write(base / "peopleDevTrain.txt", "2\nAnn\t2\nBob\t1\n")
    _write(base / "pairsDevTrain.txt", "1\nAnn\t1\t2\nAnn\t1\tBob\t1\n")
    people = datasets.LFWPeople(str(tmp_path), split="train")
    assert people.targets == [0, 0, 1] and people.class_to_idx == {"Ann": 0, "Bob": 1}
    assert people[2][1] == 1
    pairs = datasets.LFWPairs(str(tmp_path), split="train")
    assert len(pairs) == 2 and pairs.targets == [1, 0]
    assert pairs.pair_names == [("Ann", "Ann"), ("Ann", "Bob")]
    a, b, same = pairs[0]
    assert same == 1 and a.shape == b.shape == (4, 5, 3)
    with pytest.raises(ValueError, match="no longer available for automatic download"):
        datasets.LFWPeople(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="LFWPairs needs"):
        datasets.LFWPairs(str(tmp_path), split="test")


def test_omniglot(tmp_path: Path) -> None:
    base = tmp_path / "omniglot-py" / "images_background"
    _img(base / "Greek" / "character01" / "0001_01.png", gray=True)
    _img(base / "Greek" / "character02" / "0002_01.png", gray=True)
    _img(base / "Greek" / "character02" / "0002_02.png", gray=True)
    ds = datasets.Omniglot(str(tmp_path))
    assert len(ds) == 3 and [ds[i][1] for i in range(3)] == [0, 1, 1]
    assert ds[0][0].shape == (4, 5) and ds[0][0].dtype == np.uint8
    with pytest.raises(RuntimeError, match="Omniglot needs"):
        datasets.Omniglot(str(tmp_path), background=False)


def test_places365(tmp_path: Path) -> None:
    _write(tmp_path / "categories_places365.txt", "/a/airfield 0\n/a/airport 1\n")
    _write(tmp_path / "places365_val.txt", "Places365_val_00000001.jpg 1\n")
    _img(tmp_path / "val_256" / "Places365_val_00000001.jpg")
    ds = datasets.Places365(str(tmp_path), split="val", small=True)
    assert ds.classes == ["/a/airfield", "/a/airport"] and ds.targets == [1]
    assert ds[0][1] == 1 and ds[0][0].shape == (4, 5, 3)
    with pytest.raises(RuntimeError, match="places365_test.txt does not exist"):
        datasets.Places365(str(tmp_path), split="test")


def test_sun397(tmp_path: Path) -> None:
    base = tmp_path / "SUN397"
    _write(base / "ClassName.txt", "/a/abbey\n/b/bar/inside\n")
    _img(base / "a" / "abbey" / "sun_a.jpg")
    _img(base / "b" / "bar" / "inside" / "sun_b.jpg")
    ds = datasets.SUN397(str(tmp_path))
    assert ds.classes == ["abbey", "bar/inside"] and sorted(ds._labels) == [0, 1]
    assert len(ds) == 2
    with pytest.raises(RuntimeError, match="SUN397 needs"):
        datasets.SUN397(str(tmp_path / "x"))


def test_inaturalist(tmp_path: Path) -> None:
    root = tmp_path / "2021_train"
    _img(root / "00000_Animalia_Chordata_Aves_Order_Fam_Genus_sp" / "a.jpg")
    _img(root / "00001_Animalia_Chordata_Mammalia_Order_Fam2_Genus2_sp" / "b.jpg")
    ds = datasets.INaturalist(str(tmp_path), target_type=["full", "class", "kingdom"])
    assert len(ds) == 2 and ds[1][1] == (1, 1, 0)
    assert ds.category_name("class", 1) == "Mammalia"
    with pytest.raises(RuntimeError, match="INaturalist needs"):
        datasets.INaturalist(str(tmp_path), version="2021_valid")


def _tar(path: Path, folder: Path, arcname: str) -> None:
    with tarfile.open(path, "w:gz") as tf:
        tf.add(folder, arcname=arcname)


def test_imagenet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    devkit = tmp_path / "src" / "ILSVRC2012_devkit_t12" / "data"
    devkit.mkdir(parents=True)
    synsets = [
        {"ILSVRC2012_ID": 1.0, "WNID": "n01", "words": "tench, Tinca tinca", "num_children": 0.0},
        {"ILSVRC2012_ID": 2.0, "WNID": "n02", "words": "goldfish", "num_children": 0.0},
        {"ILSVRC2012_ID": 3.0, "WNID": "n99", "words": "fish", "num_children": 2.0},
    ]
    write_mat(devkit / "meta.mat", {"synsets": synsets})
    _write(devkit / "ILSVRC2012_validation_ground_truth.txt", "2\n1\n")
    archive = tmp_path / "ILSVRC2012_devkit_t12.tar.gz"
    _tar(archive, devkit.parent, "ILSVRC2012_devkit_t12")
    md5 = datasets.calculate_md5(archive)
    monkeypatch.setitem(_classification.ARCHIVE_META, "devkit", (archive.name, md5))
    for wnid in ("n01", "n02"):
        _img(tmp_path / "train" / wnid / f"{wnid}_1.JPEG")
    ds = datasets.ImageNet(str(tmp_path))
    assert ds.wnids == ["n01", "n02"] and ds.classes == [("tench", "Tinca tinca"), ("goldfish",)]
    assert ds.class_to_idx == {"tench": 0, "Tinca tinca": 0, "goldfish": 1}
    assert len(ds) == 2 and ds[1][1] == 1 and ds.root == str(tmp_path)
    assert _classification.load_meta_file(str(tmp_path))[1] == ["n02", "n01"]
    with pytest.raises(RuntimeError, match="ILSVRC2012_img_val.tar is not present"):
        datasets.ImageNet(str(tmp_path), split="val")
    with pytest.raises(RuntimeError, match="ILSVRC2012_devkit_t12.tar.gz is not present"):
        monkeypatch.setitem(_classification.ARCHIVE_META, "devkit", (archive.name, "0" * 32))
        datasets.ImageNet(str(tmp_path / "empty"))


def test_clevr_and_sbu(tmp_path: Path) -> None:
    base = tmp_path / "clevr" / "CLEVR_v1.0"
    _img(base / "images" / "val" / "CLEVR_val_000000.png")
    _write(
        base / "scenes" / "CLEVR_val_scenes.json",
        json.dumps({"scenes": [{"image_filename": "CLEVR_val_000000.png", "objects": [1, 2, 3]}]}),
    )
    ds = datasets.CLEVRClassification(str(tmp_path), split="val")
    assert len(ds) == 1 and ds[0][1] == 3
    folder = tmp_path / "dataset"
    _img(folder / "p1.jpg")
    _write(folder / "SBU_captioned_photo_dataset_urls.txt", "http://x/p1.jpg\nhttp://x/p2.jpg\n")
    _write(folder / "SBU_captioned_photo_dataset_captions.txt", "first\nsecond\n")
    sbu = datasets.SBU(str(tmp_path), download=False)
    assert len(sbu) == 1 and sbu[0][1] == "first"


def test_corrupt_image_names_the_file(tmp_path: Path) -> None:
    _write(tmp_path / "SUN397" / "ClassName.txt", "/a/abbey\n")
    _write(tmp_path / "SUN397" / "a" / "abbey" / "sun_x.jpg", "not an image")
    ds = datasets.SUN397(str(tmp_path), loader=_classification.open_image)
    from PIL import UnidentifiedImageError

    with pytest.raises(UnidentifiedImageError, match="cannot identify image file .*sun_x.jpg"):
        ds[0]
    _img(tmp_path / "SUN397" / "a" / "abbey" / "sun_x.jpg")  # a PNG cut short
    data = (tmp_path / "SUN397" / "a" / "abbey" / "sun_x.jpg").read_bytes()
    (tmp_path / "SUN397" / "a" / "abbey" / "sun_x.jpg").write_bytes(data[:-20])
    with pytest.raises(OSError, match="cannot decode the image .*sun_x.jpg"):
        ds[0]


def test_vision_dataset_transforms_argument() -> None:
    ds: Any = datasets.VisionDataset(None, transform=str, target_transform=repr)
    assert isinstance(ds.transforms, datasets.vision.StandardTransform)
    assert ds.transforms(1, 2) == ("1", "2")


# -- optical flow and stereo ------------------------------------------------------------------

write_flo, write_pfm, write_kitti_flow = (
    _formats.write_flo,
    _formats.write_pfm,
    _formats.write_kitti_flow,
)


def _flow(h: int = 4, w: int = 5, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(2, h, w)).astype(np.float32)


def test_png_decoder_matches_pillow_on_every_filter(tmp_path: Path) -> None:
    from PIL import Image

    from lucid.data.datasets import _flow_stereo

    rng = np.random.default_rng(3)
    smooth = np.cumsum(rng.integers(0, 4, (24, 31, 3)), axis=1).astype(np.uint8)  # Paeth/Sub
    for i, arr in enumerate([smooth, rng.integers(0, 256, (9, 7, 3), dtype=np.uint8)]):
        Image.fromarray(arr).save(tmp_path / f"{i}.png", optimize=True)
        np.testing.assert_array_equal(_flow_stereo._read_png(tmp_path / f"{i}.png"), arr)
    gray16 = (np.cumsum(rng.integers(0, 900, (10, 12)), axis=1)).astype(np.uint16)
    Image.fromarray(gray16).save(tmp_path / "g.png")
    np.testing.assert_array_equal(_flow_stereo._read_png(tmp_path / "g.png")[..., 0], gray16)
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 30)
    with pytest.raises(ValueError, match="bad.png"):
        _flow_stereo._read_png(tmp_path / "bad.png")


def test_sintel_and_flying_chairs(tmp_path: Path) -> None:
    base = tmp_path / "Sintel"
    for k in range(3):
        _img(base / "training" / "clean" / "alley" / f"frame_{k:04d}.png", seed=k)
    flows = [_flow(seed=k) for k in range(2)]
    (base / "training" / "flow" / "alley").mkdir(parents=True)
    for k, f in enumerate(flows):
        write_flo(base / "training" / "flow" / "alley" / f"frame_{k:04d}.flo", f)
    ds = datasets.Sintel(str(tmp_path))
    assert len(ds) == 2
    img1, img2, flow = ds[1]
    assert img1.shape == (4, 5, 3) and flow.dtype == np.float32
    np.testing.assert_array_equal(flow, flows[1])
    assert len(2 * ds) == 4
    with pytest.raises(FileNotFoundError, match="Sintel"):
        datasets.Sintel(str(tmp_path), pass_name="final")
    chairs = tmp_path / "FlyingChairs" / "data"
    for k in range(2):
        _img(chairs / f"{k:05d}_img1.ppm", seed=k)
        _img(chairs / f"{k:05d}_img2.ppm", seed=k + 5)
        write_flo(chairs / f"{k:05d}_flow.flo", _flow(seed=k))
    _write(tmp_path / "FlyingChairs" / "FlyingChairs_train_val.txt", "1\n2\n")
    train = datasets.FlyingChairs(str(tmp_path))
    val = datasets.FlyingChairs(str(tmp_path), split="val")
    assert len(train) == len(val) == 1
    np.testing.assert_array_equal(val[0][2], _flow(seed=1))
    (tmp_path / "bad.flo").write_bytes(b"XXXX" + b"\0" * 16)
    from lucid.data.datasets import _flow_stereo

    with pytest.raises(ValueError, match="Invalid .flo file"):
        _flow_stereo._read_flo(str(tmp_path / "bad.flo"))


def test_kitti_flow_and_hd1k(tmp_path: Path) -> None:
    base = tmp_path / "KittiFlow" / "training"
    _img(base / "image_2" / "000000_10.png")
    _img(base / "image_2" / "000000_11.png", seed=1)
    flow = np.round(_flow() * 64) / 64  # KITTI stores 1/64 pixel steps
    valid = np.array([[1, 0, 1, 1, 0]] * 4, dtype=np.uint16)
    write_kitti_flow(base / "flow_occ" / "000000_10.png", flow, valid)
    ds = datasets.KittiFlow(str(tmp_path))
    img1, img2, f, v = ds[0]
    np.testing.assert_allclose(f, flow, rtol=0, atol=1e-6)
    assert v.dtype == bool and v.tolist() == valid.astype(bool).tolist()
    with pytest.raises(FileNotFoundError, match="Could not find the Kitti flow images"):
        datasets.KittiFlow(str(tmp_path), split="test")
    hd = tmp_path / "hd1k"
    for k in range(2):
        _img(hd / "hd1k_input" / "image_2" / f"000000_{k:04d}.png", seed=k)
        write_kitti_flow(hd / "hd1k_flow_gt" / "flow_occ" / f"000000_{k:04d}.png", flow, valid)
    hd1k = datasets.HD1K(str(tmp_path))
    assert len(hd1k) == 1 and len(hd1k[0]) == 4
    with pytest.raises(FileNotFoundError, match="HD1K"):
        datasets.HD1K(str(tmp_path), split="test")


def test_flying_things_3d(tmp_path: Path) -> None:
    base = tmp_path / "FlyingThings3D"
    for k in range(3):
        _img(base / "frames_cleanpass" / "TRAIN" / "A" / "0000" / "left" / f"{k:04d}.png", seed=k)
    pfm = np.random.default_rng(1).normal(size=(4, 5, 3)).astype(np.float32)
    for direction in ("into_future", "into_past"):
        folder = base / "optical_flow" / "TRAIN" / "A" / "0000" / direction / "left"
        folder.mkdir(parents=True)
        for k in range(3):
            write_pfm(folder / f"OpticalFlow{k:04d}.pfm", pfm)
    ds = datasets.FlyingThings3D(str(tmp_path))
    assert len(ds) == 4
    _, _, flow = ds[0]
    np.testing.assert_array_equal(flow, pfm.transpose(2, 0, 1)[:2])


def test_stereo_datasets(tmp_path: Path) -> None:
    disp16 = (np.arange(20, dtype=np.uint16).reshape(4, 5) * 300).astype(np.uint16)
    k12 = tmp_path / "Kitti2012" / "training"
    _img(k12 / "colored_0" / "000000_10.png")
    _img(k12 / "colored_1" / "000000_10.png", seed=1)
    write_image(k12 / "disp_noc" / "000000_10.png", disp16)
    left, right, disp, mask = datasets.Kitti2012Stereo(str(tmp_path))[0]
    assert left.shape == right.shape == (4, 5, 3) and mask is None
    np.testing.assert_allclose(disp, disp16[None] / 256.0, rtol=0, atol=0)
    k15 = tmp_path / "Kitti2015" / "testing"
    _img(k15 / "image_2" / "a.png")
    _img(k15 / "image_3" / "a.png")
    assert datasets.Kitti2015Stereo(str(tmp_path), split="test")[0][2:] == (None, None)

    mid = tmp_path / "Middlebury2014" / "train" / "Adirondack-perfect"
    _img(mid / "im0.png")
    _img(mid / "im1.png")
    d = np.abs(np.random.default_rng(2).normal(size=(4, 5))).astype(np.float32)
    d[0, 0] = np.inf
    write_pfm(mid / "disp0.pfm", d)
    write_pfm(mid / "disp1.pfm", d)
    *_, disp, valid = datasets.Middlebury2014Stereo(str(tmp_path))[0]
    assert disp.shape == (1, 4, 5) and disp[0, 0, 0] == 0 and not valid[0, 0] and valid[1, 1]
    with pytest.raises(ValueError, match="please set `calibration=None`"):
        datasets.Middlebury2014Stereo(str(tmp_path), split="test")

    cre = tmp_path / "CREStereo"
    for s in ("shapenet", "reflective", "tree", "hole"):
        _img(cre / s / "x_left.jpg")
        _img(cre / s / "x_right.jpg")
        write_image(cre / s / "x_left.disp.png", disp16)
        write_image(cre / s / "x_right.disp.png", disp16)
    ds = datasets.CREStereo(str(tmp_path))
    assert len(ds) == 4
    np.testing.assert_allclose(ds[0][2], disp16[None] / 32.0, rtol=1e-6, atol=0)

    ft = tmp_path / "FallingThings" / "single" / "obj" / "scene"
    _img(ft / "0.left.jpg")
    _img(ft / "0.right.jpg")
    write_image(ft / "0.left.depth.png", disp16 + 1)
    write_image(ft / "0.right.depth.png", disp16 + 1)
    _write(ft / "_camera_settings.json",
           json.dumps({"camera_settings": [{"intrinsic_settings": {"fx": 768.2}}]}))  # fmt: skip
    disp = datasets.FallingThingsStereo(str(tmp_path))[0][2]
    np.testing.assert_allclose(disp, 6 * 768.2 * 100 / (disp16[None] + 1.0), rtol=1e-5, atol=0)

    sf = tmp_path / "SceneFlow" / "Monkaa"
    for side in ("left", "right"):
        _img(sf / "frames_cleanpass" / "a" / side / "0.png")
        (sf / "disparity" / "a" / side).mkdir(parents=True)
        write_pfm(sf / "disparity" / "a" / side / "0.pfm", -d)
    assert datasets.SceneFlowStereo(str(tmp_path), variant="Monkaa")[0][2].shape == (1, 4, 5)

    ins = tmp_path / "InStereo2k" / "train" / "s"
    _img(ins / "left.png")
    _img(ins / "right.png")
    write_image(ins / "left_disp.png", disp16)
    write_image(ins / "right_disp.png", disp16)
    np.testing.assert_allclose(
        datasets.InStereo2k(str(tmp_path))[0][2], disp16[None] / 1024.0, rtol=1e-6, atol=0
    )

    eth = tmp_path / "ETH3D"
    _img(eth / "two_view_training" / "s" / "im0.png")
    _img(eth / "two_view_training" / "s" / "im1.png")
    (eth / "two_view_training_gt" / "s").mkdir(parents=True)
    write_pfm(eth / "two_view_training_gt" / "s" / "disp0GT.pfm", -d)
    write_image(
        eth / "two_view_training_gt" / "s" / "mask0nocc.png", np.eye(4, 5, dtype=np.uint8) * 255
    )
    *_, disp, valid = datasets.ETH3DStereo(str(tmp_path))[0]
    assert valid.dtype == bool and valid.tolist() == np.eye(4, 5, dtype=bool).tolist()
    assert np.isinf(disp[0, 0, 0]) or disp[0, 0, 0] == pytest.approx(
        abs(d[-1, 0]), rel=1e-6, abs=1e-12
    )

    carla = tmp_path / "carla-highres" / "trainingF" / "s"
    for name in ("im0.png", "im1.png"):
        _img(carla / name)
    write_pfm(carla / "disp0GT.pfm", d)
    write_pfm(carla / "disp1GT.pfm", d)
    assert len(datasets.CarlaStereo(str(tmp_path))[0]) == 3

    st = tmp_path / "Sintel" / "training"
    for folder in ("final_left", "final_right"):
        _img(st / folder / "alley" / "frame_0001.png")
    rgb = np.zeros((4, 5, 3), np.uint8)
    rgb[..., 0] = 2
    write_image(st / "disparities" / "alley" / "frame_0001.png", rgb)
    write_image(st / "occlusions" / "alley" / "frame_0001.png", np.zeros((4, 5), np.uint8))
    oof = np.zeros((4, 5), np.uint8)
    oof[0, 0] = 255
    write_image(st / "outofframe" / "alley" / "frame_0001.png", oof)
    *_, disp, valid = datasets.SintelStereo(str(tmp_path))[0]
    assert float(disp[0, 1, 1]) == 8.0 and not valid[0, 0] and valid[1, 1]
    with pytest.raises(FileNotFoundError, match="Could not find any files matching"):
        datasets.InStereo2k(str(tmp_path), split="test")


# -- PCAM, LSUN, PhotoTour, videos ------------------------------------------------------------


def test_pcam(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    base = tmp_path / "pcam"
    base.mkdir()
    x = np.random.default_rng(0).integers(0, 256, (3, 96, 96, 3), dtype=np.uint8)
    y = np.array([0, 1, 1], dtype=np.uint8).reshape(3, 1, 1, 1)
    with h5py.File(base / "camelyonpatch_level_2_split_valid_x.h5", "w") as f:
        f["x"] = x
    with h5py.File(base / "camelyonpatch_level_2_split_valid_y.h5", "w") as f:
        f["y"] = y
    ds = datasets.PCAM(str(tmp_path), split="val")
    assert len(ds) == 3
    img, label = ds[2]
    np.testing.assert_array_equal(img, x[2])
    assert label == 1 and isinstance(label, int)
    with pytest.raises(RuntimeError, match="PCAM needs"):
        datasets.PCAM(str(tmp_path), split="test")


def test_pcam_without_h5py_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "h5py", None)  # what an uninstalled module imports as
    with pytest.raises(ImportError, match=r"lucid-data\[h5\]"):
        datasets.PCAM(str(tmp_path))


def test_lsun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lmdb = pytest.importorskip("lmdb")
    import io as _io

    from PIL import Image

    monkeypatch.chdir(tmp_path)  # LSUNClass writes its key cache in the working folder
    images = {}
    for category, n in (("bedroom", 2), ("bridge", 1)):
        env = lmdb.open(str(tmp_path / f"{category}_train_lmdb"), map_size=1 << 20)
        with env.begin(write=True) as txn:
            for k in range(n):
                arr = np.random.default_rng(k).integers(0, 256, (4, 5, 3), dtype=np.uint8)
                buf = _io.BytesIO()
                Image.fromarray(arr).save(buf, format="PNG")
                txn.put(f"{category}{k}".encode(), buf.getvalue())
                images[category, k] = arr
        env.close()
    ds = datasets.LSUN(str(tmp_path), classes=["bedroom_train", "bridge_train"])
    assert len(ds) == 3
    img, label = ds[2]
    assert label == 1
    np.testing.assert_array_equal(img, images["bridge", 0])
    with pytest.raises(ValueError, match="Unknown value 'kitchn' for LSUN class"):
        datasets.LSUN(str(tmp_path), classes=["kitchn_train"])


def test_phototour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "liberty"
    sheet = np.random.default_rng(0).integers(0, 256, (128, 128), dtype=np.uint8)
    write_image(folder / "patches0000.bmp", sheet)
    _write(folder / "info.txt", "0 0\n0 0\n1 0\n")
    _write(folder / "m50_100000_100000_0.txt", "0 5 0 1 5 0 0\n1 7 0 2 8 0 0\n")
    monkeypatch.setitem(datasets.PhotoTour.lens, "liberty", 3)  # the first 3 patches
    train = datasets.PhotoTour(str(tmp_path), name="liberty")
    assert len(train) == 3 and train[1].dtype == lucid.uint8
    np.testing.assert_array_equal(train[1].numpy(), sheet[:64, 64:])
    assert (tmp_path / "liberty.pt").is_file()
    test = datasets.PhotoTour(str(tmp_path), name="liberty", train=False)
    p1, p2, match = test[1]
    assert int(match) == 0 and len(test) == 2
    with pytest.raises(RuntimeError, match="PhotoTour needs"):
        datasets.PhotoTour(str(tmp_path), name="yosemite")


def _videos(root: Path) -> dict[str, Any]:
    paths = []
    for action, names in (("brush", ["a.avi", "b.avi"]), ("jump", ["c.avi"])):
        for name in names:
            _write(root / action / name, "not decoded")
            paths.append(str(root / action / name))
    return {"video_paths": paths, "video_pts": [np.arange(n) for n in (10, 5, 7)],
            "video_fps": [30.0, 30.0, 15.0]}  # fmt: skip


def test_video_datasets_index_clips_and_folds(tmp_path: Path) -> None:
    meta = _videos(tmp_path / "videos")
    _write(tmp_path / "ann" / "trainlist01.txt", "brush/a.avi 1\njump/c.avi 2\n")
    _write(tmp_path / "ann" / "testlist01.txt", "brush/b.avi\n")
    ucf = datasets.UCF101(
        str(tmp_path / "videos"), str(tmp_path / "ann"), frames_per_clip=4, step_between_clips=3,
        _precomputed_metadata=meta,
    )  # fmt: skip
    assert ucf.classes == ["brush", "jump"] and ucf.indices == [0, 2]
    assert len(ucf) == 3 + 2  # (10 - 4) // 3 + 1 and (7 - 4) // 3 + 1
    assert ucf.video_clips.get_clip_location(4) == (1, 1)
    np.testing.assert_array_equal(ucf.video_clips.clips[1][1], [3, 4, 5, 6])
    with pytest.raises(RuntimeError, match="decoding video needs a video decoder"):
        ucf[0]
    test = datasets.UCF101(
        str(tmp_path / "videos"), str(tmp_path / "ann"), 4, train=False, _precomputed_metadata=meta
    )
    assert test.indices == [1] and len(test) == 2
    halved = datasets.UCF101(
        str(tmp_path / "videos"), str(tmp_path / "ann"), 2, frame_rate=15,
        _precomputed_metadata=meta,
    )  # fmt: skip
    np.testing.assert_array_equal(halved.video_clips.clips[0][0], [0, 2])
    _write(tmp_path / "hann" / "brush_test_split1.txt", "a.avi 1 \nb.avi 2 \n")
    _write(tmp_path / "hann" / "jump_test_split1.txt", "c.avi 2 \n")
    hmdb = datasets.HMDB51(
        str(tmp_path / "videos"), str(tmp_path / "hann"), 5, train=False,
        _precomputed_metadata=meta,
    )  # fmt: skip
    assert hmdb.indices == [1, 2] and len(hmdb) == 1 + 3  # 5 frames: 1 clip; 7: 3
    with pytest.raises(ValueError, match="fold should be between 1 and 3"):
        datasets.HMDB51(str(tmp_path / "videos"), str(tmp_path / "hann"), 5, fold=4)
    with pytest.raises(RuntimeError, match="_precomputed_metadata"):
        datasets.HMDB51(str(tmp_path / "videos"), str(tmp_path / "hann"), 5)
    kin_meta = _videos(tmp_path / "kin" / "train")
    kinetics = datasets.Kinetics(str(tmp_path / "kin"), 5, _precomputed_metadata=kin_meta)
    assert len(kinetics) == 6 + 1 + 3 and kinetics.metadata["video_fps"] == [30.0, 30.0, 15.0]
    with pytest.raises(RuntimeError, match="Kinetics needs"):
        datasets.Kinetics(str(tmp_path / "kin"), 5, split="val", _precomputed_metadata=kin_meta)


# -- wrap_dataset_for_transforms_v2 -----------------------------------------------------------


class _FakeTVTensors:
    """The three tv_tensors the wrapper builds, recording what they are given (the real ones
    live in lucid.data.tv_tensors, checked below when present)."""

    class BoundingBoxes:
        def __init__(self, data: Any, *, format: str, canvas_size: tuple[int, int]) -> None:
            self.data, self.format, self.canvas_size = np.asarray(data), format, canvas_size

    class Mask:
        def __init__(self, data: Any) -> None:
            self.data = np.asarray(data)

    class Video(Mask):
        pass


def test_wrap_dataset_for_transforms_v2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lucid.data.datasets import _wrap

    monkeypatch.setattr(_wrap, "_tv_tensors", lambda: _FakeTVTensors)
    _img(tmp_path / "a.png")
    ann = {
        "images": [{"id": 3, "file_name": "a.png"}],
        "annotations": [{"id": 1, "image_id": 3, "category_id": 2, "bbox": [1.0, 1.0, 2.0, 3.0],
                         "area": 6.0, "iscrowd": 0, "segmentation": []}],
        "categories": [{"id": 2, "name": "cat", "supercategory": "animal"}],
    }  # fmt: skip
    seen = []
    coco = datasets.CocoDetection(
        str(tmp_path), str(_write(tmp_path / "a.json", json.dumps(ann))),
        transforms=lambda img, target: seen.append(target) or (img, target),
    )  # fmt: skip
    wrapped = datasets.wrap_dataset_for_transforms_v2(coco)
    assert type(wrapped).__name__ == "WrappedCocoDetection" and isinstance(wrapped, type(coco))
    img, target = wrapped[0]
    assert set(target) == {"image_id", "boxes", "labels"} and target["image_id"] == 3
    assert target["boxes"].format == "XYXY" and target["boxes"].canvas_size == (4, 5)
    np.testing.assert_array_equal(target["boxes"].data, [[1.0, 1.0, 3.0, 4.0]])
    assert target["boxes"].data.dtype == np.float32
    np.testing.assert_array_equal(target["labels"].numpy(), [2])
    assert seen and seen[0] is target and len(wrapped) == 1 and wrapped.ids == [3]
    areas = datasets.wrap_dataset_for_transforms_v2(coco, target_keys={"area", "boxes"})
    assert set(areas[0][1]) == {"area", "boxes"} and areas[0][1]["area"] == [6.0]
    with pytest.raises(ValueError, match=r"Target keys \['nope'\] are not available"):
        datasets.wrap_dataset_for_transforms_v2(coco, target_keys={"nope"})

    _voc(tmp_path / "voc")
    voc = datasets.wrap_dataset_for_transforms_v2(datasets.VOCDetection(str(tmp_path / "voc")))
    _, target = voc[0]
    np.testing.assert_array_equal(target["boxes"].data, [[1, 2, 3, 4]])
    np.testing.assert_array_equal(target["labels"].numpy(), [12])  # "dog"
    seg = datasets.wrap_dataset_for_transforms_v2(datasets.VOCSegmentation(str(tmp_path / "voc")))
    assert isinstance(seg[0][1], _FakeTVTensors.Mask) and seg[0][1].data.shape == (4, 5)
    with pytest.raises(ValueError, match="`target_keys` is currently only supported"):
        datasets.wrap_dataset_for_transforms_v2(
            datasets.VOCSegmentation(str(tmp_path / "voc")), target_keys="all"
        )
    with pytest.raises(TypeError, match="No wrapper exists for dataset class SUN397"):
        _write(tmp_path / "SUN397" / "ClassName.txt", "/a/abbey\n")
        datasets.wrap_dataset_for_transforms_v2(datasets.SUN397(str(tmp_path)))
    with pytest.raises(TypeError, match="meant for subclasses of"):
        datasets.wrap_dataset_for_transforms_v2([1, 2])


def test_wrap_with_lucid_tv_tensors(tmp_path: Path) -> None:
    tv_tensors = pytest.importorskip("lucid.data.tv_tensors")
    _voc(tmp_path)
    voc = datasets.wrap_dataset_for_transforms_v2(datasets.VOCDetection(str(tmp_path)))
    _, target = voc[0]
    assert isinstance(target["boxes"], tv_tensors.BoundingBoxes)
    assert tuple(target["boxes"].canvas_size) == (4, 5)
    np.testing.assert_array_equal(target["boxes"].numpy(), [[1, 2, 3, 4]])
