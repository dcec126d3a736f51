"""Detection and segmentation datasets: COCO (its JSON read directly, no pycocotools), Pascal
VOC (XML annotations, palette masks), SBD (.mat masks), WIDERFace, KITTI objects and
Cityscapes. Images are uint8 arrays (see ``open_image``); targets have torchvision's types."""

from __future__ import annotations

import collections
import csv
import json
import os
import shutil
from collections import defaultdict, namedtuple
from collections.abc import Callable, Iterable
from typing import Any, cast
from xml.etree.ElementTree import Element
from xml.etree.ElementTree import parse as et_parse

import numpy as np

from lucid import Tensor

from ._common import ItemDataset, as_tensor, missing, one_or_tuple, open_image, verify_str_arg
from ._matfile import dense, load_mat
from .utils import download_url, extract_archive

__all__ = [
    "COCO",
    "Cityscapes",
    "CocoCaptions",
    "CocoDetection",
    "Kitti",
    "SBDataset",
    "VOCDetection",
    "VOCSegmentation",
    "WIDERFace",
]

_Transform = Callable[[Any], Any] | None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, Iterable) and not isinstance(value, str) else [value]


class COCO:
    """The index pycocotools' ``COCO`` builds of an annotation file: ``dataset``, ``anns``,
    ``imgs``, ``cats``, ``imgToAnns``, ``catToImgs`` and its look-ups (``getAnnIds``,
    ``getImgIds``, ``getCatIds``, ``loadAnns``, ``loadImgs``, ``loadCats``)."""

    def __init__(self, annotation_file: str | os.PathLike[str] | None = None) -> None:
        self.dataset: dict[str, Any] = {}
        self.anns: dict[int, dict[str, Any]] = {}
        self.imgs: dict[int, dict[str, Any]] = {}
        self.cats: dict[int, dict[str, Any]] = {}
        self.imgToAnns: dict[int, list[dict[str, Any]]] = defaultdict(list)
        self.catToImgs: dict[int, list[int]] = defaultdict(list)
        if annotation_file is not None:
            try:
                with open(annotation_file) as f:
                    dataset = json.load(f)
            except (OSError, ValueError) as e:
                raise RuntimeError(f"cannot read the COCO annotation file {annotation_file}: {e}")
            if not isinstance(dataset, dict):
                raise RuntimeError(
                    f"{annotation_file}: a COCO annotation file holds a JSON object, got "
                    f"{type(dataset).__name__}"
                )
            self.dataset = dataset
            self.createIndex()

    def createIndex(self) -> None:
        """Index ``dataset``'s annotations, images and categories by id."""
        for ann in self.dataset.get("annotations", []):
            self.imgToAnns[ann["image_id"]].append(ann)
            self.anns[ann["id"]] = ann
        for img in self.dataset.get("images", []):
            self.imgs[img["id"]] = img
        for cat in self.dataset.get("categories", []):
            self.cats[cat["id"]] = cat
        if "categories" in self.dataset:
            for ann in self.dataset.get("annotations", []):
                self.catToImgs[ann["category_id"]].append(ann["image_id"])

    def getAnnIds(
        self, imgIds: Any = (), catIds: Any = (), areaRng: Any = (), iscrowd: bool | None = None
    ) -> list[int]:
        """Ids of the annotations of the images ``imgIds`` and categories ``catIds``, with an
        area in ``areaRng`` and the given ``iscrowd`` (each filter skipped when empty)."""
        img_ids, cat_ids, area = _as_list(imgIds), _as_list(catIds), _as_list(areaRng)
        anns = (
            [a for i in img_ids if i in self.imgToAnns for a in self.imgToAnns[i]]
            if img_ids
            else list(self.dataset.get("annotations", []))
        )
        if cat_ids:
            anns = [a for a in anns if a["category_id"] in cat_ids]
        if area:
            anns = [a for a in anns if area[0] < a["area"] < area[1]]
        if iscrowd is not None:
            anns = [a for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self, catNms: Any = (), supNms: Any = (), catIds: Any = ()) -> list[int]:
        """Ids of the categories named ``catNms``, of the supercategories ``supNms``, among
        ``catIds``."""
        names, sups, ids = _as_list(catNms), _as_list(supNms), _as_list(catIds)
        cats = list(self.dataset.get("categories", []))
        cats = [c for c in cats if not names or c["name"] in names]
        cats = [c for c in cats if not sups or c["supercategory"] in sups]
        return [c["id"] for c in cats if not ids or c["id"] in ids]

    def getImgIds(self, imgIds: Any = (), catIds: Any = ()) -> list[int]:
        """Ids of the images among ``imgIds`` holding every category of ``catIds``."""
        img_ids, cat_ids = _as_list(imgIds), _as_list(catIds)
        ids = set(img_ids) if img_ids else set(self.imgs)
        for i, cat in enumerate(cat_ids):
            ids = set(self.catToImgs[cat]) if i == 0 and not img_ids else ids
            ids &= set(self.catToImgs[cat])
        return list(ids)

    def loadAnns(self, ids: Any = ()) -> list[dict[str, Any]]:
        """The annotations of ``ids``."""
        return [self.anns[i] for i in _as_list(ids)]

    def loadCats(self, ids: Any = ()) -> list[dict[str, Any]]:
        """The categories of ``ids``."""
        return [self.cats[i] for i in _as_list(ids)]

    def loadImgs(self, ids: Any = ()) -> list[dict[str, Any]]:
        """The image records of ``ids``."""
        return [self.imgs[i] for i in _as_list(ids)]


class CocoDetection(ItemDataset):
    """MS COCO detection: images in ``root`` named by ``annFile``'s ``images[].file_name``.
    ``dataset[i]`` is ``(image, annotations)``, the annotations a list of the image's dicts
    (``bbox`` ``[x, y, w, h]``, ``category_id``, ``segmentation``, ...). ``ids`` are the sorted
    image ids and ``coco`` the annotation index (a pycocotools-like ``COCO``; pycocotools is
    not needed)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        annFile: str,
        transform: _Transform = None,
        target_transform: _Transform = None,
        transforms: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(root, transforms, transform, target_transform)
        self.coco = COCO(annFile)
        self.ids = sorted(self.coco.imgs.keys())

    def _load_image(self, id: int) -> np.ndarray:
        path = self.coco.loadImgs(id)[0]["file_name"]
        return open_image(os.path.join(self.root, path), "RGB")

    def _load_target(self, id: int) -> list[Any]:
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        return self._apply(self._load_image(id), self._load_target(id))

    def __len__(self) -> int:
        return len(self.ids)


class CocoCaptions(CocoDetection):
    """MS COCO captions: ``dataset[i]`` is ``(image, captions)``, the captions a list of
    str."""

    def _load_target(self, id: int) -> list[str]:
        return [ann["caption"] for ann in super()._load_target(id)]


_VOC_YEARS = {
    "2012": (
        "VOCtrainval_11-May-2012.tar",
        "6cd6e144f989b92b3379bac3b3de84fd",
        "VOCdevkit/VOC2012",
    ),
    "2011": (
        "VOCtrainval_25-May-2011.tar",
        "6c3384ef61512963050cb5d687e5bf1e",
        "TrainVal/VOCdevkit/VOC2011",
    ),
    "2010": (
        "VOCtrainval_03-May-2010.tar",
        "da459979d0c395079b5c75ee67908abb",
        "VOCdevkit/VOC2010",
    ),
    "2009": (
        "VOCtrainval_11-May-2009.tar",
        "a3e00b113cfcfebf17e343f59da3caa1",
        "VOCdevkit/VOC2009",
    ),
    "2008": (
        "VOCtrainval_14-Jul-2008.tar",
        "2629fa636546599198acfcfbfcf1904a",
        "VOCdevkit/VOC2008",
    ),
    "2007": (
        "VOCtrainval_06-Nov-2007.tar",
        "c52e279531787c972589f7e41ab4ae64",
        "VOCdevkit/VOC2007",
    ),
    "2007-test": (
        "VOCtest_06-Nov-2007.tar",
        "b6e924de25625d8de591ea690078ad9f",
        "VOCdevkit/VOC2007",
    ),
}
_VOC_URL = "https://thor.robots.ox.ac.uk/pascal/VOC/voc{year}/{file}"


class _VOCBase(ItemDataset):
    """Pascal VOC's layout: ``<base_dir>/ImageSets/<_SPLITS_DIR>/<image_set>.txt`` names the
    images ``JPEGImages/<id>.jpg`` and targets ``<_TARGET_DIR>/<id><_TARGET_FILE_EXT>``."""

    _SPLITS_DIR: str
    _TARGET_DIR: str
    _TARGET_FILE_EXT: str

    def __init__(
        self,
        root: str | os.PathLike[str],
        year: str = "2012",
        image_set: str = "train",
        download: bool = False,
        transform: _Transform = None,
        target_transform: _Transform = None,
        transforms: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year", [str(yr) for yr in range(2007, 2013)])
        valid_sets = ["train", "trainval", "val", *(["test"] if year == "2007" else [])]
        self.image_set = verify_str_arg(image_set, "image_set", valid_sets)
        key = "2007-test" if year == "2007" and image_set == "test" else year
        self.filename, self.md5, base_dir = _VOC_YEARS[key]
        self.url = _VOC_URL.format(year=year, file=self.filename)
        voc_root = os.path.join(self.root, *base_dir.split("/"))
        if download and not os.path.isdir(voc_root):
            archive = download_url(self.url, self.root, self.filename, self.md5)
            extract_archive(archive, self.root)
        if not os.path.isdir(voc_root):
            raise missing(type(self).__name__, f"the folder {voc_root}")
        split_f = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR, image_set + ".txt")
        if not os.path.isfile(split_f):
            raise missing(type(self).__name__, f"the image-set list {split_f}")
        with open(split_f) as f:
            file_names = [x.strip() for x in f if x.strip()]
        self.images = [os.path.join(voc_root, "JPEGImages", x + ".jpg") for x in file_names]
        target_dir = os.path.join(voc_root, self._TARGET_DIR)
        self.targets = [os.path.join(target_dir, x + self._TARGET_FILE_EXT) for x in file_names]

    def __len__(self) -> int:
        return len(self.images)


class VOCSegmentation(_VOCBase):
    """Pascal VOC segmentation: ``(image, mask)``, the mask an ``H x W`` uint8 array of class
    indices (255 on borders), what torchvision's palette ``P`` image holds."""

    _SPLITS_DIR = "Segmentation"
    _TARGET_DIR = "SegmentationClass"
    _TARGET_FILE_EXT = ".png"

    @property
    def masks(self) -> list[str]:
        """The mask files (``targets``)."""
        return cast("list[str]", self.targets)  # the same list, as torchvision

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        return self._apply(open_image(self.images[index], "RGB"), open_image(self.masks[index]))


class VOCDetection(_VOCBase):
    """Pascal VOC detection: ``(image, annotation)``, the annotation the XML file as nested
    dicts (``{"annotation": {"object": [...], "size": {...}, ...}}``, values str)."""

    _SPLITS_DIR = "Main"
    _TARGET_DIR = "Annotations"
    _TARGET_FILE_EXT = ".xml"

    @property
    def annotations(self) -> list[str]:
        """The XML files (``targets``)."""
        return cast("list[str]", self.targets)  # the same list, as torchvision

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        try:
            root = et_parse(self.annotations[index]).getroot()
        except Exception as e:  # ParseError, OSError
            raise RuntimeError(f"cannot read {self.annotations[index]}: {e}") from None
        target = self.parse_voc_xml(root)
        return self._apply(open_image(self.images[index], "RGB"), target)

    @staticmethod
    def parse_voc_xml(node: Element) -> dict[str, Any]:
        """An XML element as nested dicts, repeated children as lists (``object`` always a
        list under ``annotation``)."""
        voc_dict: dict[str, Any] = {}
        children = list(node)
        if children:
            def_dic: dict[str, Any] = collections.defaultdict(list)
            for dc in map(VOCDetection.parse_voc_xml, children):
                for ind, v in dc.items():
                    def_dic[ind].append(v)
            if node.tag == "annotation":
                def_dic["object"] = [def_dic["object"]]
            voc_dict = {node.tag: {ind: v[0] if len(v) == 1 else v for ind, v in def_dic.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict


class SBDataset(ItemDataset):
    """Semantic Boundaries Dataset: ``root/img/<id>.jpg`` and ``root/cls/<id>.mat`` listed by
    ``root/<image_set>.txt``. ``mode`` ``segmentation`` gives an ``H x W`` uint8 mask,
    ``boundaries`` a ``20 x H x W`` array of the class boundaries. The .mat files are read by
    SciPy when installed, else by lucid's MATLAB reader (torchvision needs SciPy)."""

    url = "https://www2.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/semantic_contours/benchmark.tgz"
    md5 = "82b4d87ceb2ed10f6038a1cba92111cb"
    filename = "benchmark.tgz"
    voc_train_url = "https://www.cs.cornell.edu/~bharathh/train_noval.txt"
    voc_split_filename = "train_noval.txt"
    voc_split_md5 = "79bff800c5f0b1ec6b21080a3c066722"

    def __init__(
        self,
        root: str | os.PathLike[str],
        image_set: str = "train",
        mode: str = "boundaries",
        download: bool = False,
        transforms: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(root, transforms)
        self.image_set = verify_str_arg(image_set, "image_set", ("train", "val", "train_noval"))
        self.mode = verify_str_arg(mode, "mode", ("segmentation", "boundaries"))
        self.num_classes = 20
        sbd_root = self.root
        if download:
            archive = download_url(self.url, self.root, self.filename, self.md5)
            extract_archive(archive, self.root)
            extracted = os.path.join(self.root, "benchmark_RELEASE", "dataset")
            for f in ["cls", "img", "inst", "train.txt", "val.txt"]:
                shutil.move(os.path.join(extracted, f), sbd_root)
            if self.image_set == "train_noval":
                download_url(
                    self.voc_train_url, sbd_root, self.voc_split_filename, self.voc_split_md5
                )
        split_f = os.path.join(sbd_root, image_set + ".txt")
        if not os.path.isfile(split_f):
            raise missing("SBDataset", f"{image_set}.txt, img/ and cls/ in {sbd_root}")
        with open(split_f) as fh:
            file_names = [x.strip() for x in fh if x.strip()]
        self.images = [os.path.join(sbd_root, "img", x + ".jpg") for x in file_names]
        self.masks = [os.path.join(sbd_root, "cls", x + ".mat") for x in file_names]
        self._get_target = (
            self._get_segmentation_target
            if self.mode == "segmentation"
            else self._get_boundaries_target
        )

    @staticmethod
    def _gtcls(filepath: str) -> Any:
        mat = load_mat(filepath)
        if "GTcls" not in mat:
            raise RuntimeError(f"{filepath}: no GTcls struct (not an SBD class file)")
        return mat["GTcls"][0]

    def _get_segmentation_target(self, filepath: str) -> np.ndarray:
        return np.asarray(self._gtcls(filepath)["Segmentation"][0], dtype=np.uint8)

    def _get_boundaries_target(self, filepath: str) -> np.ndarray:
        boundaries = self._gtcls(filepath)["Boundaries"][0]
        return np.concatenate(
            [dense(boundaries[i][0])[None] for i in range(self.num_classes)], axis=0
        )

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img = open_image(self.images[index], "RGB")
        return self._apply(img, self._get_target(self.masks[index]))

    def __len__(self) -> int:
        return len(self.images)

    def extra_repr(self) -> str:
        return f"Image set: {self.image_set}\nMode: {self.mode}"


class WIDERFace(ItemDataset):
    """WIDER FACE: ``root/widerface/WIDER_<split>/images/...`` and the ``wider_face_split``
    lists. The target of a train/val image is a dict of int64 Tensors: ``bbox`` (``N x 4``,
    ``x, y, w, h``), ``blur``, ``expression``, ``illumination``, ``occlusion``, ``pose``,
    ``invalid``; None for test images."""

    BASE_FOLDER = "widerface"
    FILE_LIST = [  # noqa: RUF012 - torchvision's public attribute
        (
            "15hGDLhsx8bLgLcIRD5DhYt5iBxnjNF1M",
            "3fedf70df600953d25982bcd13d91ba2",
            "WIDER_train.zip",
        ),
        ("1GUCogbp16PMGa39thoMMeWxp7Rp5oM8Q", "dfa7d7e790efa35df3788964cf0bbaea", "WIDER_val.zip"),
        ("1HIfDbVEWKmsYKJZm4lchTBDLW5N7dY5T", "e5d8f4248ed24c334bbd12f49c29dd40", "WIDER_test.zip"),
    ]
    ANNOTATIONS_FILE = (
        "http://shuoyang1213.me/WIDERFACE/support/bbx_annotation/wider_face_split.zip",
        "0e3767bcf0e326556d407bf5bff5d27c",
        "wider_face_split.zip",
    )
    _KEYS = ("blur", "expression", "illumination", "occlusion", "pose", "invalid")

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        super().__init__(
            os.path.join(os.fspath(root), self.BASE_FOLDER),
            transform=transform,
            target_transform=target_transform,
        )
        self.split = verify_str_arg(split, "split", ("train", "val", "test"))
        if download and not self._check_integrity():
            raise RuntimeError(
                "WIDERFace's images are on Google Drive, which lucid does not download from: "
                f"fetch {', '.join(f[2] for f in self.FILE_LIST)} and "
                f"{self.ANNOTATIONS_FILE[0]} and extract them into {self.root}"
            )
        if not self._check_integrity():
            folders = [os.path.splitext(f[2])[0] for f in [*self.FILE_LIST, self.ANNOTATIONS_FILE]]
            raise missing("WIDERFace", f"the folders {', '.join(folders)} in {self.root}")
        self.img_info: list[dict[str, Any]] = []
        if self.split in ("train", "val"):
            self.parse_train_val_annotations_file()
        else:
            self.parse_test_annotations_file()

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = open_image(self.img_info[index]["img_path"])
        if self.transform is not None:
            img = self.transform(img)
        target = None if self.split == "test" else self.img_info[index]["annotations"]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.img_info)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"

    def parse_train_val_annotations_file(self) -> None:
        """Read ``wider_face_<split>_bbx_gt.txt``: a file name, a box count, then the boxes."""
        filepath = os.path.join(
            self.root, "wider_face_split", f"wider_face_{self.split}_bbx_gt.txt"
        )
        with open(filepath) as f:
            lines = [line.rstrip() for line in f]
        pos = 0
        try:
            while pos < len(lines) and lines[pos]:
                img_path = os.path.abspath(
                    os.path.join(self.root, f"WIDER_{self.split}", "images", lines[pos])
                )
                num_boxes = int(lines[pos + 1])
                # an image without faces has one line of zeros
                rows = lines[pos + 2 : pos + 2 + max(num_boxes, 1)]
                labels = np.array([[int(x) for x in r.split()] for r in rows], dtype=np.int64)
                pos += 2 + max(num_boxes, 1)
                annotations: dict[str, Tensor] = {"bbox": as_tensor(labels[:, 0:4])}
                for k, key in enumerate(self._KEYS):
                    annotations[key] = as_tensor(labels[:, 4 + k])
                self.img_info.append({"img_path": img_path, "annotations": annotations})
        except (ValueError, IndexError) as e:
            raise RuntimeError(f"Error parsing annotation file {filepath} ({e})") from None

    def parse_test_annotations_file(self) -> None:
        """Read ``wider_face_test_filelist.txt``: one image path a line."""
        filepath = os.path.join(self.root, "wider_face_split", "wider_face_test_filelist.txt")
        with open(filepath) as f:
            for line in f:
                if line.strip():
                    path = os.path.join(self.root, "WIDER_test", "images", line.rstrip())
                    self.img_info.append({"img_path": os.path.abspath(path)})

    def _check_integrity(self) -> bool:
        files = [*self.FILE_LIST, self.ANNOTATIONS_FILE]
        return all(
            os.path.exists(os.path.join(self.root, os.path.splitext(f[2])[0])) for f in files
        )


class Kitti(ItemDataset):
    """KITTI 2D objects: ``root/Kitti/raw/<training|testing>/image_2/*.png`` and (train)
    ``label_2/*.txt``. The target is a list of dicts (``type``, ``truncated``, ``occluded``,
    ``alpha``, ``bbox``, ``dimensions``, ``location``, ``rotation_y``), None for test."""

    data_url = "https://s3.eu-central-1.amazonaws.com/avg-kitti/"
    resources = ["data_object_image_2.zip", "data_object_label_2.zip"]  # noqa: RUF012
    image_dir_name = "image_2"
    labels_dir_name = "label_2"

    def __init__(
        self,
        root: str | os.PathLike[str],
        train: bool = True,
        transform: _Transform = None,
        target_transform: _Transform = None,
        transforms: Callable[[Any, Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(
            root, transform=transform, target_transform=target_transform, transforms=transforms
        )
        self.images: list[str] = []
        self.targets: list[str] = []
        self.train = train
        self._location = "training" if self.train else "testing"
        if download:
            self.download()
        if not self._check_exists():
            raise missing(
                "Kitti",
                f"{self.image_dir_name}/ (and {self.labels_dir_name}/ to "
                f"train) in {os.path.join(self._raw_folder, self._location)}",
            )
        image_dir = os.path.join(self._raw_folder, self._location, self.image_dir_name)
        labels_dir = os.path.join(self._raw_folder, self._location, self.labels_dir_name)
        for img_file in sorted(os.listdir(image_dir)):
            self.images.append(os.path.join(image_dir, img_file))
            if self.train:
                self.targets.append(os.path.join(labels_dir, f"{img_file.split('.')[0]}.txt"))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        target = self._parse_target(index) if self.train else None
        return self._apply(open_image(self.images[index]), target)

    def _parse_target(self, index: int) -> list[dict[str, Any]]:
        target = []
        with open(self.targets[index]) as inp:
            for line in csv.reader(inp, delimiter=" "):
                target.append(
                    {
                        "type": line[0],
                        "truncated": float(line[1]),
                        "occluded": int(line[2]),
                        "alpha": float(line[3]),
                        "bbox": [float(x) for x in line[4:8]],
                        "dimensions": [float(x) for x in line[8:11]],
                        "location": [float(x) for x in line[11:14]],
                        "rotation_y": float(line[14]),
                    }
                )
        return target

    def __len__(self) -> int:
        return len(self.images)

    @property
    def _raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    def _check_exists(self) -> bool:
        folders = [self.image_dir_name, *([self.labels_dir_name] if self.train else [])]
        return all(
            os.path.isdir(os.path.join(self._raw_folder, self._location, f)) for f in folders
        )

    def download(self) -> None:
        """Fetch and extract the image and label archives unless present."""
        if self._check_exists():
            return
        for fname in self.resources:
            archive = download_url(f"{self.data_url}{fname}", self._raw_folder, fname)
            extract_archive(archive, self._raw_folder)


_CityscapesClass = namedtuple(
    "_CityscapesClass",
    [
        "name",
        "id",
        "train_id",
        "category",
        "category_id",
        "has_instances",
        "ignore_in_eval",
        "color",
    ],
)
_C = _CityscapesClass


class Cityscapes(ItemDataset):
    """Cityscapes: ``root/leftImg8bit/<split>/<city>/*_leftImg8bit.png`` and
    ``root/gtFine|gtCoarse/<split>/<city>/``. ``target_type`` (one or a list) of
    ``instance``, ``semantic``, ``color`` (arrays decoded from the PNGs: ``instanceIds`` are
    int32 as PIL's ``I`` images) and ``polygon`` (the JSON dict)."""

    CityscapesClass = _CityscapesClass
    classes: list[Any] = [  # noqa: RUF012
        _C("unlabeled", 0, 255, "void", 0, False, True, (0, 0, 0)),
        _C("ego vehicle", 1, 255, "void", 0, False, True, (0, 0, 0)),
        _C("rectification border", 2, 255, "void", 0, False, True, (0, 0, 0)),
        _C("out of roi", 3, 255, "void", 0, False, True, (0, 0, 0)),
        _C("static", 4, 255, "void", 0, False, True, (0, 0, 0)),
        _C("dynamic", 5, 255, "void", 0, False, True, (111, 74, 0)),
        _C("ground", 6, 255, "void", 0, False, True, (81, 0, 81)),
        _C("road", 7, 0, "flat", 1, False, False, (128, 64, 128)),
        _C("sidewalk", 8, 1, "flat", 1, False, False, (244, 35, 232)),
        _C("parking", 9, 255, "flat", 1, False, True, (250, 170, 160)),
        _C("rail track", 10, 255, "flat", 1, False, True, (230, 150, 140)),
        _C("building", 11, 2, "construction", 2, False, False, (70, 70, 70)),
        _C("wall", 12, 3, "construction", 2, False, False, (102, 102, 156)),
        _C("fence", 13, 4, "construction", 2, False, False, (190, 153, 153)),
        _C("guard rail", 14, 255, "construction", 2, False, True, (180, 165, 180)),
        _C("bridge", 15, 255, "construction", 2, False, True, (150, 100, 100)),
        _C("tunnel", 16, 255, "construction", 2, False, True, (150, 120, 90)),
        _C("pole", 17, 5, "object", 3, False, False, (153, 153, 153)),
        _C("polegroup", 18, 255, "object", 3, False, True, (153, 153, 153)),
        _C("traffic light", 19, 6, "object", 3, False, False, (250, 170, 30)),
        _C("traffic sign", 20, 7, "object", 3, False, False, (220, 220, 0)),
        _C("vegetation", 21, 8, "nature", 4, False, False, (107, 142, 35)),
        _C("terrain", 22, 9, "nature", 4, False, False, (152, 251, 152)),
        _C("sky", 23, 10, "sky", 5, False, False, (70, 130, 180)),
        _C("person", 24, 11, "human", 6, True, False, (220, 20, 60)),
        _C("rider", 25, 12, "human", 6, True, False, (255, 0, 0)),
        _C("car", 26, 13, "vehicle", 7, True, False, (0, 0, 142)),
        _C("truck", 27, 14, "vehicle", 7, True, False, (0, 0, 70)),
        _C("bus", 28, 15, "vehicle", 7, True, False, (0, 60, 100)),
        _C("caravan", 29, 255, "vehicle", 7, True, True, (0, 0, 90)),
        _C("trailer", 30, 255, "vehicle", 7, True, True, (0, 0, 110)),
        _C("train", 31, 16, "vehicle", 7, True, False, (0, 80, 100)),
        _C("motorcycle", 32, 17, "vehicle", 7, True, False, (0, 0, 230)),
        _C("bicycle", 33, 18, "vehicle", 7, True, False, (119, 11, 32)),
        _C("license plate", -1, -1, "vehicle", 7, False, True, (0, 0, 142)),
    ]

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        mode: str = "fine",
        target_type: list[str] | str = "instance",
        transform: _Transform = None,
        target_transform: _Transform = None,
        transforms: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        super().__init__(root, transforms, transform, target_transform)
        verify_str_arg(mode, "mode", ("fine", "coarse"))
        self.mode = "gtFine" if mode == "fine" else "gtCoarse"
        verify_str_arg(
            split,
            "split",
            ("train", "test", "val") if mode == "fine" else ("train", "train_extra", "val"),
        )
        self.images_dir = os.path.join(self.root, "leftImg8bit", split)
        self.targets_dir = os.path.join(self.root, self.mode, split)
        self.target_type: Any = target_type if isinstance(target_type, list) else [target_type]
        for value in self.target_type:
            verify_str_arg(value, "target_type", ("instance", "semantic", "polygon", "color"))
        self.split = split
        self.images: list[str] = []
        self.targets: list[list[str]] = []
        if not os.path.isdir(self.images_dir) or not os.path.isdir(self.targets_dir):
            extra = split == "train_extra"
            image_zip = os.path.join(
                self.root, f"leftImg8bit_{'trainextra' if extra else 'trainvaltest'}.zip"
            )
            target_zip = os.path.join(
                self.root, "gtFine_trainvaltest.zip" if self.mode == "gtFine" else "gtCoarse.zip"
            )
            if not (os.path.isfile(image_zip) and os.path.isfile(target_zip)):
                raise RuntimeError(
                    "Dataset not found or incomplete. Please make sure all required folders for "
                    f'the specified "split" and "mode" are inside the "root" directory: '
                    f"{self.images_dir} and {self.targets_dir}"
                )
            extract_archive(image_zip, self.root)
            extract_archive(target_zip, self.root)
        for city in sorted(os.listdir(self.images_dir)):
            img_dir = os.path.join(self.images_dir, city)
            target_dir = os.path.join(self.targets_dir, city)
            for file_name in sorted(os.listdir(img_dir)):
                stem = file_name.split("_leftImg8bit")[0]
                self.images.append(os.path.join(img_dir, file_name))
                self.targets.append(
                    [
                        os.path.join(target_dir, f"{stem}_{self._get_target_suffix(self.mode, t)}")
                        for t in self.target_type
                    ]
                )

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        image = open_image(self.images[index], "RGB")
        targets = [
            self._load_json(self.targets[index][i])
            if t == "polygon"
            else open_image(self.targets[index][i])
            for i, t in enumerate(self.target_type)
        ]
        return self._apply(image, one_or_tuple(targets))

    def __len__(self) -> int:
        return len(self.images)

    def extra_repr(self) -> str:
        return f"Split: {self.split}\nMode: {self.mode}\nType: {self.target_type}"

    def _load_json(self, path: str) -> dict[str, Any]:
        with open(path) as file:
            data: dict[str, Any] = json.load(file)
        return data

    def _get_target_suffix(self, mode: str, target_type: str) -> str:
        suffix = {"instance": "instanceIds.png", "semantic": "labelIds.png", "color": "color.png"}
        return f"{mode}_{suffix.get(target_type, 'polygons.json')}"
