"""``lucid.data.ops`` (torchvision.ops): hand cases, a NumPy NMS reference, finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.data import ops


def _boxes(rng: np.random.Generator, n: int, scale: float = 10.0) -> np.ndarray:
    xy = rng.random((n, 2)) * scale
    wh = rng.random((n, 2)) * scale / 2 + 0.1
    return np.concatenate([xy, xy + wh], axis=1)


def _nms_ref(boxes: np.ndarray, scores: np.ndarray, thr: float) -> list[int]:
    # The textbook loop on a full IoU matrix, independent of the library's vectorised one.
    n = len(scores)
    iou = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            w = max(0.0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]))
            h = max(0.0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            a_i = (boxes[i, 2] - boxes[i, 0]) * (boxes[i, 3] - boxes[i, 1])
            a_j = (boxes[j, 2] - boxes[j, 0]) * (boxes[j, 3] - boxes[j, 1])
            iou[i, j] = w * h / (a_i + a_j - w * h)
    remaining = sorted(range(n), key=lambda i: -scores[i])
    keep: list[int] = []
    while remaining:
        i = remaining.pop(0)
        keep.append(i)
        remaining = [j for j in remaining if iou[i, j] <= thr]
    return keep


def test_box_iou_hand_case() -> None:
    a = lucid.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 1.0, 1.0]])
    b = lucid.tensor([[1.0, 1.0, 3.0, 3.0], [5.0, 5.0, 6.0, 6.0]])
    np.testing.assert_allclose(
        ops.box_iou(a, b).numpy(), [[1 / 7, 0.0], [0.0, 0.0]], rtol=1e-6, atol=1e-7
    )
    # GIoU of disjoint unit boxes: 0 - (enclosing 36 - union 2) / 36
    np.testing.assert_allclose(
        ops.generalized_box_iou(a[1:], b[1:]).numpy(), [[-34 / 36]], rtol=1e-6, atol=1e-7
    )
    np.testing.assert_allclose(ops.box_area(a).numpy(), [4.0, 1.0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("thr", [0.0, 0.3, 0.5, 0.9])
def test_nms_matches_numpy_reference(thr: float) -> None:
    rng = np.random.default_rng(thr.hex().__hash__() % 2**32)
    b = _boxes(rng, 60)
    s = rng.random(60)
    keep = ops.nms(lucid.tensor(b), lucid.tensor(s), thr)
    assert keep.dtype == lucid.int64
    assert keep.numpy().tolist() == _nms_ref(b, s, thr)


def test_nms_hand_case_and_empty() -> None:
    b = lucid.tensor([[0.0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 9]])
    s = lucid.tensor([0.9, 0.8, 0.7, 0.95])
    assert ops.nms(b, s, 0.5).numpy().tolist() == [3, 2]
    assert ops.nms(b, s, 0.95).numpy().tolist() == [3, 0, 1, 2]
    empty = ops.nms(lucid.zeros((0, 4)), lucid.zeros((0,)), 0.5)
    assert tuple(empty.shape) == (0,) and empty.dtype == lucid.int64


def test_batched_nms_is_per_class() -> None:
    rng = np.random.default_rng(3)
    b = _boxes(rng, 40)
    s = rng.random(40)
    idx = rng.integers(0, 3, 40)
    keep = ops.batched_nms(lucid.tensor(b), lucid.tensor(s), lucid.tensor(idx), 0.4).numpy()
    expected: list[int] = []
    for c in range(3):
        cur = np.nonzero(idx == c)[0]
        expected += [int(cur[k]) for k in _nms_ref(b[cur], s[cur], 0.4)]
    assert sorted(keep.tolist()) == sorted(expected)
    assert np.all(np.diff(s[keep]) <= 0)


def test_roi_align_hand_cases() -> None:
    x = lucid.tensor(np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4))
    # One bin, one sample at the box centre (1.5, 1.5): the mean of the four centre pixels.
    out = ops.roi_align(x, lucid.tensor([[0.0, 1.0, 1.0, 2.0, 2.0]]), 1, 1.0, 1, False)
    np.testing.assert_allclose(out.numpy(), [[[[7.5]]]], rtol=1e-6, atol=1e-6)
    # aligned=True shifts by half a pixel: the same box samples at (1.0, 1.0) -> pixel 5.
    out = ops.roi_align(x, lucid.tensor([[0.0, 1.0, 1.0, 2.0, 2.0]]), 1, 1.0, 1, True)
    np.testing.assert_allclose(out.numpy(), [[[[5.0]]]], rtol=1e-6, atol=1e-6)
    # A zero-size aligned RoI has no samples: 0, and a zero gradient (torchvision's kernel).
    xg = lucid.tensor(np.arange(16.0).reshape(1, 1, 4, 4), requires_grad=True)
    out = ops.roi_align(
        xg, [lucid.tensor([[2.0, 2.0, 2.0, 2.0]], dtype=lucid.float64)], 2, 1.0, -1, True
    )
    out.sum().backward()
    assert xg.grad is not None
    np.testing.assert_array_equal(out.detach().numpy(), np.zeros((1, 1, 2, 2)))
    np.testing.assert_array_equal(xg.grad.numpy(), np.zeros((1, 1, 4, 4)))
    # Samples more than a pixel outside the map count as 0.
    out = ops.roi_align(x, lucid.tensor([[0.0, -10.0, -10.0, -4.0, -4.0]]), 1, 1.0, 1, False)
    np.testing.assert_allclose(out.numpy(), [[[[0.0]]]], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("sampling_ratio", "aligned"), [(-1, False), (2, True)])
def test_roi_align_gradcheck(sampling_ratio: int, aligned: bool) -> None:
    rng = np.random.default_rng(4)
    x = lucid.tensor(rng.normal(size=(2, 2, 5, 6)), requires_grad=True)
    coords = lucid.tensor(
        [[0.7, 1.2, 4.1, 3.9], [1.3, 0.4, 5.2, 4.6]], dtype=lucid.float64, requires_grad=True
    )
    batch = lucid.tensor([[0.0], [1.0]], dtype=lucid.float64)

    def f(inp: lucid.Tensor, c: lucid.Tensor) -> lucid.Tensor:
        rois = lucid.cat([batch, c], dim=1)
        return ops.roi_align(inp, rois, (2, 3), 1.0, sampling_ratio, aligned)

    assert gradcheck(f, (x, coords), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_roi_pool_hand_case_and_grad() -> None:
    x = lucid.tensor(np.arange(16.0, dtype=np.float32).reshape(1, 1, 4, 4), requires_grad=True)
    out = ops.roi_pool(x, lucid.tensor([[0.0, 0.0, 0.0, 3.0, 3.0]]), 2)
    np.testing.assert_array_equal(out.detach().numpy(), [[[[5.0, 7.0], [13.0, 15.0]]]])
    out.sum().backward()
    assert x.grad is not None
    g = np.zeros(16)
    g[[5, 7, 13, 15]] = 1
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), g)
    rng = np.random.default_rng(5)
    xr = lucid.tensor(rng.normal(size=(1, 2, 6, 6)), requires_grad=True)

    def f(inp: lucid.Tensor) -> lucid.Tensor:
        return ops.roi_pool(inp, [lucid.tensor([[0.4, 1.0, 4.6, 5.2]], dtype=lucid.float64)], 2)

    assert gradcheck(f, (xr,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_losses_and_iou_gradcheck() -> None:
    rng = np.random.default_rng(6)
    a = lucid.tensor(_boxes(rng, 3), requires_grad=True)
    b = lucid.tensor(_boxes(rng, 3), requires_grad=True)
    assert gradcheck(lambda p, q: ops.generalized_box_iou_loss(p, q, "sum"), (a, b))
    assert gradcheck(lambda p, q: ops.distance_box_iou(p, q), (a, b))
    assert gradcheck(lambda p, q: ops.box_iou(p, q, fmt="cxcywh"), (a, b))
    x = lucid.tensor(rng.normal(size=(4,)) * 2, requires_grad=True)
    t = lucid.tensor([0.0, 1.0, 1.0, 0.0])
    assert gradcheck(lambda z: ops.sigmoid_focal_loss(z, t, reduction="mean"), (x,))
    # focal loss with gamma 0 and alpha -1 is the plain logistic loss
    xv, tv = x.detach().numpy(), t.numpy()
    bce = -(tv * np.log(1 / (1 + np.exp(-xv))) + (1 - tv) * np.log(1 - 1 / (1 + np.exp(-xv))))
    np.testing.assert_allclose(
        ops.sigmoid_focal_loss(x.detach(), t, -1, 0).numpy(), bce, rtol=1e-10, atol=1e-12
    )


def test_box_convert_round_trip_and_masks() -> None:
    b = lucid.tensor(_boxes(np.random.default_rng(7), 4))
    for fmt in ("xywh", "cxcywh"):
        back = ops.box_convert(ops.box_convert(b, "xyxy", fmt), fmt, "xyxy")
        np.testing.assert_allclose(back.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    m = np.zeros((2, 5, 6), dtype=bool)
    m[0, 1:3, 2:5] = True
    boxes = ops.masks_to_boxes(lucid.tensor(m))
    assert boxes.dtype == lucid.float32
    np.testing.assert_array_equal(boxes.numpy(), [[2, 1, 4, 2], [0, 0, 0, 0]])
    assert tuple(ops.masks_to_boxes(lucid.zeros((0, 3, 3))).shape) == (0, 4)


def test_errors() -> None:
    b = lucid.zeros((3, 4))
    with pytest.raises(ValueError, match="Unsupported Bounding Box Conversions"):
        ops.box_convert(b, "xyxy", "xyxyxyxy")
    with pytest.raises(ValueError, match="Unsupported format 'xywhr'"):
        ops.box_iou(b, b, fmt="xywhr")
    with pytest.raises(ValueError, match=r"shape \[\.\.\., 4\], got shape \(3, 5\)"):
        ops.box_area(lucid.zeros((3, 5)))
    with pytest.raises(ValueError, match="scores should be a 1d tensor of 3"):
        ops.nms(b, lucid.zeros((2,)), 0.5)
    with pytest.raises(ValueError, match="Invalid alpha value"):
        ops.sigmoid_focal_loss(b, b, alpha=2.0)
    with pytest.raises(ValueError, match="Invalid Value for arg 'reduction'"):
        ops.generalized_box_iou_loss(b, b, reduction="avg")
    with pytest.raises(ValueError, match=r"Tensor\[K, 5\]"):
        ops.roi_align(lucid.zeros((1, 1, 4, 4)), lucid.zeros((2, 4)), 2)
    with pytest.raises(ValueError, match=r"List\[Tensor\[L, 4\]\]"):
        ops.roi_pool(lucid.zeros((1, 1, 4, 4)), [lucid.zeros((2, 5))], 2)
    with pytest.raises(TypeError, match="input's dtype lucid.float64, got lucid.float32"):
        ops.roi_align(lucid.zeros((1, 1, 4, 4), dtype=lucid.float64), lucid.zeros((2, 5)), 2)
    with pytest.raises(ValueError, match="4d tensor"):
        ops.roi_align(lucid.zeros((1, 4, 4)), lucid.zeros((2, 5)), 2)
    with pytest.raises(ValueError, match=r"masks of shape \[N, H, W\]"):
        ops.masks_to_boxes(lucid.zeros((4, 4)))
