"""The detection transforms of ``transforms.v2``, AutoAugment and AugMix against torchvision
0.28's own (pure Python: its v2 kernels are torch code, run here from its source with the
compiled ops stubbed). Random draws differ between the frameworks, so each transform's
``transform(input, params)`` is compared for the same parameters, and the tables (policies,
augmentation spaces) are compared as they are."""

from __future__ import annotations

import importlib
import os
import sys
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.data import tv_tensors as tv
from lucid.data.transforms import v2

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def tvv2() -> Any:
    """torchvision.transforms.v2 from torchvision 0.28's source (LUCID_TORCHVISION_SRC, or the
    cache lucid-models' tests unpack it to)."""
    env = os.environ.get("LUCID_TORCHVISION_SRC")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    src = Path(env) if env else cache / "lucid-models-tests" / "torchvision-0.28.0"
    if not (src / "torchvision" / "transforms" / "v2" / "__init__.py").is_file():
        pytest.skip(f"torchvision 0.28's source is not at {src} (set LUCID_TORCHVISION_SRC)")
    if str(src) not in sys.path:
        sys.path.append(str(src))
    stub = "torchvision._meta_registrations"
    sys.modules.setdefault(stub, types.ModuleType(stub))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module("torchvision.transforms.v2")


def _pair(tvv2: Any, h: int = 24, w: int = 32) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (3, h, w)).astype(np.uint8)
    boxes = np.array([[3, 4, 11, 12], [18, 10, 30, 20], [-4, 2, 6, 30], [5, 5, 5.5, 9]], np.float32)
    masks = (rng.random((4, h, w)) > 0.5).astype(np.uint8)
    pts = np.array([[[1.5, 2], [40, 3]], [[0, 0], [31, 23]]], np.float32)
    ttv = importlib.import_module("torchvision.tv_tensors")
    theirs = {
        "image": ttv.Image(torch.from_numpy(img)),
        "boxes": ttv.BoundingBoxes(torch.from_numpy(boxes), format="XYXY", canvas_size=(h, w)),
        "masks": ttv.Mask(torch.from_numpy(masks)),
        "points": ttv.KeyPoints(torch.from_numpy(pts), canvas_size=(h, w)),
        "labels": torch.tensor([1, 2, 3, 4]),
    }
    ours = {
        "image": tv.Image(img),
        "boxes": tv.BoundingBoxes(boxes, format="XYXY", canvas_size=(h, w)),
        "masks": tv.Mask(masks),
        "points": tv.KeyPoints(pts, canvas_size=(h, w)),
        "labels": lucid.tensor([1, 2, 3, 4]),
    }
    return theirs, ours


def _same(theirs: dict[str, Any], ours: dict[str, Any], atol: float = 1e-5) -> None:
    assert list(theirs) == list(ours)
    for key in theirs:
        t, o = theirs[key], ours[key]
        assert type(o).__name__ == type(t).__name__ or key == "labels", key
        np.testing.assert_allclose(
            o.numpy().astype(np.float64),
            t.numpy().astype(np.float64),
            atol=atol,
            err_msg=key,
            rtol=1e-7,
        )
        for meta in ("canvas_size", "clamping_mode"):
            if hasattr(t, meta):
                assert tuple(np.atleast_1d(getattr(o, meta))) == tuple(
                    np.atleast_1d(getattr(t, meta))
                ), key
        if hasattr(t, "format"):
            assert o.format.value == t.format.value, key


def test_box_metadata_transforms_match(tvv2: Any) -> None:
    theirs, ours = _pair(tvv2)
    for name, args in [
        ("ConvertBoundingBoxFormat", ("CXCYWH",)),
        ("ConvertBoundingBoxFormat", ("XYWH",)),
        ("ClampBoundingBoxes", ()),
        ("ClampKeyPoints", ()),
        ("SanitizeBoundingBoxes", ()),
        ("SanitizeKeyPoints", ()),
    ]:
        _same(getattr(tvv2, name)(*args)(theirs), getattr(v2, name)(*args)(ours))
    cx_t = tvv2.ConvertBoundingBoxFormat("CXCYWH")(theirs)
    cx_o = v2.ConvertBoundingBoxFormat("CXCYWH")(ours)
    _same(tvv2.ClampBoundingBoxes()(cx_t), v2.ClampBoundingBoxes()(cx_o))
    _same(tvv2.SanitizeBoundingBoxes(min_size=2)(cx_t), v2.SanitizeBoundingBoxes(min_size=2)(cx_o))


def test_geometry_kernels_match_for_the_same_params(tvv2: Any) -> None:
    theirs, ours = _pair(tvv2)
    pad = {"padding": [5, 3, 7, 2]}
    zt, zo = tvv2.RandomZoomOut(fill=9), v2.RandomZoomOut(fill=9)
    _same({k: zt.transform(v, pad) for k, v in theirs.items() if k != "labels"},
          {k: zo.transform(v, pad) for k, v in ours.items() if k != "labels"})  # fmt: skip
    crop = {
        "top": 3,
        "left": 5,
        "height": 15,
        "width": 20,
        "is_within_crop_area": np.array([True, False, True, False]),
    }
    ct, co = tvv2.RandomIoUCrop(), v2.RandomIoUCrop()
    crop_t = dict(crop, is_within_crop_area=torch.from_numpy(crop["is_within_crop_area"]))
    _same({k: ct.transform(v, crop_t) for k, v in theirs.items() if k != "labels"},
          {k: co.transform(v, crop) for k, v in ours.items() if k != "labels"})  # fmt: skip
    for size in [(13, 40), (48, 17)]:
        rt = tvv2.RandomResize(10, 20, antialias=False)
        ro = v2.RandomResize(10, 20)
        got_t = {k: rt.transform(v, {"size": size}) for k, v in theirs.items() if k != "labels"}
        got_o = {k: ro.transform(v, {"size": size}) for k, v in ours.items() if k != "labels"}
        # uint8 bilinear: torch rounds its float result, lucid too; allow one level.
        _same(got_t, got_o, atol=1.0)


def test_photometric_distort_matches_for_the_same_params(tvv2: Any) -> None:
    rng = np.random.default_rng(1)
    img = rng.random((3, 10, 12)).astype(np.float32)
    params = {
        "brightness_factor": 1.1,
        "contrast_factor": 0.7,
        "saturation_factor": 1.3,
        "hue_factor": 0.04,
        "contrast_before": False,
        "channel_permutation": np.array([2, 0, 1]),
    }
    t_params = dict(params, channel_permutation=torch.tensor([2, 0, 1]))
    ttv = importlib.import_module("torchvision.tv_tensors")
    ref = tvv2.RandomPhotometricDistort().transform(ttv.Image(torch.from_numpy(img)), t_params)
    got = v2.RandomPhotometricDistort().transform(tv.Image(img), params)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), atol=1e-5, rtol=1e-7)


def test_temporal_subsample_matches(tvv2: Any) -> None:
    video = np.random.default_rng(2).random((7, 2, 3, 4)).astype(np.float32)
    for n in (1, 3, 4, 7, 11):
        ref = tvv2.UniformTemporalSubsample(n)(torch.from_numpy(video))
        got = v2.UniformTemporalSubsample(n)(lucid.tensor(video))
        np.testing.assert_array_equal(got.numpy(), ref.numpy())


def test_auto_augment_tables_match(tvv2: Any) -> None:
    # v1's classes hold the tables in the form lucid's have (v2's have the same policies).
    tv1 = importlib.import_module("torchvision.transforms.autoaugment")
    for policy in v2.AutoAugmentPolicy:
        ref = tv1.AutoAugment(tv1.AutoAugmentPolicy(policy.value))
        assert tvv2.AutoAugment(tvv2.AutoAugmentPolicy(policy.value))._policies == ref.policies
        ours = v2.AutoAugment(policy)
        assert ours.policies == ref.policies
        r_space = ref._augmentation_space(10, (20, 33))
        o_space = ours._augmentation_space(10, (20, 33))
        assert set(o_space) == set(r_space)
        for op, (mags, signed) in r_space.items():
            np.testing.assert_allclose(o_space[op][0], mags.numpy(), rtol=1e-6, err_msg=op, atol=0)
            assert o_space[op][1] == signed
    for all_ops in (True, False):
        r_space = tv1.AugMix(all_ops=all_ops)._augmentation_space(10, (20, 33))
        o_space = v2.AugMix(all_ops=all_ops)._augmentation_space(10, (20, 33))
        assert list(o_space) == list(r_space)
        for op, (mags, signed) in r_space.items():
            np.testing.assert_allclose(o_space[op][0], mags.numpy(), rtol=1e-6, err_msg=op, atol=0)
            assert o_space[op][1] == signed


def test_sample_transforms_match(tvv2: Any) -> None:
    # Deterministic ones (flips with p=1), whole samples: the same outputs and metadata.
    for name, args, kwargs in [
        ("RandomHorizontalFlip", (), {"p": 1.0}),
        ("RandomVerticalFlip", (), {"p": 1.0}),
        ("Resize", (17,), {"antialias": False}),
        ("Resize", ([30, 12],), {"antialias": False}),
        ("CenterCrop", (15,), {}),
        ("CenterCrop", ([30, 40],), {}),
        ("Pad", ([1, 2, 3, 4],), {"fill": 5}),
    ]:
        theirs, ours = _pair(tvv2)
        _same(getattr(tvv2, name)(*args, **kwargs)(theirs),
              getattr(v2, name)(*args, **kwargs)(ours), atol=1.0)  # fmt: skip
    theirs, ours = _pair(tvv2)
    dt = {type(theirs["image"]): torch.float32, type(theirs["masks"]): torch.int64, "others": None}
    do = {tv.Image: lucid.float32, tv.Mask: lucid.int64, "others": None}
    ref, got = tvv2.ToDtype(dt, scale=True)(theirs), v2.ToDtype(do, scale=True)(ours)
    _same(ref, got)
    assert got["masks"].dtype == lucid.int64 and got["boxes"].dtype == lucid.float32
