"""``lucid.data.ops`` against torchvision 0.28's own pure-Python implementations.

torchvision is not a dependency: these tests read its unpacked wheel from the directory in
``LUCID_TORCHVISION_SRC`` (``pip download torchvision==0.28.0 --no-deps`` and unzip) and skip
when it is absent. Its compiled registrations are stubbed: only the Python code is used
(``nms`` is compiled in torchvision, so it is tested against NumPy in test_data_ops.py, and
here against torchvision's compiled kernel when that loads).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.data import ops

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

# LUCID_TORCHVISION_SRC, else the copy lucid-models' tests unpack (their conftest.py).
_CACHE = os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")),
    "lucid-models-tests",
    "torchvision-0.28.0",
)
_SRC = os.environ.get("LUCID_TORCHVISION_SRC", _CACHE)


def _tv() -> Any:
    if not _SRC or not os.path.isdir(os.path.join(_SRC, "torchvision")):
        pytest.skip(f"no unpacked torchvision 0.28 at {_SRC!r}: set LUCID_TORCHVISION_SRC")
    if _SRC not in sys.path:
        sys.path.insert(0, _SRC)
    sys.modules.setdefault(
        "torchvision._meta_registrations", types.ModuleType("torchvision._meta_registrations")
    )
    import torchvision.ops as tvops  # noqa: PLC0415 - optional reference, read on demand

    return tvops


def _boxes(rng: np.random.Generator, n: int, scale: float = 10.0) -> np.ndarray:
    xy = rng.random((n, 2)) * scale
    wh = rng.random((n, 2)) * scale / 2 + 0.1
    return np.concatenate([xy, xy + wh], axis=1)


@pytest.mark.parametrize("fmt", ["xyxy", "xywh", "cxcywh"])
def test_box_iou_and_area(fmt: str) -> None:
    tv = _tv()
    rng = np.random.default_rng(0)
    a, b = _boxes(rng, 5), _boxes(rng, 7)
    if fmt != "xyxy":
        a = tv.box_convert(torch.from_numpy(a), "xyxy", fmt).numpy()
        b = tv.box_convert(torch.from_numpy(b), "xyxy", fmt).numpy()
    ours = ops.box_iou(lucid.tensor(a), lucid.tensor(b), fmt=fmt).numpy()
    ref = tv.box_iou(torch.from_numpy(a), torch.from_numpy(b), fmt=fmt).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        ops.box_area(lucid.tensor(a), fmt=fmt).numpy(),
        tv.box_area(torch.from_numpy(a), fmt=fmt).numpy(),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("name", ["generalized_box_iou", "distance_box_iou", "complete_box_iou"])
def test_iou_variants(name: str) -> None:
    tv = _tv()
    rng = np.random.default_rng(1)
    a, b = _boxes(rng, 4).astype(np.float32), _boxes(rng, 6).astype(np.float32)
    ours = getattr(ops, name)(lucid.tensor(a), lucid.tensor(b))
    ref = getattr(tv, name)(torch.from_numpy(a), torch.from_numpy(b))
    assert ours.dtype == lucid.float32
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("src", "dst"), [(s, d) for s in ("xyxy", "xywh", "cxcywh") for d in ("xyxy", "xywh", "cxcywh")]
)
def test_box_convert(src: str, dst: str) -> None:
    tv = _tv()
    b = _boxes(np.random.default_rng(2), 5)
    np.testing.assert_allclose(
        ops.box_convert(lucid.tensor(b), src, dst).numpy(),
        tv.box_convert(torch.from_numpy(b), src, dst).numpy(),
        rtol=1e-12,
        atol=1e-12,
    )


def test_clip_and_remove_small_and_masks() -> None:
    tv = _tv()
    rng = np.random.default_rng(3)
    b = _boxes(rng, 8, scale=20.0) - 3.0
    np.testing.assert_allclose(
        ops.clip_boxes_to_image(lucid.tensor(b), (9, 12)).numpy(),
        tv.clip_boxes_to_image(torch.from_numpy(b), (9, 12)).numpy(),
        rtol=1e-6,
        atol=1e-6,
    )
    np.testing.assert_array_equal(
        ops.remove_small_boxes(lucid.tensor(b), 2.5).numpy(),
        tv.remove_small_boxes(torch.from_numpy(b), 2.5).numpy(),
    )
    masks = rng.random((4, 7, 9)) > 0.8
    masks[1] = False
    np.testing.assert_array_equal(
        ops.masks_to_boxes(lucid.tensor(masks)).numpy(),
        tv.masks_to_boxes(torch.from_numpy(masks)).numpy(),
    )


@pytest.mark.parametrize(
    ("alpha", "gamma", "red"), [(0.25, 2, "none"), (-1, 1.5, "mean"), (0.7, 0, "sum")]
)
def test_sigmoid_focal_loss(alpha: float, gamma: float, red: str) -> None:
    tv = _tv()
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 5)) * 3
    t = (rng.random((3, 5)) > 0.5).astype(np.float64)
    ours = ops.sigmoid_focal_loss(lucid.tensor(x), lucid.tensor(t), alpha, gamma, red)
    ref = tv.sigmoid_focal_loss(torch.from_numpy(x), torch.from_numpy(t), alpha, gamma, red)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("red", ["none", "mean", "sum"])
def test_generalized_box_iou_loss(red: str) -> None:
    tv = _tv()
    rng = np.random.default_rng(5)
    a, b = _boxes(rng, 6), _boxes(rng, 6)
    a[0] = b[0]
    ours = ops.generalized_box_iou_loss(lucid.tensor(a), lucid.tensor(b), red)
    ref = tv.generalized_box_iou_loss(torch.from_numpy(a), torch.from_numpy(b), red)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("sampling_ratio", "aligned", "scale"),
    [(-1, False, 1.0), (2, False, 0.5), (-1, True, 0.5), (3, True, 1.0)],
)
def test_roi_align_matches_reference_values_and_grads(
    sampling_ratio: int, aligned: bool, scale: float
) -> None:
    tv = _tv()
    from torchvision.ops.roi_align import _roi_align  # noqa: PLC0415

    ref_fn = getattr(_roi_align, "__wrapped__", _roi_align)  # skip its torch.compile wrapper
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 3, 9, 11))
    # Boxes inside the map: torchvision's Python fallback omits the kernel's outside-map zeroing.
    rois = np.array(
        [
            [0, 1.2, 0.7, 7.9, 6.3],
            [1, 0.0, 0.0, 10.0, 8.0],
            [1, 3.3, 2.1, 4.0, 2.6],
            [0, 2, 3, 2, 3],
        ]
    )
    if aligned:
        # A zero-size aligned RoI has no samples: the kernel gives 0, the Python fallback's
        # gradient 0/0 (NaN), so that case is checked by hand in test_data_ops.py.
        rois = rois[:3]
    rois[:, 1:] /= scale
    tx = torch.from_numpy(x).requires_grad_(True)
    ref = ref_fn(tx, torch.from_numpy(rois), scale, 3, 4, sampling_ratio, aligned)
    g = rng.normal(size=tuple(ref.shape))
    ref.backward(torch.from_numpy(g))
    lx = lucid.tensor(x, requires_grad=True)
    ours = ops.roi_align(lx, lucid.tensor(rois), (3, 4), scale, sampling_ratio, aligned)
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    ours.backward(lucid.tensor(g))
    assert lx.grad is not None and tx.grad is not None
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    # the public entry point with a list of per-image boxes
    per_image = [torch.from_numpy(rois[rois[:, 0] == i, 1:]) for i in range(2)]
    per_image = [p for p in per_image if p.shape[0]]
    order = np.argsort(rois[:, 0], kind="stable")
    ref_list = ref_fn(
        tx, tv._utils.convert_boxes_to_roi_format(per_image), scale, 3, 4, sampling_ratio, aligned
    )
    ours_list = ops.roi_align(
        lx, [lucid.tensor(p.numpy()) for p in per_image], (3, 4), scale, sampling_ratio, aligned
    )
    np.testing.assert_allclose(
        ours_list.detach().numpy(), ref_list.detach().numpy(), rtol=1e-10, atol=1e-12
    )
    assert order.shape[0] == ours_list.shape[0]


def test_compiled_ops_when_available() -> None:
    tv = _tv()
    import torchvision  # noqa: PLC0415

    if not torchvision.extension._has_ops():
        pytest.skip("torchvision's compiled ops did not load")
    rng = np.random.default_rng(7)
    b = _boxes(rng, 40).astype(np.float32)
    s = rng.random(40).astype(np.float32)
    np.testing.assert_array_equal(
        ops.nms(lucid.tensor(b), lucid.tensor(s), 0.3).numpy(),
        tv.nms(torch.from_numpy(b), torch.from_numpy(s), 0.3).numpy(),
    )
    x = rng.normal(size=(1, 2, 8, 8)).astype(np.float32)
    rois = np.array([[0, 0.5, 0.5, 6.2, 5.1], [0, -3, -2, 12, 9]], dtype=np.float32)
    np.testing.assert_allclose(
        ops.roi_pool(lucid.tensor(x), lucid.tensor(rois), 3, 1.0).numpy(),
        tv.roi_pool(torch.from_numpy(x), torch.from_numpy(rois), 3, 1.0).numpy(),
        rtol=1e-6,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        ops.roi_align(lucid.tensor(x), lucid.tensor(rois), 3, 1.0, -1, True).numpy(),
        tv.roi_align(torch.from_numpy(x), torch.from_numpy(rois), 3, 1.0, -1, True).numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
