"""PCAM (HDF5, the optional ``h5py``), LSUN (LMDB, the optional ``lmdb``), PhotoTour (patch
sheets) and the video datasets HMDB51, UCF101 and Kinetics (their folder, split and clip
indexes; decoding frames needs a video decoder lucid does not have, see ``_VideoClips``)."""

from __future__ import annotations

import bisect
import glob
import importlib
import io
import math
import os
import pickle
import string
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from lucid import Tensor, load, save

from ._common import ItemDataset, as_tensor, missing, open_image, verify_str_arg
from .folder import find_classes, make_dataset
from .utils import download_url, extract_archive

__all__ = ["HMDB51", "LSUN", "PCAM", "UCF101", "Kinetics", "LSUNClass", "PhotoTour"]

_Root = str | os.PathLike[str]
_Transform = Callable[[Any], Any] | None


def _optional(module: str, extra: str, dataset: str) -> Any:
    """The optional module ``module``, or an ImportError naming lucid-data's extra for it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{dataset} needs {module}, an optional dependency of lucid-data that is not "
            f"installed: pip install 'lucid-data[{extra}]'"
        ) from None


class PCAM(ItemDataset):
    """PatchCamelyon: 96 x 96 RGB patches in ``root/pcam/camelyonpatch_level_2_split_<split>_
    x.h5`` (dataset ``x``) and the labels in ``..._y.h5`` (``y``, N x 1 x 1 x 1). Reading needs
    h5py (``pip install 'lucid-data[h5]'``). The images are uint8 ``96 x 96 x 3`` arrays."""

    _FILES = {  # noqa: RUF012 - torchvision's attribute: file name, Google Drive id, md5
        "train": {
            "images": (
                "camelyonpatch_level_2_split_train_x.h5",
                "1Ka0XfEMiwgCYPdTI-vv6eUElOBnKFKQ2",
                "1571f514728f59376b705fc836ff4b63",
            ),
            "targets": (
                "camelyonpatch_level_2_split_train_y.h5",
                "1269yhu3pZDP8UYFQs-NYs3FPwuK-nGSG",
                "35c2d7259d906cfc8143347bb8e05be7",
            ),
        },
        "test": {
            "images": (
                "camelyonpatch_level_2_split_test_x.h5",
                "1qV65ZqZvWzuIVthK8eVDhIwrbnsJdbg_",
                "d8c2d60d490dbd479f8199bdfa0cf6ec",
            ),
            "targets": (
                "camelyonpatch_level_2_split_test_y.h5",
                "17BHrSrwWKjYsOgTMmoqrIjDy6Fa2o_gP",
                "60a7035772fbdb7f34eb86d4420cf66a",
            ),
        },
        "val": {
            "images": (
                "camelyonpatch_level_2_split_valid_x.h5",
                "1hgshYGWK8V-eGRy8LToWJJgDU_rXWVJ3",
                "d5b63470df7cfa627aeec8b9dc0c066e",
            ),
            "targets": (
                "camelyonpatch_level_2_split_valid_y.h5",
                "1bH8ZRbhSVAhScTS0p9-ZzGnX91cHT3uO",
                "2b85f58b927af9964a4c15b8f7e8f179",
            ),
        },
    }

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        transform: _Transform = None,
        target_transform: _Transform = None,
        download: bool = False,
    ) -> None:
        self.h5py = _optional("h5py", "h5", "PCAM")
        self._split = verify_str_arg(split, "split", ("train", "test", "val"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = Path(self.root) / "pcam"
        if download and not self._check_exists():
            raise RuntimeError(
                "PCAM's files are on Google Drive, which lucid does not download from: fetch "
                f"the {self._split} split's .h5.gz files, gunzip them into {self._base_folder}"
            )
        if not self._check_exists():
            files = ", ".join(f[0] for f in self._FILES[self._split].values())
            raise missing("PCAM", f"{files} in {self._base_folder}")

    def _file(self, kind: str) -> Path:
        return self._base_folder / self._FILES[self._split][kind][0]

    def __len__(self) -> int:
        with self.h5py.File(self._file("images"), "r") as images_data:
            return int(images_data["x"].shape[0])

    def __getitem__(self, idx: int) -> tuple[Any, Any]:
        with self.h5py.File(self._file("images"), "r") as images_data:
            image: Any = np.asarray(images_data["x"][idx], dtype=np.uint8)
        with self.h5py.File(self._file("targets"), "r") as targets_data:
            target: Any = int(targets_data["y"][idx, 0, 0, 0])
        if image.ndim == 2:
            image = np.repeat(image[..., None], 3, axis=-1)  # convert("RGB")
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            target = self.target_transform(target)
        return image, target

    def _check_exists(self) -> bool:
        return all(self._file(kind).exists() for kind in ("images", "targets"))


class LSUNClass(ItemDataset):
    """One LSUN category: the images (JPEG/WebP bytes) of the LMDB database at ``root``;
    ``(image, None)``. Reading needs lmdb (``pip install 'lucid-data[lmdb]'``). The keys are
    cached in ``_cache_<root letters>`` in the working folder, as torchvision does."""

    def __init__(
        self, root: str, transform: _Transform = None, target_transform: _Transform = None
    ) -> None:
        lmdb = _optional("lmdb", "lmdb", "LSUN")
        super().__init__(root, transform=transform, target_transform=target_transform)
        if not os.path.isdir(self.root):
            raise missing("LSUN", f"the LMDB database folder {self.root}", "download it by hand")
        self.env = lmdb.open(
            self.root, max_readers=1, readonly=True, lock=False, readahead=False, meminit=False
        )
        with self.env.begin(write=False) as txn:
            self.length = int(txn.stat()["entries"])
        cache_file = "_cache_" + "".join(c for c in root if c in string.ascii_letters)
        if os.path.isfile(cache_file):
            with open(cache_file, "rb") as f:
                self.keys = pickle.load(f)  # noqa: S301 - the file this class wrote
        else:
            with self.env.begin(write=False) as txn:
                self.keys = list(txn.cursor().iternext(keys=True, values=False))
            with open(cache_file, "wb") as f:
                pickle.dump(self.keys, f)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        with self.env.begin(write=False) as txn:
            imgbuf = txn.get(self.keys[index])
        img: Any = open_image(io.BytesIO(imgbuf), "RGB")
        target: Any = None
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return self.length


_LSUN_CATEGORIES = [
    "bedroom",
    "bridge",
    "church_outdoor",
    "classroom",
    "conference_room",
    "dining_room",
    "kitchen",
    "living_room",
    "restaurant",
    "tower",
]


class LSUN(ItemDataset):
    """LSUN scenes: one LMDB database per class, ``root/<category>_<split>_lmdb``; ``classes``
    is ``train``/``val``/``test`` (every category of that split) or a list like
    ``["bedroom_train", "church_outdoor_train"]``. ``(image, class_index)``."""

    def __init__(
        self,
        root: _Root,
        classes: str | list[str] = "train",
        transform: _Transform = None,
        target_transform: _Transform = None,
    ) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes = self._verify_classes(classes)
        self.dbs = [
            LSUNClass(root=os.path.join(self.root, f"{c}_lmdb"), transform=transform)
            for c in self.classes
        ]
        self.indices: list[int] = np.cumsum([len(db) for db in self.dbs]).tolist()
        self.length = self.indices[-1] if self.indices else 0

    def _verify_classes(self, classes: str | list[str]) -> list[str]:
        options = ["train", "val", "test"]
        if isinstance(classes, str):
            verify_str_arg(classes, "classes", options)
            return [classes] if classes == "test" else [f"{c}_{classes}" for c in _LSUN_CATEGORIES]
        if not isinstance(classes, Iterable):
            raise ValueError(
                f"Expected type str or Iterable for argument classes, but got type {type(classes)}."
            )
        classes = list(classes)
        for c in classes:
            if not isinstance(c, str):
                raise ValueError(
                    f"Expected type str for elements in argument classes, but got type {type(c)}."
                )
            category, option = c.rpartition("_")[0], c.rpartition("_")[2]
            if category not in _LSUN_CATEGORIES:
                raise ValueError(
                    f"Unknown value '{category}' for LSUN class. Valid values are "
                    f"{{{', '.join(_LSUN_CATEGORIES)}}}."
                )
            if option not in options:
                raise ValueError(
                    f"Unknown value '{option}' for postfix. Valid values are {{train, val, test}}."
                )
        return classes

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        target = bisect.bisect_right(self.indices, index)
        sub = self.indices[target - 1] if target else 0
        img, _ = self.dbs[target][index - sub]
        label: Any = target
        if self.target_transform is not None:
            label = self.target_transform(label)
        return img, label

    def __len__(self) -> int:
        return self.length

    def extra_repr(self) -> str:
        return f"Classes: {self.classes}"


class PhotoTour(ItemDataset):
    """Multi-view stereo correspondence patches (Brown et al.): 64 x 64 gray patches cut from
    the ``.bmp`` sheets in ``root/<name>/``, with ``info.txt`` (3D point ids) and
    ``m50_100000_100000_0.txt`` (matches). Cached in ``root/<name>.pt`` (torch's format, as
    torchvision writes it: either library reads the other's). Train items are a ``64 x 64``
    uint8 Tensor; test items ``(patch1, patch2, is_match)``."""

    urls = {  # noqa: RUF012 - torchvision's public attribute
        "notredame_harris": [
            "http://matthewalunbrown.com/patchdata/notredame_harris.zip",
            "notredame_harris.zip",
            "69f8c90f78e171349abdf0307afefe4d",
        ],
        "yosemite_harris": [
            "http://matthewalunbrown.com/patchdata/yosemite_harris.zip",
            "yosemite_harris.zip",
            "a73253d1c6fbd3ba2613c45065c00d46",
        ],
        "liberty_harris": [
            "http://matthewalunbrown.com/patchdata/liberty_harris.zip",
            "liberty_harris.zip",
            "c731fcfb3abb4091110d0ae8c7ba182c",
        ],
        "notredame": [
            "http://icvl.ee.ic.ac.uk/vbalnt/notredame.zip",
            "notredame.zip",
            "509eda8535847b8c0a90bbb210c83484",
        ],
        "yosemite": [
            "http://icvl.ee.ic.ac.uk/vbalnt/yosemite.zip",
            "yosemite.zip",
            "533b2e8eb7ede31be40abc317b2fd4f0",
        ],
        "liberty": [
            "http://icvl.ee.ic.ac.uk/vbalnt/liberty.zip",
            "liberty.zip",
            "fdd9152f138ea5ef2091746689176414",
        ],
    }
    means = {
        "notredame": 0.4854,
        "yosemite": 0.4844,
        "liberty": 0.4437,  # noqa: RUF012
        "notredame_harris": 0.4854,
        "yosemite_harris": 0.4844,
        "liberty_harris": 0.4437,
    }
    stds = {
        "notredame": 0.1864,
        "yosemite": 0.1818,
        "liberty": 0.2019,  # noqa: RUF012
        "notredame_harris": 0.1864,
        "yosemite_harris": 0.1818,
        "liberty_harris": 0.2019,
    }
    lens = {
        "notredame": 468159,
        "yosemite": 633587,
        "liberty": 450092,  # noqa: RUF012
        "liberty_harris": 379587,
        "yosemite_harris": 450912,
        "notredame_harris": 325295,
    }
    image_ext = "bmp"
    info_file = "info.txt"
    matches_files = "m50_100000_100000_0.txt"

    def __init__(
        self,
        root: _Root,
        name: str,
        train: bool = True,
        transform: _Transform = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transform=transform)
        self.name = verify_str_arg(name, "name", tuple(self.urls))
        self.data_dir = os.path.join(self.root, name)
        self.data_down = os.path.join(self.root, f"{name}.zip")
        self.data_file = os.path.join(self.root, f"{name}.pt")
        self.train = train
        self.mean = self.means[name]
        self.std = self.stds[name]
        if download:
            self.download()
        if not os.path.exists(self.data_file):
            if not os.path.isdir(self.data_dir):
                raise missing("PhotoTour", f"{self.data_file} or the folder {self.data_dir}")
            self.cache()
        self.data, self.labels, self.matches = load(self.data_file, weights_only=True)

    def __getitem__(self, index: int) -> Any:
        if self.train:
            data: Any = self.data[index]
            return self.transform(data) if self.transform is not None else data
        m = self.matches[index]
        data1: Any = self.data[int(m[0])]
        data2: Any = self.data[int(m[1])]
        if self.transform is not None:
            data1, data2 = self.transform(data1), self.transform(data2)
        return data1, data2, m[2]

    def __len__(self) -> int:
        return len(self.data if self.train else self.matches)

    def download(self) -> None:
        """Fetch and extract the patch sheets unless they or the cache are present."""
        if os.path.exists(self.data_file) or os.path.isdir(self.data_dir):
            return
        url, filename, md5 = self.urls[self.name]
        archive = download_url(url, self.root, filename, md5)
        extract_archive(archive, self.data_dir)
        os.unlink(archive)

    def cache(self) -> None:
        """Cut the patches, read the labels and matches, and save them to ``<name>.pt``."""
        dataset = (
            read_image_file(self.data_dir, self.image_ext, self.lens[self.name]),
            read_info_file(self.data_dir, self.info_file),
            read_matches_files(self.data_dir, self.matches_files),
        )
        save(dataset, self.data_file, format="torch")

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


def read_image_file(data_dir: str, image_ext: str, n: int) -> Tensor:
    """The first ``n`` 64 x 64 patches of the sheets in ``data_dir``, row by row: a uint8
    Tensor ``n x 64 x 64``."""
    patches = []
    for name in sorted(f for f in os.listdir(data_dir) if f.endswith(image_ext)):
        sheet = open_image(os.path.join(data_dir, name), "L")
        for y in range(0, sheet.shape[0], 64):
            for x in range(0, sheet.shape[1], 64):
                patch = np.zeros((64, 64), np.uint8)  # PIL's crop pads past the edge with 0
                part = sheet[y : y + 64, x : x + 64]
                patch[: part.shape[0], : part.shape[1]] = part
                patches.append(patch)
    return as_tensor(np.array(patches[:n], dtype=np.uint8).reshape(-1, 64, 64), np.uint8)


def read_info_file(data_dir: str, info_file: str) -> Tensor:
    """The 3D point id of each patch: an int64 Tensor."""
    with open(os.path.join(data_dir, info_file)) as f:
        return as_tensor([int(line.split()[0]) for line in f if line.strip()])


def read_matches_files(data_dir: str, matches_file: str) -> Tensor:
    """``(patch1, patch2, same point)`` rows of the matches file: an int64 Tensor ``N x 3``."""
    matches = []
    with open(os.path.join(data_dir, matches_file)) as f:
        for line in f:
            p = line.split()
            matches.append([int(p[0]), int(p[3]), int(p[1] == p[4])])
    return as_tensor(np.array(matches, dtype=np.int64).reshape(-1, 3))


_NO_DECODER = (
    "decoding video needs a video decoder: torchvision 0.28 uses TorchCodec, which needs "
    "torch, and lucid-data has none. {what}"
)


class _VideoClips:
    """torchvision's ``VideoClips`` index: each video's frame timestamps (``video_pts``) and
    frame rate cut into clips of ``num_frames`` every ``step`` frames (resampled to
    ``frame_rate``). The index needs the videos' frame counts: give them as
    ``_precomputed_metadata`` (``video_paths``, ``video_pts``, ``video_fps``, as torchvision's
    ``metadata`` holds them); decoding clips is not available (see ``_NO_DECODER``)."""

    def __init__(
        self,
        video_paths: list[str],
        clip_length_in_frames: int = 16,
        frames_between_clips: int = 1,
        frame_rate: float | None = None,
        _precomputed_metadata: dict[str, Any] | None = None,
        output_format: str = "THWC",
    ) -> None:
        self.video_paths = video_paths
        self.output_format = output_format.upper()
        if self.output_format not in ("THWC", "TCHW"):
            raise ValueError(
                f"output_format should be either 'THWC' or 'TCHW', got {output_format}."
            )
        if _precomputed_metadata is None:
            raise RuntimeError(
                _NO_DECODER.format(
                    what="Reading the videos' frame counts needs it too: pass "
                    "_precomputed_metadata={'video_paths', 'video_pts', 'video_fps'} (the "
                    "`metadata` of a torchvision dataset over the same folder)."
                )
            )
        self.video_paths = list(_precomputed_metadata["video_paths"])
        self.video_pts = [
            np.asarray(_numpy(p), np.int64) for p in _precomputed_metadata["video_pts"]
        ]
        self.video_fps = list(_precomputed_metadata["video_fps"])
        if not len(self.video_paths) == len(self.video_pts) == len(self.video_fps):
            raise ValueError(
                "_precomputed_metadata needs as many video_pts and video_fps as video_paths, "
                f"got {len(self.video_pts)}, {len(self.video_fps)}, {len(self.video_paths)}"
            )
        self.compute_clips(clip_length_in_frames, frames_between_clips, frame_rate)

    @property
    def metadata(self) -> dict[str, Any]:
        """``video_paths``, ``video_pts`` and ``video_fps``."""
        return {
            "video_paths": self.video_paths,
            "video_pts": self.video_pts,
            "video_fps": self.video_fps,
        }

    def subset(self, indices: list[int]) -> _VideoClips:
        """The clips of the videos ``indices``."""
        metadata = {key: [value[i] for i in indices] for key, value in self.metadata.items()}
        return type(self)(
            metadata["video_paths"],
            self.num_frames,
            self.step,
            self.frame_rate,
            metadata,
            self.output_format,
        )

    @staticmethod
    def _resample_video_idx(num_frames: int, original_fps: float, new_fps: float) -> Any:
        step = original_fps / new_fps
        if float(step).is_integer():
            return slice(None, None, int(step))
        return np.floor(np.arange(num_frames, dtype=np.float32) * step).astype(np.int64)

    @staticmethod
    def _unfold(values: np.ndarray, size: int, step: int) -> np.ndarray:
        count = (len(values) - size) // step + 1
        if count < 1:
            return np.zeros((0, size), dtype=values.dtype)
        return np.stack([values[i * step : i * step + size] for i in range(count)])

    @classmethod
    def compute_clips_for_video(
        cls,
        video_pts: np.ndarray,
        num_frames: int,
        step: int,
        fps: float | None,
        frame_rate: float | None = None,
    ) -> tuple[np.ndarray, Any]:
        """The clips (rows of timestamps) of one video, and their resampling indices."""
        fps = 1 if fps is None else fps
        frame_rate = fps if frame_rate is None else frame_rate
        total_frames = len(video_pts) * frame_rate / fps
        idxs = cls._resample_video_idx(int(math.floor(total_frames)), fps, frame_rate)
        clips = cls._unfold(video_pts[idxs], num_frames, step)
        if not clips.size:
            warnings.warn(
                "There aren't enough frames in the current video to get a clip for the given "
                "clip length and frames between clips. The video (and potentially others) will "
                "be skipped.",
                stacklevel=3,
            )
        resampling = (
            [idxs] * len(clips) if isinstance(idxs, slice) else cls._unfold(idxs, num_frames, step)
        )
        return clips, resampling

    def compute_clips(self, num_frames: int, step: int, frame_rate: float | None = None) -> None:
        """Cut every video into clips."""
        self.num_frames, self.step, self.frame_rate = num_frames, step, frame_rate
        self.clips: list[np.ndarray] = []
        self.resampling_idxs: list[Any] = []
        for pts, fps in zip(self.video_pts, self.video_fps, strict=True):
            clips, idxs = self.compute_clips_for_video(pts, num_frames, step, fps, frame_rate)
            self.clips.append(clips)
            self.resampling_idxs.append(idxs)
        self.cumulative_sizes: list[int] = np.cumsum([len(c) for c in self.clips]).tolist()

    def __len__(self) -> int:
        return self.num_clips()

    def num_videos(self) -> int:
        """The number of videos."""
        return len(self.video_paths)

    def num_clips(self) -> int:
        """The number of clips of all videos."""
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def get_clip_location(self, idx: int) -> tuple[int, int]:
        """``(video index, clip index in that video)`` of clip ``idx``."""
        video_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        clip_idx = idx if video_idx == 0 else idx - self.cumulative_sizes[video_idx - 1]
        return video_idx, clip_idx

    def get_clip(self, idx: int) -> tuple[Any, Any, dict[str, Any], int]:
        """Refused: decoding needs a video decoder (the error says which)."""
        if idx >= self.num_clips():
            raise IndexError(f"Index {idx} out of range ({self.num_clips()} number of clips)")
        video_idx, clip_idx = self.get_clip_location(idx)
        pts = self.clips[video_idx][clip_idx]
        raise RuntimeError(
            _NO_DECODER.format(
                what=f"Clip {idx} is frames {int(pts[0])}..{int(pts[-1])} of "
                f"{self.video_paths[video_idx]}: decode them with a tool of your own "
                "(the clip index, `clips`, and `get_clip_location` are available)."
            )
        )


def _numpy(values: Any) -> Any:
    return values.numpy() if isinstance(values, Tensor) else values


class _VideoDataset(ItemDataset):
    """Videos in class folders cut into clips: ``(video, audio, label)`` (decoding is not
    available, see ``_VideoClips``)."""

    samples: list[tuple[str, int]]
    video_clips: _VideoClips
    indices: list[int] | None = None

    def __len__(self) -> int:
        return self.video_clips.num_clips()

    def __getitem__(self, idx: int) -> tuple[Any, Any, int]:  # type: ignore[override]
        video, audio, _, video_idx = self.video_clips.get_clip(idx)
        sample = self.indices[video_idx] if self.indices is not None else video_idx
        label = self.samples[sample][1]
        if self.transform is not None:
            video = self.transform(video)
        return video, audio, label


class _FoldVideoDataset(_VideoDataset):
    """HMDB51's and UCF101's shared constructor: the class folders, then a fold's videos."""

    def __init__(
        self,
        root: _Root,
        annotation_path: str,
        frames_per_clip: int,
        step_between_clips: int = 1,
        frame_rate: int | None = None,
        fold: int = 1,
        train: bool = True,
        transform: _Transform = None,
        _precomputed_metadata: dict[str, Any] | None = None,
        num_workers: int = 1,
        _video_width: int = 0,
        _video_height: int = 0,
        _video_min_dimension: int = 0,
        _audio_samples: int = 0,
        output_format: str = "THWC",
    ) -> None:
        super().__init__(root)
        if fold not in (1, 2, 3):
            raise ValueError(f"fold should be between 1 and 3, got {fold}")
        if not os.path.isdir(self.root):
            raise missing(type(self).__name__, f"the class folders of .avi videos in {self.root}")
        self.fold, self.train = fold, train
        self.classes, class_to_idx = find_classes(self.root)
        self.samples = make_dataset(self.root, class_to_idx, ("avi",))
        video_paths = [path for path, _ in self.samples]
        self.full_video_clips = _VideoClips(
            video_paths,
            frames_per_clip,
            step_between_clips,
            frame_rate,
            _precomputed_metadata,
            output_format,
        )
        self.indices = self._select_fold(video_paths, annotation_path, fold, train)
        self.video_clips = self.full_video_clips.subset(self.indices)
        self.transform = transform

    @property
    def metadata(self) -> dict[str, Any]:
        """The frame timestamps and rates of every video (``_precomputed_metadata``'s form)."""
        return self.full_video_clips.metadata

    def _select_fold(
        self, video_list: list[str], annotation_path: str, fold: int, train: bool
    ) -> list[int]:
        raise NotImplementedError


class HMDB51(_FoldVideoDataset):
    """HMDB51: ``root/<action>/*.avi`` and the split files ``<action>_test_split<fold>.txt``
    in ``annotation_path`` (tag 1 train, 2 test)."""

    data_url = "https://serre-lab.clps.brown.edu/wp-content/uploads/2013/10/hmdb51_org.rar"
    splits = {  # noqa: RUF012
        "url": "https://serre-lab.clps.brown.edu/wp-content/uploads/2013/10/test_train_splits.rar",
        "md5": "15e67781e70dcfbdce2d7dbb9b3344b5",
    }
    TRAIN_TAG = 1
    TEST_TAG = 2

    def _select_fold(
        self, video_list: list[str], annotation_path: str, fold: int, train: bool
    ) -> list[int]:
        target_tag = self.TRAIN_TAG if train else self.TEST_TAG
        selected = set()
        for filepath in glob.glob(os.path.join(annotation_path, f"*test_split{fold}.txt")):
            with open(filepath) as fid:
                for line in fid:
                    if line.strip():
                        name, tag = line.split()
                        if int(tag) == target_tag:
                            selected.add(name)
        return [i for i, path in enumerate(video_list) if os.path.basename(path) in selected]


class UCF101(_FoldVideoDataset):
    """UCF101: ``root/<action>/*.avi`` and ``annotation_path/<train|test>list0<fold>.txt``."""

    def _select_fold(
        self, video_list: list[str], annotation_path: str, fold: int, train: bool
    ) -> list[int]:
        name = f"{'train' if train else 'test'}list{fold:02d}.txt"
        with open(os.path.join(annotation_path, name)) as fid:
            selected = {
                os.path.join(self.root, *line.strip().split(" ")[0].split("/"))
                for line in fid
                if line.strip()
            }
        return [i for i, path in enumerate(video_list) if path in selected]


class Kinetics(_VideoDataset):
    """Kinetics-400/600/700: ``root/<split>/<class>/*.mp4`` (``_legacy``: ``root/<class>``).
    Downloading (tens of thousands of YouTube clips) is not supported."""

    _TAR_URLS = {  # noqa: RUF012
        "400": "https://s3.amazonaws.com/kinetics/400/{split}/k400_{split}_path.txt",
        "600": "https://s3.amazonaws.com/kinetics/600/{split}/k600_{split}_path.txt",
        "700": "https://s3.amazonaws.com/kinetics/700_2020/{split}/k700_2020_{split}_path.txt",
    }
    _ANNOTATION_URLS = {  # noqa: RUF012
        "400": "https://s3.amazonaws.com/kinetics/400/annotations/{split}.csv",
        "600": "https://s3.amazonaws.com/kinetics/600/annotations/{split}.csv",
        "700": "https://s3.amazonaws.com/kinetics/700_2020/annotations/{split}.csv",
    }

    def __init__(
        self,
        root: _Root,
        frames_per_clip: int,
        num_classes: str = "400",
        split: str = "train",
        frame_rate: int | None = None,
        step_between_clips: int = 1,
        transform: _Transform = None,
        extensions: tuple[str, ...] = ("avi", "mp4"),
        download: bool = False,
        num_download_workers: int = 1,
        num_workers: int = 1,
        _precomputed_metadata: dict[str, Any] | None = None,
        _video_width: int = 0,
        _video_height: int = 0,
        _video_min_dimension: int = 0,
        _audio_samples: int = 0,
        _audio_channels: int = 0,
        _legacy: bool = False,
        output_format: str = "TCHW",
    ) -> None:
        self.num_classes = verify_str_arg(num_classes, "num_classes", ["400", "600", "700"])
        self.extensions = extensions
        self.num_download_workers = num_download_workers
        super().__init__(root)
        self._legacy = _legacy
        if _legacy:
            self.split_folder = self.root
            self.split = "unknown"
            output_format = "THWC"
            if download:
                raise ValueError("Cannot download the videos using legacy_structure.")
        else:
            self.split_folder = os.path.join(self.root, split)
            self.split = verify_str_arg(split, "split", ["train", "val", "test"])
        if download:
            raise RuntimeError(
                "Kinetics(download=True) is not supported by lucid: fetch the videos listed at "
                f"{self._TAR_URLS[self.num_classes].format(split=self.split)} into "
                f"{self.split_folder}/<class>/"
            )
        if not os.path.isdir(self.split_folder):
            raise missing("Kinetics", f"the class folders of videos in {self.split_folder}")
        self.classes, class_to_idx = find_classes(self.split_folder)
        self.samples = make_dataset(self.split_folder, class_to_idx, extensions)
        self.video_clips = _VideoClips(
            [x[0] for x in self.samples],
            frames_per_clip,
            step_between_clips,
            frame_rate,
            _precomputed_metadata,
            output_format,
        )
        self.transform = transform

    @property
    def metadata(self) -> dict[str, Any]:
        """The frame timestamps and rates of every video (``_precomputed_metadata``'s form)."""
        return self.video_clips.metadata
