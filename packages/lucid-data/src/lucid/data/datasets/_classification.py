"""Image datasets with class, attribute or caption targets: Caltech101/256, CelebA,
OxfordIIITPet, StanfordCars, Flickr8k/30k, LFWPeople/LFWPairs, Omniglot, Places365, SUN397,
INaturalist, ImageNet, CLEVRClassification and SBU, in torchvision's layouts."""

from __future__ import annotations

import csv
import glob
import os
import shutil
import tempfile
from collections import defaultdict, namedtuple
from collections.abc import Callable, Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from lucid import Tensor, load, save

from ._common import FileSamples as _FileSamples
from ._common import (
    ItemDataset,
    as_tensor,
    available,
    fetch_extract,
    missing,
    one_or_tuple,
    open_image,
    verify_str_arg,
)
from ._matfile import load_mat
from .folder import ImageFolder, default_loader
from .utils import calculate_md5, check_integrity, download_url, extract_archive

__all__ = [
    "CLEVRClassification",
    "Caltech101",
    "Caltech256",
    "CelebA",
    "Flickr8k",
    "Flickr30k",
    "INaturalist",
    "ImageNet",
    "LFWPairs",
    "LFWPeople",
    "Omniglot",
    "OxfordIIITPet",
    "Places365",
    "SBU",
    "SUN397",
    "StanfordCars",
]

_Transform = Callable[[Any], Any] | None
_Root = str | os.PathLike[str]


def _scalar(value: Any) -> Any:
    """The one element of a (nested) size-1 array from a .mat file, as SciPy's
    ``squeeze_me=True`` gives it."""
    while isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(-1)[0]
    return value.item() if isinstance(value, np.generic) else value


def _list_dir(root: str, prefix: bool = False) -> list[str]:
    names = sorted(p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p)))
    return [os.path.join(root, d) for d in names] if prefix else names


def _list_files(root: str, suffix: str) -> list[str]:
    return sorted(p for p in os.listdir(root) if p.endswith(suffix))


class Caltech101(ItemDataset):
    """Caltech 101: ``root/caltech101/101_ObjectCategories/<category>/image_XXXX.jpg`` (and
    ``Annotations/<category>/annotation_XXXX.mat`` for ``target_type="annotation"``, the
    object contour, a ``2 x N`` float64 array). Images are as stored (gray ones ``H x W``)."""

    def __init__(
        self,
        root: _Root,
        target_type: list[str] | str = "category",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        super().__init__(
            os.path.join(os.fspath(root), "caltech101"),
            transform=transform,
            target_transform=target_transform,
        )
        os.makedirs(self.root, exist_ok=True)
        types = [target_type] if isinstance(target_type, str) else target_type
        self.target_type = [
            verify_str_arg(t, "target_type", ("category", "annotation")) for t in types
        ]
        if download:
            self.download()
        if not self._check_integrity():
            raise missing("Caltech101", f"101_ObjectCategories/ in {self.root}")
        self.categories = sorted(os.listdir(os.path.join(self.root, "101_ObjectCategories")))
        if "BACKGROUND_Google" in self.categories:
            self.categories.remove("BACKGROUND_Google")
        name_map = {
            "Faces": "Faces_2",
            "Faces_easy": "Faces_3",
            "Motorbikes": "Motorbikes_16",
            "airplanes": "Airplanes_Side_2",
        }
        self.annotation_categories = [name_map.get(c, c) for c in self.categories]
        self.index: list[int] = []
        self.y: list[int] = []
        for i, c in enumerate(self.categories):
            n = len(os.listdir(os.path.join(self.root, "101_ObjectCategories", c)))
            self.index.extend(range(1, n + 1))
            self.y.extend(n * [i])

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = open_image(
            os.path.join(
                self.root,
                "101_ObjectCategories",
                self.categories[self.y[index]],
                f"image_{self.index[index]:04d}.jpg",
            )
        )
        target: Any = []
        for t in self.target_type:
            if t == "category":
                target.append(self.y[index])
            else:
                mat = load_mat(
                    os.path.join(
                        self.root,
                        "Annotations",
                        self.annotation_categories[self.y[index]],
                        f"annotation_{self.index[index]:04d}.mat",
                    )
                )
                target.append(mat["obj_contour"])
        return self._transformed(img, one_or_tuple(target))

    def _check_integrity(self) -> bool:
        return os.path.exists(os.path.join(self.root, "101_ObjectCategories"))

    def __len__(self) -> int:
        return len(self.index)

    def download(self) -> None:
        """Fetch caltech-101.zip and extract its two archives unless present."""
        if self._check_integrity():
            return
        url = "https://data.caltech.edu/records/mzrjq-6wc02/files/caltech-101.zip"
        fetch_extract(url, self.root, "3138e1922a9193bfa496528edbbc45d0")
        folder = os.path.join(self.root, "caltech-101")
        for name in os.listdir(folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(folder, name), self.root)
        shutil.rmtree(folder)

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}"


class Caltech256(ItemDataset):
    """Caltech 256: ``root/caltech256/256_ObjectCategories/<NNN.name>/<NNN>_XXXX.jpg``;
    targets are the category indices."""

    def __init__(
        self,
        root: str,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        super().__init__(
            os.path.join(os.fspath(root), "caltech256"),
            transform=transform,
            target_transform=target_transform,
        )
        os.makedirs(self.root, exist_ok=True)
        if download:
            self.download()
        if not self._check_integrity():
            raise missing("Caltech256", f"256_ObjectCategories/ in {self.root}")
        folder = os.path.join(self.root, "256_ObjectCategories")
        self.categories = sorted(os.listdir(folder))
        self.index: list[int] = []
        self.y: list[int] = []
        for i, c in enumerate(self.categories):
            n = len([f for f in os.listdir(os.path.join(folder, c)) if f.endswith(".jpg")])
            self.index.extend(range(1, n + 1))
            self.y.extend(n * [i])

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = open_image(
            os.path.join(
                self.root,
                "256_ObjectCategories",
                self.categories[self.y[index]],
                f"{self.y[index] + 1:03d}_{self.index[index]:04d}.jpg",
            )
        )
        return self._transformed(img, self.y[index])

    def _check_integrity(self) -> bool:
        return os.path.exists(os.path.join(self.root, "256_ObjectCategories"))

    def __len__(self) -> int:
        return len(self.index)

    def download(self) -> None:
        """Fetch 256_ObjectCategories.tar unless its folder is present."""
        if not self._check_integrity():
            fetch_extract(
                "https://data.caltech.edu/records/nyy15-4j048/files/256_ObjectCategories.tar",
                self.root,
                "67b4f42ca05d46448c6bb8ecd2220f6d",
            )


CSV = namedtuple("CSV", ["header", "index", "data"])


class CelebA(ItemDataset):
    """CelebA: ``root/celeba/img_align_celeba/*.jpg`` and its text tables. ``attr``
    (``N x 40``, 0/1), ``identity`` (``N x 1``), ``bbox`` (``N x 4``) and
    ``landmarks_align`` (``N x 10``) are int64 Tensors, ``filename`` and ``attr_names`` lists
    of str; the target is one of them per ``target_type`` (a tuple for several)."""

    base_folder = "celeba"
    file_list = [  # noqa: RUF012 - torchvision's public attribute (Google Drive ids, md5, name)
        (
            "0B7EVK8r0v71pZjFTYXZWM3FlRnM",
            "00d2c5bc6d35e252742224ab0c1e8fcb",
            "img_align_celeba.zip",
        ),
        (
            "0B7EVK8r0v71pblRyaVFSWGxPY0U",
            "75e246fa4810816ffd6ee81facbd244c",
            "list_attr_celeba.txt",
        ),
        (
            "1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS",
            "32bd1bd63d3c78cd57e08160ec5ed1e2",
            "identity_CelebA.txt",
        ),
        (
            "0B7EVK8r0v71pbThiMVRxWXZ4dU0",
            "00566efa6fedff7a56946cd1c10f1c16",
            "list_bbox_celeba.txt",
        ),
        (
            "0B7EVK8r0v71pd0FJY3Blby1HUTQ",
            "cc24ecafdb5b50baae59b03474781f8c",
            "list_landmarks_align_celeba.txt",
        ),
        (
            "0B7EVK8r0v71pY0NSMzRuSXJEVkk",
            "d32c9cbf5e040fd4025c592c306e6668",
            "list_eval_partition.txt",
        ),
    ]

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        target_type: list[str] | str = "attr",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = target_type if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download and not self._check_integrity():
            raise RuntimeError(
                "CelebA's files are on Google Drive, which lucid does not download from: fetch "
                f"{', '.join(f[2] for f in self.file_list)} into "
                f"{os.path.join(self.root, self.base_folder)} and unzip img_align_celeba.zip"
            )
        if not self._check_integrity():
            folder = os.path.join(self.root, self.base_folder)
            raise missing("CelebA", f"img_align_celeba/ and the list files in {folder}")
        split_map = {"train": 0, "valid": 1, "test": 2, "all": None}
        split_ = split_map[
            verify_str_arg(
                split.lower() if isinstance(split, str) else split,
                "split",
                ("train", "valid", "test", "all"),
            )
        ]
        splits = self._load_csv("list_eval_partition.txt")
        identity = self._load_csv("identity_CelebA.txt")
        bbox = self._load_csv("list_bbox_celeba.txt", header=1)
        landmarks_align = self._load_csv("list_landmarks_align_celeba.txt", header=1)
        attr = self._load_csv("list_attr_celeba.txt", header=1)
        rows = (
            np.arange(len(splits.index))
            if split_ is None
            else np.nonzero(splits.data.numpy()[:, 0] == split_)[0]
        )
        self.filename: list[str] = [splits.index[i] for i in rows]
        self.identity: Tensor = as_tensor(identity.data.numpy()[rows])
        self.bbox: Tensor = as_tensor(bbox.data.numpy()[rows])
        self.landmarks_align: Tensor = as_tensor(landmarks_align.data.numpy()[rows])
        self.attr: Tensor = as_tensor((attr.data.numpy()[rows] + 1) // 2)
        self.attr_names: list[str] = attr.header

    def _load_csv(self, filename: str, header: int | None = None) -> CSV:
        path = os.path.join(self.root, self.base_folder, filename)
        with open(path) as csv_file:
            data = [
                row for row in csv.reader(csv_file, delimiter=" ", skipinitialspace=True) if row
            ]
        headers: list[str] = []
        if header is not None:
            headers, data = data[header], data[header + 1 :]
        try:
            values = np.array([[int(v) for v in row[1:]] for row in data], dtype=np.int64)
        except ValueError as e:
            raise RuntimeError(f"{path}: expected a table of integers ({e})") from None
        return CSV(headers, [row[0] for row in data], as_tensor(values.reshape(len(data), -1)))

    def _check_integrity(self) -> bool:
        folder = os.path.join(self.root, self.base_folder)
        return all(
            os.path.isfile(os.path.join(folder, f)) for _, _, f in self.file_list[1:]
        ) and os.path.isdir(os.path.join(folder, "img_align_celeba"))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        X: Any = open_image(
            os.path.join(self.root, self.base_folder, "img_align_celeba", self.filename[index])
        )
        target: Any = []
        for t in self.target_type:
            if t == "attr":
                target.append(self.attr[index, :])
            elif t == "identity":
                target.append(self.identity[index, 0])
            elif t == "bbox":
                target.append(self.bbox[index, :])
            elif t == "landmarks":
                target.append(self.landmarks_align[index, :])
            else:
                raise ValueError(f'Target type "{t}" is not recognized.')
        if self.transform is not None:
            X = self.transform(X)
        target = one_or_tuple(target)
        if target is not None and self.target_transform is not None:
            target = self.target_transform(target)
        return X, target

    def __len__(self) -> int:
        return len(self.attr)

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}\nSplit: {self.split}"


class OxfordIIITPet(ItemDataset):
    """Oxford-IIIT Pet: ``root/oxford-iiit-pet/images/*.jpg`` and ``annotations/`` (the
    split lists, ``trimaps/*.png``). ``target_types`` of ``category`` (37 breeds),
    ``binary-category`` (cat/dog) and ``segmentation`` (the trimap, ``H x W`` uint8)."""

    _RESOURCES = (
        (
            "https://www.robots.ox.ac.uk/~vgg/data/pets/data/images.tar.gz",
            "5c4f3ee8e5d25df40f4fd59a7f44e54c",
        ),
        (
            "https://www.robots.ox.ac.uk/~vgg/data/pets/data/annotations.tar.gz",
            "95a8c909bbe2e81eed6a22bccdf3f68f",
        ),
    )
    _VALID_TARGET_TYPES = ("category", "binary-category", "segmentation")

    def __init__(
        self,
        root: _Root,
        split: str = "trainval",
        target_types: Sequence[str] | str = "category",
        transforms: Callable[[Any, Any], Any] | None = None,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        self._split = verify_str_arg(split, "split", ("trainval", "test"))
        types = [target_types] if isinstance(target_types, str) else target_types
        self._target_types = [
            verify_str_arg(t, "target_types", self._VALID_TARGET_TYPES) for t in types
        ]
        super().__init__(
            root, transforms=transforms, transform=transform, target_transform=target_transform
        )
        self._base_folder = Path(self.root) / "oxford-iiit-pet"
        self._images_folder = self._base_folder / "images"
        self._anns_folder = self._base_folder / "annotations"
        self._segs_folder = self._anns_folder / "trimaps"
        if download and not self._check_exists():
            for url, md5 in self._RESOURCES:
                fetch_extract(url, self._base_folder, md5)
        if not self._check_exists():
            raise missing("OxfordIIITPet", f"images/ and annotations/ in {self._base_folder}")
        image_ids: list[str] = []
        self._labels: list[int] = []
        self._bin_labels: list[int] = []
        with open(self._anns_folder / f"{self._split}.txt") as file:
            for line in file:
                image_id, label, bin_label, _ = line.strip().split()
                image_ids.append(image_id)
                self._labels.append(int(label) - 1)
                self._bin_labels.append(int(bin_label) - 1)
        self.bin_classes = ["Cat", "Dog"]
        breeds = sorted(
            {
                (i.rsplit("_", 1)[0], label)
                for i, label in zip(image_ids, self._labels, strict=True)
            },
            key=lambda pair: pair[1],
        )
        self.classes = [" ".join(part.title() for part in raw.split("_")) for raw, _ in breeds]
        self.bin_class_to_idx = dict(zip(self.bin_classes, range(2), strict=True))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes)), strict=True))
        self._images = [self._images_folder / f"{i}.jpg" for i in image_ids]
        self._segs = [self._segs_folder / f"{i}.png" for i in image_ids]

    def __len__(self) -> int:
        return len(self._images)

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        image = open_image(self._images[idx], "RGB")
        target: Any = []
        for t in self._target_types:
            if t == "category":
                target.append(self._labels[idx])
            elif t == "binary-category":
                target.append(self._bin_labels[idx])
            else:
                target.append(open_image(self._segs[idx]))
        return self._apply(image, one_or_tuple(target))

    def _check_exists(self) -> bool:
        return self._images_folder.is_dir() and self._anns_folder.is_dir()


class StanfordCars(_FileSamples):
    """Stanford Cars: ``root/stanford_cars`` with ``devkit/`` (``cars_meta.mat``,
    ``cars_train_annos.mat``), ``cars_train/``, ``cars_test/`` and
    ``cars_test_annos_withlabels.mat``. The .mat files are read by SciPy when installed,
    else by lucid's MATLAB reader (torchvision needs SciPy). Not downloadable (the original
    URL is gone), as in torchvision."""

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(self.root) / "stanford_cars"
        devkit = self._base_folder / "devkit"
        if self._split == "train":
            self._annotations_mat_path = devkit / "cars_train_annos.mat"
            self._images_base_path = self._base_folder / "cars_train"
        else:
            self._annotations_mat_path = self._base_folder / "cars_test_annos_withlabels.mat"
            self._images_base_path = self._base_folder / "cars_test"
        if download:
            self.download()
        if not self._check_exists():
            raise missing(
                "StanfordCars",
                f"{devkit}, {self._annotations_mat_path} and {self._images_base_path}",
                "it cannot be downloaded any more: place its files there by hand",
            )
        annotations = load_mat(self._annotations_mat_path)["annotations"].reshape(-1)
        self._samples = [
            (str(self._images_base_path / _scalar(a["fname"])), int(_scalar(a["class"])) - 1)
            for a in annotations
        ]
        names = load_mat(devkit / "cars_meta.mat")["class_names"].reshape(-1)
        self.classes = [str(_scalar(n)) for n in names]
        self.class_to_idx = {cls: i for i, cls in enumerate(self.classes)}
        self._image_files = [Path(p) for p, _ in self._samples]
        self._labels = [label for _, label in self._samples]
        self.loader = loader

    def _check_exists(self) -> bool:
        return (
            (self._base_folder / "devkit").is_dir()
            and self._annotations_mat_path.exists()
            and self._images_base_path.is_dir()
        )

    def download(self) -> None:
        """Refused: the dataset's original URL is broken (torchvision's message)."""
        raise ValueError(
            "The original URL is broken so the StanfordCars dataset cannot be downloaded anymore."
        )


class Flickr8kParser(HTMLParser):
    """Reads Flickr8k's annotation HTML: image links and their caption lists."""

    def __init__(self, root: _Root) -> None:
        super().__init__()
        self.root = root
        self.annotations: dict[str, list[str]] = {}
        self.in_table = False
        self.current_tag: str | None = None
        self.current_img: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Track the tag a text belongs to."""
        self.current_tag = tag
        if tag == "table":
            self.in_table = True

    def handle_endtag(self, tag: str) -> None:
        """Leave the tag."""
        self.current_tag = None
        if tag == "table":
            self.in_table = False

    def handle_data(self, data: str) -> None:
        """An image link starts an image's captions; list items are its captions."""
        if not self.in_table:
            return
        if data == "Image Not Found":
            self.current_img = None
        elif self.current_tag == "a":
            img_id = data.split("/")[-2]
            found = glob.glob(os.path.join(os.fspath(self.root), img_id + "_*.jpg"))
            if not found:
                raise RuntimeError(f"Flickr8k: no image {img_id}_*.jpg in {self.root}")
            self.current_img = found[0]
            self.annotations[found[0]] = []
        elif self.current_tag == "li" and self.current_img:
            self.annotations[self.current_img].append(data.strip())


class _Captions(ItemDataset):
    """Images with their captions: ``ids`` (sorted) and ``annotations`` (id -> captions)."""

    ids: list[str]
    annotations: dict[str, list[str]]
    loader: Callable[[str], Any]

    def _path(self, img_id: str) -> str:
        return img_id

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img_id = self.ids[index]
        return self._transformed(self.loader(self._path(img_id)), self.annotations[img_id])

    def __len__(self) -> int:
        return len(self.ids)


class Flickr8k(_Captions):
    """Flickr8k: images in ``root`` and captions from the HTML ``ann_file``; ``ids`` are the
    image paths."""

    def __init__(
        self,
        root: _Root,
        ann_file: str,
        transform: _Transform = None,
        target_transform: _Transform = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        parser = Flickr8kParser(self.root)
        with open(self.ann_file) as fh:
            parser.feed(fh.read())
        self.annotations = parser.annotations
        self.ids = sorted(self.annotations)
        self.loader = loader


class Flickr30k(_Captions):
    """Flickr30k: images in ``root`` and ``ann_file``'s ``<image>#<n>\\t<caption>`` lines;
    ``ids`` are the image file names."""

    def __init__(
        self,
        root: str,
        ann_file: str,
        transform: _Transform = None,
        target_transform: _Transform = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        annotations: dict[str, list[str]] = defaultdict(list)
        with open(self.ann_file) as fh:
            for line in fh:
                if not line.strip():
                    continue
                img_id, caption = line.strip().split("\t")
                annotations[img_id[:-2]].append(caption)
        self.annotations = annotations
        self.ids = sorted(annotations)
        self.loader = loader

    def _path(self, img_id: str) -> str:
        return os.path.join(self.root, img_id)


class _LFW(ItemDataset):
    """LFW's layout: ``root/lfw-py/<images_dir>/<name>/<name>_NNNN.jpg`` and the list files."""

    base_folder = "lfw-py"
    download_url_prefix = "http://vis-www.cs.umass.edu/lfw/"
    file_dict = {  # noqa: RUF012 - torchvision's public attribute
        "original": ("lfw", "lfw.tgz", "a17d05bd522c52d84eca14327a23d494"),
        "funneled": ("lfw_funneled", "lfw-funneled.tgz", "1b42dfed7d15c9b2dd63d5e5840c86ad"),
        "deepfunneled": (
            "lfw-deepfunneled",
            "lfw-deepfunneled.tgz",
            "68331da3eb755a505a502b5aacb3c201",
        ),
    }
    checksums = {  # noqa: RUF012
        "pairs.txt": "9f1ba174e4e1c508ff7cdf10ac338a7d",
        "pairsDevTest.txt": "5132f7440eb68cf58910c8a45a2ac10b",
        "pairsDevTrain.txt": "4f27cbf15b2da4a85c1907eb4181ad21",
        "people.txt": "450f0863dd89e85e73936a6d71a3474b",
        "peopleDevTest.txt": "e4bf5be0a43b5dcd9dc5ccfcb8fb19c5",
        "peopleDevTrain.txt": "54eaac34beb6d042ed3a7d883e247a21",
        "lfw-names.txt": "a6d0a479bd074669f656265a6e693f6d",
    }
    annot_file = {"10fold": "", "train": "DevTrain", "test": "DevTest"}  # noqa: RUF012
    names = "lfw-names.txt"

    def __init__(
        self,
        root: _Root,
        split: str,
        image_set: str,
        view: str,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(
            os.path.join(os.fspath(root), self.base_folder),
            transform=transform,
            target_transform=target_transform,
        )
        self.image_set = verify_str_arg(image_set.lower(), "image_set", tuple(self.file_dict))
        images_dir, self.filename, self.md5 = self.file_dict[self.image_set]
        self.view = verify_str_arg(view.lower(), "view", ["people", "pairs"])
        self.split = verify_str_arg(split.lower(), "split", ["10fold", "train", "test"])
        self.labels_file = f"{self.view}{self.annot_file[self.split]}.txt"
        self.data: list[Any] = []
        if download:
            raise ValueError(
                "LFW dataset is no longer available for automatic download.Please download the "
                "dataset manually and place it in the specified directory.A commonly used mirror "
                "is available at: https://www.kaggle.com/datasets/jessicali9530/lfw-dataset"
            )
        self.images_dir = os.path.join(self.root, images_dir)
        if not self._check_integrity():
            needs = [self.images_dir, self.labels_file]
            needs += [self.names] if self.view == "people" else []
            raise missing(
                type(self).__name__,
                f"{', '.join(needs)} in {self.root}",
                "download them by hand (LFW is no longer downloadable)",
            )
        self._loader = loader

    def _check_integrity(self) -> bool:
        needed = [self.labels_file, *([self.names] if self.view == "people" else [])]
        return os.path.isdir(self.images_dir) and all(
            os.path.isfile(os.path.join(self.root, f)) for f in needed
        )

    def _get_path(self, identity: str, no: int | str) -> str:
        return os.path.join(self.images_dir, identity, f"{identity}_{int(no):04d}.jpg")

    def extra_repr(self) -> str:
        return f"Alignment: {self.image_set}\nSplit: {self.split}"

    def __len__(self) -> int:
        return len(self.data)

    def _lines(self) -> list[str]:
        with open(os.path.join(self.root, self.labels_file)) as f:
            return f.readlines()


class LFWPeople(_LFW):
    """LFW people: ``(image, identity_index)``, identities from ``lfw-names.txt``."""

    def __init__(
        self,
        root: str,
        split: str = "10fold",
        image_set: str = "funneled",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(
            root, split, image_set, "people", transform, target_transform, download, loader=loader
        )
        self.class_to_idx = self._get_classes()
        self.data, self.targets = self._get_people()

    def _get_people(self) -> tuple[list[str], list[int]]:
        data: list[str] = []
        targets: list[int] = []
        lines = self._lines()
        n_folds, s = (int(lines[0]), 1) if self.split == "10fold" else (1, 0)
        for _ in range(n_folds):
            n_lines = int(lines[s])
            people = [line.strip().split("\t") for line in lines[s + 1 : s + n_lines + 1]]
            s += n_lines + 1
            for identity, num_imgs in people:
                for num in range(1, int(num_imgs) + 1):
                    data.append(self._get_path(identity, num))
                    targets.append(self.class_to_idx[identity])
        return data, targets

    def _get_classes(self) -> dict[str, int]:
        with open(os.path.join(self.root, self.names)) as f:
            names = [line.strip().split()[0] for line in f if line.strip()]
        return {name: i for i, name in enumerate(names)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        return self._transformed(self._loader(self.data[index]), self.targets[index])

    def extra_repr(self) -> str:
        return super().extra_repr() + f"\nClasses (identities): {len(self.class_to_idx)}"


class LFWPairs(_LFW):
    """LFW pairs: ``(image1, image2, same)``, ``same`` 1 for a matched pair, else 0."""

    def __init__(
        self,
        root: str,
        split: str = "10fold",
        image_set: str = "funneled",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(
            root, split, image_set, "pairs", transform, target_transform, download, loader=loader
        )
        self.pair_names, self.data, self.targets = self._get_pairs(self.images_dir)

    def _get_pairs(
        self, images_dir: str
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[int]]:
        pair_names: list[tuple[str, str]] = []
        data: list[tuple[str, str]] = []
        targets: list[int] = []
        lines = self._lines()
        if self.split == "10fold":
            n_folds, n_pairs = (int(v) for v in lines[0].split("\t"))
        else:
            n_folds, n_pairs = 1, int(lines[0])
        s = 1
        for _ in range(n_folds):
            matched = [line.strip().split("\t") for line in lines[s : s + n_pairs]]
            unmatched = [line.strip().split("\t") for line in lines[s + n_pairs : s + 2 * n_pairs]]
            s += 2 * n_pairs
            for p in matched:
                pair_names.append((p[0], p[0]))
                data.append((self._get_path(p[0], p[1]), self._get_path(p[0], p[2])))
                targets.append(1)
            for p in unmatched:
                pair_names.append((p[0], p[2]))
                data.append((self._get_path(p[0], p[1]), self._get_path(p[2], p[3])))
                targets.append(0)
        return pair_names, data, targets

    def __getitem__(self, index: int) -> tuple[Any, Any, Any]:  # type: ignore[override]
        path1, path2 = self.data[index]
        img1: Any = self._loader(path1)
        img2: Any = self._loader(path2)
        target: Any = self.targets[index]
        if self.transform is not None:
            img1, img2 = self.transform(img1), self.transform(img2)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img1, img2, target


class Omniglot(ItemDataset):
    """Omniglot: ``root/omniglot-py/images_background|images_evaluation/<alphabet>/
    <character>/*.png``; ``(image, character_index)``, the image ``H x W`` uint8 ("L")."""

    folder = "omniglot-py"
    download_url_prefix = "https://raw.githubusercontent.com/brendenlake/omniglot/master/python"
    zips_md5 = {  # noqa: RUF012
        "images_background": "68d2efa1b9178cc56df9314c21c6e718",
        "images_evaluation": "6b91aef0f799c5bb55b94e3f2daec811",
    }

    def __init__(
        self,
        root: _Root,
        background: bool = True,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] | None = None,
    ) -> None:
        super().__init__(
            os.path.join(os.fspath(root), self.folder),
            transform=transform,
            target_transform=target_transform,
        )
        self.background = background
        if download:
            self.download()
        self.target_folder = os.path.join(self.root, self._get_target_folder())
        if not os.path.isdir(self.target_folder):
            raise missing("Omniglot", f"the folder {self.target_folder}")
        self._alphabets = _list_dir(self.target_folder)
        self._characters: list[str] = [
            os.path.join(a, c)
            for a in self._alphabets
            for c in _list_dir(os.path.join(self.target_folder, a))
        ]
        self._character_images = [
            [(image, idx) for image in _list_files(os.path.join(self.target_folder, ch), ".png")]
            for idx, ch in enumerate(self._characters)
        ]
        self._flat_character_images: list[tuple[str, int]] = sum(self._character_images, [])
        self.loader = loader

    def __len__(self) -> int:
        return len(self._flat_character_images)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        image_name, character_class = self._flat_character_images[index]
        path = os.path.join(self.target_folder, self._characters[character_class], image_name)
        image = open_image(path, "L") if self.loader is None else self.loader(path)
        return self._transformed(image, character_class)

    def _check_integrity(self) -> bool:
        name = self._get_target_folder()
        return check_integrity(os.path.join(self.root, name + ".zip"), self.zips_md5[name])

    def download(self) -> None:
        """Fetch and extract the background or evaluation zip unless its folder is there."""
        name = self._get_target_folder()
        if os.path.isdir(os.path.join(self.root, name)):
            return
        url = f"{self.download_url_prefix}/{name}.zip"
        fetch_extract(url, self.root, self.zips_md5[name])

    def _get_target_folder(self) -> str:
        return "images_background" if self.background else "images_evaluation"


class Places365(ItemDataset):
    """Places365: ``root/categories_places365.txt``, the split's file list
    (``places365_<split>.txt``) and the image folder (``data_<size>_<variant>`` for train,
    ``<split>_<size>`` else). ``imgs`` are ``(path, label)`` (label None for test)."""

    _SPLITS = ("train-standard", "train-challenge", "val", "test")
    _BASE_URL = "http://data.csail.mit.edu/places/places365/"
    _DEVKIT_META = {  # noqa: RUF012
        "standard": ("filelist_places365-standard.tar", "35a0585fee1fa656440f3ab298f8479c"),
        "challenge": ("filelist_places365-challenge.tar", "70a8307e459c3de41690a7c76c931734"),
    }
    _CATEGORIES_META = ("categories_places365.txt", "06c963b85866bd0649f97cb43dd16673")
    _FILE_LIST_META = {  # noqa: RUF012
        "train-standard": ("places365_train_standard.txt", "30f37515461640559006b8329efbed1a"),
        "train-challenge": ("places365_train_challenge.txt", "b2931dc997b8c33c27e7329c073a6b57"),
        "val": ("places365_val.txt", "e9f2fd57bfd9d07630173f4e8708e4b1"),
        "test": ("places365_test.txt", "2fce8233fe493576d724142e45d93653"),
    }
    _IMAGES_META = {  # noqa: RUF012
        ("train-standard", False): (
            "train_large_places365standard.tar",
            "67e186b496a84c929568076ed01a8aa1",
        ),
        ("train-challenge", False): (
            "train_large_places365challenge.tar",
            "605f18e68e510c82b958664ea134545f",
        ),
        ("val", False): ("val_large.tar", "9b71c4993ad89d2d8bcbdc4aef38042f"),
        ("test", False): ("test_large.tar", "41a4b6b724b1d2cd862fb3871ed59913"),
        ("train-standard", True): (
            "train_256_places365standard.tar",
            "53ca1c756c3d1e7809517cc47c5561c5",
        ),
        ("train-challenge", True): (
            "train_256_places365challenge.tar",
            "741915038a5e3471ec7332404dfb64ef",
        ),
        ("val", True): ("val_256.tar", "e27b17d8d44f4af9a78502beb927f808"),
        ("test", True): ("test_256.tar", "f532f6ad7b582262a2ec8009075e186b"),
    }

    def __init__(
        self,
        root: _Root,
        split: str = "train-standard",
        small: bool = False,
        download: bool = False,
        transform: _Transform = None,
        target_transform: _Transform = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self._SPLITS)
        self.small = small
        self.loader = loader
        self.classes, self.class_to_idx = self.load_categories(download)
        self.imgs, self.targets = self.load_file_list(download)
        if download:
            self.download_images()

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        file, target = self.imgs[index]
        return self._apply(self.loader(file), target)

    def __len__(self) -> int:
        return len(self.imgs)

    @property
    def variant(self) -> str:
        """``challenge`` or ``standard``."""
        return "challenge" if "challenge" in self.split else "standard"

    @property
    def images_dir(self) -> str:
        """The folder of the split's images."""
        size = "256" if self.small else "large"
        name = (
            f"data_{size}_{self.variant}"
            if self.split.startswith("train")
            else f"{self.split}_{size}"
        )
        return os.path.join(self.root, name)

    def _file(self, name: str, download: bool) -> str:
        file = os.path.join(self.root, name)
        if not os.path.isfile(file):
            if not download:
                raise RuntimeError(
                    f"The file {file} does not exist or is corrupted. You can set download=True "
                    "to download it."
                )
            self.download_devkit()
        return file

    def load_categories(self, download: bool = True) -> tuple[list[str], dict[str, int]]:
        """The sorted class names and each one's index, from ``categories_places365.txt``."""
        with open(self._file(self._CATEGORIES_META[0], download)) as fh:
            class_to_idx = {
                cls: int(idx) for cls, idx in (line.split() for line in fh if line.strip())
            }
        return sorted(class_to_idx), class_to_idx

    def load_file_list(
        self, download: bool = True
    ) -> tuple[list[tuple[str, int | None]], list[int | None]]:
        """``(path, label)`` of the split's images, and the labels."""
        images: list[tuple[str, int | None]] = []
        with open(self._file(self._FILE_LIST_META[self.split][0], download)) as fh:
            for line in fh:
                if not line.strip():
                    continue
                image, idx = (line.split() + [None])[:2]
                assert image is not None
                path = os.path.join(self.images_dir, image.lstrip("/").replace("/", os.sep))
                images.append((path, int(idx) if idx is not None else None))
        return images, [t for _, t in images]

    def download_devkit(self) -> None:
        """Fetch and extract the file lists."""
        file, md5 = self._DEVKIT_META[self.variant]
        fetch_extract(self._BASE_URL + file, self.root, md5)

    def download_images(self) -> None:
        """Fetch and extract the split's images unless present."""
        if os.path.exists(self.images_dir):
            return
        file, md5 = self._IMAGES_META[self.split, self.small]
        fetch_extract(self._BASE_URL + file, self.root, md5)
        if self.split.startswith("train"):
            os.rename(self.images_dir.rsplit("_", 1)[0], self.images_dir)

    def extra_repr(self) -> str:
        return f"Split: {self.split}\nSmall: {self.small}"


class SUN397(_FileSamples):
    """SUN397: ``root/SUN397/ClassName.txt`` and ``SUN397/<l>/<class>/sun_*.jpg``."""

    _DATASET_URL = "http://vision.princeton.edu/projects/2010/SUN/SUN397.tar.gz"
    _DATASET_MD5 = "8ca2778205c41d23104230ba66911c7a"

    def __init__(
        self,
        root: _Root,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._data_dir = Path(self.root) / "SUN397"
        if download and not self._data_dir.is_dir():
            fetch_extract(self._DATASET_URL, self.root, self._DATASET_MD5)
        if not (self._data_dir / "ClassName.txt").is_file():
            raise missing("SUN397", f"ClassName.txt and the class folders in {self._data_dir}")
        with open(self._data_dir / "ClassName.txt") as f:
            self.classes = [c[3:].strip() for c in f if c.strip()]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes)), strict=True))
        self._image_files = sorted(self._data_dir.rglob("sun_*.jpg"))
        self._labels = [
            self.class_to_idx["/".join(p.relative_to(self._data_dir).parts[1:-1])]
            for p in self._image_files
        ]
        self.loader = loader


_CATEGORIES_2021 = ["kingdom", "phylum", "class", "order", "family", "genus"]
_INAT_URL = "https://ml-inat-competition-datasets.s3.amazonaws.com/"
_INAT = {
    "2017": ("2017/train_val_images.tar.gz", "7c784ea5e424efaec655bd392f87301f"),
    "2018": ("2018/train_val2018.tar.gz", "b1c6952ce38f31868cc50ea72d066cc3"),
    "2019": ("2019/train_val2019.tar.gz", "c60a6e2962c9b8ccbd458d12c8582644"),
    "2021_train": ("2021/train.tar.gz", "e0526d53c7f7b2e3167b2b43bb2690ed"),
    "2021_train_mini": ("2021/train_mini.tar.gz", "db6ed8330e634445efc8fec83ae81442"),
    "2021_valid": ("2021/val.tar.gz", "f6f6e0e242e3d4c9569ba56400938afc"),
}


class INaturalist(ItemDataset):
    """iNaturalist: ``root/<version>/<category dirs>/*.jpg``. 2021 category folders are
    ``NNNNN_kingdom_phylum_class_order_family_genus_species``; earlier versions nest
    ``<super>/<sub>``. ``target_type`` (one or a list) of ``full`` and the rank names."""

    def __init__(
        self,
        root: _Root,
        version: str = "2021_train",
        target_type: list[str] | str = "full",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[str], Any] | None = None,
    ) -> None:
        self.version = verify_str_arg(version, "version", tuple(_INAT))
        super().__init__(
            os.path.join(os.fspath(root), version),
            transform=transform,
            target_transform=target_transform,
        )
        os.makedirs(root, exist_ok=True)
        if download:
            self.download()
        if not self._check_exists():
            raise missing("INaturalist", f"the category folders in {self.root}")
        self.all_categories: list[str] = []
        self.categories_index: dict[str, dict[str, int]] = {}
        self.categories_map: list[dict[str, int]] = []
        types = target_type if isinstance(target_type, list) else [target_type]
        if self.version[:4] == "2021":
            self.target_type = [
                verify_str_arg(t, "target_type", ("full", *_CATEGORIES_2021)) for t in types
            ]
            self._init_2021()
        else:
            self.target_type = [verify_str_arg(t, "target_type", ("full", "super")) for t in types]
            self._init_pre2021()
        self.index: list[tuple[int, str]] = [
            (i, fname)
            for i, name in enumerate(self.all_categories)
            for fname in sorted(os.listdir(os.path.join(self.root, name)))
        ]
        self.loader = loader

    def _init_2021(self) -> None:
        self.all_categories = sorted(os.listdir(self.root))
        self.categories_index = {k: {} for k in _CATEGORIES_2021}
        for dir_index, dir_name in enumerate(self.all_categories):
            pieces = dir_name.split("_")
            if len(pieces) != 8:
                raise RuntimeError(f"Unexpected category name {dir_name}, wrong number of pieces")
            if pieces[0] != f"{dir_index:05d}":
                raise RuntimeError(f"Unexpected category id {pieces[0]}, expecting {dir_index:05d}")
            cat_map = {}
            for cat, name in zip(_CATEGORIES_2021, pieces[1:7], strict=True):
                index = self.categories_index[cat]
                cat_map[cat] = index.setdefault(name, len(index))
            self.categories_map.append(cat_map)

    def _init_pre2021(self) -> None:
        self.categories_index = {"super": {}}
        cat_index = 0
        for sindex, scat in enumerate(sorted(os.listdir(self.root))):
            self.categories_index["super"][scat] = sindex
            for subcat in sorted(os.listdir(os.path.join(self.root, scat))):
                if self.version == "2017":
                    subcat_i, cat_index = cat_index, cat_index + 1
                else:
                    try:
                        subcat_i = int(subcat)
                    except ValueError:
                        raise RuntimeError(f"Unexpected non-numeric dir name: {subcat}") from None
                if subcat_i >= len(self.categories_map):
                    grow = subcat_i - len(self.categories_map) + 1
                    self.categories_map.extend({} for _ in range(grow))
                    self.all_categories.extend([""] * grow)
                if self.categories_map[subcat_i]:
                    raise RuntimeError(f"Duplicate category {subcat}")
                self.categories_map[subcat_i] = {"super": sindex}
                self.all_categories[subcat_i] = os.path.join(scat, subcat)
        for cindex, c in enumerate(self.categories_map):
            if not c:
                raise RuntimeError(f"Missing category {cindex}")

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        cat_id, fname = self.index[index]
        path = os.path.join(self.root, self.all_categories[cat_id], fname)
        img = self.loader(path) if self.loader is not None else open_image(path)
        target = one_or_tuple(
            [cat_id if t == "full" else self.categories_map[cat_id][t] for t in self.target_type]
        )
        return self._transformed(img, target)

    def __len__(self) -> int:
        return len(self.index)

    def category_name(self, category_type: str, category_id: int) -> str:
        """The name of category ``category_id`` of rank ``category_type``."""
        if category_type == "full":
            return self.all_categories[category_id]
        if category_type not in self.categories_index:
            raise ValueError(f"Invalid category type '{category_type}'")
        for name, id in self.categories_index[category_type].items():
            if id == category_id:
                return name
        raise ValueError(f"Invalid category id {category_id} for {category_type}")

    def _check_exists(self) -> bool:
        return os.path.exists(self.root) and len(os.listdir(self.root)) > 0

    def download(self) -> None:
        """Fetch and extract the version's archive into ``root`` unless present."""
        if self._check_exists():
            return
        base_root = os.path.dirname(self.root)
        path, md5 = _INAT[self.version]
        archive = download_url(_INAT_URL + path, base_root, f"{self.version}.tgz", md5)
        extract_archive(archive, base_root)
        orig = os.path.join(base_root, os.path.basename(path).removesuffix(".tar.gz"))
        if not os.path.exists(orig):
            raise RuntimeError(f"Unable to find downloaded files at {orig}")
        os.rename(orig, self.root)


ARCHIVE_META = {
    "train": ("ILSVRC2012_img_train.tar", "1d675b47d978889d74fa0da5fadfb00e"),
    "val": ("ILSVRC2012_img_val.tar", "29b22e2961454d5413ddabcf34fc5622"),
    "devkit": ("ILSVRC2012_devkit_t12.tar.gz", "fa75699e90414af021442c21a62c3abf"),
}
META_FILE = "meta.bin"


class ImageNet(ImageFolder):
    """ImageNet 2012: ``root/<split>/<wnid>/*.JPEG`` and ``root/meta.bin`` (built from the
    devkit archive on first use, as torchvision; the same file format, so either library reads
    the other's). ``classes`` are tuples of names, ``wnids`` the folder names."""

    def __init__(self, root: _Root, split: str = "train", **kwargs: Any) -> None:
        root = self.root = os.path.expanduser(os.fspath(root))
        self.split = verify_str_arg(split, "split", ("train", "val"))
        self.parse_archives()
        wnid_to_classes = load_meta_file(self.root)[0]
        super().__init__(self.split_folder, **kwargs)
        self.root = root
        self.wnids = self.classes
        self.wnid_to_idx = self.class_to_idx
        self.classes = [wnid_to_classes[wnid] for wnid in self.wnids]  # type: ignore[misc]
        self.class_to_idx = {cls: idx for idx, clss in enumerate(self.classes) for cls in clss}

    def parse_archives(self) -> None:
        """Build ``meta.bin`` and the split folder from the archives where missing."""
        if not check_integrity(os.path.join(self.root, META_FILE)):
            parse_devkit_archive(self.root)
        if not os.path.isdir(self.split_folder):
            if self.split == "train":
                parse_train_archive(self.root)
            else:
                parse_val_archive(self.root)

    @property
    def split_folder(self) -> str:
        """``root/<split>``."""
        return os.path.join(self.root, self.split)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"


def load_meta_file(
    root: _Root, file: str | None = None
) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """``(wnid_to_classes, val_wnids)`` from ImageNet's ``meta.bin``."""
    path = os.path.join(root, file or META_FILE)
    if not check_integrity(path):
        raise RuntimeError(
            f"The meta file {path} is not present in the root directory or is corrupted. This "
            "file is automatically created by the ImageNet dataset."
        )
    meta: Any = load(path, weights_only=True)
    return meta[0], list(meta[1])


def _verify_archive(root: _Root, file: str, md5: str) -> None:
    path = os.path.join(root, file)
    if not os.path.isfile(path) or calculate_md5(path) != md5:
        raise RuntimeError(
            f"The archive {file} is not present in the root directory or is corrupted. You need "
            f"to download it externally and place it in {root}."
        )


def parse_devkit_archive(root: _Root, file: str | None = None) -> None:
    """Write ``root/meta.bin`` from the devkit archive's ``data/meta.mat`` (the leaf synsets)
    and ``ILSVRC2012_validation_ground_truth.txt``."""
    name, md5 = ARCHIVE_META["devkit"]
    file = file or name
    _verify_archive(root, file, md5)
    tmp_dir = tempfile.mkdtemp()
    try:
        extract_archive(os.path.join(root, file), tmp_dir)
        devkit = os.path.join(tmp_dir, "ILSVRC2012_devkit_t12", "data")
        synsets = load_mat(os.path.join(devkit, "meta.mat"))["synsets"].reshape(-1)
        idx_to_wnid: dict[int, str] = {}
        wnid_to_classes: dict[str, tuple[str, ...]] = {}
        for s in synsets:
            if int(_scalar(s["num_children"])) != 0:
                continue
            wnid = str(_scalar(s["WNID"]))
            idx_to_wnid[int(_scalar(s["ILSVRC2012_ID"]))] = wnid
            wnid_to_classes[wnid] = tuple(str(_scalar(s["words"])).split(", "))
        with open(os.path.join(devkit, "ILSVRC2012_validation_ground_truth.txt")) as f:
            val_wnids = [idx_to_wnid[int(line)] for line in f if line.strip()]
        save((wnid_to_classes, val_wnids), os.path.join(root, META_FILE), format="torch")
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def parse_train_archive(root: _Root, file: str | None = None, folder: str = "train") -> None:
    """Extract the train archive (one tar per class) into ``root/<folder>/<wnid>/``."""
    name, md5 = ARCHIVE_META["train"]
    file = file or name
    _verify_archive(root, file, md5)
    train_root = os.path.join(root, folder)
    extract_archive(os.path.join(root, file), train_root)
    for archive in [os.path.join(train_root, a) for a in os.listdir(train_root)]:
        extract_archive(archive, os.path.splitext(archive)[0])
        os.remove(archive)


def parse_val_archive(
    root: _Root, file: str | None = None, wnids: list[str] | None = None, folder: str = "val"
) -> None:
    """Extract the val archive into ``root/<folder>/<wnid>/`` (the classes from meta.bin)."""
    name, md5 = ARCHIVE_META["val"]
    file = file or name
    if wnids is None:
        wnids = load_meta_file(root)[1]
    _verify_archive(root, file, md5)
    val_root = os.path.join(root, folder)
    extract_archive(os.path.join(root, file), val_root)
    images = sorted(os.path.join(val_root, image) for image in os.listdir(val_root))
    for wnid in set(wnids):
        os.mkdir(os.path.join(val_root, wnid))
    for wnid, img_file in zip(wnids, images, strict=False):
        shutil.move(img_file, os.path.join(val_root, wnid, os.path.basename(img_file)))


class CLEVRClassification(_FileSamples):
    """CLEVR counting: ``root/clevr/CLEVR_v1.0/images/<split>/*.png`` and
    ``scenes/CLEVR_<split>_scenes.json``; the label is the number of objects (None for
    test)."""

    _URL = "https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip"
    _MD5 = "b11922020e72d0cd9154779b2d3d07d2"

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        import json

        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.loader = loader
        self._base_folder = Path(self.root) / "clevr"
        self._data_folder = self._base_folder / "CLEVR_v1.0"
        if not available(
            self._data_folder.is_dir, download, self._URL, self._base_folder, self._MD5
        ):
            raise missing("CLEVRClassification", f"the folder {self._data_folder}")
        self._image_files = sorted(self._data_folder.joinpath("images", self._split).glob("*"))
        self._labels: list[Any]
        if self._split != "test":
            with open(self._data_folder / "scenes" / f"CLEVR_{self._split}_scenes.json") as file:
                content = json.load(file)
            counts = {s["image_filename"]: len(s["objects"]) for s in content["scenes"]}
            self._labels = [counts[f.name] for f in self._image_files]
        else:
            self._labels = [None] * len(self._image_files)

    def extra_repr(self) -> str:
        return f"split={self._split}"


class SBU(ItemDataset):
    """SBU captioned photos: ``root/dataset/`` with the URL and caption lists and the photos
    (named as their URL's last part; photos not there are left out, as in torchvision)."""

    url = "https://www.cs.rice.edu/~vo9/sbucaptions/SBUCaptionedPhotoDataset.tar.gz"
    filename = "SBUCaptionedPhotoDataset.tar.gz"
    md5_checksum = "9aec147b3488753cf758b4d493422285"

    def __init__(
        self,
        root: _Root,
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = True,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.loader = loader
        folder = os.path.join(self.root, "dataset")
        urls = os.path.join(folder, "SBU_captioned_photo_dataset_urls.txt")
        captions = os.path.join(folder, "SBU_captioned_photo_dataset_captions.txt")
        if download and not os.path.isfile(urls):
            self.download()
        if not (os.path.isfile(urls) and os.path.isfile(captions)):
            raise missing("SBU", f"the URL and caption lists in {folder}")
        self.photos: list[str] = []
        self.captions: list[str] = []
        with open(urls) as f1, open(captions) as f2:
            for line1, line2 in zip(f1, f2, strict=False):
                photo = os.path.basename(line1.rstrip())
                if os.path.exists(os.path.join(folder, photo)):
                    self.photos.append(photo)
                    self.captions.append(line2.rstrip())

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img = self.loader(os.path.join(self.root, "dataset", self.photos[index]))
        return self._transformed(img, self.captions[index])

    def __len__(self) -> int:
        return len(self.photos)

    def download(self) -> None:
        """Fetch the archive and then each photo (photos that fail are skipped)."""
        fetch_extract(self.url, self.root, self.md5_checksum)
        folder = os.path.join(self.root, "dataset")
        with open(os.path.join(folder, "SBU_captioned_photo_dataset_urls.txt")) as fh:
            for line in fh:
                url = line.rstrip()
                try:
                    download_url(url, folder, os.path.basename(url))
                except (OSError, RuntimeError):
                    pass
