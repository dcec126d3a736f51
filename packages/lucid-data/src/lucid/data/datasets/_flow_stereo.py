"""Optical-flow (Sintel, KittiFlow, FlyingChairs, FlyingThings3D, HD1K) and stereo-matching
datasets (KITTI 2012/2015, Middlebury 2014, CREStereo, FallingThings, SceneFlow, Sintel,
InStereo2k, ETH3D, CARLA), reading Middlebury ``.flo``, ``.pfm`` and KITTI's 16-bit RGB PNG
flow files themselves. Images are uint8 ``H x W x 3`` arrays; flows ``2 x H x W`` float32,
disparities ``1 x H x W``, masks ``H x W`` bool, as in torchvision."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import struct
import zlib
from collections.abc import Callable
from glob import glob
from pathlib import Path
from typing import Any

import numpy as np

from ..dataset import ConcatDataset
from ._common import ItemDataset, open_image, verify_str_arg
from .folder import default_loader

__all__ = [
    "CREStereo",
    "CarlaStereo",
    "ETH3DStereo",
    "FallingThingsStereo",
    "FlyingChairs",
    "FlyingThings3D",
    "HD1K",
    "InStereo2k",
    "Kitti2012Stereo",
    "Kitti2015Stereo",
    "KittiFlow",
    "Middlebury2014Stereo",
    "SceneFlowStereo",
    "Sintel",
    "SintelStereo",
]

_Root = str | os.PathLike[str]


def _read_flo(file_name: str) -> np.ndarray:
    """A Middlebury ``.flo`` file: ``2 x H x W`` float32."""
    with open(file_name, "rb") as f:
        raw = f.read()
    if raw[:4] != b"PIEH":
        raise ValueError(f"Magic number incorrect. Invalid .flo file: {file_name}")
    w, h = struct.unpack_from("<ii", raw, 4)
    data = np.frombuffer(raw, "<f4", count=2 * w * h, offset=12)
    flow: np.ndarray = data.reshape(h, w, 2).transpose(2, 0, 1).astype(np.float32)
    return flow


def _read_pfm(file_name: str | os.PathLike[str], slice_channels: int = 2) -> np.ndarray:
    """A ``.pfm`` file (1 or 3 channels, rows stored bottom-up): its first ``slice_channels``
    channels, ``C x H x W`` float32."""
    with open(file_name, "rb") as f:
        header = f.readline().rstrip()
        if header not in (b"PF", b"Pf"):
            raise ValueError(f"Invalid PFM file: {os.fspath(file_name)}")
        dim_match = re.match(rb"^(\d+)\s(\d+)\s$", f.readline())
        if not dim_match:
            raise ValueError(f"Malformed PFM header: {os.fspath(file_name)}")
        w, h = (int(dim) for dim in dim_match.groups())
        scale = float(f.readline().rstrip())
        data = np.frombuffer(f.read(), dtype=("<" if scale < 0 else ">") + "f4")
    channels = 3 if header == b"PF" else 1
    data = data[: h * w * channels].reshape(h, w, channels).transpose(2, 0, 1)
    out: np.ndarray = np.flip(data, axis=1)[:slice_channels].astype(np.float32)
    return out


def _read_pfm_file(file_name: str | os.PathLike[str]) -> np.ndarray:
    return _read_pfm(file_name, slice_channels=1)


def _unfilter(rows: np.ndarray, bpp: int) -> np.ndarray:
    """Undo PNG's per-row filters (``rows``: H x (1 + stride) uint8, filter byte first)."""
    h, stride = rows.shape[0], rows.shape[1] - 1
    out = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        kind, line = int(rows[y, 0]), rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:  # Sub: a running sum per byte lane, vectorised with cumsum
            cur = np.cumsum(line.reshape(-1, bpp), axis=0).reshape(-1) & 0xFF
        elif kind == 2:
            cur = (line + prev) & 0xFF
        elif kind in (3, 4):  # Average, Paeth: each pixel needs its left neighbour decoded
            cur = line.copy()
            for x in range(0, stride, bpp):
                a = cur[x - bpp : x] if x else np.zeros(bpp, np.int32)
                b = prev[x : x + bpp]
                if kind == 3:
                    pred = (a + b) // 2
                else:
                    c = prev[x - bpp : x] if x else np.zeros(bpp, np.int32)
                    p = a + b - c
                    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
                    pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
                cur[x : x + bpp] = (line[x : x + bpp] + pred) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter type {kind}")
        out[y] = cur
        prev = cur
    return out


def _read_png(file_name: str | os.PathLike[str]) -> np.ndarray:
    """A non-interlaced gray/RGB(A) PNG of 8 or 16 bits, decoded exactly (Pillow reduces
    16-bit RGB to 8 bits): ``H x W x C`` uint8 or uint16."""
    with open(file_name, "rb") as f:
        raw = f.read()
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"not a PNG file: {os.fspath(file_name)}")
    pos, idat, header = 8, [], b""
    while pos + 8 <= len(raw):
        (length,) = struct.unpack_from(">I", raw, pos)
        kind, data = raw[pos + 4 : pos + 8], raw[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = data
        elif kind == b"IDAT":
            idat.append(data)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if len(header) != 13 or not idat:
        raise ValueError(f"corrupt PNG file {os.fspath(file_name)}: no IHDR or IDAT chunk")
    w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color)
    if channels is None or depth not in (8, 16) or interlace:
        raise ValueError(
            f"{os.fspath(file_name)}: only non-interlaced 8/16-bit gray or RGB(A) PNGs are read "
            f"here (color type {color}, depth {depth}, interlace {interlace})"
        )
    bpp = channels * depth // 8
    try:
        rows = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
        pixels = _unfilter(rows.reshape(h, 1 + w * bpp), bpp)
    except (zlib.error, ValueError) as e:
        raise ValueError(f"corrupt PNG file {os.fspath(file_name)}: {e}") from None
    if depth == 16:
        return pixels.view(">u2").astype(np.uint16).reshape(h, w, channels)
    return pixels.reshape(h, w, channels)


def _read_16bits_png_with_flow_and_valid_mask(file_name: str) -> tuple[np.ndarray, np.ndarray]:
    """KITTI's flow PNG: ``(flow 2 x H x W float32, valid H x W bool)``."""
    flow_and_valid = _read_png(file_name).astype(np.float32).transpose(2, 0, 1)
    flow = (flow_and_valid[:2] - 2**15) / 64
    return flow, flow_and_valid[2].astype(bool)


class FlowDataset(ItemDataset):
    """Pairs of frames and the flow between them: ``(img1, img2, flow)``, or
    ``(img1, img2, flow, valid_flow_mask)`` for datasets whose flow files hold a mask; flow
    (and mask) None for splits without ground truth. ``transforms`` takes and returns the
    four."""

    _has_builtin_flow_mask = False

    def __init__(
        self,
        root: _Root,
        transforms: Callable[..., Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root=root)
        self.transforms = transforms
        self._flow_list: list[str] = []
        self._image_list: list[list[str]] = []
        self._loader = loader

    def _read_img(self, file_name: str) -> Any:
        return self._loader(file_name)

    def _read_flow(self, file_name: str) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement _read_flow")

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        img1 = self._read_img(self._image_list[index][0])
        img2 = self._read_img(self._image_list[index][1])
        flow: Any = None
        valid: Any = None
        if self._flow_list:
            flow = self._read_flow(self._flow_list[index])
            if self._has_builtin_flow_mask:
                flow, valid = flow
        if self.transforms is not None:
            img1, img2, flow, valid = self.transforms(img1, img2, flow, valid)
        if self._has_builtin_flow_mask or valid is not None:
            return img1, img2, flow, valid
        return img1, img2, flow

    def __len__(self) -> int:
        return len(self._image_list)

    def __rmul__(self, v: int) -> ConcatDataset[Any]:
        return ConcatDataset([self] * v)


class Sintel(FlowDataset):
    """MPI Sintel flow: ``root/Sintel/<training|test>/<clean|final>/<scene>/*.png`` and
    ``training/flow/<scene>/*.flo``."""

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        pass_name: str = "clean",
        transforms: Callable[..., Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", ("train", "test"))
        verify_str_arg(pass_name, "pass_name", ("clean", "final", "both"))
        passes = ["clean", "final"] if pass_name == "both" else [pass_name]
        base = Path(self.root) / "Sintel"
        split_dir = "training" if split == "train" else split
        for p in passes:
            image_root = base / split_dir / p
            if not image_root.is_dir():
                raise FileNotFoundError(f"Could not find the Sintel images in {image_root}")
            for scene in sorted(os.listdir(image_root)):
                images = sorted(glob(str(image_root / scene / "*.png")))
                self._image_list += [[images[i], images[i + 1]] for i in range(len(images) - 1)]
                if split == "train":
                    self._flow_list += sorted(
                        glob(str(base / "training" / "flow" / scene / "*.flo"))
                    )

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_flo(file_name)


class KittiFlow(FlowDataset):
    """KITTI 2015 flow: ``root/KittiFlow/<training|testing>/image_2/*_10.png, *_11.png`` and
    ``flow_occ/*_10.png`` (16-bit flow with its valid mask)."""

    _has_builtin_flow_mask = True

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        transforms: Callable[..., Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "KittiFlow" / (split + "ing")
        images1 = sorted(glob(str(base / "image_2" / "*_10.png")))
        images2 = sorted(glob(str(base / "image_2" / "*_11.png")))
        if not images1 or not images2:
            raise FileNotFoundError(
                "Could not find the Kitti flow images. Please make sure the directory structure "
                f"is correct: {base / 'image_2'}"
            )
        self._image_list = [[a, b] for a, b in zip(images1, images2, strict=False)]
        if split == "train":
            self._flow_list = sorted(glob(str(base / "flow_occ" / "*_10.png")))

    def _read_flow(self, file_name: str) -> tuple[np.ndarray, np.ndarray]:
        return _read_16bits_png_with_flow_and_valid_mask(file_name)


class FlyingChairs(FlowDataset):
    """FlyingChairs: ``root/FlyingChairs/data/*.ppm, *.flo`` and
    ``FlyingChairs_train_val.txt`` (1 train, 2 val per pair)."""

    def __init__(
        self, root: _Root, split: str = "train", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root=root, transforms=transforms)
        verify_str_arg(split, "split", ("train", "val"))
        base = Path(self.root) / "FlyingChairs"
        images = sorted(glob(str(base / "data" / "*.ppm")))
        flows = sorted(glob(str(base / "data" / "*.flo")))
        if not (base / "FlyingChairs_train_val.txt").exists():
            raise FileNotFoundError(
                "The FlyingChairs_train_val.txt file was not found - please download it from the "
                f"dataset page (see docstring): {base}"
            )
        split_list = np.loadtxt(str(base / "FlyingChairs_train_val.txt"), dtype=np.int32, ndmin=1)
        wanted = 1 if split == "train" else 2
        for i in range(len(flows)):
            if split_list[i] == wanted:
                self._flow_list += [flows[i]]
                self._image_list += [[images[2 * i], images[2 * i + 1]]]

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_flo(file_name)


class FlyingThings3D(FlowDataset):
    """FlyingThings3D: ``root/FlyingThings3D/frames_<pass>pass/<SPLIT>/*/*/<camera>/*.png``
    and ``optical_flow/<SPLIT>/*/*/into_future|into_past/<camera>/*.pfm``."""

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        pass_name: str = "clean",
        camera: str = "left",
        transforms: Callable[..., Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", ("train", "test"))
        split = split.upper()
        verify_str_arg(pass_name, "pass_name", ("clean", "final", "both"))
        passes = {
            "clean": ["frames_cleanpass"],
            "final": ["frames_finalpass"],
            "both": ["frames_cleanpass", "frames_finalpass"],
        }[pass_name]
        verify_str_arg(camera, "camera", ("left", "right", "both"))
        cameras = ["left", "right"] if camera == "both" else [camera]
        base = Path(self.root) / "FlyingThings3D"
        for p, cam, direction in itertools.product(passes, cameras, ("into_future", "into_past")):
            image_dirs = sorted(Path(d) / cam for d in glob(str(base / p / split / "*/*")))
            flow_dirs = sorted(
                Path(d) / direction / cam for d in glob(str(base / "optical_flow" / split / "*/*"))
            )
            if not image_dirs or not flow_dirs:
                raise FileNotFoundError(
                    "Could not find the FlyingThings3D flow images. Please make sure the "
                    f"directory structure is correct: {base}"
                )
            for image_dir, flow_dir in zip(image_dirs, flow_dirs, strict=False):
                images = sorted(glob(str(image_dir / "*.png")))
                flows = sorted(glob(str(flow_dir / "*.pfm")))
                for i in range(len(flows) - 1):
                    if direction == "into_future":
                        self._image_list += [[images[i], images[i + 1]]]
                        self._flow_list += [flows[i]]
                    else:
                        self._image_list += [[images[i + 1], images[i]]]
                        self._flow_list += [flows[i + 1]]

    def _read_flow(self, file_name: str) -> np.ndarray:
        return _read_pfm(file_name)


class HD1K(FlowDataset):
    """HD1K: ``root/hd1k/hd1k_input/image_2/<seq>_<frame>.png`` and
    ``hd1k_flow_gt/flow_occ/`` (KITTI's 16-bit flow format); test pairs in
    ``hd1k_challenge/image_2``."""

    _has_builtin_flow_mask = True

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        transforms: Callable[..., Any] | None = None,
        loader: Callable[[str], Any] = default_loader,
    ) -> None:
        super().__init__(root=root, transforms=transforms, loader=loader)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "hd1k"
        if split == "train":
            for seq in range(36):
                flows = sorted(glob(str(base / "hd1k_flow_gt" / "flow_occ" / f"{seq:06d}_*.png")))
                images = sorted(glob(str(base / "hd1k_input" / "image_2" / f"{seq:06d}_*.png")))
                for i in range(len(flows) - 1):
                    self._flow_list += [flows[i]]
                    self._image_list += [[images[i], images[i + 1]]]
        else:
            images1 = sorted(glob(str(base / "hd1k_challenge" / "image_2" / "*10.png")))
            images2 = sorted(glob(str(base / "hd1k_challenge" / "image_2" / "*11.png")))
            self._image_list = [[a, b] for a, b in zip(images1, images2, strict=False)]
        if not self._image_list:
            raise FileNotFoundError(
                "Could not find the HD1K images. Please make sure the directory structure is "
                f"correct: {base}"
            )

    def _read_flow(self, file_name: str) -> tuple[np.ndarray, np.ndarray]:
        return _read_16bits_png_with_flow_and_valid_mask(file_name)


_Pair = tuple[Any, Any]


class StereoMatchingDataset(ItemDataset):
    """Left/right image pairs and their disparity maps: ``(left, right, disparity)`` or, for
    datasets with a validity mask, ``(left, right, disparity, valid_mask)``. ``transforms``
    takes and returns ``(images, disparities, masks)``, each a pair."""

    _has_built_in_disparity_mask = False

    def __init__(self, root: _Root, transforms: Callable[..., Any] | None = None) -> None:
        super().__init__(root=root)
        self.transforms = transforms
        self._images: list[_Pair] = []
        self._disparities: list[_Pair] = []

    def _read_img(self, file_path: str | Path) -> np.ndarray:
        return open_image(file_path, "RGB")

    def _scan_pairs(
        self, paths_left_pattern: str, paths_right_pattern: str | None = None
    ) -> list[_Pair]:
        left_paths = sorted(glob(paths_left_pattern))
        right_paths: list[Any] = (
            sorted(glob(paths_right_pattern)) if paths_right_pattern else [None] * len(left_paths)
        )
        if not left_paths:
            raise FileNotFoundError(
                f"Could not find any files matching the patterns: {paths_left_pattern}"
            )
        if not right_paths:
            raise FileNotFoundError(
                f"Could not find any files matching the patterns: {paths_right_pattern}"
            )
        if len(left_paths) != len(right_paths):
            raise ValueError(
                f"Found {len(left_paths)} left files but {len(right_paths)} right files using:\n"
                f" left pattern: {paths_left_pattern}\nright pattern: {paths_right_pattern}\n"
            )
        return list(zip(left_paths, right_paths, strict=True))

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement _read_disparity")

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        imgs: Any = (self._read_img(self._images[index][0]), self._read_img(self._images[index][1]))
        dsp_left, valid_left = self._read_disparity(self._disparities[index][0])
        dsp_right, valid_right = self._read_disparity(self._disparities[index][1])
        dsp_maps: Any = (dsp_left, dsp_right)
        valid_masks: Any = (valid_left, valid_right)
        if self.transforms is not None:
            imgs, dsp_maps, valid_masks = self.transforms(imgs, dsp_maps, valid_masks)
        if self._has_built_in_disparity_mask or valid_masks[0] is not None:
            return imgs[0], imgs[1], dsp_maps[0], valid_masks[0]
        return imgs[0], imgs[1], dsp_maps[0]

    def __len__(self) -> int:
        return len(self._images)


def _png(file_path: Any, dtype: Any = np.float32) -> np.ndarray:
    return np.asarray(open_image(file_path), dtype=dtype)


class CarlaStereo(StereoMatchingDataset):
    """CARLA high-res stereo: ``root/carla-highres/trainingF/<scene>/im0.png, im1.png,
    disp0GT.pfm, disp1GT.pfm``."""

    def __init__(self, root: _Root, transforms: Callable[..., Any] | None = None) -> None:
        super().__init__(root, transforms)
        base = Path(self.root) / "carla-highres" / "trainingF"
        self._images = self._scan_pairs(str(base / "*" / "im0.png"), str(base / "*" / "im1.png"))
        self._disparities = self._scan_pairs(
            str(base / "*" / "disp0GT.pfm"), str(base / "*" / "disp1GT.pfm")
        )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        return np.abs(_read_pfm_file(file_path)), None


class _KittiStereo(StereoMatchingDataset):
    _has_built_in_disparity_mask = True

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        if file_path is None:
            return None, None
        return (_png(file_path, np.float64) / 256.0)[None, :, :], None


class Kitti2012Stereo(_KittiStereo):
    """KITTI 2012 stereo: ``root/Kitti2012/<training|testing>/colored_0|colored_1/*_10.png``
    and ``disp_noc/*.png`` (disparity x 256, 16-bit)."""

    def __init__(
        self, root: _Root, split: str = "train", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "Kitti2012" / (split + "ing")
        self._images = self._scan_pairs(
            str(base / "colored_0" / "*_10.png"), str(base / "colored_1" / "*_10.png")
        )
        if split == "train":
            self._disparities = self._scan_pairs(str(base / "disp_noc" / "*.png"), None)
        else:
            self._disparities = [(None, None) for _ in self._images]


class Kitti2015Stereo(_KittiStereo):
    """KITTI 2015 stereo: ``root/Kitti2015/<training|testing>/image_2|image_3/*.png`` and
    ``disp_occ_0|disp_occ_1/*.png``."""

    def __init__(
        self, root: _Root, split: str = "train", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "Kitti2015" / (split + "ing")
        self._images = self._scan_pairs(
            str(base / "image_2" / "*.png"), str(base / "image_3" / "*.png")
        )
        if split == "train":
            self._disparities = self._scan_pairs(
                str(base / "disp_occ_0" / "*.png"), str(base / "disp_occ_1" / "*.png")
            )
        else:
            self._disparities = [(None, None) for _ in self._images]


class Middlebury2014Stereo(StereoMatchingDataset):
    """Middlebury 2014: ``root/Middlebury2014/<split>/<scene>[-perfect|-imperfect]/im0.png,
    im1.png, disp0.pfm, disp1.pfm``; the valid mask is ``disparity > 0``."""

    splits = {  # noqa: RUF012 - torchvision's public attribute
        "train": ["Adirondack", "Jadeplant", "Motorcycle", "Piano", "Pipes", "Playroom",
                  "Playtable", "Recycle", "Shelves", "Vintage"],
        "additional": ["Backpack", "Bicycle1", "Cable", "Classroom1", "Couch", "Flowers", "Mask",
                       "Shopvac", "Sticks", "Storage", "Sword1", "Sword2", "Umbrella"],
        "test": ["Plants", "Classroom2E", "Classroom2", "Australia", "DjembeL", "CrusadeP",
                 "Crusade", "Hoops", "Bicycle2", "Staircase", "Newkuba", "AustraliaP", "Djembe",
                 "Livingroom", "Computer"],
    }  # fmt: skip
    _has_built_in_disparity_mask = True

    def __init__(
        self,
        root: _Root,
        split: str = "train",
        calibration: str | None = "perfect",
        use_ambient_views: bool = False,
        transforms: Callable[..., Any] | None = None,
        download: bool = False,
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", ("train", "test", "additional"))
        self.split = split
        if calibration:
            verify_str_arg(calibration, "calibration", ("perfect", "imperfect", "both"))
            if split == "test":
                raise ValueError(
                    "Split 'test' has only no calibration settings, please set `calibration=None`."
                )
        elif split != "test":
            raise ValueError(
                f"Split '{split}' has calibration settings, however None was provided as an "
                "argument.\nAvailable calibration settings are: 'perfect', 'imperfect', 'both'."
            )
        if download:
            raise RuntimeError(
                "Middlebury2014Stereo(download=True) is not supported by lucid: download the "
                "scenes from https://vision.middlebury.edu/stereo/data/scenes2014/ into "
                f"{Path(self.root) / 'Middlebury2014' / split}"
            )
        base = Path(self.root) / "Middlebury2014"
        if not os.path.exists(base / split):
            raise FileNotFoundError(
                f"The {split} directory was not found in the provided root directory: {base}"
            )
        if not any(
            scene.startswith(s) for scene in os.listdir(base / split) for s in self.splits[split]
        ):
            raise FileNotFoundError(
                f"Provided root folder does not contain any scenes from the {split} split."
            )
        suffixes = {
            None: [""],
            "perfect": ["-perfect"],
            "imperfect": ["-imperfect"],
            "both": ["-perfect", "-imperfect"],
        }[calibration]
        for suffix in suffixes:
            scenes = base / split / ("*" + suffix)
            self._images += self._scan_pairs(str(scenes / "im0.png"), str(scenes / "im1.png"))
            if split == "test":
                self._disparities = [(None, None) for _ in self._images]
            else:
                self._disparities += self._scan_pairs(
                    str(scenes / "disp0.pfm"), str(scenes / "disp1.pfm")
                )
        self.use_ambient_views = use_ambient_views

    def _read_img(self, file_path: str | Path) -> np.ndarray:
        path = Path(file_path)
        if path.name == "im1.png" and self.use_ambient_views:
            ambient = [path.parent / v for v in ("im1E.png", "im1L.png")]
            path = random.choice([p for p in ambient if p.exists()] + [path])
        return super()._read_img(path)

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        if file_path is None:
            return None, None
        disparity = np.abs(_read_pfm_file(file_path))
        disparity[disparity == np.inf] = 0
        return disparity, (disparity > 0).squeeze(0)


class CREStereo(StereoMatchingDataset):
    """CREStereo's synthetic set: ``root/CREStereo/<shapenet|reflective|tree|hole>/
    *_left.jpg, *_right.jpg, *_left.disp.png, *_right.disp.png`` (disparity x 32)."""

    _has_built_in_disparity_mask = True

    def __init__(self, root: _Root, transforms: Callable[..., Any] | None = None) -> None:
        super().__init__(root, transforms)
        base = Path(self.root) / "CREStereo"
        for s in ("shapenet", "reflective", "tree", "hole"):
            self._images += self._scan_pairs(
                str(base / s / "*_left.jpg"), str(base / s / "*_right.jpg")
            )
            self._disparities += self._scan_pairs(
                str(base / s / "*_left.disp.png"), str(base / s / "*_right.disp.png")
            )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        return _png(file_path)[None, :, :] / 32.0, None


class FallingThingsStereo(StereoMatchingDataset):
    """Falling Things: ``root/FallingThings/<single|mixed>/.../*.left.jpg, *.right.jpg,
    *.left.depth.png`` and ``_camera_settings.json`` (disparity from depth and focal)."""

    def __init__(
        self, root: _Root, variant: str = "single", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        base = Path(self.root) / "FallingThings"
        verify_str_arg(variant, "variant", ("single", "mixed", "both"))
        variants = {"single": ["single"], "mixed": ["mixed"], "both": ["single", "mixed"]}[variant]
        prefix = {"single": Path("*") / "*", "mixed": Path("*")}
        for s in variants:
            folder = base / s / prefix[s]
            self._images += self._scan_pairs(
                str(folder / "*.left.jpg"), str(folder / "*.right.jpg")
            )
            self._disparities += self._scan_pairs(
                str(folder / "*.left.depth.png"), str(folder / "*.right.depth.png")
            )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        depth = _png(file_path)
        with open(Path(file_path).parent / "_camera_settings.json") as f:
            focal = json.load(f)["camera_settings"][0]["intrinsic_settings"]["fx"]
        baseline, pixel_constant = 6, 100
        return (baseline * focal * pixel_constant / depth)[None, :, :], None


class SceneFlowStereo(StereoMatchingDataset):
    """SceneFlow: ``root/SceneFlow/<FlyingThings3D|Driving|Monkaa>/frames_<pass>pass/.../
    left|right/*.png`` and ``disparity/.../left|right/*.pfm``."""

    def __init__(
        self,
        root: _Root,
        variant: str = "FlyingThings3D",
        pass_name: str = "clean",
        transforms: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(variant, "variant", ("FlyingThings3D", "Driving", "Monkaa"))
        verify_str_arg(pass_name, "pass_name", ("clean", "final", "both"))
        passes = {
            "clean": ["frames_cleanpass"],
            "final": ["frames_finalpass"],
            "both": ["frames_cleanpass", "frames_finalpass"],
        }[pass_name]
        base = Path(self.root) / "SceneFlow" / variant
        prefix = Path("*") if variant == "Monkaa" else Path("*") / "*" / "*"
        for p in passes:
            self._images += self._scan_pairs(
                str(base / p / prefix / "left" / "*.png"),
                str(base / p / prefix / "right" / "*.png"),
            )
            self._disparities += self._scan_pairs(
                str(base / "disparity" / prefix / "left" / "*.pfm"),
                str(base / "disparity" / prefix / "right" / "*.pfm"),
            )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        return np.abs(_read_pfm_file(file_path)), None


class SintelStereo(StereoMatchingDataset):
    """MPI Sintel stereo: ``root/Sintel/training/<pass>_left|<pass>_right/<scene>/*.png``,
    ``disparities/`` (RGB-encoded), ``occlusions/`` and ``outofframe/`` masks."""

    _has_built_in_disparity_mask = True

    def __init__(
        self, root: _Root, pass_name: str = "final", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(pass_name, "pass_name", ("final", "clean", "both"))
        base = Path(self.root) / "Sintel" / "training"
        passes = {"final": ["final"], "clean": ["clean"], "both": ["final", "clean"]}[pass_name]
        for p in passes:
            self._images += self._scan_pairs(
                str(base / f"{p}_left" / "*" / "*.png"), str(base / f"{p}_right" / "*" / "*.png")
            )
            self._disparities += self._scan_pairs(str(base / "disparities" / "*" / "*.png"), None)

    def _get_occlussion_mask_paths(self, file_path: str) -> tuple[str, str]:
        fpath = Path(file_path)
        sampledir = fpath.parent.parent.parent
        occlusion = str(sampledir / "occlusions" / fpath.parent.name / fpath.name)
        outofframe = str(sampledir / "outofframe" / fpath.parent.name / fpath.name)
        if not os.path.exists(occlusion):
            raise FileNotFoundError(f"Occlusion mask {occlusion} does not exist")
        if not os.path.exists(outofframe):
            raise FileNotFoundError(f"Out of frame mask {outofframe} does not exist")
        return occlusion, outofframe

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        if file_path is None:
            return None, None
        rgb = _png(file_path)
        r, g, b = np.split(rgb, 3, axis=-1)
        disparity = np.transpose(r * 4 + g / 2**6 + b / 2**14, (2, 0, 1))
        occluded, out_of_frame = self._get_occlussion_mask_paths(file_path)
        valid = np.logical_and(_png(out_of_frame, np.uint8) == 0, _png(occluded, np.uint8) == 0)
        return disparity, valid


class InStereo2k(StereoMatchingDataset):
    """InStereo2k: ``root/InStereo2k/<split>/<scene>/left.png, right.png, left_disp.png,
    right_disp.png`` (disparity x 1024)."""

    def __init__(
        self, root: _Root, split: str = "train", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "InStereo2k" / split
        self._images = self._scan_pairs(str(base / "*" / "left.png"), str(base / "*" / "right.png"))
        self._disparities = self._scan_pairs(
            str(base / "*" / "left_disp.png"), str(base / "*" / "right_disp.png")
        )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        return _png(file_path)[None, :, :] / 1024.0, None


class ETH3DStereo(StereoMatchingDataset):
    """ETH3D two-view: ``root/ETH3D/two_view_training|two_view_test/<scene>/im0.png, im1.png``
    and ``two_view_training_gt/<scene>/disp0GT.pfm, mask0nocc.png``."""

    _has_built_in_disparity_mask = True

    def __init__(
        self, root: _Root, split: str = "train", transforms: Callable[..., Any] | None = None
    ) -> None:
        super().__init__(root, transforms)
        verify_str_arg(split, "split", ("train", "test"))
        base = Path(self.root) / "ETH3D"
        img_dir = "two_view_training" if split == "train" else "two_view_test"
        self._images = self._scan_pairs(
            str(base / img_dir / "*" / "im0.png"), str(base / img_dir / "*" / "im1.png")
        )
        if split == "test":
            self._disparities = [(None, None) for _ in self._images]
        else:
            self._disparities = self._scan_pairs(
                str(base / "two_view_training_gt" / "*" / "disp0GT.pfm"), None
            )

    def _read_disparity(self, file_path: Any) -> tuple[Any, Any]:
        if file_path is None:
            return None, None
        disparity = np.abs(_read_pfm_file(file_path))
        valid = _png(Path(file_path).parent / "mask0nocc.png", np.uint8).astype(bool)
        return disparity, valid
