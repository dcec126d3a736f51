"""Standard datasets read from their distribution files: the MNIST family, CIFAR10/100, SVHN,
STL10; image folders."""

from __future__ import annotations

from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import (
    IMG_EXTENSIONS,
    DatasetFolder,
    ImageFolder,
    default_loader,
    find_classes,
    has_file_allowed_extension,
    is_image_file,
    make_dataset,
    pil_loader,
)
from .mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST, read_idx
from .more import (
    DTD,
    FER2013,
    GTSRB,
    Country211,
    FGVCAircraft,
    Flowers102,
    Imagenette,
    MovingMNIST,
    RenderedSST2,
)
from .small import SEMEION, USPS, EuroSAT, Food101
from .svhn import STL10, SVHN
from .utils import (
    DownloadError,
    IntegrityError,
    calculate_md5,
    check_integrity,
    download_url,
    extract_archive,
)
from .vision import VisionDataset

__all__ = [
    "IMG_EXTENSIONS",
    "DatasetFolder",
    "ImageFolder",
    "default_loader",
    "find_classes",
    "has_file_allowed_extension",
    "is_image_file",
    "make_dataset",
    "pil_loader",
    "CIFAR10",
    "CIFAR100",
    "EMNIST",
    "KMNIST",
    "MNIST",
    "QMNIST",
    "SEMEION",
    "DTD",
    "FER2013",
    "GTSRB",
    "FGVCAircraft",
    "Imagenette",
    "RenderedSST2",
    "Country211",
    "Flowers102",
    "MovingMNIST",
    "STL10",
    "SVHN",
    "USPS",
    "EuroSAT",
    "Food101",
    "DownloadError",
    "FakeData",
    "FashionMNIST",
    "IntegrityError",
    "VisionDataset",
    "calculate_md5",
    "check_integrity",
    "download_url",
    "extract_archive",
    "read_idx",
]
