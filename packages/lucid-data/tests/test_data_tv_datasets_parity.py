"""lucid's datasets against torchvision 0.28's own, on the same fixture files: every item
equal (PIL images and torch tensors compared as arrays). torchvision runs from its unpacked
sources (LUCID_TORCHVISION_SRC, else lucid-models' test cache) in the parity env."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.data import datasets

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
PIL_Image = pytest.importorskip("PIL.Image")

_CACHE = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")),
    "lucid-models-tests",
    "torchvision-0.28.0",
)
_SRC = os.environ.get("LUCID_TORCHVISION_SRC", _CACHE)


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_lucid_{name}", Path(__file__).with_name(name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_f = _load("_fixture_formats.py")


@pytest.fixture(scope="module")
def tvd() -> Any:
    if not os.path.isdir(os.path.join(_SRC, "torchvision")):
        pytest.skip(f"no unpacked torchvision 0.28 at {_SRC!r}: set LUCID_TORCHVISION_SRC")
    if _SRC not in sys.path:
        sys.path.insert(0, _SRC)
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )
    import torchvision.datasets as tv_datasets  # noqa: PLC0415 - optional reference

    return tv_datasets


def _plain(x: Any) -> Any:
    """PIL images, torch and lucid tensors as arrays; containers element by element."""
    if isinstance(x, PIL_Image.Image):
        return np.array(x)
    if isinstance(x, torch.Tensor):
        return x.numpy()
    if isinstance(x, lucid.Tensor):
        return x.numpy()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return type(x)(_plain(v) for v in x)
    return x


def _same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {type(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{where}: {type(b)}"
        assert a.dtype == b.dtype and a.shape == b.shape, (
            f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        )
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b and type(a) is type(b), f"{where}: {a!r} vs {b!r}"


def _compare(mine: Any, theirs: Any) -> None:
    assert len(mine) == len(theirs) > 0
    for i in range(len(theirs)):
        _same(_plain(theirs[i]), _plain(mine[i]), f"item {i}")


def _img(path: Path, seed: int = 0, gray: bool = False, suffix_png: bool = True) -> None:
    shape = (4, 5) if gray else (4, 5, 3)
    _f.write_image(path, np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8))


def _jpg(path: Path, seed: int = 0, gray: bool = False) -> None:
    """Lossless content under a .jpg name (both libraries decode the bytes, not the name)."""
    tmp = path.with_suffix(".png")
    _img(tmp, seed, gray)
    os.replace(tmp, path)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


Case = Callable[[Path, Any], tuple[Any, Any]]
CASES: dict[str, Case] = {}


def case(fn: Case) -> Case:
    CASES[fn.__name__] = fn
    return fn


@case
def voc(root: Path, tvd: Any) -> tuple[Any, Any]:
    base = root / "VOCdevkit" / "VOC2012"
    for k in ("a", "b"):
        _jpg(base / "JPEGImages" / f"{k}.jpg", seed=ord(k))
        mask = PIL_Image.fromarray(np.full((4, 5), ord(k) % 21, np.uint8), mode="P")
        mask.putpalette([0, 0, 0] * 256)
        (base / "SegmentationClass").mkdir(parents=True, exist_ok=True)
        mask.save(base / "SegmentationClass" / f"{k}.png")
        objects = "".join(
            f"<object><name>{n}</name><difficult>0</difficult><bndbox><xmin>{i}</xmin>"
            f"<ymin>1</ymin><xmax>3</xmax><ymax>4</ymax></bndbox></object>"
            for i, n in enumerate(["dog", "cat"][: 1 + (k == "b")])
        )
        _write(
            base / "Annotations" / f"{k}.xml",
            f"<annotation><filename>{k}.jpg</filename><size><width>5</width>"
            f"<height>4</height><depth>3</depth></size>{objects}</annotation>",
        )
    for sub in ("Main", "Segmentation"):
        _write(base / "ImageSets" / sub / "val.txt", "a\nb\n")
    mine = [
        datasets.VOCDetection(str(root), image_set="val"),
        datasets.VOCSegmentation(str(root), image_set="val"),
    ]
    theirs = [
        tvd.VOCDetection(str(root), image_set="val"),
        tvd.VOCSegmentation(str(root), image_set="val"),
    ]
    return mine, theirs


@case
def celeba(root: Path, tvd: Any) -> tuple[Any, Any]:
    base = root / "celeba"
    names = [f"{i:06d}.jpg" for i in range(1, 5)]
    for i, n in enumerate(names):
        _jpg(base / "img_align_celeba" / n, seed=i)
    _write(base / "list_eval_partition.txt", "".join(f"{n} {i % 3}\n" for i, n in enumerate(names)))
    _write(base / "identity_CelebA.txt", "".join(f"{n} {7 + i}\n" for i, n in enumerate(names)))
    _write(
        base / "list_bbox_celeba.txt",
        "4\nimage_id x_1 y_1 width height\n"
        + "".join(f"{n} {i} 2 3 4\n" for i, n in enumerate(names)),
    )
    _write(
        base / "list_landmarks_align_celeba.txt",
        "4\nlefteye_x lefteye_y\n" + "".join(f"{n} {i}  5\n" for i, n in enumerate(names)),
    )
    _write(
        base / "list_attr_celeba.txt",
        "4\nSmiling Young Bald\n"
        + "".join(f"{n} {1 - 2 * (i % 2)} -1  1\n" for i, n in enumerate(names)),
    )
    kinds = ["attr", "identity", "bbox", "landmarks"]
    tv_md5 = tvd.celeba.CelebA._check_integrity
    tvd.celeba.CelebA._check_integrity = lambda self: True  # the fixtures' md5 differ
    try:
        theirs = [tvd.CelebA(str(root), split=s, target_type=kinds) for s in ("train", "all")]
    finally:
        tvd.celeba.CelebA._check_integrity = tv_md5
    mine = [datasets.CelebA(str(root), split=s, target_type=kinds) for s in ("train", "all")]
    return mine, theirs


@case
def widerface(root: Path, tvd: Any) -> tuple[Any, Any]:
    base = root / "widerface"
    for name in ("WIDER_train", "WIDER_val", "WIDER_test", "wider_face_split"):
        (base / name).mkdir(parents=True)
    _jpg(base / "WIDER_val" / "images" / "0--P" / "a.jpg")
    _jpg(base / "WIDER_val" / "images" / "0--P" / "b.jpg", seed=1)
    _write(
        base / "wider_face_split" / "wider_face_val_bbx_gt.txt",
        "0--P/a.jpg\n2\n1 2 3 4 0 0 0 0 0 0 \n5 6 7 8 1 1 0 2 0 1 \n"
        "0--P/b.jpg\n0\n0 0 0 0 0 0 0 0 0 0 \n",
    )
    _jpg(base / "WIDER_test" / "images" / "1--Q" / "c.jpg", seed=2)
    _write(base / "wider_face_split" / "wider_face_test_filelist.txt", "1--Q/c.jpg\n")
    splits = ("val", "test")
    return (
        [datasets.WIDERFace(str(root), split=s) for s in splits],
        [tvd.WIDERFace(str(root), split=s) for s in splits],
    )


@case
def kitti(root: Path, tvd: Any) -> tuple[Any, Any]:
    raw = root / "Kitti" / "raw" / "training"
    _img(raw / "image_2" / "000000.png")
    _write(
        raw / "label_2" / "000000.txt",
        "Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.70 -1.59\n"
        "Pedestrian 0.00 0 0.21 423.17 173.67 433.17 224.03 1.60 0.38 0.30 -5.87 1.63 23.11 "
        "-0.03\n",
    )
    return datasets.Kitti(str(root)), tvd.Kitti(str(root))


@case
def cityscapes(root: Path, tvd: Any) -> tuple[Any, Any]:
    city = "aachen"
    _img(root / "leftImg8bit" / "val" / city / f"{city}_0_1_leftImg8bit.png")
    gt = root / "gtFine" / "val" / city
    _f.write_image(
        gt / f"{city}_0_1_gtFine_labelIds.png", np.arange(20, dtype=np.uint8).reshape(4, 5)
    )
    _img(gt / f"{city}_0_1_gtFine_color.png", seed=3)
    _write(gt / f"{city}_0_1_gtFine_polygons.json", json.dumps({"imgHeight": 4, "objects": []}))
    kinds = ["semantic", "color", "polygon"]
    return (
        datasets.Cityscapes(str(root), split="val", target_type=kinds),
        tvd.Cityscapes(str(root), split="val", target_type=kinds),
    )


@case
def caltech(root: Path, tvd: Any) -> tuple[Any, Any]:
    cats = root / "caltech101" / "101_ObjectCategories"
    for c, n in (("BACKGROUND_Google", 1), ("Faces", 2), ("ant", 1)):
        for i in range(1, n + 1):
            _jpg(cats / c / f"image_{i:04d}.jpg", seed=i, gray=c == "ant")
    c256 = root / "caltech256" / "256_ObjectCategories"
    _jpg(c256 / "001.ak47" / "001_0001.jpg")
    _jpg(c256 / "002.bat" / "002_0001.jpg", seed=2)
    return (
        [datasets.Caltech101(str(root)), datasets.Caltech256(str(root))],
        [tvd.Caltech101(str(root)), tvd.Caltech256(str(root))],
    )


@case
def oxford_pet(root: Path, tvd: Any) -> tuple[Any, Any]:
    base = root / "oxford-iiit-pet"
    ids = ["Abyssinian_1", "great_pyrenees_2", "Bengal_3"]
    for i, name in enumerate(ids):
        _jpg(base / "images" / f"{name}.jpg", seed=i)
        _f.write_image(
            base / "annotations" / "trimaps" / f"{name}.png", np.full((4, 5), 1 + i % 3, np.uint8)
        )
    _write(
        base / "annotations" / "test.txt",
        "Abyssinian_1 1 1 1\ngreat_pyrenees_2 2 2 1\nBengal_3 3 1 2\n",
    )
    kinds = ["category", "binary-category", "segmentation"]
    return (
        datasets.OxfordIIITPet(str(root), split="test", target_types=kinds),
        tvd.OxfordIIITPet(str(root), split="test", target_types=kinds),
    )


@case
def flickr(root: Path, tvd: Any) -> tuple[Any, Any]:
    _jpg(root / "1000_abc.jpg")
    _jpg(root / "2000_def.jpg", seed=1)
    _write(
        root / "ann.html",
        "<html><table><tr><td><a href='x'>http://x/1000/</a></td><td><ul><li>A dog.</li>"
        "<li>A brown dog.</li></ul></td></tr><tr><td><a href='y'>http://x/2000/</a></td>"
        "<td><ul><li>Grass.</li></ul></td></tr></table></html>",
    )
    _write(root / "tokens", "1000_abc.jpg#0\tOne.\n2000_def.jpg#0\tX\n1000_abc.jpg#1\tTwo.\n")
    return (
        [
            datasets.Flickr8k(str(root), str(root / "ann.html")),
            datasets.Flickr30k(str(root), str(root / "tokens")),
        ],
        [
            tvd.Flickr8k(str(root), str(root / "ann.html")),
            tvd.Flickr30k(str(root), str(root / "tokens")),
        ],
    )


@case
def lfw(root: Path, tvd: Any) -> tuple[Any, Any]:
    base = root / "lfw-py"
    for name, n in (("Ann", 2), ("Bob", 1), ("Cid", 1)):
        for i in range(1, n + 1):
            _jpg(base / "lfw_funneled" / name / f"{name}_{i:04d}.jpg", seed=i)
    _write(base / "lfw-names.txt", "Ann 2\nBob 1\nCid 1\n")
    _write(base / "people.txt", "2\n1\nAnn\t2\n2\nBob\t1\nCid\t1\n")
    _write(base / "pairs.txt", "2\t1\nAnn\t1\t2\nBob\t1\tCid\t1\nAnn\t2\t1\nCid\t1\tAnn\t1\n")
    real = tvd.lfw.check_integrity
    tvd.lfw.check_integrity = lambda path, md5=None: os.path.exists(path) or path.endswith(".tgz")
    try:
        theirs = [tvd.LFWPeople(str(root)), tvd.LFWPairs(str(root))]
    finally:
        tvd.lfw.check_integrity = real
    return [datasets.LFWPeople(str(root)), datasets.LFWPairs(str(root))], theirs


@case
def omniglot_sun_inat_clevr(root: Path, tvd: Any) -> tuple[Any, Any]:
    og = root / "omniglot-py" / "images_evaluation"
    for a, c, k in (("Greek", "character01", 1), ("Greek", "character02", 2), ("Aurek", "c1", 1)):
        for i in range(k):
            _img(og / a / c / f"{c}_{i:02d}.png", seed=i, gray=True)
    sun = root / "SUN397"
    _write(sun / "ClassName.txt", "/a/abbey\n/b/bar/inside\n")
    _jpg(sun / "a" / "abbey" / "sun_a.jpg")
    _jpg(sun / "b" / "bar" / "inside" / "sun_b.jpg", seed=1)
    inat = root / "2021_valid"
    _jpg(inat / "00000_Animalia_Chordata_Aves_Order_Fam_Genus_sp" / "a.jpg")
    _jpg(inat / "00001_Animalia_Chordata_Mammalia_Order_Fam2_Genus2_sp" / "b.jpg", seed=1)
    clevr = root / "clevr" / "CLEVR_v1.0"
    for i in range(2):
        _img(clevr / "images" / "val" / f"CLEVR_val_{i:06d}.png", seed=i)
    _write(
        clevr / "scenes" / "CLEVR_val_scenes.json",
        json.dumps(
            {
                "scenes": [
                    {"image_filename": f"CLEVR_val_{i:06d}.png", "objects": [0] * (i + 2)}
                    for i in range(2)
                ]
            }
        ),
    )
    # torchvision lists Omniglot's folders in file-system order, lucid sorts them: give
    # torchvision sorted listings, so that the class indices can be compared
    real = (tvd.omniglot.check_integrity, tvd.omniglot.list_dir, tvd.omniglot.list_files)
    tvd.omniglot.check_integrity = lambda path, md5=None: True
    tvd.omniglot.list_dir = lambda root: sorted(real[1](root))
    tvd.omniglot.list_files = lambda root, suffix: sorted(real[2](root, suffix))
    try:
        tv_og = tvd.Omniglot(str(root), background=False)
    finally:
        tvd.omniglot.check_integrity, tvd.omniglot.list_dir, tvd.omniglot.list_files = real
    kinds = ["full", "class", "genus"]
    mine = [
        datasets.Omniglot(str(root), background=False),
        datasets.SUN397(str(root)),
        datasets.INaturalist(str(root), version="2021_valid", target_type=kinds),
        datasets.CLEVRClassification(str(root), split="val"),
    ]
    theirs = [
        tv_og,
        tvd.SUN397(str(root)),
        tvd.INaturalist(str(root), version="2021_valid", target_type=kinds),
        tvd.CLEVRClassification(str(root), split="val"),
    ]
    # torchvision lists SUN397's files with rglob and INaturalist's with listdir (file-system
    # order); lucid sorts them: compare as sets of items there
    theirs[1]._image_files.sort()
    theirs[1]._labels = [
        theirs[1].class_to_idx["/".join(p.relative_to(theirs[1]._data_dir).parts[1:-1])]
        for p in theirs[1]._image_files
    ]
    theirs[2].index.sort()
    return mine, theirs


@case
def places365(root: Path, tvd: Any) -> tuple[Any, Any]:
    _write(root / "categories_places365.txt", "/a/airfield 0\n/a/airport 1\n/b/bar 2\n")
    _write(
        root / "places365_val.txt", "Places365_val_00000001.jpg 2\nPlaces365_val_00000002.jpg 0\n"
    )
    for i in (1, 2):
        _jpg(root / "val_256" / f"Places365_val_{i:08d}.jpg", seed=i)
    real = tvd.places365.check_integrity
    tvd.places365.check_integrity = lambda path, md5=None: os.path.exists(path)
    try:
        theirs = tvd.Places365(str(root), split="val", small=True)
    finally:
        tvd.places365.check_integrity = real
    mine = datasets.Places365(str(root), split="val", small=True)
    assert mine.classes == theirs.classes and mine.class_to_idx == theirs.class_to_idx
    return mine, theirs


def _flow(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(2, 4, 5)).astype(np.float32)


@case
def optical_flow(root: Path, tvd: Any) -> tuple[Any, Any]:
    sintel = root / "Sintel"
    for scene in ("alley", "bamboo"):
        for k in range(3):
            _img(sintel / "training" / "final" / scene / f"frame_{k:04d}.png", seed=k)
        (sintel / "training" / "flow" / scene).mkdir(parents=True)
        for k in range(2):
            _f.write_flo(sintel / "training" / "flow" / scene / f"frame_{k:04d}.flo", _flow(k))
    chairs = root / "FlyingChairs" / "data"
    for k in range(3):
        _img(chairs / f"{k:05d}_img1.ppm", seed=k)
        _img(chairs / f"{k:05d}_img2.ppm", seed=k + 5)
        _f.write_flo(chairs / f"{k:05d}_flow.flo", _flow(k))
    _write(root / "FlyingChairs" / "FlyingChairs_train_val.txt", "1\n2\n1\n")
    things = root / "FlyingThings3D"
    for k in range(3):
        _img(things / "frames_cleanpass" / "TRAIN" / "A" / "0000" / "left" / f"{k:04d}.png", seed=k)
    for direction in ("into_future", "into_past"):
        folder = things / "optical_flow" / "TRAIN" / "A" / "0000" / direction / "left"
        folder.mkdir(parents=True)
        for k in range(3):
            pfm = np.random.default_rng(k).normal(size=(4, 5, 3)).astype(np.float32)
            _f.write_pfm(folder / f"OpticalFlow{k:04d}.pfm", pfm)
    mine = [
        datasets.Sintel(str(root), pass_name="final"),
        datasets.FlyingChairs(str(root)),
        datasets.FlyingThings3D(str(root)),
    ]
    theirs = [
        tvd.Sintel(str(root), pass_name="final"),
        tvd.FlyingChairs(str(root)),
        tvd.FlyingThings3D(str(root)),
    ]
    return mine, theirs


@case
def stereo(root: Path, tvd: Any) -> tuple[Any, Any]:
    disp16 = (np.arange(20, dtype=np.uint16).reshape(4, 5) * 300).astype(np.uint16)
    d = np.abs(np.random.default_rng(2).normal(size=(4, 5))).astype(np.float32)
    d[0, 0] = np.inf
    k12 = root / "Kitti2012" / "training"
    _img(k12 / "colored_0" / "000000_10.png")
    _img(k12 / "colored_1" / "000000_10.png", seed=1)
    _f.write_image(k12 / "disp_noc" / "000000_10.png", disp16)
    mid = root / "Middlebury2014" / "train" / "Adirondack-perfect"
    _img(mid / "im0.png")
    _img(mid / "im1.png", seed=1)
    _f.write_pfm(mid / "disp0.pfm", d)
    _f.write_pfm(mid / "disp1.pfm", d)
    cre = root / "CREStereo"
    for s in ("shapenet", "reflective", "tree", "hole"):
        _jpg(cre / s / "x_left.jpg")
        _jpg(cre / s / "x_right.jpg", seed=1)
        _f.write_image(cre / s / "x_left.disp.png", disp16)
        _f.write_image(cre / s / "x_right.disp.png", disp16 + 1)
    ft = root / "FallingThings" / "single" / "obj" / "scene"
    _jpg(ft / "0.left.jpg")
    _jpg(ft / "0.right.jpg")
    _f.write_image(ft / "0.left.depth.png", disp16 + 1)
    _f.write_image(ft / "0.right.depth.png", disp16 + 2)
    _write(
        ft / "_camera_settings.json",
        json.dumps({"camera_settings": [{"intrinsic_settings": {"fx": 768.2}}]}),
    )
    ins = root / "InStereo2k" / "train" / "s"
    _img(ins / "left.png")
    _img(ins / "right.png")
    _f.write_image(ins / "left_disp.png", disp16)
    _f.write_image(ins / "right_disp.png", disp16)
    eth = root / "ETH3D"
    _img(eth / "two_view_training" / "s" / "im0.png")
    _img(eth / "two_view_training" / "s" / "im1.png")
    (eth / "two_view_training_gt" / "s").mkdir(parents=True)
    _f.write_pfm(eth / "two_view_training_gt" / "s" / "disp0GT.pfm", -d)
    _f.write_image(
        eth / "two_view_training_gt" / "s" / "mask0nocc.png", np.eye(4, 5, dtype=np.uint8) * 255
    )
    st = root / "Sintel" / "training"
    for folder in ("clean_left", "clean_right"):
        _img(st / folder / "alley" / "frame_0001.png")
    _img(st / "disparities" / "alley" / "frame_0001.png", seed=4)
    _f.write_image(
        st / "occlusions" / "alley" / "frame_0001.png", np.eye(4, 5, dtype=np.uint8) * 255
    )
    _f.write_image(st / "outofframe" / "alley" / "frame_0001.png", np.zeros((4, 5), np.uint8))
    sf = root / "SceneFlow" / "Monkaa"
    for side in ("left", "right"):
        _img(sf / "frames_cleanpass" / "a" / side / "0.png")
        (sf / "disparity" / "a" / side).mkdir(parents=True)
        _f.write_pfm(sf / "disparity" / "a" / side / "0.pfm", -d)
    k15 = root / "Kitti2015" / "training"
    for side in ("image_2", "image_3"):
        _img(k15 / side / "000000_10.png", seed=len(side))
    _f.write_image(k15 / "disp_occ_0" / "000000_10.png", disp16)
    _f.write_image(k15 / "disp_occ_1" / "000000_10.png", disp16 + 7)
    carla = root / "carla-highres" / "trainingF" / "s"
    _img(carla / "im0.png")
    _img(carla / "im1.png", seed=1)
    _f.write_pfm(carla / "disp0GT.pfm", -d)
    _f.write_pfm(carla / "disp1GT.pfm", d)
    names = [
        ("Kitti2015Stereo", {}),
        ("CarlaStereo", {}),
        ("Kitti2012Stereo", {}),
        ("Middlebury2014Stereo", {}),
        ("CREStereo", {}),
        ("FallingThingsStereo", {}),
        ("InStereo2k", {}),
        ("ETH3DStereo", {}),
        ("SintelStereo", {"pass_name": "clean"}),
        ("SceneFlowStereo", {"variant": "Monkaa"}),
    ]
    mine = [getattr(datasets, n)(str(root), **kw) for n, kw in names]
    theirs = [getattr(tvd, n)(str(root), **kw) for n, kw in names]
    return mine, theirs


@pytest.mark.parametrize("name", sorted(CASES))
def test_items_match_torchvision(
    name: str, tmp_path: Path, tvd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    if name == "caltech":  # torchvision's Caltech101 imports scipy.io for every item
        stub = types.ModuleType("scipy")
        stub.io = types.ModuleType("scipy.io")  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "scipy", stub)
        monkeypatch.setitem(sys.modules, "scipy.io", stub.io)  # type: ignore[attr-defined]
    mine, theirs = CASES[name](tmp_path, tvd)
    for m, t in zip(
        *((mine, theirs) if isinstance(mine, list) else ([mine], [theirs])), strict=True
    ):
        _compare(m, t)


def test_video_clip_indexes_match_torchvision(tmp_path: Path, tvd: Any) -> None:
    paths = []
    videos = tmp_path / "videos"
    for action, names in (("brush", ["a.avi", "b.avi"]), ("jump", ["c.avi"])):
        for n in names:
            _write(videos / action / n, "x")
            paths.append(str(videos / action / n))
    counts, fps = (10, 5, 7), [30.0, 30.0, 12.0]
    _write(tmp_path / "ann" / "trainlist01.txt", "brush/a.avi 1\njump/c.avi 2\n")
    for frame_rate in (None, 15, 7):
        kw = {"frames_per_clip": 3, "step_between_clips": 2, "frame_rate": frame_rate}
        tv = tvd.UCF101(
            str(videos),
            str(tmp_path / "ann"),
            **kw,
            _precomputed_metadata={
                "video_paths": paths,
                "video_pts": [torch.arange(n) for n in counts],
                "video_fps": fps,
            },
        )
        mine = datasets.UCF101(
            str(videos),
            str(tmp_path / "ann"),
            **kw,
            _precomputed_metadata={
                "video_paths": paths,
                "video_pts": [np.arange(n) for n in counts],
                "video_fps": fps,
            },
        )
        assert len(mine) == len(tv) and mine.indices == tv.indices and mine.classes == tv.classes
        for c_mine, c_tv in zip(mine.video_clips.clips, tv.video_clips.clips, strict=True):
            np.testing.assert_array_equal(c_mine, c_tv.numpy())
        for i in range(len(tv)):
            assert mine.video_clips.get_clip_location(i) == tv.video_clips.get_clip_location(i)
    # HMDB51's split files, and Kinetics (a split folder of class folders)
    _write(tmp_path / "hann" / "brush_test_split2.txt", "a.avi 2 \nb.avi 1 \n")
    _write(tmp_path / "hann" / "jump_test_split2.txt", "c.avi 2 \n")
    meta = {"video_paths": paths, "video_pts": [torch.arange(n) for n in counts], "video_fps": fps}
    for train in (True, False):
        tv = tvd.HMDB51(
            str(videos), str(tmp_path / "hann"), 2, fold=2, train=train, _precomputed_metadata=meta
        )
        mine = datasets.HMDB51(
            str(videos), str(tmp_path / "hann"), 2, fold=2, train=train, _precomputed_metadata=meta
        )
        assert (len(mine), mine.indices) == (len(tv), tv.indices)
    (tmp_path / "kinetics").mkdir()
    os.rename(videos, tmp_path / "kinetics" / "val")
    kin_meta = {
        **meta,
        "video_paths": [p.replace(str(videos), str(tmp_path / "kinetics" / "val")) for p in paths],
    }
    tv = tvd.Kinetics(str(tmp_path / "kinetics"), 4, split="val", _precomputed_metadata=kin_meta)
    mine = datasets.Kinetics(
        str(tmp_path / "kinetics"), 4, split="val", _precomputed_metadata=kin_meta
    )
    assert len(mine) == len(tv) and mine.classes == tv.classes
    assert [s[1] for s in mine.samples] == [s[1] for s in tv.samples]


def test_constructor_signatures_match_torchvision(tvd: Any) -> None:
    """Every dataset both have takes the same parameters, in the same order, with the same
    defaults (read from torchvision's sources)."""
    import ast
    import glob
    import inspect

    signatures: dict[str, tuple[list[str], list[Any]]] = {}
    for path in glob.glob(os.path.join(_SRC, "torchvision", "datasets", "*.py")):
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        args = item.args
                        signatures[node.name] = (
                            [a.arg for a in args.args[1:]],
                            [_literal(d) for d in args.defaults],
                        )
    checked = 0
    for name in datasets.__all__:
        cls = getattr(datasets, name)
        if not inspect.isclass(cls) or name not in signatures:
            continue
        params = [
            p
            for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        defaults = [
            p.default.__name__ if callable(p.default) else p.default
            for p in params
            if p.default is not p.empty
        ]
        assert ([p.name for p in params], defaults) == signatures[name], name
        checked += 1
    assert checked >= 60  # the classes with an __init__ of their own in torchvision


def _literal(node: Any) -> Any:
    import ast

    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # a name: default_loader


@pytest.fixture(params=["scipy", "lucid's reader"])
def mat_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """lucid reads .mat files with SciPy where it is installed, else with its own reader:
    both, against torchvision's SciPy."""
    pytest.importorskip("scipy.io")
    if request.param != "scipy":
        from lucid.data.datasets import _matfile

        real = _matfile.importlib.import_module

        def no_scipy(name: str, *args: Any) -> Any:
            if name.startswith("scipy"):
                raise ImportError(name)
            return real(name, *args)

        fake = types.SimpleNamespace(import_module=no_scipy)
        monkeypatch.setattr(_matfile, "importlib", fake)
    return str(request.param)


def test_mat_file_datasets_match_torchvision(tmp_path: Path, tvd: Any, mat_reader: str) -> None:
    """SBD, StanfordCars and Caltech101's contours: torchvision reads the .mat files with
    SciPy."""
    rng = np.random.default_rng(0)
    _jpg(tmp_path / "img" / "s1.jpg")
    _write(tmp_path / "val.txt", "s1\n")
    bounds = tuple(_f.Sparse((rng.random((4, 5)) > 0.7).astype(float)) for _ in range(20))
    seg = rng.integers(0, 21, (4, 5)).astype(np.uint8)
    (tmp_path / "cls").mkdir()
    _f.write_mat(
        tmp_path / "cls" / "s1.mat", {"GTcls": {"Segmentation": seg, "Boundaries": bounds}}
    )
    for mode in ("segmentation", "boundaries"):
        _compare(
            datasets.SBDataset(str(tmp_path), image_set="val", mode=mode),
            tvd.SBDataset(str(tmp_path), image_set="val", mode=mode),
        )
    cars = tmp_path / "stanford_cars"
    for i in (1, 2):
        _jpg(cars / "cars_train" / f"{i:05d}.jpg", seed=i)
    (cars / "devkit").mkdir()
    annos = [
        {
            "bbox_x1": np.array([[1]], np.uint8),
            "class": np.array([[2]], np.uint8),
            "fname": "00001.jpg",
        },
        {
            "bbox_x1": np.array([[2]], np.uint8),
            "class": np.array([[1]], np.uint8),
            "fname": "00002.jpg",
        },
    ]
    _f.write_mat(cars / "devkit" / "cars_train_annos.mat", {"annotations": annos})
    _f.write_mat(cars / "devkit" / "cars_meta.mat", {"class_names": ["Hummer", "Acura RL"]})
    mine, theirs = datasets.StanfordCars(str(tmp_path)), tvd.StanfordCars(str(tmp_path))
    assert mine.classes == theirs.classes
    _compare(mine, theirs)
    c101 = tmp_path / "caltech101"
    _jpg(c101 / "101_ObjectCategories" / "ant" / "image_0001.jpg")
    (c101 / "101_ObjectCategories" / "BACKGROUND_Google").mkdir()  # torchvision removes it
    (c101 / "Annotations" / "ant").mkdir(parents=True)
    _f.write_mat(
        c101 / "Annotations" / "ant" / "annotation_0001.mat",
        {"obj_contour": rng.normal(size=(2, 6))},
    )
    kinds = ["category", "annotation"]
    _compare(datasets.Caltech101(str(tmp_path), kinds), tvd.Caltech101(str(tmp_path), kinds))


def test_imagenet_devkit_matches_torchvision(tmp_path: Path, tvd: Any, mat_reader: str) -> None:
    import tarfile

    from lucid.data.datasets import _classification

    devkit = tmp_path / "src" / "ILSVRC2012_devkit_t12" / "data"
    devkit.mkdir(parents=True)
    synsets = [
        {
            "ILSVRC2012_ID": float(i + 1),
            "WNID": f"n0{i}",
            "words": f"w{i}, alias {i}",
            "gloss": "g",
            "num_children": float(i == 2),
            "children": np.zeros((1, 0)),
            "wordnet_height": 0.0,
            "num_train_images": 1.0,
        }
        for i in range(3)
    ]
    _f.write_mat(devkit / "meta.mat", {"synsets": synsets})
    _write(devkit / "ILSVRC2012_validation_ground_truth.txt", "2\n1\n2\n")
    name = "ILSVRC2012_devkit_t12.tar.gz"
    for root in (tmp_path / "tv", tmp_path / "lucid"):
        root.mkdir()
        with tarfile.open(root / name, "w:gz") as tf:
            tf.add(devkit.parent, arcname="ILSVRC2012_devkit_t12")
        for wnid in ("n00", "n01"):
            _jpg(root / "train" / wnid / f"{wnid}_1.JPEG")
    md5s = {r: datasets.calculate_md5(tmp_path / r / name) for r in ("tv", "lucid")}
    real = tvd.imagenet.ARCHIVE_META["devkit"]
    tvd.imagenet.ARCHIVE_META["devkit"] = (name, md5s["tv"])
    try:
        theirs = tvd.ImageNet(str(tmp_path / "tv"))
    finally:
        tvd.imagenet.ARCHIVE_META["devkit"] = real
    real_mine = _classification.ARCHIVE_META["devkit"]
    _classification.ARCHIVE_META["devkit"] = (name, md5s["lucid"])
    try:
        mine = datasets.ImageNet(str(tmp_path / "lucid"))
    finally:
        _classification.ARCHIVE_META["devkit"] = real_mine
    assert mine.classes == theirs.classes and mine.class_to_idx == theirs.class_to_idx
    _compare(mine, theirs)
    # each library reads the other's meta.bin
    assert _classification.load_meta_file(str(tmp_path / "tv")) == tvd.imagenet.load_meta_file(
        str(tmp_path / "lucid")
    )


def test_coco_matches_torchvision(tmp_path: Path, tvd: Any) -> None:
    """torchvision reads COCO with pycocotools; lucid reads the JSON itself."""
    pytest.importorskip("pycocotools.coco")
    for i, name in enumerate(["b.jpg", "a.jpg", "c.jpg"]):
        _jpg(tmp_path / name, seed=i)
    ann = {
        "images": [
            {"id": 9, "file_name": "b.jpg"},
            {"id": 3, "file_name": "a.jpg"},
            {"id": 5, "file_name": "c.jpg"},
        ],
        "annotations": [
            {
                "id": 4,
                "image_id": 3,
                "category_id": 2,
                "bbox": [0.5, 0, 2, 2.25],
                "area": 4.5,
                "iscrowd": 0,
                "segmentation": [[0.5, 0, 2.5, 0, 2.5, 2.25]],
                "caption": "x",
            },
            {
                "id": 2,
                "image_id": 9,
                "category_id": 1,
                "bbox": [1, 1, 1, 1],
                "area": 1,
                "iscrowd": 0,
                "segmentation": [[1, 1, 2, 1, 2, 2, 1, 2]],
                "caption": "y",
            },
            {
                "id": 7,
                "image_id": 3,
                "category_id": 1,
                "bbox": [1, 1, 3, 2],
                "area": 6,
                "iscrowd": 0,
                "segmentation": [[1, 1, 4, 1, 4, 3]],
                "caption": "z",
            },
        ],
        "categories": [
            {"id": 1, "name": "dog", "supercategory": "animal"},
            {"id": 2, "name": "cat", "supercategory": "animal"},
        ],
    }
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(ann))
    mine = datasets.CocoDetection(str(tmp_path), str(path))
    theirs = tvd.CocoDetection(str(tmp_path), str(path))
    assert mine.ids == theirs.ids
    _compare(mine, theirs)
    _compare(
        datasets.CocoCaptions(str(tmp_path), str(path)), tvd.CocoCaptions(str(tmp_path), str(path))
    )
    for query in (
        {"imgIds": [3]},
        {"catIds": [1]},
        {"imgIds": 3, "catIds": 2},
        {"areaRng": [2, 10]},
        {"iscrowd": False},
    ):
        assert sorted(mine.coco.getAnnIds(**query)) == sorted(theirs.coco.getAnnIds(**query)), query
    for query in ({"catNms": ["cat"]}, {"supNms": "animal"}, {"catIds": [2]}):
        assert mine.coco.getCatIds(**query) == theirs.coco.getCatIds(**query), query
    for query in ({}, {"catIds": [1]}, {"imgIds": [3, 5], "catIds": [2]}, {"catIds": [1, 2]}):
        assert sorted(mine.coco.getImgIds(**query)) == sorted(theirs.coco.getImgIds(**query)), query
    assert mine.coco.loadCats([2]) == theirs.coco.loadCats([2])


def test_pcam_and_lsun_match_torchvision(
    tmp_path: Path, tvd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    h5py = pytest.importorskip("h5py")
    lmdb = pytest.importorskip("lmdb")
    import io

    base = tmp_path / "pcam"
    base.mkdir()
    rng = np.random.default_rng(0)
    with h5py.File(base / "camelyonpatch_level_2_split_test_x.h5", "w") as f:
        f["x"] = rng.integers(0, 256, (3, 96, 96, 3), dtype=np.uint8)
    with h5py.File(base / "camelyonpatch_level_2_split_test_y.h5", "w") as f:
        f["y"] = np.array([1, 0, 1], dtype=np.uint8).reshape(3, 1, 1, 1)
    _compare(datasets.PCAM(str(tmp_path), split="test"), tvd.PCAM(str(tmp_path), split="test"))
    monkeypatch.chdir(tmp_path)  # both write LSUN's key cache in the working folder
    for category, n in (("church_outdoor", 2), ("tower", 1)):
        env = lmdb.open(str(tmp_path / f"{category}_val_lmdb"), map_size=1 << 20)
        with env.begin(write=True) as txn:
            for k in range(n):
                buf = io.BytesIO()
                PIL_Image.fromarray(rng.integers(0, 256, (4, 5, 3), dtype=np.uint8)).save(
                    buf, "PNG"
                )
                txn.put(f"{category}{k}".encode(), buf.getvalue())
        env.close()
    classes = ["church_outdoor_val", "tower_val"]
    mine = datasets.LSUN(str(tmp_path), classes=classes)
    items = [mine[i] for i in range(len(mine))]
    for db in mine.dbs:  # lmdb opens a database once per process
        db.env.close()
    _compare(items, tvd.LSUN(str(tmp_path), classes=classes))
