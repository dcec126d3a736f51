"""``wrap_dataset_for_transforms_v2``: a dataset's targets as ``tv_tensors`` (boxes as
``BoundingBoxes`` in XYXY, masks as ``Mask``, labels as int64 Tensors), so that the v2
transforms move them with the image, as torchvision's wrapper does. Images stay as the dataset
gives them (uint8 ``H x W [x C]`` arrays)."""

from __future__ import annotations

import collections.abc
import contextlib
import importlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from copy import copy
from typing import Any

import numpy as np

from lucid import Tensor

from . import _classification as cls_
from . import _detection as det
from . import _other as vid
from ._common import as_tensor
from .cifar import CIFAR10, CIFAR100
from .folder import DatasetFolder, ImageFolder
from .mnist import MNIST, FashionMNIST
from .more import GTSRB, Imagenette
from .vision import VisionDataset

__all__ = ["wrap_dataset_for_transforms_v2"]

_Wrapper = Callable[[int, Any], Any]
_Factory = Callable[[Any, Any], _Wrapper]
WRAPPER_FACTORIES: dict[type, _Factory] = {}


def _tv_tensors() -> Any:
    """``lucid.data.tv_tensors`` (the v2 transforms' types), found at wrap time."""
    try:
        return importlib.import_module("lucid.data.tv_tensors")
    except ImportError:
        raise RuntimeError(
            "wrap_dataset_for_transforms_v2 needs lucid.data.tv_tensors (BoundingBoxes, Mask, "
            "Video), which this lucid-data does not have"
        ) from None


def wrap_dataset_for_transforms_v2(dataset: Any, target_keys: Any = None) -> Any:
    """``dataset`` with its targets as tv_tensors for the v2 transforms (torchvision's
    ``wrap_dataset_for_transforms_v2``): ``transforms`` given to the dataset run on the wrapped
    sample. ``target_keys`` (CocoDetection, VOCDetection, Kitti, WIDERFace) picks the keys of
    the target dict: None (the defaults), ``"all"`` or a collection of names.

    Raises:
        ValueError: for a bad ``target_keys``.
        TypeError: for a dataset that is not a VisionDataset or has no wrapper.
    """
    if not (
        target_keys is None
        or target_keys == "all"
        or (
            isinstance(target_keys, collections.abc.Collection)
            and all(isinstance(key, str) for key in target_keys)
        )
    ):
        raise ValueError(
            "`target_keys` can be None, 'all', or a collection of strings denoting the keys to "
            f"be returned, but got {target_keys}"
        )
    wrapped_cls = type(
        f"Wrapped{type(dataset).__name__}", (VisionDatasetTVTensorWrapper, type(dataset)), {}
    )
    return wrapped_cls(dataset, target_keys)


class VisionDatasetTVTensorWrapper:
    """The wrapper's base: items of the wrapped dataset, their targets converted; attributes
    not its own are the dataset's."""

    def __init__(self, dataset: Any, target_keys: Any) -> None:
        dataset_cls = type(dataset)
        if not isinstance(dataset, VisionDataset):
            raise TypeError(
                "This wrapper is meant for subclasses of `lucid.data.datasets.VisionDataset`, "
                f"but got a '{dataset_cls.__name__}' instead."
            )
        factory = None
        for klass in dataset_cls.mro():
            if klass in WRAPPER_FACTORIES:
                factory = WRAPPER_FACTORIES[klass]
                keyed = {det.CocoDetection, det.VOCDetection, det.Kitti, det.WIDERFace}
                if target_keys is not None and klass not in keyed:
                    raise ValueError(
                        "`target_keys` is currently only supported for `CocoDetection`, "
                        f"`VOCDetection`, `Kitti`, and `WIDERFace`, but got {klass.__name__}."
                    )
                break
            if klass is VisionDataset:
                break
        if factory is None:
            raise TypeError(
                f"No wrapper exists for dataset class {dataset_cls.__name__}. Please wrap the "
                "output yourself."
            )
        self._dataset = dataset
        self._target_keys = target_keys
        self._wrapper = factory(dataset, target_keys)
        self.transform, dataset.transform = dataset.transform, None
        self.target_transform, dataset.target_transform = dataset.target_transform, None
        self.transforms, dataset.transforms = dataset.transforms, None

    def __getattr__(self, item: str) -> Any:
        with contextlib.suppress(AttributeError):
            return object.__getattribute__(self, item)
        return getattr(self._dataset, item)

    def __getitem__(self, idx: int) -> Any:
        sample = self._wrapper(idx, self._dataset[idx])
        if self.transforms is not None:
            sample = self.transforms(*sample)
        return sample

    def __getitems__(self, indices: Sequence[int]) -> list[Any]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return len(self._dataset)

    def __reduce__(self) -> tuple[Any, ...]:
        dataset = copy(self._dataset)
        dataset.transform = self.transform
        dataset.transforms = self.transforms
        dataset.target_transform = self.target_transform
        return wrap_dataset_for_transforms_v2, (dataset, self._target_keys)


def _register(*classes: type) -> Callable[[_Factory], _Factory]:
    def decorator(factory: _Factory) -> _Factory:
        for klass in classes:
            WRAPPER_FACTORIES[klass] = factory
        return factory

    return decorator


def _not_supported(description: str) -> RuntimeError:
    return RuntimeError(f"{description} is currently not supported by this wrapper.")


def _parse_target_keys(target_keys: Any, *, available: set[str], default: Any) -> set[str]:
    keys = default if target_keys is None else target_keys
    if keys == "all":
        return set(available)
    keys = set(keys)
    extra = keys - available
    if extra:
        raise ValueError(f"Target keys {sorted(extra)} are not available")
    return keys


def _dict_of_lists(list_of_dicts: list[dict[str, Any]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list)
    for dct in list_of_dicts:
        for key, value in dct.items():
            out[key].append(value)
    return dict(out)


def _canvas(image: Any) -> tuple[int, int]:
    """(height, width) of an ``H x W [x C]`` array, a ``[..., C, H, W]`` Tensor or a PIL
    image."""
    if isinstance(image, Tensor):
        return int(image.shape[-2]), int(image.shape[-1])
    if hasattr(image, "height") and hasattr(image, "width"):
        return int(image.height), int(image.width)
    shape = np.shape(image)
    return int(shape[0]), int(shape[1])


def _boxes(values: Any, image: Any, xywh: bool) -> Any:
    """``BoundingBoxes`` in XYXY (converted from XYWH if ``xywh``), of the values' kind of
    dtype: int64 for integers, float32 for floats (as ``torch.tensor`` of them gives)."""
    arr = np.asarray(values.numpy() if isinstance(values, Tensor) else values).reshape(-1, 4)
    dtype = np.int64 if np.issubdtype(arr.dtype, np.integer) else np.float32
    arr = arr.astype(dtype)
    if xywh:
        arr = np.concatenate([arr[:, :2], arr[:, :2] + arr[:, 2:]], axis=1)
    return _tv_tensors().BoundingBoxes(arr, format="XYXY", canvas_size=_canvas(image))


def _mask(value: Any) -> Any:
    return _tv_tensors().Mask(value)


def _by_type(target: Any, target_types: list[str], wrappers: dict[str, Callable[..., Any]]) -> Any:
    items = target if isinstance(target, tuple | list) else [target]
    out = tuple(
        wrappers[t](item) if t in wrappers else item
        for t, item in zip(target_types, items, strict=False)
    )
    return out[0] if len(out) == 1 else out


def _identity_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    return lambda idx, sample: sample


_register(
    cls_.Caltech256,
    CIFAR10,
    CIFAR100,
    cls_.ImageNet,
    MNIST,
    FashionMNIST,
    GTSRB,
    DatasetFolder,
    ImageFolder,
    Imagenette,
    det.CocoCaptions,
)(_identity_factory)


@_register(det.VOCSegmentation)
def _segmentation_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    return lambda idx, sample: (sample[0], _mask(sample[1]))


@_register(vid.HMDB51, vid.Kinetics, vid.UCF101)
def _video_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    if dataset.video_clips.output_format == "THWC":
        raise RuntimeError(
            f"{type(dataset).__name__} with `output_format='THWC'` is not supported by this "
            "wrapper, since it is not compatible with the transformations. Please use "
            "`output_format='TCHW'` instead."
        )
    return lambda idx, sample: (_tv_tensors().Video(sample[0]), sample[1], sample[2])


@_register(cls_.Caltech101)
def _caltech101_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    if "annotation" in dataset.target_type:
        raise _not_supported("Caltech101 dataset with `target_type=['annotation', ...]`")
    return _identity_factory(dataset, target_keys)


def _coco_mask(segmentation: Any, canvas_size: tuple[int, int]) -> Any:
    try:
        mask = importlib.import_module("pycocotools.mask")  # optional: COCO's masks only
    except ImportError:
        raise RuntimeError(
            "COCO's 'masks' need pycocotools to rasterise the polygons and RLEs: pip install "
            "pycocotools (boxes and labels do not)"
        ) from None
    if isinstance(segmentation, dict):
        if not isinstance(segmentation["counts"], str):
            segmentation = mask.frPyObjects(segmentation, *canvas_size)
    elif isinstance(segmentation, list):
        segmentation = mask.merge(mask.frPyObjects(segmentation, *canvas_size))
    else:
        raise ValueError(
            f"COCO segmentation expected to be a dict or a list, got {type(segmentation)}"
        )
    return np.asarray(mask.decode(segmentation))


@_register(det.CocoDetection)
def _coco_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    keys = _parse_target_keys(
        target_keys,
        available={
            "segmentation",
            "area",
            "iscrowd",
            "image_id",
            "bbox",
            "category_id",
            "boxes",
            "masks",
            "labels",
        },
        default={"image_id", "boxes", "labels"},
    )

    def wrapper(idx: int, sample: Any) -> Any:
        image_id = dataset.ids[idx]
        image, target = sample
        if not target:
            return image, {"image_id": image_id}
        canvas = _canvas(image)
        batched = _dict_of_lists(target)
        out: dict[str, Any] = {}
        if "image_id" in keys:
            out["image_id"] = image_id
        if "boxes" in keys:
            out["boxes"] = _boxes(batched["bbox"], image, xywh=True)
        if "masks" in keys:
            masks = [_coco_mask(s, canvas) for s in batched["segmentation"]]
            out["masks"] = _mask(np.stack(masks))
        if "labels" in keys:
            out["labels"] = as_tensor(batched["category_id"])
        for key in keys - {"image_id", "boxes", "masks", "labels"}:
            out[key] = batched[key]
        return image, out

    return wrapper


VOC_DETECTION_CATEGORIES = [
    "__background__",
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
]
VOC_DETECTION_CATEGORY_TO_IDX = {name: i for i, name in enumerate(VOC_DETECTION_CATEGORIES)}


@_register(det.VOCDetection)
def _voc_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    keys = _parse_target_keys(
        target_keys, available={"annotation", "boxes", "labels"}, default={"boxes", "labels"}
    )

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        batched = _dict_of_lists(target["annotation"]["object"])
        if "annotation" not in keys:
            target = {}
        if "boxes" in keys:
            corners = [
                [int(b[part]) for part in ("xmin", "ymin", "xmax", "ymax")]
                for b in batched["bndbox"]
            ]
            target["boxes"] = _boxes(corners, image, xywh=False)
        if "labels" in keys:
            target["labels"] = as_tensor(
                [VOC_DETECTION_CATEGORY_TO_IDX[name] for name in batched["name"]]
            )
        return image, target

    return wrapper


@_register(det.SBDataset)
def _sbd_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    if dataset.mode == "boundaries":
        raise _not_supported("SBDataset with mode='boundaries'")
    return _segmentation_factory(dataset, target_keys)


@_register(cls_.CelebA)
def _celeba_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    if any(t in dataset.target_type for t in ("attr", "landmarks")):
        raise _not_supported("`CelebA` dataset with `target_type=['attr', 'landmarks', ...]`")

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        bbox = {"bbox": lambda item: _boxes(item, image, xywh=True)}
        return image, _by_type(target, dataset.target_type, bbox)

    return wrapper


KITTI_CATEGORIES = [
    "Car",
    "Van",
    "Truck",
    "Pedestrian",
    "Person_sitting",
    "Cyclist",
    "Tram",
    "Misc",
    "DontCare",
]
KITTI_CATEGORY_TO_IDX = {name: i for i, name in enumerate(KITTI_CATEGORIES)}


@_register(det.Kitti)
def _kitti_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    keys = _parse_target_keys(
        target_keys,
        available={
            "type",
            "truncated",
            "occluded",
            "alpha",
            "bbox",
            "dimensions",
            "location",
            "rotation_y",
            "boxes",
            "labels",
        },
        default={"boxes", "labels"},
    )

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is None:
            return image, target
        batched = _dict_of_lists(target)
        out: dict[str, Any] = {}
        if "boxes" in keys:
            out["boxes"] = _boxes(batched["bbox"], image, xywh=False)
        if "labels" in keys:
            out["labels"] = as_tensor([KITTI_CATEGORY_TO_IDX[t] for t in batched["type"]])
        for key in keys - {"boxes", "labels"}:
            out[key] = batched[key]
        return image, out

    return wrapper


@_register(cls_.OxfordIIITPet)
def _pet_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is not None:
            target = _by_type(target, dataset._target_types, {"segmentation": _mask})
        return image, target

    return wrapper


@_register(det.Cityscapes)
def _cityscapes_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    if any(t in dataset.target_type for t in ("polygon", "color")):
        raise _not_supported("`Cityscapes` dataset with `target_type=['polygon', 'color', ...]`")

    def instances(mask: Any) -> dict[str, Any]:
        data = np.asarray(mask)
        ids = np.unique(data)
        labels = np.where(ids >= 1000, ids // 1000, ids).astype(np.int64)
        return {
            "masks": _mask(np.stack([data == i for i in ids])),
            "labels": as_tensor(labels),
        }

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        wrappers = {"instance": instances, "semantic": _mask}
        return image, _by_type(target, dataset.target_type, wrappers)

    return wrapper


@_register(det.WIDERFace)
def _widerface_factory(dataset: Any, target_keys: Any) -> _Wrapper:
    keys = _parse_target_keys(
        target_keys,
        available={"bbox", "blur", "expression", "illumination", "occlusion", "pose", "invalid"},
        default="all",
    )

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is None:
            return image, target
        target = {key: target[key] for key in keys}
        if "bbox" in keys:
            target["bbox"] = _boxes(target["bbox"], image, xywh=True)
        return image, target

    return wrapper
