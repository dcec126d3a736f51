"""Optimal one-to-one assignment (``linear_sum_assignment``) and DETR's Hungarian matcher.

:func:`linear_sum_assignment` is SciPy's function of the same name, written in NumPy (SciPy is
no dependency of lucid): the shortest-augmenting-path form of the Hungarian algorithm (Kuhn
1955, Munkres 1957; the potentials of Jonker and Volgenant 1987), O(n^2 m) for an ``n x m``
cost matrix. :class:`HungarianMatcher` is the matcher of DETR (Carion et al., ECCV 2020): each
image's queries are matched to its ground-truth boxes at the least total cost of
``class_cost * -p(class) + bbox_cost * L1(cxcywh) + giou_cost * -GIoU``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import Tensor

__all__ = ["HungarianMatcher", "linear_sum_assignment"]


def _assign_rows(cost: np.ndarray) -> np.ndarray:
    """``cost`` ``(n, m)`` with ``n <= m``: the column of each row at the least total cost."""
    n, m = cost.shape
    inf = np.inf
    u = np.zeros(n + 1)  # row potentials (1-based; 0 is the virtual start)
    v = np.zeros(m + 1)  # column potentials
    p = np.zeros(m + 1, dtype=np.int64)  # p[j]: the row assigned to column j (0: none)
    way = np.zeros(m + 1, dtype=np.int64)
    for i in range(1, n + 1):
        p[0] = i
        j0 = 0
        minv = np.full(m + 1, inf)
        used = np.zeros(m + 1, dtype=bool)
        while True:
            used[j0] = True
            i0 = p[j0]
            # reduced costs of the free columns from row i0, vectorised over the columns
            free = ~used[1:]
            cur = cost[i0 - 1] - u[i0] - v[1:]
            better = free & (cur < minv[1:])
            minv[1:][better] = cur[better]
            way[1:][better] = j0
            cand = np.where(free, minv[1:], inf)
            j1 = int(np.argmin(cand)) + 1
            delta = cand[j1 - 1]
            if not np.isfinite(delta):
                raise ValueError("linear_sum_assignment: cost matrix is infeasible")
            used_idx = np.nonzero(used)[0]
            u[p[used_idx]] += delta
            v[used_idx] -= delta
            minv[1:][free] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:  # augment along the path back to the virtual column
            j1 = int(way[j0])
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    col_of_row = np.empty(n, dtype=np.int64)
    for j in range(1, m + 1):
        if p[j] != 0:
            col_of_row[p[j] - 1] = j - 1
    return col_of_row


def linear_sum_assignment(
    cost_matrix: Any, maximize: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Solve the linear sum assignment problem (SciPy's ``linear_sum_assignment``).

    Args:
        cost_matrix: a 2-D array (or Tensor) of costs; rectangular matrices assign every row
            (or every column, whichever are fewer) once.
        maximize: find the assignment of largest total instead.

    Returns:
        ``(row_ind, col_ind)``: int64 arrays, ``row_ind`` increasing, such that
        ``cost_matrix[row_ind, col_ind].sum()`` is the least possible total.

    >>> linear_sum_assignment([[4, 1, 3], [2, 0, 5], [3, 2, 2]])
    (array([0, 1, 2]), array([1, 0, 2]))
    """
    raw = cost_matrix.numpy() if isinstance(cost_matrix, Tensor) else cost_matrix
    cost = np.asarray(raw, dtype=np.float64)
    if cost.ndim != 2:
        raise ValueError(f"expected a matrix (2-D array), got a {cost.ndim}-D array")
    if np.isnan(cost).any() or np.isneginf(cost).any() or (maximize and np.isposinf(cost).any()):
        raise ValueError("matrix contains invalid numeric entries")
    if maximize:
        cost = -cost
    transposed = cost.shape[0] > cost.shape[1]
    if transposed:
        cost = cost.T
    if cost.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    finite = cost[np.isfinite(cost)]
    # +inf entries (forbidden pairs) become a cost larger than any feasible total
    big = (np.abs(finite).sum() + 1.0) * 2 if finite.size else 1.0
    cols = _assign_rows(np.where(np.isposinf(cost), big, cost))
    if np.isposinf(cost[np.arange(cost.shape[0]), cols]).any():
        raise ValueError("cost matrix is infeasible")
    rows = np.arange(cost.shape[0], dtype=np.int64)
    if transposed:
        order = np.argsort(cols)
        return cols[order], rows[order]
    return rows, cols


class HungarianMatcher:
    """DETR's bipartite matcher between the predictions and the targets of each image.

    Args:
        class_cost: weight of ``-p(target class)`` (the softmax over ``num_classes + 1``).
        bbox_cost: weight of the L1 distance of the normalised ``(cx, cy, w, h)`` boxes.
        giou_cost: weight of ``-GIoU`` of the boxes (as ``xyxy``).

    ``matcher(logits, pred_boxes, targets)``: ``logits`` ``(B, Q, K + 1)``, ``pred_boxes``
    ``(B, Q, 4)`` (cxcywh in [0, 1]), ``targets`` one ``{"class_labels": (M,), "boxes":
    (M, 4) cxcywh}`` dict per image; returns one ``(query_idx, target_idx)`` pair of int64
    arrays per image (``min(Q, M)`` long). No gradient flows through the matching.
    """

    def __init__(self, class_cost: float = 1.0, bbox_cost: float = 5.0,
                 giou_cost: float = 2.0) -> None:  # fmt: skip
        if class_cost == 0 and bbox_cost == 0 and giou_cost == 0:
            raise ValueError("All costs of the Matcher can't be 0")
        self.class_cost, self.bbox_cost, self.giou_cost = class_cost, bbox_cost, giou_cost

    def __call__(
        self, logits: Tensor, pred_boxes: Tensor, targets: list[dict[str, Tensor]]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        # the costs in NumPy: no gradient flows here, and a batch has B small problems
        lg = logits.detach().numpy().astype(np.float64)
        probs = np.exp(lg - lg.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        pboxes = pred_boxes.detach().numpy().astype(np.float64)
        out: list[tuple[np.ndarray, np.ndarray]] = []
        for b, tgt in enumerate(targets):
            labels = np.asarray(tgt["class_labels"].numpy(), dtype=np.int64).reshape(-1)
            boxes = np.asarray(tgt["boxes"].numpy(), dtype=np.float64).reshape(-1, 4)
            if labels.shape[0] == 0:
                out.append((np.zeros(0, np.int64), np.zeros(0, np.int64)))
                continue
            pb = pboxes[b]
            cost_class = -probs[b][:, labels]
            cost_bbox = np.abs(pb[:, None, :] - boxes[None, :, :]).sum(-1)
            cost_giou = -_giou(_xyxy(pb), _xyxy(boxes))
            cost = (self.bbox_cost * cost_bbox + self.class_cost * cost_class
                    + self.giou_cost * cost_giou)  # fmt: skip
            out.append(linear_sum_assignment(cost))
        return out


def _xyxy(b: np.ndarray) -> np.ndarray:
    cx, cy, w, h = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], axis=1)


def _giou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torchvision's ``generalized_box_iou`` of two sets of xyxy boxes, in NumPy."""
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    union = area_a[:, None] + area_b[None, :] - inter
    iou = inter / union
    lti = np.minimum(a[:, None, :2], b[None, :, :2])
    rbi = np.maximum(a[:, None, 2:], b[None, :, 2:])
    whi = np.clip(rbi - lti, 0, None)
    area = whi[..., 0] * whi[..., 1]
    return iou - (area - union) / area  # type: ignore[no-any-return]
