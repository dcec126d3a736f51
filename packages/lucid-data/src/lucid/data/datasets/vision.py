"""VisionDataset: images in one uint8 array, integer targets, transforms (batched if they can)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from lucid import Tensor

from .._batch import StackedSamples
from ..dataset import Dataset
from ..transforms import batch_transform

__all__ = ["StandardTransform", "VisionDataset"]


def _array(values: Any) -> Any:
    """``values`` as something NumPy indexes fast: a Tensor's array (no copy on the NumPy
    backend), an array or list as it is."""
    return values.numpy() if isinstance(values, Tensor) else values


class StandardTransform:
    """``transform`` on the input and ``target_transform`` on the target, as one callable of
    ``(input, target)`` (what ``VisionDataset.transforms`` holds when those two are given)."""

    def __init__(
        self,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
    ) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> tuple[Any, Any]:
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self) -> str:
        body = [type(self).__name__]
        for head, t in (
            ("Transform: ", self.transform),
            ("Target transform: ", self.target_transform),
        ):
            if t is not None:
                lines = repr(t).splitlines()
                body += [head + lines[0], *(" " * len(head) + line for line in lines[1:])]
        return "\n".join(body)


class VisionDataset(Dataset[tuple[Any, Any]]):
    """Base of the image datasets: ``data`` (N x H x W [x C] uint8) and ``targets`` (labels),
    of the types torchvision gives each dataset (a uint8 Tensor for MNIST's ``data``, a NumPy
    array for CIFAR's; an int64 Tensor or a list of ints for ``targets``).

    ``dataset[i]`` is ``(image, target)`` with the image as a uint8 numpy array (``H x W`` or
    ``H x W x C``) and the target an int, each passed through its transform if given. A batch
    of indices (``__getitems__``, used by the DataLoader) is read with one fancy-index and
    transformed at once when the transforms support batches (ToTensor, Normalize, RandomCrop,
    flips, ...), else image by image.
    """

    data: Any
    targets: Any
    classes: list[str]

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        transforms: Callable[[Any, Any], Any] | None = None,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
    ) -> None:
        # torchvision's root is optional (FakeData has none) and then stays None
        self.root: Any = None if root is None else os.fspath(os.path.expanduser(root))
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError(
                "Only transforms or transform/target_transform can be passed as argument"
            )
        self.transform = transform
        self.target_transform = target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms: Callable[..., Any] | None = transforms

    @property
    def class_to_idx(self) -> dict[str, int]:
        """Each class name's label index (set by datasets that find their classes)."""
        given: dict[str, int] | None = self.__dict__.get("_class_to_idx")
        return given if given is not None else {name: i for i, name in enumerate(self.classes)}

    @class_to_idx.setter
    def class_to_idx(self, value: dict[str, int]) -> None:
        self.__dict__["_class_to_idx"] = value

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img: Any = _array(self.data)[index]
        target: Any = int(_array(self.targets)[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        image_fn = batch_transform(self.transform) if self.transform is not None else None
        target_fn = (
            batch_transform(self.target_transform) if self.target_transform is not None else None
        )
        if (self.transform is not None and image_fn is None) or (
            self.target_transform is not None and target_fn is None
        ):
            return [self[i] for i in indices]
        idx = np.asarray(indices, dtype=np.int64)
        images: Any = _array(self.data)[idx]
        if image_fn is not None:
            images = image_fn(images)
        labels = _array(self.targets)
        targets: Any = (
            labels[idx] if isinstance(labels, np.ndarray) else np.asarray([labels[i] for i in idx])
        )
        targets = target_fn(targets) if target_fn is not None else targets.tolist()
        return StackedSamples(images, targets)

    def extra_repr(self) -> str:
        """Extra lines for the dataset's repr (override in datasets)."""
        return ""

    def __repr__(self) -> str:
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"    Root location: {self.root}")
        lines += [f"    {line}" for line in self.extra_repr().splitlines()]
        for name in ("transform", "target_transform"):
            t = getattr(self, name)
            if t is not None:
                lines.append(f"    {name.replace('_', ' ').title()}: {t!r}")
        return "\n".join(lines)


class TrainTestDataset(VisionDataset):
    """A vision dataset with a train and a test split, read from files it can download.

    Its files are looked for in ``root``, then in ``root/<alias>`` for each of
    ``folder_aliases``. A subclass writes ``download()`` (fetch what is missing into ``root``)
    and ``_load()`` (set ``data``, ``targets`` and, where the files hold them, ``classes`` for
    the split that ``self.train`` names).
    """

    folder_aliases: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        root: str | os.PathLike[str],
        train: bool = True,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        self._load()

    def download(self) -> None:
        """Fetch the dataset's files into ``root`` (checksummed) unless they are present."""
        raise NotImplementedError(f"{type(self).__name__} does not implement download()")

    def _load(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement _load()")

    def _folders(self) -> list[Path]:
        """Where the files are looked for, in order."""
        return [Path(self.root), *(Path(self.root) / alias for alias in self.folder_aliases)]

    def _not_found_text(self, needs: str, by_hand: str) -> str:
        """What is missing (``needs``), where it was looked for, and how to get it."""
        folders = "\n".join(f"  {p}" for p in self._folders())
        return (
            f"Dataset not found: {type(self).__name__} needs {needs} in one of:\n{folders}\n"
            f"Use download=True to download it, or, offline, {by_hand}."
        )

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"
