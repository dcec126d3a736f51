"""The synthetic shapes dataset and COCO mean average precision (lucid.models.detection.shapes)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.models.detection.shapes import (
    SyntheticShapes,
    evaluate_detector,
    mean_average_precision,
)


def test_items_are_reproducible_and_boxes_cover_drawn_pixels() -> None:
    ds = SyntheticShapes(6, image_size=48, max_objects=3, seed=3)
    assert len(ds) == 6
    for i in range(6):
        img, t = ds[i]
        img2, t2 = ds[i]
        np.testing.assert_array_equal(img.numpy(), img2.numpy())
        assert img.shape == (3, 48, 48) and img.dtype == lucid.float32
        assert t["boxes"].dtype == lucid.float32 and t["labels"].dtype == lucid.int64
        boxes = t["boxes"].numpy()
        assert 1 <= len(boxes) <= 3 and set(t["labels"].numpy().tolist()) <= {1, 2, 3}
        # every box holds bright (drawn) pixels; the background is below 0.15
        for x0, y0, x1, y1 in boxes:
            patch = img.numpy()[:, int(y0) : int(np.ceil(y1)), int(x0) : int(np.ceil(x1))]
            assert patch.max() >= 0.4
    assert not np.array_equal(ds[0][0].numpy(), SyntheticShapes(6, 48, seed=4)[0][0].numpy())
    with pytest.raises(IndexError, match="out of range"):
        ds[6]
    with pytest.raises(ValueError, match="image_size >= 8"):
        SyntheticShapes(2, image_size=4)


def _t(boxes: list[list[float]], labels: list[int]) -> dict[str, lucid.Tensor]:
    return {"boxes": lucid.tensor(boxes).reshape(-1, 4), "labels": lucid.tensor(labels)}


def test_map_perfect_and_empty_predictions() -> None:
    targets = [_t([[0, 0, 10, 10], [20, 20, 30, 30]], [1, 2]), _t([[5, 5, 15, 15]], [1])]
    perfect = [{**t, "scores": lucid.ones(len(t["labels"]))} for t in targets]
    assert mean_average_precision(perfect, targets) == pytest.approx(1.0, rel=1e-12, abs=1e-12)
    empty = [
        {"boxes": lucid.zeros(0, 4), "scores": lucid.zeros(0), "labels": lucid.zeros(0)}
        for _ in targets
    ]
    assert mean_average_precision(empty, targets) == 0.0
    with pytest.raises(ValueError, match="one prediction per target"):
        mean_average_precision(perfect[:1], targets)


def test_map_counts_rank_duplicates_and_iou_threshold() -> None:
    # one class, two ground-truth boxes; detections: a hit (0.9), a duplicate of it (0.8,
    # a false positive since the box is used), the second box (0.7)
    targets = [_t([[0, 0, 10, 10], [20, 20, 30, 30]], [1, 1])]
    preds = [
        {
            "boxes": lucid.tensor([[0, 0, 10, 10], [0, 0, 10, 10], [20, 20, 30, 30]]),
            "scores": lucid.tensor([0.9, 0.8, 0.7]),
            "labels": lucid.tensor([1, 1, 1]),
        }
    ]
    # precision at recall 0.5 is 1, at recall 1.0 is 2/3 -> 101-point mean:
    # recall points 0..0.5 (51 points) -> 1, 0.51..1.0 (50 points) -> 2/3
    expected = (51 * 1.0 + 50 * (2 / 3)) / 101
    got = mean_average_precision(preds, targets)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # shifted by 4 px: IoU 36/164 ~ 0.22 -> no match at 0.5, a match at 0.2
    shifted = [
        {
            "boxes": lucid.tensor([[4.0, 4.0, 14.0, 14.0]]),
            "scores": lucid.tensor([1.0]),
            "labels": lucid.tensor([1]),
        }
    ]
    one = [_t([[0, 0, 10, 10]], [1])]
    assert mean_average_precision(shifted, one) == 0.0
    assert mean_average_precision(shifted, one, iou_thresholds=(0.2,)) == pytest.approx(
        1.0, rel=1e-12, abs=1e-12
    )


def test_batch_and_evaluate_detector_score_a_perfect_predictor() -> None:
    ds = SyntheticShapes(5, image_size=32, seed=1)
    images, targets = ds.batch(3, 4)  # wraps around: items 3, 4, 0, 1
    assert images.shape == (4, 3, 32, 32) and len(targets) == 4
    np.testing.assert_array_equal(images[2].numpy(), ds[0][0].numpy())
    seen: list[dict[str, lucid.Tensor]] = []

    def oracle(x: lucid.Tensor) -> list[dict[str, lucid.Tensor]]:
        out = [ds[len(seen) + i][1] for i in range(x.shape[0])]
        seen.extend(out)
        return [{**t, "scores": lucid.ones(len(t["labels"]))} for t in out]

    scores = evaluate_detector(oracle, ds, batch_size=2)
    assert scores["map_50"] == pytest.approx(1.0, rel=1e-12, abs=1e-12)
    assert scores["map_50_95"] == pytest.approx(1.0, rel=1e-12, abs=1e-12)
    expected = np.mean([len(ds[i][1]["labels"]) for i in range(5)])
    assert scores["detections_per_image"] == pytest.approx(expected, rel=1e-12, abs=1e-12)
