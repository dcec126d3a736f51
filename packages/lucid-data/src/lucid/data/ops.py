"""``lucid.data.ops``: torchvision's detection operators (``torchvision.ops``) for lucid.

Box geometry (``box_area``, ``box_iou``, ``generalized_box_iou``, ``distance_box_iou``,
``complete_box_iou``, ``box_convert``, ``clip_boxes_to_image``, ``remove_small_boxes``,
``masks_to_boxes``), suppression (``nms``, ``batched_nms``), losses (``sigmoid_focal_loss``,
``generalized_box_iou_loss``, ``distance_box_iou_loss``, ``complete_box_iou_loss``), region
pooling (``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool``), ``deform_conv2d``
and DropBlock (``drop_block2d``, ``drop_block3d``), with
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
import sys
import types
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
    "complete_box_iou_loss",
    "deform_conv2d",
    "distance_box_iou",
    "distance_box_iou_loss",
    "drop_block2d",
    "drop_block3d",
    "generalized_box_iou",
    "generalized_box_iou_loss",
    "masks_to_boxes",
    "nms",
    "ps_roi_align",
    "ps_roi_pool",
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
    "DeformConv2d",
    "DropBlock2d",
    "DropBlock3d",
    "FrozenBatchNorm2d",
    "PSRoIAlign",
    "PSRoIPool",
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


# ``torchvision.ops.misc``'s names (timm imports ``FrozenBatchNorm2d`` from there): the layers
# above, and ``interpolate`` (torch's ``F.interpolate``).
_MISC = ("Conv2dNormActivation", "Conv3dNormActivation", "FrozenBatchNorm2d", "MLP", "Permute",
         "SqueezeExcitation", "interpolate")  # fmt: skip


def _misc_attribute(name: str) -> Any:
    """``lucid.data.ops.misc.<name>``: torchvision.ops.misc's layer or ``interpolate``."""
    if name == "interpolate":
        return getattr(lucid, "nn").functional.interpolate  # noqa: B009 - lazy sibling
    if name not in _MISC:
        raise AttributeError(f"module 'lucid.data.ops.misc' has no attribute {name!r}")
    return __getattr__(name)


misc = types.ModuleType("lucid.data.ops.misc", "torchvision.ops.misc's names (lucid.models.ops).")
misc.__all__ = list(_MISC)  # type: ignore[attr-defined]
misc.__getattr__ = _misc_attribute  # type: ignore[method-assign]
sys.modules[misc.__name__] = misc  # ``from lucid.data.ops.misc import X``, as torchvision's


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


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: "
            f"'none', 'mean', 'sum'"
        )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        out: Tensor = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
        return out
    if reduction == "sum":
        total: Tensor = loss.sum()
        return total
    return loss


def _upcast_non_float(t: Tensor) -> Tensor:
    # Products of coordinates overflow half precision and integers: as torchvision's losses.
    return t if t.dtype in (lucid.float32, lucid.float64) else t.float()


def _loss_boxes(name: str, boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    _check_boxes(name, boxes1)
    _check_boxes(name, boxes2)
    return _upcast_non_float(boxes1), _upcast_non_float(boxes2)


def _loss_inter_union(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor]:
    # Elementwise (matching boxes) intersection and union of xyxy boxes.
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1 = lucid.maximum(x1, x1g)
    ykis1 = lucid.maximum(y1, y1g)
    xkis2 = lucid.minimum(x2, x2g)
    ykis2 = lucid.minimum(y2, y2g)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk = lucid.where(mask, (xkis2 - xkis1) * (ykis2 - ykis1), lucid.zeros_like(x1))
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def _enclosing(boxes1: Tensor, boxes2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    return (
        lucid.minimum(x1, x1g),
        lucid.minimum(y1, y1g),
        lucid.maximum(x2, x2g),
        lucid.maximum(y2, y2g),
    )


def generalized_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """``1 - GIoU`` of matching ``xyxy`` boxes ``boxes1[i]``, ``boxes2[i]`` (``[..., 4]`` each)."""
    _check_reduction(reduction)
    boxes1, boxes2 = _loss_boxes("generalized_box_iou_loss", boxes1, boxes2)
    intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    iouk = intsctk / (unionk + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    loss: Tensor = 1 - (iouk - (area_c - unionk) / (area_c + eps))
    return _reduce(loss, reduction)


def _diou_iou_loss(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> tuple[Tensor, Tensor]:
    intsct, union = _loss_inter_union(boxes1, boxes2)
    iou = intsct / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    centers_distance_squared = (((x2 + x1) - (x1g + x2g)) / 2) ** 2 + (
        ((y2 + y1) - (y1g + y2g)) / 2
    ) ** 2
    loss: Tensor = 1 - iou + centers_distance_squared / diagonal_distance_squared
    return loss, iou


def distance_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """Distance-IoU loss of matching ``xyxy`` boxes: ``1 - IoU`` plus the squared distance of
    the centres over the squared diagonal of the smallest enclosing box."""
    _check_reduction(reduction)
    boxes1, boxes2 = _loss_boxes("distance_box_iou_loss", boxes1, boxes2)
    return _reduce(_diou_iou_loss(boxes1, boxes2, eps)[0], reduction)


def complete_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """Complete-IoU loss of matching ``xyxy`` boxes: the distance-IoU loss plus ``alpha * v``,
    ``v`` the aspect-ratio consistency term (``alpha`` is not differentiated, as torchvision's)."""
    _check_reduction(reduction)
    boxes1, boxes2 = _loss_boxes("complete_box_iou_loss", boxes1, boxes2)
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2, eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (math.pi**2)) * (
        lucid.atan((x2g - x1g) / (y2g - y1g)) - lucid.atan((x2 - x1) / (y2 - y1))
    ) ** 2
    with lucid.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou_loss + alpha * v, reduction)


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
    return _roi_align(input, rois, ph_n, pw_n, spatial_scale, sampling_ratio, aligned, None)


def _roi_align(
    input: Tensor,
    rois: Tensor,
    ph_n: int,
    pw_n: int,
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
    channel_map: np.ndarray | None,
) -> Tensor:
    # channel_map [C_out, PH, PW]: the input channel each output bin reads (position-sensitive
    # RoI Align); None: every channel, each bin of it.
    _, channels, height, width = input.shape
    out_channels = channels if channel_map is None else channel_map.shape[0]
    k = rois.shape[0]
    dt = input.dtype
    if k == 0:
        return lucid.zeros((0, out_channels, ph_n, pw_n), dtype=dt, device=input.device)
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
    if channel_map is None:
        c_idx = lucid.arange(channels)[None, :, None, None, None, None]
    else:
        c_idx = lucid.tensor(channel_map)[None, :, :, :, None, None]

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


def _ps_channel_map(name: str, channels: int, ph_n: int, pw_n: int) -> np.ndarray:
    # Output channel c of bin (i, j) reads input channel (c * PH + i) * PW + j.
    if channels % (ph_n * pw_n) != 0:
        raise ValueError(
            f"{name}: input channels must be a multiple of pooling height * pooling width "
            f"({ph_n} * {pw_n}), got {channels}"
        )
    out_channels = channels // (ph_n * pw_n)
    return np.arange(out_channels * ph_n * pw_n, dtype=np.int64).reshape(out_channels, ph_n, pw_n)


def ps_roi_align(
    input: Tensor,
    boxes: Tensor | list[Tensor],
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
) -> Tensor:
    """Position-sensitive RoI Align (R-FCN): bin ``(i, j)`` of output channel ``c`` averages
    bilinear samples of input channel ``(c * PH + i) * PW + j``, ``[K, C / (PH * PW), PH, PW]``.

    ``boxes`` as for :func:`roi_align`; the boxes are shifted by half a pixel (as
    ``roi_align(aligned=True)``). Differentiable with respect to ``input``.
    """
    rois = _rois("ps_roi_align", boxes)
    _check_input("ps_roi_align", input, rois)
    ph_n, pw_n = _pair(output_size)
    cmap = _ps_channel_map("ps_roi_align", input.shape[1], ph_n, pw_n)
    return _roi_align(input, rois, ph_n, pw_n, spatial_scale, sampling_ratio, True, cmap)


def ps_roi_pool(
    input: Tensor,
    boxes: Tensor | list[Tensor],
    output_size: int | tuple[int, int],
    spatial_scale: float = 1.0,
) -> Tensor:
    """Position-sensitive RoI average pooling (R-FCN), ``[K, C / (PH * PW), PH, PW]``: bin
    ``(i, j)`` of output channel ``c`` is the mean of input channel ``(c * PH + i) * PW + j``
    over the bin.

    ``boxes`` as for :func:`roi_align`; box corners are rounded to the feature grid, empty
    bins give 0. Differentiable with respect to ``input``.
    """
    rois = _rois("ps_roi_pool", boxes)
    _check_input("ps_roi_pool", input, rois)
    ph_n, pw_n = _pair(output_size)
    n_img, channels, height, width = input.shape
    cmap = _ps_channel_map("ps_roi_pool", channels, ph_n, pw_n)
    out_channels = cmap.shape[0]
    k = rois.shape[0]
    r = rois.detach().numpy().astype(np.float64)
    # Each bin's pixels (flat indices into input) and 1 / area, padded to the largest bin; the
    # values are then gathered from `input` so that autograd spreads the gradient over the bin.
    cells: list[list[np.ndarray]] = []
    for n in range(k):
        b = int(r[n, 0])
        # std::round in torchvision's kernel rounds halves away from zero.
        sw, sh, ew, eh = (
            int(math.floor(abs(v * spatial_scale) + 0.5) * (1 if v >= 0 else -1)) for v in r[n, 1:]
        )
        rw, rh = max(ew - sw, 1), max(eh - sh, 1)
        bh, bw = rh / ph_n, rw / pw_n
        row = []
        for i in range(ph_n):
            hs = min(max(int(math.floor(i * bh)) + sh, 0), height)
            he = min(max(int(math.ceil((i + 1) * bh)) + sh, 0), height)
            for j in range(pw_n):
                ws = min(max(int(math.floor(j * bw)) + sw, 0), width)
                we = min(max(int(math.ceil((j + 1) * bw)) + sw, 0), width)
                yy, xx = np.meshgrid(np.arange(hs, he), np.arange(ws, we), indexing="ij")
                row.append(((b * channels + cmap[:, i, j, None]) * height + yy.ravel()) * width
                           + xx.ravel())  # fmt: skip
        cells.append(row)
    m = max([c.shape[1] for row in cells for c in row], default=0)
    flat_idx = np.zeros((k, out_channels, ph_n, pw_n, max(m, 1)), dtype=np.int64)
    weight = np.zeros((k, out_channels, ph_n, pw_n, max(m, 1)), dtype=np.float64)
    for n, row in enumerate(cells):
        for cell, c in enumerate(row):
            i, j = divmod(cell, pw_n)
            area = c.shape[1]
            flat_idx[n, :, i, j, :area] = c
            weight[n, :, i, j, :area] = 1.0 / max(area, 1)
    if n_img * channels * height * width == 0 or k == 0:
        return lucid.zeros((k, out_channels, ph_n, pw_n), dtype=input.dtype, device=input.device)
    vals = input.reshape(-1)[lucid.tensor(flat_idx)]
    return (vals * lucid.tensor(weight).to(input.dtype)).sum(-1)


def _as_pair(name: str, v: int | tuple[int, int]) -> tuple[int, int]:
    if isinstance(v, int):
        return (v, v)
    t = tuple(int(i) for i in v)
    if len(t) != 2:
        raise ValueError(f"deform_conv2d: {name} should be an int or a pair, got {v!r}")
    return (t[0], t[1])


def deform_conv2d(
    input: Tensor,
    offset: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (0, 0),
    dilation: tuple[int, int] = (1, 1),
    mask: Tensor | None = None,
) -> Tensor:
    """Deformable convolution (v1 without ``mask``, v2 with it), as torchvision's.

    ``input [B, C_in, H, W]``, ``offset [B, 2 * G * KH * KW, OH, OW]`` (per offset group ``G``
    and kernel tap, the ``(dy, dx)`` added to the tap's sampling position), ``weight
    [C_out, C_in / groups, KH, KW]``, ``mask [B, G * KH * KW, OH, OW]`` (the modulation of each
    tap's sample). Samples are bilinear, zero outside the input. Differentiable with respect
    to ``input``, ``offset``, ``weight``, ``bias`` and ``mask``; zero offsets and a mask of
    ones give ``conv2d``.
    """
    if input.dim() != 4:
        raise ValueError(f"deform_conv2d: input should be 4d [B, C, H, W], got {input.dim()}d")
    if weight.dim() != 4:
        raise ValueError(f"deform_conv2d: weight should be 4d, got {weight.dim()}d")
    stride_h, stride_w = _as_pair("stride", stride)
    pad_h, pad_w = _as_pair("padding", padding)
    dil_h, dil_w = _as_pair("dilation", dilation)
    batch, in_ch, height, width = input.shape
    out_ch, w_in_ch, kh, kw = weight.shape
    taps = kh * kw
    n_offset_grps = offset.shape[1] // (2 * taps)
    if n_offset_grps == 0 or offset.shape[1] != 2 * taps * n_offset_grps:
        raise RuntimeError(
            "the shape of the offset tensor at dimension 1 is not valid. It should be a multiple "
            f"of 2 * weight.size[2] * weight.size[3].\nGot offset.shape[1]={offset.shape[1]}, "
            f"while 2 * weight.size[2] * weight.size[3]={2 * taps}"
        )
    if w_in_ch == 0 or in_ch % w_in_ch != 0:
        raise RuntimeError(
            f"deform_conv2d: input channels {in_ch} must be a multiple of weight.size(1) {w_in_ch}"
        )
    groups = in_ch // w_in_ch
    if out_ch % groups != 0 or in_ch % n_offset_grps != 0:
        raise RuntimeError(
            f"deform_conv2d: out channels {out_ch} must be divisible by the {groups} weight "
            f"groups and in channels {in_ch} by the {n_offset_grps} offset groups"
        )
    out_h = (height + 2 * pad_h - (dil_h * (kh - 1) + 1)) // stride_h + 1
    out_w = (width + 2 * pad_w - (dil_w * (kw - 1) + 1)) // stride_w + 1
    if tuple(offset.shape) != (batch, 2 * taps * n_offset_grps, out_h, out_w):
        raise RuntimeError(
            f"deform_conv2d: offset should have shape {(batch, 2 * taps * n_offset_grps)} + "
            f"{(out_h, out_w)} (the output's size), got {tuple(offset.shape)}"
        )
    if mask is not None and tuple(mask.shape) != (batch, taps * n_offset_grps, out_h, out_w):
        raise RuntimeError(
            f"deform_conv2d: mask should have shape {(batch, taps * n_offset_grps, out_h, out_w)}"
            f", got {tuple(mask.shape)}"
        )
    dt = input.dtype
    off = offset.reshape(batch, n_offset_grps, taps, 2, out_h, out_w)
    ki = np.repeat(np.arange(kh), kw) * dil_h  # [taps]
    kj = np.tile(np.arange(kw), kh) * dil_w
    base_y = np.arange(out_h)[None, :, None] * stride_h - pad_h + ki[:, None, None]
    base_x = np.arange(out_w)[None, None, :] * stride_w - pad_w + kj[:, None, None]
    # Sampling positions [B, G, taps, OH, OW]
    y = off[:, :, :, 0] + lucid.tensor(base_y.astype(np.float64)).to(dt)
    x = off[:, :, :, 1] + lucid.tensor(base_x.astype(np.float64)).to(dt)
    y_np, x_np = y.detach().numpy(), x.detach().numpy()
    inside = (y_np > -1) & (y_np < height) & (x_np > -1) & (x_np < width)
    y_low = np.floor(y_np).astype(np.int64)
    x_low = np.floor(x_np).astype(np.int64)
    ly = y - lucid.tensor(y_low).to(dt)
    lx = x - lucid.tensor(x_low).to(dt)
    hy, hx = 1 - ly, 1 - lx
    # Each channel reads its offset group's positions: channel c is in group c // (C / G).
    grp = np.arange(in_ch) // (in_ch // n_offset_grps)
    b_idx = lucid.arange(batch)[:, None, None, None, None]
    c_idx = lucid.arange(in_ch)[None, :, None, None, None]
    flat = input.reshape(batch, in_ch, height * width)

    def corner(yy: np.ndarray, xx: np.ndarray) -> Tensor:
        ok = inside & (yy >= 0) & (yy <= height - 1) & (xx >= 0) & (xx <= width - 1)
        idx = np.where(ok, np.clip(yy, 0, height - 1) * width + np.clip(xx, 0, width - 1), 0)
        vals = flat[b_idx, c_idx, lucid.tensor(idx[:, grp])]  # [B, C, taps, OH, OW]
        return vals * lucid.tensor(ok[:, grp].astype(np.float64)).to(dt)

    def per_channel(t: Tensor) -> Tensor:
        return t[:, lucid.tensor(grp)]  # [B, G, ...] -> [B, C, ...]

    cols = (
        per_channel(hy * hx) * corner(y_low, x_low)
        + per_channel(hy * lx) * corner(y_low, x_low + 1)
        + per_channel(ly * hx) * corner(y_low + 1, x_low)
        + per_channel(ly * lx) * corner(y_low + 1, x_low + 1)
    )
    if mask is not None:
        cols = cols * per_channel(mask.reshape(batch, n_offset_grps, taps, out_h, out_w))
    cols = cols.reshape(batch, groups, w_in_ch * taps, out_h * out_w)
    w = weight.reshape(groups, out_ch // groups, w_in_ch * taps)
    out = (w[None] @ cols).reshape(batch, out_ch, out_h, out_w)
    if bias is not None:
        out = out + bias.reshape(1, out_ch, 1, 1)
    return out


def _drop_block(
    input: Tensor, p: float, block_size: int, inplace: bool, eps: float, nd: int
) -> Tensor:
    spatial = tuple(int(s) for s in input.shape[2:])
    n, c = int(input.shape[0]), int(input.shape[1])
    block_size = min(block_size, *spatial)
    if block_size % 2 == 0:
        raise ValueError(f"block size should be odd. Got {block_size} which is even.")
    valid = [s - block_size + 1 for s in spatial]
    gamma = p * math.prod(spatial) / (block_size**nd * math.prod(valid))
    seeds = lucid.bernoulli(lucid.full((n, c, *valid), gamma, dtype=lucid.float64))
    # Each seed drops the block_size^nd block centred on it (torchvision: pad the seeds by
    # block_size // 2, then a stride-1 max pool of that kernel and padding).
    half = block_size // 2
    seeds_np = np.pad(seeds.numpy(), [(0, 0), (0, 0)] + [(2 * half, 2 * half)] * nd)
    windows = np.lib.stride_tricks.sliding_window_view(
        seeds_np, (block_size,) * nd, axis=tuple(range(2, 2 + nd))
    )
    dropped = windows.max(axis=tuple(range(-nd, 0)))
    keep = 1.0 - dropped
    normalize_scale = keep.size / (eps + keep.sum())
    noise = lucid.tensor(keep, device=input.device).to(input.dtype)
    if inplace:
        return input.mul_(noise).mul_(normalize_scale)
    out: Tensor = input * noise * normalize_scale
    return out


def drop_block2d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-06,
    training: bool = True,
) -> Tensor:
    """DropBlock (Ghiasi et al., 2018) on ``[N, C, H, W]``: zero square blocks of side
    ``block_size`` centred on seeds drawn with the probability that drops about a fraction
    ``p`` of the elements, then scale by ``numel / (eps + kept)``; the input as it is when not
    ``training`` or ``p == 0``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != 4:
        raise ValueError(f"input should be 4 dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    return _drop_block(input, p, block_size, inplace, eps, 2)


def drop_block3d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-06,
    training: bool = True,
) -> Tensor:
    """DropBlock on ``[N, C, D, H, W]``: as :func:`drop_block2d`, with cubic blocks."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != 5:
        raise ValueError(f"input should be 5 dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    return _drop_block(input, p, block_size, inplace, eps, 3)
