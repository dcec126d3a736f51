"""``lucid.data.ops``: torchvision's detection operators (``torchvision.ops``) for lucid.

Box geometry (``box_area``, ``box_iou``, ``generalized_box_iou``, ``distance_box_iou``,
``complete_box_iou``, ``box_convert``, ``clip_boxes_to_image``, ``remove_small_boxes``,
``masks_to_boxes``), suppression (``nms``, ``batched_nms``), losses (``sigmoid_focal_loss``,
``generalized_box_iou_loss``) and region pooling (``roi_align``, ``roi_pool``), with
torchvision 0.28's signatures and semantics. Everything is built from lucid-core tensor ops,
so gradients flow through all of them (``nms`` and the index-valued ops return indices).

torchvision's ``ops`` layers (``FeaturePyramidNetwork``, ``MultiScaleRoIAlign``, ``RoIAlign``,
``RoIPool``, ``Conv2dNormActivation``, ``SqueezeExcitation``, ``StochasticDepth``, ``MLP``...)
need lucid-nn, which lucid-data does not depend on: they live in ``lucid.models.ops``
(lucid-models) and are looked up there, on first use, under this module's names.

Example:
    >>> import lucid
    >>> from lucid.data import ops
    >>> a = lucid.tensor([[0.0, 0.0, 2.0, 2.0]])
    >>> ops.box_iou(a, lucid.tensor([[1.0, 1.0, 3.0, 3.0]]))
    tensor([[0.1429]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor

__all__ = [
    "batched_nms",
    "box_area",
    "box_convert",
    "box_iou",
    "clip_boxes_to_image",
    "complete_box_iou",
    "distance_box_iou",
    "generalized_box_iou",
    "generalized_box_iou_loss",
    "masks_to_boxes",
    "nms",
    "remove_small_boxes",
    "roi_align",
    "roi_pool",
    "sigmoid_focal_loss",
]

_BOX_FMTS = ("xyxy", "xywh", "cxcywh")

# torchvision.ops' layers, in lucid.models.ops (they need lucid-nn).
_LAYERS = (
    "Conv2dNormActivation",
    "Conv3dNormActivation",
    "ExtraFPNBlock",
    "FeaturePyramidNetwork",
    "LastLevelMaxPool",
    "LastLevelP6P7",
    "MLP",
    "MultiScaleRoIAlign",
    "Permute",
    "RoIAlign",
    "RoIPool",
    "SqueezeExcitation",
    "StochasticDepth",
    "stochastic_depth",
)


def __getattr__(name: str) -> Any:
    """torchvision.ops' layers: ``lucid.models.ops.<name>`` (lucid-models imported on use)."""
    if name not in _LAYERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        models = getattr(lucid, "models")  # noqa: B009 - lucid's lazy sibling, imported on use
    except AttributeError as e:
        raise AttributeError(
            f"lucid.data.ops.{name} is lucid.models.ops.{name} (it needs lucid-nn), and "
            f"lucid.models is not available: {e}"
        ) from None
    return getattr(models.ops, name)


def _upcast(t: Tensor) -> Tensor:
    # Products of coordinates overflow float16 / int8 / int16: torchvision upcasts the same way.
    if t.is_floating_point():
        return t if t.dtype in (lucid.float32, lucid.float64) else t.float()
    return t if t.dtype in (lucid.int32, lucid.int64) else t.to(lucid.int32)


def _check_boxes(name: str, boxes: object, k: int = 4) -> Tensor:
    if not isinstance(boxes, Tensor):
        raise TypeError(f"{name}: expected a Tensor of boxes, got {type(boxes).__name__}")
    if boxes.dim() < 1 or boxes.shape[-1] != k:
        raise ValueError(
            f"{name}: expected boxes of shape [..., {k}], got shape {tuple(boxes.shape)}"
        )
    return boxes


def box_area(boxes: Tensor, fmt: str = "xyxy") -> Tensor:
    """Area of each box in ``boxes`` (``[..., 4]``), in format ``fmt``, as ``[...]``."""
    if fmt not in _BOX_FMTS:
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(_check_boxes("box_area", boxes))
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _box_inter_union(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> tuple[Tensor, Tensor]:
    area1 = box_area(boxes1, fmt=fmt)
    area2 = box_area(boxes2, fmt=fmt)
    if fmt == "xyxy":
        lo1, hi1 = boxes1[..., None, :2], boxes1[..., None, 2:]
        lo2, hi2 = boxes2[..., None, :, :2], boxes2[..., None, :, 2:]
    elif fmt == "xywh":
        lo1, lo2 = boxes1[..., None, :2], boxes2[..., None, :, :2]
        hi1 = lo1 + boxes1[..., None, 2:]
        hi2 = lo2 + boxes2[..., None, :, 2:]
    else:
        c1, h1 = boxes1[..., None, :2], boxes1[..., None, 2:] / 2
        c2, h2 = boxes2[..., None, :, :2], boxes2[..., None, :, 2:] / 2
        lo1, hi1, lo2, hi2 = c1 - h1, c1 + h1, c2 - h2, c2 + h2
    lt = lucid.maximum(lo1, lo2)
    rb = lucid.minimum(hi1, hi2)
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[..., None] + area2[..., None, :] - inter
    return inter, union


def box_iou(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tensor:
    """Pairwise IoU of ``[..., N, 4]`` and ``[..., M, 4]`` boxes, as ``[..., N, M]``.

    ``fmt`` is ``'xyxy'``, ``'xywh'`` or ``'cxcywh'`` (torchvision's rotated formats are not
    available in lucid).
    """
    if fmt not in _BOX_FMTS:
        raise ValueError(
            f"Unsupported format '{fmt}'. Supported axis-aligned formats: {_BOX_FMTS}. "
            f"Rotated formats ('cxcywhr', 'xywhr', 'xyxyxyxy') are not available in lucid."
        )
    _check_boxes("box_iou", boxes1)
    _check_boxes("box_iou", boxes2)
    inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
    return inter / union


def _enclosing_wh(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    lti = lucid.minimum(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = lucid.maximum(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    return _upcast(rbi - lti).clamp(min=0)


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Pairwise generalized IoU of ``xyxy`` boxes ``[..., N, 4]`` and ``[..., M, 4]``."""
    _check_boxes("generalized_box_iou", boxes1)
    _check_boxes("generalized_box_iou", boxes2)
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    whi = _enclosing_wh(boxes1, boxes2)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai


def _box_diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diag2 = whi[..., 0] ** 2 + whi[..., 1] ** 2 + eps
    x_p = (boxes1[..., 0] + boxes1[..., 2]) / 2
    y_p = (boxes1[..., 1] + boxes1[..., 3]) / 2
    x_g = (boxes2[..., 0] + boxes2[..., 2]) / 2
    y_g = (boxes2[..., 1] + boxes2[..., 3]) / 2
    centers2 = _upcast(x_p[..., None] - x_g[..., None, :]) ** 2 + (
        _upcast(y_p[..., None] - y_g[..., None, :]) ** 2
    )
    return iou - centers2 / diag2, iou


def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Pairwise distance IoU (IoU less the normalised squared centre distance) of ``xyxy`` boxes."""
    boxes1 = _upcast(_check_boxes("distance_box_iou", boxes1))
    boxes2 = _upcast(_check_boxes("distance_box_iou", boxes2))
    return _box_diou_iou(boxes1, boxes2, eps)[0]


def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Pairwise complete IoU (distance IoU less an aspect-ratio term) of ``xyxy`` boxes."""
    boxes1 = _upcast(_check_boxes("complete_box_iou", boxes1))
    boxes2 = _upcast(_check_boxes("complete_box_iou", boxes2))
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[..., None, 2] - boxes1[..., None, 0]
    h_pred = boxes1[..., None, 3] - boxes1[..., None, 1]
    w_gt = boxes2[..., None, :, 2] - boxes2[..., None, :, 0]
    h_gt = boxes2[..., None, :, 3] - boxes2[..., None, :, 1]
    v = (4 / (math.pi**2)) * (lucid.atan(w_pred / h_pred) - lucid.atan(w_gt / h_gt)) ** 2
    with lucid.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Convert ``[..., 4]`` boxes between ``'xyxy'``, ``'xywh'`` and ``'cxcywh'``."""
    if in_fmt not in _BOX_FMTS or out_fmt not in _BOX_FMTS:
        raise ValueError(
            f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and out_fmt "
            f"{out_fmt} (lucid supports {_BOX_FMTS}; the rotated formats are not available)"
        )
    _check_boxes("box_convert", boxes)
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        x1, y1, x2, y2 = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        x1, y1, x2, y2 = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    else:
        x1, y1, x2, y2 = a, b, c, d
    if out_fmt == "xyxy":
        return lucid.stack((x1, y1, x2, y2), dim=-1)
    if out_fmt == "xywh":
        return lucid.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
    return lucid.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)


def clip_boxes_to_image(boxes: Tensor, size: tuple[int, int]) -> Tensor:
    """Clip ``xyxy`` boxes ``[..., 4]`` to an image of ``size = (height, width)``."""
    _check_boxes("clip_boxes_to_image", boxes)
    height, width = size
    boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
    boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return lucid.stack((boxes_x, boxes_y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes: Tensor, min_size: float) -> Tensor:
    """Indices (int64) of the ``xyxy`` boxes whose width and height are both ``>= min_size``."""
    _check_boxes("remove_small_boxes", boxes)
    ws = boxes[..., 2] - boxes[..., 0]
    hs = boxes[..., 3] - boxes[..., 1]
    keep = (ws >= min_size) & (hs >= min_size)
    kept: Tensor = lucid.where(keep)[0]
    return kept


def _nms_numpy(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    # Greedy suppression, as torchvision's CPU kernel: highest score first, drop IoU > threshold.
    order = np.argsort(-scores, kind="stable")
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(order), dtype=bool)
    keep: list[int] = []
    for pos, i in enumerate(order):
        if suppressed[pos]:
            continue
        keep.append(int(i))
        rest = order[pos + 1 :]
        w = np.clip(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0, None)
        h = np.clip(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0, None)
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[pos + 1 :] |= iou > iou_threshold
    return np.asarray(keep, dtype=np.int64)


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Non-maximum suppression: int64 indices of the kept ``xyxy`` boxes, by decreasing score.

    Boxes whose IoU with a higher-scoring kept box is greater than ``iou_threshold`` are
    dropped.
    """
    _check_boxes("nms", boxes)
    if boxes.dim() != 2:
        raise ValueError(f"nms: boxes should be a 2d tensor [N, 4], got {boxes.dim()}d")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError(
            f"nms: scores should be a 1d tensor of {boxes.shape[0]} elements (one per box), "
            f"got shape {tuple(scores.shape)}"
        )
    b = boxes.detach().numpy().astype(np.float64, copy=False)
    s = scores.detach().numpy().astype(np.float64, copy=False)
    return lucid.tensor(_nms_numpy(b, s, float(iou_threshold)), device=boxes.device)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """Per-category NMS: boxes with different ``idxs`` never suppress each other.

    Returns the int64 indices of the kept boxes, by decreasing score.
    """
    _check_boxes("batched_nms", boxes)
    if idxs.dim() != 1 or idxs.shape[0] != boxes.shape[0]:
        raise ValueError(
            f"batched_nms: idxs should be a 1d tensor of {boxes.shape[0]} elements, "
            f"got shape {tuple(idxs.shape)}"
        )
    if boxes.numel() == 0:
        return lucid.empty((0,), dtype=lucid.int64, device=boxes.device)
    # Per-class NMS on the host (no coordinate-offset trick: that one loses precision).
    b = boxes.detach().numpy().astype(np.float64, copy=False)
    s = scores.detach().numpy().astype(np.float64, copy=False)
    ids = idxs.detach().numpy()
    keep_mask = np.zeros(len(s), dtype=bool)
    for class_id in np.unique(ids):
        cur = np.nonzero(ids == class_id)[0]
        keep_mask[cur[_nms_numpy(b[cur], s[cur], float(iou_threshold))]] = True
    kept = np.nonzero(keep_mask)[0]
    kept = kept[np.argsort(-s[kept], kind="stable")]
    return lucid.tensor(kept.astype(np.int64), device=boxes.device)


def masks_to_boxes(masks: Tensor) -> Tensor:
    """``xyxy`` float boxes ``[N, 4]`` around the non-zero pixels of masks ``[N, H, W]``.

    Empty masks give ``[0, 0, 0, 0]``.
    """
    if masks.dim() != 3:
        raise ValueError(
            f"masks_to_boxes: expected masks of shape [N, H, W], got {tuple(masks.shape)}"
        )
    if masks.numel() == 0:
        return lucid.zeros((0, 4), dtype=lucid.float32, device=masks.device)
    _, h, w = masks.shape
    m = masks.detach().numpy().astype(bool)
    rows = m.any(axis=2)
    cols = m.any(axis=1)
    empty = ~rows.any(axis=1)
    y1 = rows.argmax(axis=1)
    x1 = cols.argmax(axis=1)
    y2 = (h - 1) - rows[:, ::-1].argmax(axis=1)
    x2 = (w - 1) - cols[:, ::-1].argmax(axis=1)
    out = np.stack([x1, y1, x2, y2], axis=1).astype(np.float32)
    out[empty] = 0
    return lucid.tensor(out, device=masks.device)


def sigmoid_focal_loss(
    inputs: Tensor,
    targets: Tensor,
    alpha: float = 0.25,
    gamma: float = 2,
    reduction: str = "none",
) -> Tensor:
    """RetinaNet's focal loss on logits ``inputs`` and binary ``targets`` of the same shape.

    ``alpha`` in ``[0, 1]`` weighs positives (``-1`` turns it off); ``gamma`` focuses on hard
    examples; ``reduction`` is ``'none'``, ``'mean'`` or ``'sum'``.
    """
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(
            f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 for ignore."
        )
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
            f"'none', 'mean', 'sum'"
        )
    if tuple(inputs.shape) != tuple(targets.shape):
        raise ValueError(
            f"sigmoid_focal_loss: targets of shape {tuple(targets.shape)} must match inputs of "
            f"shape {tuple(inputs.shape)}"
        )
    p = lucid.sigmoid(inputs)
    # binary_cross_entropy_with_logits, the stable form: max(x, 0) - x t + log(1 + e^-|x|).
    ce_loss = inputs.clamp(min=0) - inputs * targets + lucid.log1p(lucid.exp(-inputs.abs()))
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def generalized_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """``1 - GIoU`` of matching ``xyxy`` boxes ``boxes1[i]``, ``boxes2[i]`` (``[..., 4]`` each)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
            f"'none', 'mean', 'sum'"
        )
    _check_boxes("generalized_box_iou_loss", boxes1)
    _check_boxes("generalized_box_iou_loss", boxes2)
    if not boxes1.is_floating_point() or boxes1.dtype not in (lucid.float32, lucid.float64):
        boxes1 = boxes1.float()
    if not boxes2.is_floating_point() or boxes2.dtype not in (lucid.float32, lucid.float64):
        boxes2 = boxes2.float()
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = lucid.maximum(x1, x1g)
    ykis1 = lucid.maximum(y1, y1g)
    xkis2 = lucid.minimum(x2, x2g)
    ykis2 = lucid.minimum(y2, y2g)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk = lucid.where(mask, (xkis2 - xkis1) * (ykis2 - ykis1), lucid.zeros_like(x1))
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    iouk = intsctk / (unionk + eps)
    xc1 = lucid.minimum(x1, x1g)
    yc1 = lucid.minimum(y1, y1g)
    xc2 = lucid.maximum(x2, x2g)
    yc2 = lucid.maximum(y2, y2g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    loss: Tensor = 1 - (iouk - (area_c - unionk) / (area_c + eps))
    if reduction == "mean":
        out: Tensor = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
        return out
    if reduction == "sum":
        total: Tensor = loss.sum()
        return total
    return loss


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    t = tuple(int(i) for i in v)
    if len(t) != 2:
        raise ValueError(f"output_size: expected an int or a pair (h, w), got {v!r}")
    return (t[0], t[1])


def _rois(name: str, boxes: Tensor | Sequence[Tensor]) -> Tensor:
    if isinstance(boxes, Tensor):
        if boxes.dim() != 2 or boxes.shape[1] != 5:
            raise ValueError(
                f"{name}: the boxes tensor shape is not correct as Tensor[K, 5], "
                f"got {tuple(boxes.shape)}"
            )
        return boxes
    if not isinstance(boxes, (list, tuple)):
        raise TypeError(
            f"{name}: boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]], "
            f"got {type(boxes).__name__}"
        )
    parts = []
    for i, b in enumerate(boxes):
        if b.dim() != 2 or b.shape[1] != 4:
            raise ValueError(
                f"{name}: the shape of the tensor in the boxes list is not correct as "
                f"List[Tensor[L, 4]], got {tuple(b.shape)} at index {i}"
            )
        parts.append(lucid.cat([lucid.full_like(b[:, :1], i), b], dim=1))
    return parts[0] if len(parts) == 1 else lucid.cat(parts, dim=0)


def _check_input(name: str, input: Tensor, rois: Tensor) -> None:
    if input.dim() != 4:
        raise ValueError(f"{name}: input should be a 4d tensor [N, C, H, W], got {input.dim()}d")
    if rois.dtype != input.dtype:
        raise TypeError(
            f"{name}: expected the boxes to have the input's dtype {input.dtype}, got {rois.dtype}"
        )


def roi_align(
    input: Tensor,
    boxes: Tensor | list[Tensor],
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """RoI Align (Mask R-CNN): average of bilinear samples in each bin, ``[K, C, PH, PW]``.

    ``boxes`` is a ``Tensor[K, 5]`` of ``(batch_index, x1, y1, x2, y2)`` or a list of
    ``Tensor[L, 4]`` (one per image). ``sampling_ratio <= 0`` samples ``ceil(roi / bins)``
    points per bin; ``aligned=True`` shifts the boxes by half a pixel. Differentiable with
    respect to ``input`` (and to the box coordinates, as the sample positions depend on them).
    """
    rois = _rois("roi_align", boxes)
    _check_input("roi_align", input, rois)
    ph_n, pw_n = _pair(output_size)
    _, channels, height, width = input.shape
    k = rois.shape[0]
    dt = input.dtype
    if k == 0:
        return lucid.zeros((0, channels, ph_n, pw_n), dtype=dt, device=input.device)
    batch_ind = lucid.tensor(rois.detach().numpy()[:, 0].astype(np.int64))
    offset = 0.5 if aligned else 0.0
    start_w = rois[:, 1] * spatial_scale - offset
    start_h = rois[:, 2] * spatial_scale - offset
    roi_w = rois[:, 3] * spatial_scale - offset - start_w
    roi_h = rois[:, 4] * spatial_scale - offset - start_h
    if not aligned:
        roi_w = roi_w.clamp(min=1.0)
        roi_h = roi_h.clamp(min=1.0)
    bin_h = roi_h / ph_n
    bin_w = roi_w / pw_n
    if sampling_ratio > 0:
        grid_h = np.full(k, sampling_ratio, dtype=np.int64)
        grid_w = np.full(k, sampling_ratio, dtype=np.int64)
    else:
        grid_h = np.ceil(roi_h.detach().numpy() / ph_n).astype(np.int64)
        grid_w = np.ceil(roi_w.detach().numpy() / pw_n).astype(np.int64)
    iy_n, ix_n = max(int(grid_h.max()), 1), max(int(grid_w.max()), 1)
    # Every RoI samples on the largest grid; the points past its own grid are masked out.
    ymask_np = np.arange(iy_n)[None, :] < grid_h[:, None]  # [K, IY]
    xmask_np = np.arange(ix_n)[None, :] < grid_w[:, None]  # [K, IX]
    gh = lucid.tensor(np.maximum(grid_h, 1).astype(np.float64)).to(dt)
    gw = lucid.tensor(np.maximum(grid_w, 1).astype(np.float64)).to(dt)
    ph = lucid.arange(ph_n).to(dt)
    pw = lucid.arange(pw_n).to(dt)
    iy = lucid.arange(iy_n).to(dt) + 0.5
    ix = lucid.arange(ix_n).to(dt) + 0.5
    y = (
        start_h[:, None, None]
        + ph[None, :, None] * bin_h[:, None, None]
        + iy[None, None, :] * (bin_h / gh)[:, None, None]
    )  # [K, PH, IY]
    x = (
        start_w[:, None, None]
        + pw[None, :, None] * bin_w[:, None, None]
        + ix[None, None, :] * (bin_w / gw)[:, None, None]
    )  # [K, PW, IX]
    # Samples more than a pixel outside the map count as 0, as torchvision's kernel has it.
    y_np, x_np = y.detach().numpy(), x.detach().numpy()
    yin = (y_np >= -1.0) & (y_np <= height)
    xin = (x_np >= -1.0) & (x_np <= width)
    y = y.clamp(min=0)
    x = x.clamp(min=0)
    yl = np.floor(y.detach().numpy()).astype(np.int64)
    xl = np.floor(x.detach().numpy()).astype(np.int64)
    y_at_edge = yl >= height - 1
    x_at_edge = xl >= width - 1
    y_high = np.where(y_at_edge, height - 1, yl + 1)
    y_low = np.where(y_at_edge, height - 1, yl)
    x_high = np.where(x_at_edge, width - 1, xl + 1)
    x_low = np.where(x_at_edge, width - 1, xl)
    # At the last row/column the sample sits on it: weight 1 on y_low (ly = 0).
    ly = lucid.where(lucid.tensor(y_at_edge), lucid.zeros_like(y), y - lucid.tensor(y_low).to(dt))
    lx = lucid.where(lucid.tensor(x_at_edge), lucid.zeros_like(x), x - lucid.tensor(x_low).to(dt))
    hy = 1.0 - ly
    hx = 1.0 - lx
    b_idx = batch_ind[:, None, None, None, None, None]
    c_idx = lucid.arange(channels)[None, :, None, None, None, None]

    def gather(yy: np.ndarray, xx: np.ndarray) -> Tensor:
        return input[
            b_idx,
            c_idx,
            lucid.tensor(yy)[:, None, :, None, :, None],
            lucid.tensor(xx)[:, None, None, :, None, :],
        ]  # [K, C, PH, PW, IY, IX]

    def outer(a: Tensor, b: Tensor) -> Tensor:
        return a[:, None, :, None, :, None] * b[:, None, None, :, None, :]

    val = (
        outer(hy, hx) * gather(y_low, x_low)
        + outer(hy, lx) * gather(y_low, x_high)
        + outer(ly, hx) * gather(y_high, x_low)
        + outer(ly, lx) * gather(y_high, x_high)
    )
    valid = (ymask_np[:, None, :] & yin)[:, None, :, None, :, None] & (xmask_np[:, None, :] & xin)[
        :, None, None, :, None, :
    ]
    val = val * lucid.tensor(valid.astype(np.float64)).to(dt)
    count = lucid.tensor(np.maximum(grid_h * grid_w, 1).astype(np.float64)).to(dt)
    return val.sum((-1, -2)) / count[:, None, None, None]


def roi_pool(
    input: Tensor,
    boxes: Tensor | list[Tensor],
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
) -> Tensor:
    """RoI max pooling (Fast R-CNN): the maximum of each bin of each RoI, ``[K, C, PH, PW]``.

    ``boxes`` as for :func:`roi_align`. Box corners are rounded to the feature grid; empty bins
    give 0. Differentiable with respect to ``input`` (the gradient goes to each bin's maximum).
    """
    rois = _rois("roi_pool", boxes)
    _check_input("roi_pool", input, rois)
    ph_n, pw_n = _pair(output_size)
    _, channels, height, width = input.shape
    k = rois.shape[0]
    r = rois.detach().numpy().astype(np.float64)
    x_np = input.detach().numpy()
    # The argmax of each bin is found on the host; the values are then gathered from `input`
    # so that autograd routes the gradient to them.
    flat_idx = np.zeros((k, channels, ph_n, pw_n), dtype=np.int64)
    empty = np.ones((k, channels, ph_n, pw_n), dtype=bool)
    for n in range(k):
        b = int(r[n, 0])
        # std::round in torchvision's kernel rounds halves away from zero.
        sw, sh, ew, eh = (
            int(math.floor(abs(v * spatial_scale) + 0.5) * (1 if v >= 0 else -1)) for v in r[n, 1:]
        )
        rw = max(ew - sw + 1, 1)
        rh = max(eh - sh + 1, 1)
        bh, bw = rh / ph_n, rw / pw_n
        for i in range(ph_n):
            hs = min(max(int(math.floor(i * bh)) + sh, 0), height)
            he = min(max(int(math.ceil((i + 1) * bh)) + sh, 0), height)
            for j in range(pw_n):
                ws = min(max(int(math.floor(j * bw)) + sw, 0), width)
                we = min(max(int(math.ceil((j + 1) * bw)) + sw, 0), width)
                if he <= hs or we <= ws:
                    continue
                patch = x_np[b, :, hs:he, ws:we].reshape(channels, -1)
                am = patch.argmax(axis=1)
                py, px = np.divmod(am, we - ws)
                flat_idx[n, :, i, j] = (
                    ((b * channels + np.arange(channels)) * height + hs + py) * (width) + ws + px
                )
                empty[n, :, i, j] = False
    vals = input.reshape(-1)[lucid.tensor(flat_idx)]
    return vals * lucid.tensor((~empty).astype(np.float64)).to(input.dtype)
