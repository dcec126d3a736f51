"""More datasets published as files: Flowers102 (JPEGs and two .mat files), Country211 (a
folder per class and split), FER2013 (CSV of 48 x 48 faces), MovingMNIST (one .npy), DTD
(split lists), GTSRB (PPM folders and a CSV), RenderedSST2 and Imagenette (folders) and FGVCAircraft
(list files)."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lucid import Tensor, from_numpy

from ._common import FileSamples as _FileSamples
from ._common import (
    ItemDataset,
    LoadedSamples,
    available,
    fetch_extract,
    not_found,
    verify_str_arg,
)
from ._matfile import load_mat
from .folder import ImageFolder, default_loader, find_classes, make_dataset
from .utils import download_url

__all__ = [
    "DTD",
    "FER2013",
    "GTSRB",
    "Country211",
    "Flowers102",
    "MovingMNIST",
    "RenderedSST2",
    "FGVCAircraft",
    "Imagenette",
]

_FLOWERS = [
    "pink primrose",
    "hard-leaved pocket orchid",
    "canterbury bells",
    "sweet pea",
    "english marigold",
    "tiger lily",
    "moon orchid",
    "bird of paradise",
    "monkshood",
    "globe thistle",
    "snapdragon",
    "colt's foot",
    "king protea",
    "spear thistle",
    "yellow iris",
    "globe-flower",
    "purple coneflower",
    "peruvian lily",
    "balloon flower",
    "giant white arum lily",
    "fire lily",
    "pincushion flower",
    "fritillary",
    "red ginger",
    "grape hyacinth",
    "corn poppy",
    "prince of wales feathers",
    "stemless gentian",
    "artichoke",
    "sweet william",
    "carnation",
    "garden phlox",
    "love in the mist",
    "mexican aster",
    "alpine sea holly",
    "ruby-lipped cattleya",
    "cape flower",
    "great masterwort",
    "siam tulip",
    "lenten rose",
    "barbeton daisy",
    "daffodil",
    "sword lily",
    "poinsettia",
    "bolero deep blue",
    "wallflower",
    "marigold",
    "buttercup",
    "oxeye daisy",
    "common dandelion",
    "petunia",
    "wild pansy",
    "primula",
    "sunflower",
    "pelargonium",
    "bishop of llandaff",
    "gaura",
    "geranium",
    "orange dahlia",
    "pink-yellow dahlia?",
    "cautleya spicata",
    "japanese anemone",
    "black-eyed susan",
    "silverbush",
    "californian poppy",
    "osteospermum",
    "spring crocus",
    "bearded iris",
    "windflower",
    "tree poppy",
    "gazania",
    "azalea",
    "water lily",
    "rose",
    "thorn apple",
    "morning glory",
    "passion flower",
    "lotus",
    "toad lily",
    "anthurium",
    "frangipani",
    "clematis",
    "hibiscus",
    "columbine",
    "desert-rose",
    "tree mallow",
    "magnolia",
    "cyclamen",
    "watercress",
    "canna lily",
    "hippeastrum",
    "bee balm",
    "ball moss",
    "foxglove",
    "bougainvillea",
    "camellia",
    "mallow",
    "mexican petunia",
    "bromelia",
    "blanket flower",
    "trumpet creeper",
    "blackberry lily",
]


class Flowers102(_FileSamples):
    """Oxford 102 Flowers: ``root/flowers-102`` holding ``jpg/image_XXXXX.jpg``,
    ``imagelabels.mat`` and ``setid.mat``; ``split`` is ``train``, ``val`` or ``test`` (1,020
    each of train and val, 6,149 test). Samples are ``(loader(path), label)`` with 0-based
    labels, as in torchvision. The .mat files are read with SciPy when installed, else with
    lucid's MATLAB level-5 reader.
    """

    _download_url_prefix = "https://www.robots.ox.ac.uk/~vgg/data/flowers/102/"
    _file_dict = {  # noqa: RUF012 - filename, md5 (torchvision's)
        "image": ("102flowers.tgz", "52808999861908f626f3c1f4e79d11fa"),
        "label": ("imagelabels.mat", "e0620be6f572b9609742df49c70aed4d"),
        "setid": ("setid.mat", "a5357ecc9cb78c4bef273ce3793fc85c"),
    }
    _splits_map = {"train": "trnid", "val": "valid", "test": "tstid"}  # noqa: RUF012
    classes: list[str] = _FLOWERS  # noqa: RUF012

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._base_folder = Path(self.root) / "flowers-102"
        self._images_folder = self._base_folder / "jpg"
        if download:
            self.download()
        if not self._check_exists():
            files = ", ".join(["jpg/", *(self._file_dict[k][0] for k in ("label", "setid"))])
            where = f"{files} in {self._base_folder}"
            raise not_found("Flowers102", where, self._download_url_prefix)
        set_ids = load_mat(self._base_folder / self._file_dict["setid"][0])
        image_ids = np.ravel(set_ids[self._splits_map[self._split]]).astype(np.int64).tolist()
        labels = load_mat(self._base_folder / self._file_dict["label"][0])
        label_list = (np.ravel(labels["labels"]).astype(np.int64) - 1).tolist()
        image_id_to_label = dict(enumerate(label_list, 1))
        self._labels: list[int] = []
        self._image_files: list[Path] = []
        for image_id in image_ids:
            self._labels.append(image_id_to_label[image_id])
            self._image_files.append(self._images_folder / f"image_{image_id:05d}.jpg")
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}"

    def _check_exists(self) -> bool:
        return self._images_folder.is_dir() and all(
            (self._base_folder / self._file_dict[k][0]).is_file() for k in ("label", "setid")
        )

    def download(self) -> None:
        """Fetch the images archive and the two .mat files (md5-checked) unless present."""
        if self._check_exists():
            return
        name, md5 = self._file_dict["image"]
        fetch_extract(self._download_url_prefix + name, self._base_folder, md5)
        for key in ("label", "setid"):
            name, md5 = self._file_dict[key]
            download_url(self._download_url_prefix + name, self._base_folder, name, md5)


class Country211(ImageFolder):
    """Country211 (CLIP's geolocation set): a folder per country code in
    ``root/country211/<split>``, ``split`` ``train``, ``valid`` or ``test``; an ImageFolder
    whose ``root`` stays the path given, as in torchvision."""

    _URL = "https://openaipublic.azureedge.net/clip/data/country211.tgz"
    _MD5 = "84988d7644798601126c29e9877aab6a"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        self._split = verify_str_arg(split, "split", ("train", "valid", "test"))
        given = Path(root).expanduser()
        self._base_folder = given / "country211"
        if download and not self._base_folder.is_dir():
            fetch_extract(self._URL, given, self._MD5)
        if not (self._base_folder / self._split).is_dir():
            raise not_found("Country211", f"{self._base_folder / self._split}", self._URL)
        super().__init__(
            str(self._base_folder / self._split),
            transform=transform,
            target_transform=target_transform,
            loader=loader,
        )
        self.root = str(given)


class FER2013(ItemDataset):
    """FER2013 facial expressions: 48 x 48 gray faces from ``root/fer2013``: ``train.csv`` /
    ``test.csv`` (Kaggle's split files), or ``fer2013.csv`` / ``icml_face_data.csv`` (all
    rows, split by their Usage column). Samples are ``(image, label)``, the image a ``48 x 48``
    uint8 array, the label an int (None for ``test.csv``, which has no labels), as in
    torchvision. Not downloadable (Kaggle needs a login)."""

    _RESOURCES = {  # noqa: RUF012
        "train": ("train.csv", "3f0dfb3d3fd99c811a1299cb947e3131"),
        "test": ("test.csv", "b02c2298636a634e8c2faabbf3ea9a23"),
        "fer": ("fer2013.csv", "f8428a1edbd21e88f42c73edd2a14f95"),
        "icml": ("icml_face_data.csv", "b114b9e04e6949e5fe8b6a98b3892b1d"),
    }

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
    ) -> None:
        self._split = verify_str_arg(split, "split", ("train", "test"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        base_folder = Path(self.root) / "fer2013"
        use_fer = (base_folder / self._RESOURCES["fer"][0]).exists()
        use_icml = not use_fer and (base_folder / self._RESOURCES["icml"][0]).exists()
        file_name = self._RESOURCES["fer" if use_fer else "icml" if use_icml else self._split][0]
        data_file = base_folder / file_name
        if not data_file.is_file():
            raise RuntimeError(
                f"{file_name} not found in {base_folder}. You can download it from "
                "https://www.kaggle.com/c/challenges-in-representation-learning-facial-"
                "expression-recognition-challenge"
            )
        pixels_key = " pixels" if use_icml else "pixels"
        usage_key = " Usage" if use_icml else "Usage"
        labelled = use_fer or use_icml or self._split == "train"
        with open(data_file, newline="") as file:
            rows: Any = csv.DictReader(file)
            if use_fer or use_icml:
                valid = ("Training",) if self._split == "train" else ("PublicTest", "PrivateTest")
                rows = [row for row in rows if row[usage_key] in valid]
            self._samples: list[tuple[np.ndarray, int | None]] = [
                (
                    np.array(row[pixels_key].split(), dtype=np.uint8).reshape(48, 48),
                    int(row["emotion"]) if labelled else None,
                )
                for row in rows
            ]

    def __len__(self) -> int:
        return len(self._samples)

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        return self._transformed(*self._samples[idx])

    def extra_repr(self) -> str:
        return f"split={self._split}"


class MovingMNIST(ItemDataset):
    """Moving MNIST: 10,000 sequences of 20 frames of 64 x 64, from
    ``root/MovingMNIST/mnist_test_seq.npy``. ``data`` is a uint8 Tensor ``N x T x 1 x 64 x
    64``; ``split`` ``train`` keeps the first ``split_ratio`` frames of each sequence and
    ``test`` the rest. A sample is the sequence Tensor (through ``transform``), as in
    torchvision."""

    _URL = "http://www.cs.toronto.edu/~nitish/unsupervised_video/mnist_test_seq.npy"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str | None = None,
        split_ratio: int = 10,
        download: bool = False,
        transform: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(root, transform=transform)
        self._base_folder = os.path.join(self.root, type(self).__name__)
        self._filename = self._URL.split("/")[-1]
        if split is not None:
            verify_str_arg(split, "split", ("train", "test"))
        self.split = split
        if not isinstance(split_ratio, int):
            raise TypeError(f"`split_ratio` should be an integer, but got {type(split_ratio)}")
        if not 1 <= split_ratio <= 19:
            raise ValueError(
                f"`split_ratio` should be `1 <= split_ratio <= 19`, but got {split_ratio} instead."
            )
        self.split_ratio = split_ratio
        path = os.path.join(self._base_folder, self._filename)
        if download and not os.path.exists(path):
            download_url(
                self._URL, self._base_folder, self._filename, "be083ec986bfe91a449d63653c411eb2"
            )
        if not os.path.exists(path):
            raise not_found("MovingMNIST", f"{self._filename} in {self._base_folder}", self._URL)
        data = np.load(path, allow_pickle=False)
        if self.split == "train":
            data = data[: self.split_ratio]
        elif self.split == "test":
            data = data[self.split_ratio :]
        self.data: Tensor = from_numpy(np.ascontiguousarray(data.swapaxes(0, 1)[:, :, None]))

    def __getitem__(self, idx: int) -> Any:
        data: Any = self.data[idx]
        if self.transform is not None:
            data = self.transform(data)
        return data

    def __len__(self) -> int:
        return len(self.data)


class DTD(_FileSamples):
    """The Describable Textures Dataset: 47 texture classes, from ``root/dtd/dtd``
    (``images/<class>/<file>`` and ``labels/<split><partition>.txt``); ``split`` ``train``,
    ``val`` or ``test``, ``partition`` 1-10. As torchvision: sorted ``classes`` of the
    split's files, samples ``(loader(path), label)``."""

    _URL = "https://www.robots.ox.ac.uk/~vgg/data/dtd/download/dtd-r1.0.1.tar.gz"
    _MD5 = "fff73e5086ae6bdbea199a49dfb8a4c1"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        partition: int = 1,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        if not isinstance(partition, int) or not 1 <= partition <= 10:
            raise ValueError(
                "Parameter 'partition' should be an integer with `1 <= partition <= 10`, "
                f"but got {partition} instead"
            )
        self._partition = partition
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = Path(self.root) / type(self).__name__.lower()
        self._data_folder = self._base_folder / "dtd"
        self._meta_folder = self._data_folder / "labels"
        self._images_folder = self._data_folder / "images"
        if not available(
            self._data_folder.is_dir, download, self._URL, self._base_folder, self._MD5
        ):
            raise not_found("DTD", f"images/ and labels/ in {self._data_folder}", self._URL)
        self._image_files = []
        classes = []
        with open(self._meta_folder / f"{self._split}{self._partition}.txt") as file:
            for line in file:
                cls, name = line.strip().split("/")
                self._image_files.append(self._images_folder.joinpath(cls, name))
                classes.append(cls)
        self.classes = sorted(set(classes))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes)), strict=True))
        self._labels = [self.class_to_idx[cls] for cls in classes]
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}, partition={self._partition}"


class GTSRB(_FileSamples):
    """The German Traffic Sign Recognition Benchmark, from ``root/gtsrb``: ``split`` ``train``
    reads ``GTSRB/Training/<class>/*.ppm``, ``test`` reads ``GTSRB/Final_Test/Images`` with
    the labels of ``GT-final_test.csv``. Samples are ``(RGB image, class id)``, as in
    torchvision."""

    _base_url = "https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370/"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = Path(root) / "gtsrb"
        self._target_folder = (
            self._base_folder
            / "GTSRB"
            / ("Training" if self._split == "train" else "Final_Test/Images")
        )
        if download:
            self.download()
        if not self._target_folder.is_dir():
            raise not_found("GTSRB", str(self._target_folder), self._base_url)
        samples: list[tuple[str, int]]
        if self._split == "train":
            samples = make_dataset(str(self._target_folder), extensions=(".ppm",))
        else:
            with open(self._base_folder / "GT-final_test.csv") as csv_file:
                samples = [
                    (str(self._target_folder / row["Filename"]), int(row["ClassId"]))
                    for row in csv.DictReader(csv_file, delimiter=";", skipinitialspace=True)
                ]
        self._samples = samples
        self._image_files = [Path(path) for path, _ in samples]
        self._labels = [label for _, label in samples]
        self.loader = default_loader

    def download(self) -> None:
        """Fetch and extract the split's archives (md5-checked) unless they are here."""
        if self._target_folder.is_dir():
            return
        if self._split == "train":
            archives = [("GTSRB-Training_fixed.zip", "513f3c79a4c5141765e10e952eaa2478")]
        else:
            archives = [
                ("GTSRB_Final_Test_Images.zip", "c7e4e6327067d32654124b0fe9e82185"),
                ("GTSRB_Final_Test_GT.zip", "fe31e9c9270bbcd7b84b7f21a9d9d9e5"),
            ]
        for name, md5 in archives:
            fetch_extract(self._base_url + name, self._base_folder, md5)


class RenderedSST2(LoadedSamples):
    """Rendered SST2 (CLIP's sentiment-as-image set): PNGs in ``root/rendered-sst2/<train|
    valid|test>/<negative|positive>``; ``split`` ``train``, ``val`` or ``test``. Samples are
    ``(loader(path), label)``, as in torchvision."""

    _URL = "https://openaipublic.azureedge.net/clip/data/rendered-sst2.tgz"
    _MD5 = "2384d08e9dcfa4bd55b324e610496ee5"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._split_to_folder = {"train": "train", "val": "valid", "test": "test"}
        self._base_folder = Path(self.root) / "rendered-sst2"
        self.classes = ["negative", "positive"]
        self.class_to_idx = {"negative": 0, "positive": 1}
        folder = self._base_folder / self._split_to_folder[self._split]
        if not available(self._check_exists, download, self._URL, self.root, self._MD5):
            raise not_found("RenderedSST2", f"negative/ and positive/ in {folder}", self._URL)
        self._samples = make_dataset(str(folder), extensions=("png",))
        self.loader = loader

    def extra_repr(self) -> str:
        return f"split={self._split}"

    def _check_exists(self) -> bool:
        folder = self._base_folder / self._split_to_folder[self._split]
        return all((folder / name).is_dir() for name in self.classes)


class FGVCAircraft(_FileSamples):
    """FGVC-Aircraft: 10,000 aircraft images, from ``root/fgvc-aircraft-2013b/data``;
    ``split`` ``train``, ``val``, ``trainval`` or ``test``, labels at ``annotation_level``
    ``variant`` (100), ``family`` (70) or ``manufacturer`` (30), as in torchvision."""

    _URL = "https://www.robots.ox.ac.uk/~vgg/data/fgvc-aircraft/archives/fgvc-aircraft-2013b.tar.gz"

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "trainval",
        annotation_level: str = "variant",
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
        loader: Callable[[Any], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "trainval", "test"))
        self._annotation_level = verify_str_arg(
            annotation_level, "annotation_level", ("variant", "family", "manufacturer")
        )
        self._data_path = os.path.join(self.root, "fgvc-aircraft-2013b")
        if not available(lambda: os.path.isdir(self._data_path), download, self._URL, self.root):
            raise not_found("FGVCAircraft", f"the folder {self._data_path}", self._URL)
        data = Path(self._data_path) / "data"
        names = {"variant": "variants", "family": "families", "manufacturer": "manufacturers"}
        with open(data / f"{names[self._annotation_level]}.txt") as f:
            self.classes = [line.strip() for line in f]
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes)), strict=True))
        self._image_files = []
        self._labels = []
        with open(data / f"images_{self._annotation_level}_{self._split}.txt") as f:
            for line in f:
                image_name, label_name = line.strip().split(" ", 1)
                self._image_files.append(data / "images" / f"{image_name}.jpg")
                self._labels.append(self.class_to_idx[label_name])
        self.loader = loader


class Imagenette(LoadedSamples):
    """Imagenette: 10 easy ImageNet classes, from ``root/imagenette2[-320|-160]/<split>/<wnid>``
    (``size`` ``full``, ``320px`` or ``160px``; ``split`` ``train`` or ``val``). ``classes`` are
    tuples of names per class and ``class_to_idx`` maps each name, as in torchvision."""

    _ARCHIVES = {  # noqa: RUF012
        "full": (
            "https://s3.amazonaws.com/fast-ai-imageclas/imagenette2.tgz",
            "fe2fc210e6bb7c5664d602c3cd71e612",
        ),
        "320px": (
            "https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-320.tgz",
            "3df6f0d01a2c9592104656642f5e78a3",
        ),
        "160px": (
            "https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-160.tgz",
            "e793b78cc4c9e9a4ccc0c1155377a412",
        ),
    }
    _WNID_TO_CLASS = {  # noqa: RUF012
        "n01440764": ("tench", "Tinca tinca"),
        "n02102040": ("English springer", "English springer spaniel"),
        "n02979186": ("cassette player",),
        "n03000684": ("chain saw", "chainsaw"),
        "n03028079": ("church", "church building"),
        "n03394916": ("French horn", "horn"),
        "n03417042": ("garbage truck", "dustcart"),
        "n03425413": ("gas pump", "gasoline pump", "petrol pump", "island dispenser"),
        "n03445777": ("golf ball",),
        "n03888257": ("parachute", "chute"),
    }

    def __init__(
        self,
        root: str | os.PathLike[str],
        split: str = "train",
        size: str = "full",
        download: bool = False,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val"))
        self._size = verify_str_arg(size, "size", ("full", "320px", "160px"))
        self._url, self._md5 = self._ARCHIVES[self._size]
        self._size_root = Path(self.root) / Path(self._url).stem
        self._image_root = str(self._size_root / self._split)
        if not available(self._size_root.exists, download, self._url, self.root, self._md5):
            raise not_found("Imagenette", f"the folder {self._size_root}", self._url)
        self.wnids, self.wnid_to_idx = find_classes(self._image_root)
        self.classes: list[tuple[str, ...]] = [  # type: ignore[assignment]
            self._WNID_TO_CLASS[wnid] for wnid in self.wnids
        ]
        self.class_to_idx = {
            name: idx
            for wnid, idx in self.wnid_to_idx.items()
            for name in self._WNID_TO_CLASS[wnid]
        }
        self._samples = make_dataset(self._image_root, self.wnid_to_idx, extensions=".jpeg")
        self.loader = loader
