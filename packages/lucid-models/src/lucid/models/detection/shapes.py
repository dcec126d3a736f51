"""A synthetic detection dataset of drawn shapes with known boxes, and mean average precision.

There is no COCO or VOC on these machines, so detectors (YOLO, DETR, ...) are trained on
images drawn here: each image holds 1 to ``max_objects`` filled squares, discs and triangles
of random colour, size and place on a noisy background; their boxes are known exactly. The
items have torchvision's detection target layout (``{"boxes": (N, 4) xyxy float32 in pixels,
"labels": (N,) int64}``, labels start at 1; 0 is the background class).

:func:`mean_average_precision` is COCO's AP at given IoU thresholds (101-point interpolated
precision, detections of a class ranked by score over the whole dataset, each ground-truth box
matched at most once) — the ``map_50`` / ``map`` a torchmetrics ``MeanAveragePrecision``
reports for the same boxes.

Example:
    >>> from lucid.models.detection.shapes import SyntheticShapes, mean_average_precision
    >>> ds = SyntheticShapes(8, image_size=64, seed=0)
    >>> image, target = ds[0]
    >>> image.shape, target["boxes"].shape[1]
    ((3, 64, 64), 4)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

__all__ = ["SHAPE_CLASSES", "SyntheticShapes", "evaluate_detector", "mean_average_precision"]

SHAPE_CLASSES = ("__background__", "square", "disc", "triangle")


def _draw(
    rng: np.random.Generator, size: int, max_objects: int, min_frac: float, max_frac: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    img = rng.uniform(0.0, 0.15, size=(3, size, size)).astype(np.float32)
    n = int(rng.integers(1, max_objects + 1))
    boxes: list[list[float]] = []
    labels: list[int] = []
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) + 0.5
    for _ in range(n):
        for _attempt in range(20):
            side = float(rng.uniform(min_frac, max_frac) * size)
            x0 = float(rng.uniform(0, size - side))
            y0 = float(rng.uniform(0, size - side))
            box = [x0, y0, x0 + side, y0 + side]
            # keep objects mostly apart so every box is visible
            if all(_iou1(box, b) < 0.3 for b in boxes):
                break
        else:
            continue
        label = int(rng.integers(1, len(SHAPE_CLASSES)))
        colour = rng.uniform(0.4, 1.0, size=3).astype(np.float32)
        cx, cy, r = x0 + side / 2, y0 + side / 2, side / 2
        if label == 1:
            mask = (xx >= x0) & (xx < x0 + side) & (yy >= y0) & (yy < y0 + side)
        elif label == 2:
            mask = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
        else:  # an upward triangle filling the box: apex at the top centre
            t = (yy - y0) / side
            mask = (yy >= y0) & (yy < y0 + side) & (np.abs(xx - cx) <= t * r)
        img[:, mask] = colour[:, None]
        boxes.append(box)
        labels.append(label)
    return (
        img,
        np.asarray(boxes, dtype=np.float32).reshape(-1, 4),
        np.asarray(labels, dtype=np.int64),
    )


def _iou1(a: Sequence[float], b: Sequence[float]) -> float:
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


class SyntheticShapes:
    """``num_images`` drawn images of squares, discs and triangles with their exact boxes.

    Args:
        num_images: how many images (each is drawn from ``seed`` and its index, so item ``i``
            is the same whichever order the items are read in, and across worker processes).
        image_size: the side of the square images, in pixels.
        max_objects: at most this many shapes per image (at least one).
        min_frac: the smallest shape side, as a fraction of ``image_size``.
        max_frac: the largest shape side, as a fraction of ``image_size``.
        seed: the seed of the drawing.
        transform: applied to ``(image, target)`` pairs when given (torchvision's
            ``transforms=`` of detection datasets).

    Items are ``(image, target)``: a float32 ``(3, H, W)`` tensor in [0, 1] and
    ``{"boxes": (N, 4) float32 xyxy in pixels, "labels": (N,) int64 in 1..3}``.
    """

    classes = SHAPE_CLASSES

    def __init__(
        self,
        num_images: int,
        image_size: int = 64,
        max_objects: int = 3,
        min_frac: float = 0.2,
        max_frac: float = 0.45,
        seed: int = 0,
        transform: Any = None,
    ) -> None:
        if num_images < 0 or image_size < 8 or max_objects < 1:
            raise ValueError(
                f"SyntheticShapes expects num_images >= 0, image_size >= 8 and max_objects >= 1, "
                f"got {num_images}, {image_size} and {max_objects}"
            )
        if not 0 < min_frac <= max_frac < 1:
            raise ValueError(
                f"SyntheticShapes expects 0 < min_frac <= max_frac < 1, got {min_frac} and "
                f"{max_frac}"
            )
        self.num_images = num_images
        self.image_size = image_size
        self.max_objects = max_objects
        self.min_frac = min_frac
        self.max_frac = max_frac
        self.seed = seed
        self.transform = transform

    def __len__(self) -> int:
        return self.num_images

    def __getitem__(self, index: int) -> tuple[Tensor, dict[str, Tensor]]:
        if not -self.num_images <= index < self.num_images:
            raise IndexError(f"index {index} out of range for {self.num_images} images")
        index %= self.num_images
        rng = np.random.default_rng([self.seed, index])
        img, boxes, labels = _draw(
            rng, self.image_size, self.max_objects, self.min_frac, self.max_frac
        )
        item = (lucid.tensor(img), {"boxes": lucid.tensor(boxes), "labels": lucid.tensor(labels)})
        if self.transform is not None:
            return self.transform(*item)  # type: ignore[no-any-return]
        return item

    def batch(self, start: int, size: int) -> tuple[Tensor, list[dict[str, Tensor]]]:
        """Items ``start`` .. ``start + size - 1`` (wrapping around) as one ``(size, 3, H, W)``
        image tensor and the list of their targets."""
        items = [self[(start + i) % len(self)] for i in range(size)]
        return lucid.stack([im for im, _ in items]), [t for _, t in items]


def evaluate_detector(predict: Any, ds: SyntheticShapes, batch_size: int = 50) -> dict[str, float]:
    """mAP@50, COCO's mAP@[.5:.95] and the mean number of detections of ``predict(images)``
    (a batch of images -> torchvision-format detections, one dict per image) over ``ds``."""
    preds: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    for start in range(0, len(ds), batch_size):
        x, t = ds.batch(start, min(batch_size, len(ds) - start))
        preds += predict(x)
        targets += t
    thresholds = [0.5 + 0.05 * i for i in range(10)]
    return {
        "map_50": mean_average_precision(preds, targets, (0.5,)),
        "map_50_95": mean_average_precision(preds, targets, thresholds),
        "detections_per_image": float(np.mean([_as_np(p["boxes"]).shape[0] for p in preds])),
    }


def _as_np(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x)


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def _average_precision(
    preds: Sequence[dict[str, Any]], targets: Sequence[dict[str, Any]], label: int, thr: float
) -> float | None:
    n_gt = 0
    dets: list[tuple[float, int, int]] = []  # (score, image, det index)
    gts: list[np.ndarray] = []
    pboxes: list[np.ndarray] = []
    for i, (p, t) in enumerate(zip(preds, targets)):
        tl = _as_np(t["labels"]).reshape(-1)
        gb = _as_np(t["boxes"]).reshape(-1, 4)[tl == label]
        gts.append(gb)
        n_gt += len(gb)
        pl = _as_np(p["labels"]).reshape(-1)
        keep = pl == label
        pb = _as_np(p["boxes"]).reshape(-1, 4)[keep]
        ps = _as_np(p["scores"]).reshape(-1)[keep]
        pboxes.append(pb)
        dets.extend((float(s), i, j) for j, s in enumerate(ps))
    if n_gt == 0:
        return None  # a class absent from the ground truth does not count (COCO's -1)
    if not dets:
        return 0.0
    dets.sort(key=lambda d: -d[0])  # stable: ties keep image order, as COCO's mergesort
    used = [np.zeros(len(g), dtype=bool) for g in gts]
    tp = np.zeros(len(dets))
    for k, (_, i, j) in enumerate(dets):
        g = gts[i]
        if len(g) == 0:
            continue
        ious = _iou_matrix(pboxes[i][j : j + 1], g)[0]
        ious[used[i]] = -1.0
        best = int(np.argmax(ious))
        if ious[best] >= thr:
            used[i][best] = True
            tp[k] = 1.0
    ctp = np.cumsum(tp)
    cfp = np.cumsum(1.0 - tp)
    recall = ctp / n_gt
    precision = ctp / np.maximum(ctp + cfp, np.finfo(np.float64).eps)
    # COCO: precision made monotone from the right, sampled at 101 recall points
    for k in range(len(precision) - 1, 0, -1):
        precision[k - 1] = max(precision[k - 1], precision[k])
    points = np.linspace(0.0, 1.0, 101)
    idx = np.searchsorted(recall, points, side="left")
    sampled = np.where(idx < len(precision), precision[np.minimum(idx, len(precision) - 1)], 0.0)
    return float(sampled.mean())


def mean_average_precision(
    preds: Sequence[dict[str, Any]],
    targets: Sequence[dict[str, Any]],
    iou_thresholds: Sequence[float] = (0.5,),
) -> float:
    """COCO mean average precision of ``preds`` against ``targets``, one dict per image.

    Args:
        preds: ``{"boxes": (N, 4) xyxy, "scores": (N,), "labels": (N,)}`` per image
            (Tensors or arrays), as torchvision's detectors return in eval mode.
        targets: ``{"boxes": (M, 4) xyxy, "labels": (M,)}`` per image.
        iou_thresholds: the IoU at which a detection matches a box; AP is averaged over them
            (``(0.5,)`` gives mAP@50; ``numpy.linspace(0.5, 0.95, 10)`` COCO's mAP).

    Returns:
        AP averaged over the classes present in ``targets`` and over the thresholds, in
        [0, 1]; 0.0 when no image has a ground-truth box.
    """
    if len(preds) != len(targets):
        raise ValueError(
            f"mean_average_precision expects one prediction per target, got {len(preds)} "
            f"predictions and {len(targets)} targets"
        )
    labels = sorted({int(v) for t in targets for v in _as_np(t["labels"]).reshape(-1).tolist()})
    aps = [
        ap
        for thr in iou_thresholds
        for label in labels
        if (ap := _average_precision(preds, targets, label, float(thr))) is not None
    ]
    return float(np.mean(aps)) if aps else 0.0
