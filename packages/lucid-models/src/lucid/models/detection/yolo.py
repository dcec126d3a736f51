"""YOLO v1 to v4: the detectors, their losses and target assignment, decoding and NMS.

Each model takes images as one ``(N, 3, H, W)`` tensor (or a list of equally sized ``(3, H,
W)`` tensors, as torchvision's detectors take them) with values in ``[0, 1]``; YOLO v1 needs
its fixed ``image_size`` square, the others any size divisible by 32. As torchvision's
detectors do:

- in training mode ``model(images, targets)`` returns the losses, a dict of ``loss_box``,
  ``loss_obj`` and ``loss_cls`` (sum them to train), with ``targets`` a list of one dict per
  image: ``"boxes"`` ``(M, 4)`` xyxy in pixels and ``"labels"`` ``(M,)`` int64 in
  ``1 .. num_classes`` (0 is the background class YOLO has no output for);
- in eval mode ``model(images)`` returns one dict per image of ``"boxes"`` ``(K, 4)`` xyxy
  pixels (clipped to the image), ``"scores"`` ``(K,)`` and ``"labels"`` ``(K,)`` int64 in
  ``1 .. num_classes``: the boxes over ``score_thresh`` after per-class NMS
  (``lucid.data.ops.batched_nms``), at most ``detections_per_img``, best first.

The losses:

- v1 (Redmon et al. 2016, eq. 3): the sum-squared error of the paper, ``lambda_coord = 5``
  on the coordinates of the predictor responsible for an object (the one of the cell's ``B``
  with the highest IoU), square roots of width and height, the confidence target the IoU of
  the prediction with the truth, ``lambda_noobj = 0.5`` on the other confidences, squared
  error of the conditional class probabilities in the cells holding an object;
- v2, v3 and v3-tiny (anchor boxes): each object is assigned to the anchor whose shape matches it
  best (IoU of the ``(w, h)`` pairs), in the cell holding its centre; sum-squared error of
  ``sigmoid(t_xy)`` and ``t_wh`` against the truth's offsets and ``log(w / anchor)``,
  weighted ``2 - w h / (W H)``; objectness by logistic loss, 1 at the assigned anchors, 0 at
  the others except those whose prediction overlaps a truth by more than ``ignore_thresh``;
  classes by a softmax cross entropy (v2) or independent logistic losses (v3, v3-tiny). Darknet's v2
  region layer uses squared errors for objectness and class probabilities; these use the
  logistic and cross-entropy forms of v3, which train faster from scratch;
- v4 (Bochkovskiy et al. 2020): v3's, with the box loss ``1 - CIoU`` (Zheng et al. 2020)
  weighted by 0.07 (``iou_normalizer`` of ``yolov4.cfg``), every anchor whose shape IoU with
  the object is over 0.213 assigned too (``iou_thresh``), the grid-sensitivity factor
  ``scale_x_y`` (1.2, 1.1, 1.05) and ``ignore_thresh = 0.7``.

Losses are summed over the cells and divided by the batch size, as Darknet does.

>>> import lucid
>>> from lucid.models.detection import yolo_v3
>>> model = yolo_v3(num_classes=3, width_mult=0.125, depths=(1, 1, 1, 1, 1))
>>> losses = model(lucid.rand(1, 3, 64, 64),
...                [{"boxes": lucid.tensor([[8.0, 8.0, 40.0, 40.0]]), "labels": lucid.tensor([1])}])
>>> sorted(losses)
['loss_box', 'loss_cls', 'loss_obj']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.data.ops import batched_nms
from lucid.models._registry import register_model
from lucid.models.detection.darknet import (
    ConvBNAct,
    CSPDarknet53,
    Darknet19,
    Darknet53,
    YOLOv1Backbone,
    _ch,
)

__all__ = [
    "YOLOv1",
    "YOLOv2",
    "YOLOv3",
    "YOLOv3Tiny",
    "YOLOv4",
    "yolo_v1",
    "yolo_v2",
    "yolo_v3",
    "yolo_v3_tiny",
    "yolo_v4",
]

_V1_PAPER = ('Redmon et al., "You Only Look Once: Unified, Real-Time Object Detection", '
             "CVPR 2016")  # fmt: skip
_V2_PAPER = 'Redmon & Farhadi, "YOLO9000: Better, Faster, Stronger", CVPR 2017'
_V3_PAPER = 'Redmon & Farhadi, "YOLOv3: An Incremental Improvement", arXiv 2018'
_V4_PAPER = ('Bochkovskiy et al., "YOLOv4: Optimal Speed and Accuracy of Object Detection", '
             "arXiv 2020")  # fmt: skip

# yolov2.cfg's COCO anchors, in cells of the stride-32 grid
YOLOV2_ANCHORS = ((0.57273, 0.677385), (1.87446, 2.06253), (3.33843, 5.47434),
                  (7.88282, 3.52778), (9.77052, 9.16828))  # fmt: skip
# yolov3.cfg's and yolov4.cfg's anchors in pixels, for the stride-8, -16 and -32 outputs
YOLOV3_ANCHORS = (((10, 13), (16, 30), (33, 23)), ((30, 61), (62, 45), (59, 119)),
                  ((116, 90), (156, 198), (373, 326)))  # fmt: skip
# yolov3-tiny.cfg's anchors for its stride-16 (mask 1,2,3) and stride-32 (mask 3,4,5) outputs
YOLOV3_TINY_ANCHORS = (((23, 27), (37, 58), (81, 82)), ((81, 82), (135, 169), (344, 319)))
YOLOV4_ANCHORS = (((12, 16), (19, 36), (40, 28)), ((36, 75), (76, 55), (72, 146)),
                  ((142, 110), (192, 243), (459, 401)))  # fmt: skip

Target = dict[str, Tensor]


# ----------------------------------------------------------------------------- helpers


def _as_batch(images: Tensor | Sequence[Tensor], name: str) -> Tensor:
    if isinstance(images, Tensor):
        x = images
    else:
        imgs = list(images)
        if not imgs or any(im.ndim != 3 for im in imgs):
            raise ValueError(f"{name}: expected a (N, 3, H, W) tensor or a list of (3, H, W) "
                             f"tensors, got {[tuple(im.shape) for im in imgs]}")  # fmt: skip
        if len({tuple(im.shape) for im in imgs}) != 1:
            raise ValueError(f"{name}: the images of a batch must share one size, got "
                             f"{[tuple(im.shape) for im in imgs]}")  # fmt: skip
        x = lucid.stack(imgs)
    if x.ndim != 4 or x.shape[1] != 3:
        raise ValueError(f"{name}: expected images of shape (N, 3, H, W), got {tuple(x.shape)}")
    return x


def _check_targets(targets: Any, n: int, num_classes: int, name: str) -> list[tuple[Any, Any]]:
    """The targets as numpy ``(boxes (M, 4) float64, labels (M,) int64 in 0..C-1)`` pairs."""
    if targets is None:
        raise ValueError(f"{name}: targets should not be None when in training mode")
    if not isinstance(targets, (list, tuple)) or len(targets) != n:
        got = len(targets) if isinstance(targets, (list, tuple)) else type(targets).__name__
        raise ValueError(f"{name}: expected a list of {n} target dicts, got {got}")
    out = []
    for t in targets:
        if not isinstance(t, dict) or "boxes" not in t or "labels" not in t:
            raise ValueError(f"{name}: each target must be a dict with 'boxes' and 'labels', "
                             f"got {t!r}")  # fmt: skip
        boxes = np.asarray(t["boxes"].numpy(), dtype=np.float64).reshape(-1, 4)
        labels = np.asarray(t["labels"].numpy()).astype(np.int64).reshape(-1)
        if boxes.shape[0] != labels.shape[0]:
            raise ValueError(f"{name}: {boxes.shape[0]} boxes but {labels.shape[0]} labels")
        if labels.size and (labels.min() < 1 or labels.max() > num_classes):
            raise ValueError(f"{name}: labels must lie in 1..{num_classes} (0 is the "
                             f"background), got {sorted(set(labels.tolist()))}")  # fmt: skip
        if boxes.size and ((boxes[:, 2] <= boxes[:, 0]) | (boxes[:, 3] <= boxes[:, 1])).any():
            raise ValueError(f"{name}: boxes must be xyxy with x2 > x1 and y2 > y1")
        out.append((boxes, labels - 1))
    return out


def _iou_np(a: Any, b: Any) -> Any:
    """Pairwise IoU of xyxy boxes ``a`` (P, 4) and ``b`` (M, 4)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(rb - lt, 0, None).prod(-1)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def _ciou(p: Tensor, t: Tensor, eps: float = 1e-7) -> Tensor:
    """Elementwise complete IoU (Zheng et al. 2020) of xyxy boxes ``p`` and ``t`` (..., 4):
    IoU minus the normalised centre distance minus ``alpha v`` (aspect ratio term)."""
    px1, py1, px2, py2 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    tx1, ty1, tx2, ty2 = t[..., 0], t[..., 1], t[..., 2], t[..., 3]
    iw = (lucid.minimum(px2, tx2) - lucid.maximum(px1, tx1)).clamp(min=0)
    ih = (lucid.minimum(py2, ty2) - lucid.maximum(py1, ty1)).clamp(min=0)
    inter = iw * ih
    pw, ph, tw, th = px2 - px1, py2 - py1, tx2 - tx1, ty2 - ty1
    iou = inter / (pw * ph + tw * th - inter + eps)
    cw = lucid.maximum(px2, tx2) - lucid.minimum(px1, tx1)
    ch = lucid.maximum(py2, ty2) - lucid.minimum(py1, ty1)
    diag = cw * cw + ch * ch + eps
    dist = ((px1 + px2 - tx1 - tx2) ** 2 + (py1 + py2 - ty1 - ty2) ** 2) / 4
    v = (4 / np.pi**2) * (lucid.atan(tw / (th + eps)) - lucid.atan(pw / (ph + eps))) ** 2
    with lucid.no_grad():
        alpha = v / (1 - iou + v + eps)
    return iou - dist / diag - alpha.detach() * v


def _select(boxes: Any, scores: Any, height: int, width: int, score_thresh: float,
            nms_thresh: float, detections_per_img: int, topk: int = 1000) -> Target:  # fmt: skip
    """torchvision's postprocessing of one image: ``boxes`` (K, 4) xyxy and ``scores``
    (K, C) numpy; keep the (box, class) pairs over ``score_thresh`` (the best ``topk``), clip,
    per-class NMS, the best ``detections_per_img``."""
    boxes = boxes.copy()
    boxes[:, 0::2] = boxes[:, 0::2].clip(0, width)
    boxes[:, 1::2] = boxes[:, 1::2].clip(0, height)
    idx, cls = np.nonzero(scores > score_thresh)
    sc = scores[idx, cls]
    if sc.size > topk:
        keep = np.argsort(-sc, kind="stable")[:topk]
        idx, cls, sc = idx[keep], cls[keep], sc[keep]
    b = boxes[idx]
    ok = (b[:, 2] - b[:, 0] > 1e-3) & (b[:, 3] - b[:, 1] > 1e-3)
    b, sc, cls = b[ok], sc[ok], cls[ok]
    if sc.size:
        keep_t = batched_nms(lucid.tensor(b.astype(np.float32)),
                             lucid.tensor(sc.astype(np.float32)),
                             lucid.tensor(cls.astype(np.int64)), nms_thresh)  # fmt: skip
        keep = np.asarray(keep_t.numpy(), dtype=np.int64)[:detections_per_img]
        b, sc, cls = b[keep], sc[keep], cls[keep]
    return {
        "boxes": lucid.tensor(b.astype(np.float32).reshape(-1, 4)),
        "scores": lucid.tensor(sc.astype(np.float32).reshape(-1)),
        "labels": lucid.tensor(cls.astype(np.int64).reshape(-1) + 1),
    }


class _YOLO(nn.Module):
    """What the four versions share: the train/eval behaviour of ``forward``."""

    num_classes: int
    score_thresh: float
    nms_thresh: float
    detections_per_img: int

    def forward(self, images: Tensor | Sequence[Tensor],
                targets: list[Target] | None = None) -> Any:  # fmt: skip
        """Training mode: the dict of losses for ``targets``; eval mode: the detections, one
        dict of ``boxes``, ``scores``, ``labels`` per image (see the module docstring)."""
        name = type(self).__name__
        x = _as_batch(images, name)
        self._check_size(x)
        if self.training:
            tg = _check_targets(targets, x.shape[0], self.num_classes, name)
            return self.compute_loss(self.forward_raw(x), tg, (x.shape[2], x.shape[3]))
        with lucid.no_grad():
            return self.postprocess(self.forward_raw(x), (x.shape[2], x.shape[3]))

    def get_loss(self, images: Tensor | Sequence[Tensor], targets: list[Target]) -> Tensor:
        """The total training loss (the sum of :meth:`forward`'s losses), in any mode."""
        x = _as_batch(images, type(self).__name__)
        self._check_size(x)
        tg = _check_targets(targets, x.shape[0], self.num_classes, type(self).__name__)
        losses = self.compute_loss(self.forward_raw(x), tg, (x.shape[2], x.shape[3]))
        return losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]

    def predict(self, images: Tensor | Sequence[Tensor]) -> list[Target]:
        """The detections of eval mode, whatever the module's mode (which it leaves as is)."""
        x = _as_batch(images, type(self).__name__)
        self._check_size(x)
        was = self.training
        self.eval()
        try:
            with lucid.no_grad():
                return self.postprocess(self.forward_raw(x), (x.shape[2], x.shape[3]))
        finally:
            self.train(was)

    def _check_size(self, x: Tensor) -> None:
        if x.shape[2] % 32 or x.shape[3] % 32:
            raise ValueError(f"{type(self).__name__}: image height and width must be "
                             f"multiples of 32, got {tuple(x.shape[2:])}")  # fmt: skip

    def forward_raw(self, x: Tensor) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def compute_loss(self, out: Any, targets: list[tuple[Any, Any]],
                     size: tuple[int, int]) -> dict[str, Tensor]:  # pragma: no cover  # fmt: skip
        raise NotImplementedError

    def postprocess(self, out: Any, size: tuple[int, int]) -> list[Target]:  # pragma: no cover
        raise NotImplementedError


# ----------------------------------------------------------------------------- YOLO v1


class YOLOv1(_YOLO):
    """YOLO v1 (Redmon et al. 2016): the 24-convolution backbone, a 4096-wide fully
    connected layer (leaky ReLU, dropout 0.5) and a linear layer to the ``S x S x (B 5 + C)``
    predictions (``S = grid_size = 7``, ``B = num_boxes = 2``, ``C = num_classes = 20`` for
    VOC: the paper's 7x7x30). The flat output is laid out as Darknet's detection layer lays it
    out: the ``S S C`` class probabilities, the ``S S B`` confidences, then ``S S B 4``
    coordinates (x, y offsets in the cell, square roots of width and height relative to the
    image). ``raw`` outputs come from :meth:`forward_raw`; the loss is the paper's eq. 3."""

    def __init__(self, num_classes: int = 20, num_boxes: int = 2, grid_size: int = 7,
                 image_size: int = 448, width_mult: float = 1.0, hidden_dim: int = 4096,
                 batch_norm: bool = False, dropout: float = 0.5, lambda_coord: float = 5.0,
                 lambda_noobj: float = 0.5, score_thresh: float = 0.05,
                 nms_thresh: float = 0.5, detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        if image_size % 64:
            raise ValueError(f"YOLOv1: image_size must be a multiple of 64, got {image_size}")
        self.num_classes, self.num_boxes, self.grid_size = num_classes, num_boxes, grid_size
        self.image_size = image_size
        self.lambda_coord, self.lambda_noobj = lambda_coord, lambda_noobj
        self.score_thresh, self.nms_thresh = score_thresh, nms_thresh
        self.detections_per_img = detections_per_img
        self.backbone = YOLOv1Backbone(width_mult, batch_norm)
        feat = self.backbone.out_channels * (image_size // 64) ** 2
        out = grid_size * grid_size * (num_boxes * 5 + num_classes)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(feat, hidden_dim), nn.LeakyReLU(0.1),
                                  nn.Dropout(dropout), nn.Linear(hidden_dim, out))  # fmt: skip

    def _check_size(self, x: Tensor) -> None:
        if (x.shape[2], x.shape[3]) != (self.image_size, self.image_size):
            raise ValueError(f"YOLOv1: expected {self.image_size}x{self.image_size} images "
                             f"(image_size), got {tuple(x.shape[2:])}")  # fmt: skip

    def forward_raw(self, x: Tensor) -> Tensor:
        """The ``(N, S S (C + 5 B))`` output of the network."""
        return self.head(self.backbone(x))  # type: ignore[no-any-return]

    def _split(self, out: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        n, s, b, c = out.shape[0], self.grid_size, self.num_boxes, self.num_classes
        probs = out[:, : s * s * c].reshape(n, s, s, c)
        conf = out[:, s * s * c : s * s * (c + b)].reshape(n, s, s, b)
        coords = out[:, s * s * (c + b) :].reshape(n, s, s, b, 4)
        return probs, conf, coords

    def _boxes_np(self, coords: Any, size: tuple[int, int]) -> Any:
        """xyxy pixel boxes (N, S, S, B, 4) of the coordinate predictions."""
        s = self.grid_size
        h, w = size
        gx = np.arange(s, dtype=np.float64)[None, None, :, None]
        gy = np.arange(s, dtype=np.float64)[None, :, None, None]
        cx = (coords[..., 0] + gx) / s * w
        cy = (coords[..., 1] + gy) / s * h
        bw, bh = coords[..., 2] ** 2 * w, coords[..., 3] ** 2 * h
        return np.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], -1)

    def compute_loss(self, out: Tensor, targets: list[tuple[Any, Any]],
                     size: tuple[int, int]) -> dict[str, Tensor]:  # fmt: skip
        """The sum-squared loss of the paper's eq. 3, divided by the batch size."""
        probs, conf, coords = self._split(out)
        n, s, b, c = out.shape[0], self.grid_size, self.num_boxes, self.num_classes
        h, w = size
        pred_boxes = self._boxes_np(coords.detach().numpy().astype(np.float64), size)
        obj_cell = np.zeros((n, s, s), np.float32)
        resp = np.zeros((n, s, s, b), np.float32)
        tcoord = np.zeros((n, s, s, b, 4), np.float32)
        tconf = np.zeros((n, s, s, b), np.float32)
        tcls = np.zeros((n, s, s, c), np.float32)
        for i, (boxes, labels) in enumerate(targets):
            for box, label in zip(boxes, labels):
                cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                gi = min(int(cx / w * s), s - 1)
                gj = min(int(cy / h * s), s - 1)
                ious = _iou_np(pred_boxes[i, gj, gi], box[None])[:, 0]
                k = int(np.argmax(ious))  # the responsible predictor
                obj_cell[i, gj, gi] = 1
                resp[i, gj, gi] = 0
                resp[i, gj, gi, k] = 1
                tcoord[i, gj, gi, k] = (cx / w * s - gi, cy / h * s - gj,
                                        np.sqrt((box[2] - box[0]) / w),
                                        np.sqrt((box[3] - box[1]) / h))  # fmt: skip
                tconf[i, gj, gi, k] = ious[k]
                tcls[i, gj, gi] = 0
                tcls[i, gj, gi, label] = 1
        resp_t, obj_t = lucid.tensor(resp), lucid.tensor(obj_cell)
        coord_err = ((coords - lucid.tensor(tcoord)) ** 2).sum(-1)
        loss_box = self.lambda_coord * (resp_t * coord_err).sum()
        conf_err = (conf - lucid.tensor(tconf)) ** 2
        loss_obj = (resp_t * conf_err).sum() + self.lambda_noobj * ((1 - resp_t) * conf_err).sum()
        cls_err = ((probs - lucid.tensor(tcls)) ** 2).sum(-1)
        loss_cls = (obj_t * cls_err).sum()
        return {"loss_box": loss_box / n, "loss_obj": loss_obj / n, "loss_cls": loss_cls / n}

    def postprocess(self, out: Tensor, size: tuple[int, int]) -> list[Target]:
        """Class-specific confidences ``Pr(class | object) * confidence`` per predicted box,
        then :func:`_select`'s thresholding and per-class NMS."""
        probs, conf, coords = (t.detach().numpy().astype(np.float64) for t in self._split(out))
        boxes = self._boxes_np(coords, size)
        scores = np.clip(conf[..., None] * probs[:, :, :, None, :], 0, 1)  # (N, S, S, B, C)
        n = out.shape[0]
        return [_select(boxes[i].reshape(-1, 4), scores[i].reshape(-1, self.num_classes),
                        size[0], size[1], self.score_thresh, self.nms_thresh,
                        self.detections_per_img) for i in range(n)]  # fmt: skip


# ----------------------------------------------------------------------------- anchors


class _AnchorYOLO(_YOLO):
    """The anchor-box detectors (v2, v3, v4): ``forward_raw`` returns one ``(N, A (5 + C), H,
    W)`` map per output (stride order), each anchor's ``(t_x, t_y, t_w, t_h, objectness,
    class logits)``; a box is ``((sigmoid(t_xy) s - (s - 1) / 2 + cell) stride, anchor
    exp(t_wh))`` with ``s`` the grid-sensitivity factor (1 but in v4)."""

    def _setup_anchors(self, anchors: Sequence[Sequence[Sequence[float]]],
                       strides: Sequence[int], scale_xy: Sequence[float], class_loss: str,
                       box_loss: str, ignore_thresh: float, assign_thresh: float | None,
                       lambda_box: float, lambda_obj: float, lambda_cls: float,
                       score_thresh: float, nms_thresh: float,
                       detections_per_img: int) -> None:  # fmt: skip
        if len(anchors) != len(strides) or len(scale_xy) != len(strides):
            raise ValueError(f"{type(self).__name__}: expected {len(strides)} anchor groups, "
                             f"got {len(anchors)}")  # fmt: skip
        self.anchors = [np.asarray(a, dtype=np.float64).reshape(-1, 2) for a in anchors]
        self.strides = list(strides)
        self.scale_xy = list(scale_xy)
        self.class_loss, self.box_loss = class_loss, box_loss
        self.ignore_thresh, self.assign_thresh = ignore_thresh, assign_thresh
        self.lambda_box, self.lambda_obj, self.lambda_cls = lambda_box, lambda_obj, lambda_cls
        self.score_thresh, self.nms_thresh = score_thresh, nms_thresh
        self.detections_per_img = detections_per_img

    def _init_objectness(self, convs: Sequence[nn.Module], prior: float = 0.01) -> None:
        """Objectness biases at ``log(prior / (1 - prior))``: nearly every cell is background,
        and with a prior of 0.5 the first steps of training go to learning that (RetinaNet's
        initialisation of its classification biases)."""
        for conv in convs:
            assert isinstance(conv, nn.Conv2d) and conv.bias is not None
            b = conv.bias.detach().numpy().copy().reshape(-1, 5 + self.num_classes)
            b[:, 4] = np.log(prior / (1 - prior))
            with lucid.no_grad():
                conv.bias.copy_(lucid.tensor(b.reshape(-1).astype(np.float32)))

    def _levels(self, out: Sequence[Tensor]) -> list[Tensor]:
        """Each map as ``(N, A, H, W, 5 + C)``."""
        res = []
        for t, anc in zip(out, self.anchors):
            n, _, h, w = t.shape
            res.append(t.reshape(n, len(anc), 5 + self.num_classes, h, w).permute(0, 1, 3, 4, 2))
        return res

    def _decode(self, p: Tensor, level: int) -> tuple[Tensor, Tensor]:
        """Centres and sizes in pixels, ``(N, A, H, W, 2)`` each (differentiable)."""
        _, a, h, w, _ = p.shape
        stride, s = self.strides[level], self.scale_xy[level]
        grid = np.stack(np.meshgrid(np.arange(w), np.arange(h)), -1).astype(np.float32)
        xy = (p[..., 0:2].sigmoid() * s - (s - 1) / 2 + lucid.tensor(grid[None, None])) * stride
        anc = lucid.tensor(self.anchors[level].astype(np.float32).reshape(1, a, 1, 1, 2))
        wh = p[..., 2:4].clamp(max=10.0).exp() * anc  # clamp: no overflow from a wild logit
        return xy, wh

    def _build_targets(self, levels: list[Tensor], targets: list[tuple[Any, Any]],
                       size: tuple[int, int]) -> list[dict[str, Any]]:  # fmt: skip
        h_img, w_img = size
        all_anchors = np.concatenate(self.anchors)
        owner = np.concatenate([[(li, k) for k in range(len(a))]
                                for li, a in enumerate(self.anchors)])  # fmt: skip
        out = []
        for p in levels:
            n, a, h, w, _ = p.shape
            out.append({"pos": np.zeros((n, a, h, w), np.float32),
                        "txy": np.zeros((n, a, h, w, 2), np.float32),
                        "twh": np.zeros((n, a, h, w, 2), np.float32),
                        "box": np.tile(np.array([0, 0, 1, 1], np.float32), (n, a, h, w, 1)),
                        "weight": np.zeros((n, a, h, w), np.float32),
                        "cls": np.zeros((n, a, h, w, self.num_classes), np.float32),
                        "ignore": np.zeros((n, a, h, w), bool)})  # fmt: skip
        # the predictions that overlap a truth by more than ignore_thresh get no "no object"
        # loss
        for li, p in enumerate(levels):
            xy, wh = self._decode(p.detach(), li)
            xy_np, wh_np = xy.numpy(), wh.numpy()
            pb = np.concatenate([xy_np - wh_np / 2, xy_np + wh_np / 2], -1)
            for i, (boxes, _) in enumerate(targets):
                if len(boxes):
                    best = _iou_np(pb[i].reshape(-1, 4), boxes).max(1)
                    out[li]["ignore"][i] = (best > self.ignore_thresh).reshape(pb.shape[1:4])
        for i, (boxes, labels) in enumerate(targets):
            for box, label in zip(boxes, labels):
                bw, bh = box[2] - box[0], box[3] - box[1]
                cx, cy = box[0] + bw / 2, box[1] + bh / 2
                inter = np.minimum(all_anchors[:, 0], bw) * np.minimum(all_anchors[:, 1], bh)
                shape_iou = inter / (all_anchors.prod(1) + bw * bh - inter)
                chosen = {int(np.argmax(shape_iou))}
                if self.assign_thresh is not None:
                    chosen |= {int(j) for j in np.nonzero(shape_iou > self.assign_thresh)[0]}
                for j in sorted(chosen):
                    li, k = int(owner[j][0]), int(owner[j][1])
                    t, stride = out[li], self.strides[li]
                    hh, ww = t["pos"].shape[2:4]
                    gi = min(max(int(cx / stride), 0), ww - 1)
                    gj = min(max(int(cy / stride), 0), hh - 1)
                    t["pos"][i, k, gj, gi] = 1
                    t["txy"][i, k, gj, gi] = (cx / stride - gi, cy / stride - gj)
                    t["twh"][i, k, gj, gi] = np.log([bw / self.anchors[li][k, 0],
                                                     bh / self.anchors[li][k, 1]])  # fmt: skip
                    t["box"][i, k, gj, gi] = box
                    t["weight"][i, k, gj, gi] = 2 - bw * bh / (w_img * h_img)
                    t["cls"][i, k, gj, gi] = 0
                    t["cls"][i, k, gj, gi, label] = 1
        return out

    def compute_loss(self, out: Sequence[Tensor], targets: list[tuple[Any, Any]],
                     size: tuple[int, int]) -> dict[str, Tensor]:  # fmt: skip
        """Box, objectness and class losses over every output (see the module docstring)."""
        levels = self._levels(out)
        n = levels[0].shape[0]
        tg = self._build_targets(levels, targets, size)
        loss_box: Tensor | float = 0.0
        loss_obj: Tensor | float = 0.0
        loss_cls: Tensor | float = 0.0
        for li, (p, t) in enumerate(zip(levels, tg)):
            pos = lucid.tensor(t["pos"])
            if self.box_loss == "ciou":
                xy, wh = self._decode(p, li)
                pred = lucid.cat([xy - wh / 2, xy + wh / 2], dim=-1)
                ciou = _ciou(pred, lucid.tensor(t["box"]))
                loss_box = loss_box + (pos * (1 - ciou)).sum()
            else:
                wgt = pos * lucid.tensor(t["weight"])
                err = ((p[..., 0:2].sigmoid() - lucid.tensor(t["txy"])) ** 2).sum(-1)
                err = err + ((p[..., 2:4] - lucid.tensor(t["twh"])) ** 2).sum(-1)
                loss_box = loss_box + (wgt * err).sum()
            obj_w = lucid.tensor(np.maximum(t["pos"], 1.0 - t["ignore"]).astype(np.float32))
            loss_obj = loss_obj + F.binary_cross_entropy_with_logits(
                p[..., 4], pos, weight=obj_w, reduction="sum"
            )
            cls_t = lucid.tensor(t["cls"])
            logits = p[..., 5:]
            if self.class_loss == "softmax":
                ce = -(F.log_softmax(logits, dim=-1) * cls_t).sum(-1)
                loss_cls = loss_cls + (pos * ce).sum()
            else:
                loss_cls = loss_cls + F.binary_cross_entropy_with_logits(
                    logits, cls_t, weight=pos.unsqueeze(-1), reduction="sum"
                )
        total = {"loss_box": loss_box, "loss_obj": loss_obj, "loss_cls": loss_cls}
        scale = {"loss_box": self.lambda_box, "loss_obj": self.lambda_obj,
                 "loss_cls": self.lambda_cls}  # fmt: skip
        return {k: v * scale[k] / n for k, v in total.items()}  # type: ignore[misc]

    def postprocess(self, out: Sequence[Tensor], size: tuple[int, int]) -> list[Target]:
        """Scores ``sigmoid(objectness) * P(class)`` per anchor and class, boxes decoded in
        pixels, then :func:`_select` (threshold, per-class NMS) per image."""
        boxes, scores = [], []
        for li, p in enumerate(self._levels(out)):
            xy, wh = (t.detach().numpy().astype(np.float64) for t in self._decode(p, li))
            pn = p.detach().numpy().astype(np.float64)
            obj = 1 / (1 + np.exp(-pn[..., 4]))
            logits = pn[..., 5:]
            if self.class_loss == "softmax":
                e = np.exp(logits - logits.max(-1, keepdims=True))
                prob = e / e.sum(-1, keepdims=True)
            else:
                prob = 1 / (1 + np.exp(-logits))
            n = pn.shape[0]
            boxes.append(np.concatenate([xy - wh / 2, xy + wh / 2], -1).reshape(n, -1, 4))
            scores.append((obj[..., None] * prob).reshape(n, -1, self.num_classes))
        b, s = np.concatenate(boxes, 1), np.concatenate(scores, 1)
        return [_select(b[i], s[i], size[0], size[1], self.score_thresh, self.nms_thresh,
                        self.detections_per_img) for i in range(b.shape[0])]  # fmt: skip


def _head_out(channels: int, num_anchors: int, num_classes: int) -> nn.Conv2d:
    return nn.Conv2d(channels, num_anchors * (5 + num_classes), 1)


class YOLOv2(_AnchorYOLO):
    """YOLO v2 (Redmon & Farhadi 2017) as ``yolov2.cfg`` builds it: Darknet-19, two 3x3 1024
    convolutions, the passthrough layer (the stride-16 map through a 1x1 64 convolution and
    a 2x2 space-to-depth, concatenated in front), a 3x3 1024 convolution and a 1x1
    convolution to ``A (5 + C)`` channels (5 anchors, 80 COCO classes: 425). ``anchors`` are
    in cells of the stride-32 grid, as in the cfg. Softmax classes."""

    def __init__(self, num_classes: int = 80,
                 anchors: Sequence[Sequence[float]] = YOLOV2_ANCHORS, width_mult: float = 1.0,
                 ignore_thresh: float = 0.6, lambda_box: float = 1.0, lambda_obj: float = 1.0,
                 lambda_cls: float = 1.0, score_thresh: float = 0.05, nms_thresh: float = 0.45,
                 detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes
        self.backbone = Darknet19(width_mult)
        c4, c5 = self.backbone.out_channels
        c = _ch(1024, width_mult)
        p = _ch(64, width_mult)
        self.conv1 = ConvBNAct(c5, c, 3)
        self.conv2 = ConvBNAct(c, c, 3)
        self.passthrough = ConvBNAct(c4, p, 1)
        self.conv3 = ConvBNAct(4 * p + c, c, 3)
        self.head = _head_out(c, len(anchors), num_classes)
        px = [[(w * 32, h * 32) for w, h in anchors]]
        self._setup_anchors(px, [32], [1.0], "softmax", "mse", ignore_thresh, None, lambda_box,
                            lambda_obj, lambda_cls, score_thresh, nms_thresh,
                            detections_per_img)  # fmt: skip
        self._init_objectness([self.head])

    def forward_raw(self, x: Tensor) -> list[Tensor]:
        """The one stride-32 output map."""
        c4, c5 = self.backbone(x)
        y = self.conv2(self.conv1(c5))
        route = F.pixel_unshuffle(self.passthrough(c4), 2)
        return [self.head(self.conv3(lucid.cat([route, y], dim=1)))]


def _five(cin: int, c: int, act: str = "leaky") -> nn.Sequential:
    """Darknet's 1x1 c, 3x3 2c, 1x1 c, 3x3 2c, 1x1 c block of the YOLO v3/v4 necks."""
    return nn.Sequential(ConvBNAct(cin, c, 1, act=act), ConvBNAct(c, 2 * c, 3, act=act),
                         ConvBNAct(2 * c, c, 1, act=act), ConvBNAct(c, 2 * c, 3, act=act),
                         ConvBNAct(2 * c, c, 1, act=act))  # fmt: skip


class YOLOv3(_AnchorYOLO):
    """YOLO v3 (Redmon & Farhadi 2018) as ``yolov3.cfg`` builds it: Darknet-53 and three
    outputs (strides 8, 16, 32; 3 anchors each), the coarser one upsampled (1x1 convolution,
    nearest x2) and concatenated to the finer backbone map; logistic classes."""

    def __init__(self, num_classes: int = 80,
                 anchors: Sequence[Sequence[Sequence[float]]] = YOLOV3_ANCHORS,
                 width_mult: float = 1.0, depths: Sequence[int] = (1, 2, 8, 8, 4),
                 ignore_thresh: float = 0.5, lambda_box: float = 1.0, lambda_obj: float = 1.0,
                 lambda_cls: float = 1.0, score_thresh: float = 0.05, nms_thresh: float = 0.45,
                 detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes
        self.backbone = Darknet53(width_mult, depths)
        c3, c4, c5 = self.backbone.out_channels
        h5, h4, h3 = c5 // 2, c4 // 2, c3 // 2
        na = [len(a) for a in anchors]
        self.block5 = _five(c5, h5)
        self.out5 = nn.Sequential(ConvBNAct(h5, c5, 3), _head_out(c5, na[2], num_classes))
        self.lateral5 = nn.Sequential(ConvBNAct(h5, h4, 1), nn.Upsample(scale_factor=2))
        self.block4 = _five(h4 + c4, h4)
        self.out4 = nn.Sequential(ConvBNAct(h4, c4, 3), _head_out(c4, na[1], num_classes))
        self.lateral4 = nn.Sequential(ConvBNAct(h4, h3, 1), nn.Upsample(scale_factor=2))
        self.block3 = _five(h3 + c3, h3)
        self.out3 = nn.Sequential(ConvBNAct(h3, c3, 3), _head_out(c3, na[0], num_classes))
        self._setup_anchors(anchors, [8, 16, 32], [1.0] * 3, "sigmoid", "mse", ignore_thresh,
                            None, lambda_box, lambda_obj, lambda_cls, score_thresh, nms_thresh,
                            detections_per_img)  # fmt: skip
        self._init_objectness([self.out3[1], self.out4[1], self.out5[1]])

    def forward_raw(self, x: Tensor) -> list[Tensor]:
        """The stride-8, -16 and -32 output maps."""
        c3, c4, c5 = self.backbone(x)
        y5 = self.block5(c5)
        y4 = self.block4(lucid.cat([self.lateral5(y5), c4], dim=1))
        y3 = self.block3(lucid.cat([self.lateral4(y4), c3], dim=1))
        return [self.out3(y3), self.out4(y4), self.out5(y5)]


class _DarknetMaxPool(nn.Module):
    """Darknet's ``[maxpool] size=2 stride=1``: the map keeps its size, the window reaching
    past the right and bottom edges covering the valid cells only (replicate padding)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(F.pad(x, (0, 1, 0, 1), mode="replicate"), 2, 1)  # type: ignore[no-any-return]


class YOLOv3Tiny(_AnchorYOLO):
    """YOLO v3-tiny as ``yolov3-tiny.cfg`` builds it: seven 3x3 convolutions (16 to 1024
    channels) with six max-pools (the last of stride 1), and two outputs (strides 16 and 32,
    3 anchors each), the coarser one upsampled and concatenated to the stride-16 map; logistic
    classes, ``ignore_thresh = 0.7``."""

    def __init__(self, num_classes: int = 80,
                 anchors: Sequence[Sequence[Sequence[float]]] = YOLOV3_TINY_ANCHORS,
                 width_mult: float = 1.0, ignore_thresh: float = 0.7, lambda_box: float = 1.0,
                 lambda_obj: float = 1.0, lambda_cls: float = 1.0, score_thresh: float = 0.05,
                 nms_thresh: float = 0.45, detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes

        def c(n: int) -> int:
            return _ch(n, width_mult)

        layers: list[nn.Module] = [ConvBNAct(3, c(16), 3)]
        for i, o in [(16, 32), (32, 64), (64, 128), (128, 256)]:
            layers += [nn.MaxPool2d(2, 2), ConvBNAct(c(i), c(o), 3)]
        self.features = nn.Sequential(*layers)  # stride 16, 256 channels
        self.features32 = nn.Sequential(nn.MaxPool2d(2, 2), ConvBNAct(c(256), c(512), 3),
                                        _DarknetMaxPool(), ConvBNAct(c(512), c(1024), 3),
                                        ConvBNAct(c(1024), c(256), 1))  # fmt: skip
        na = [len(a) for a in anchors]
        self.out5 = nn.Sequential(ConvBNAct(c(256), c(512), 3), _head_out(c(512), na[1],
                                                                          num_classes))  # fmt: skip
        self.lateral5 = nn.Sequential(ConvBNAct(c(256), c(128), 1), nn.Upsample(scale_factor=2))
        self.out4 = nn.Sequential(ConvBNAct(c(128) + c(256), c(256), 3),
                                  _head_out(c(256), na[0], num_classes))  # fmt: skip
        self._setup_anchors(anchors, [16, 32], [1.0] * 2, "sigmoid", "mse", ignore_thresh,
                            None, lambda_box, lambda_obj, lambda_cls, score_thresh, nms_thresh,
                            detections_per_img)  # fmt: skip
        self._init_objectness([self.out4[1], self.out5[1]])

    def forward_raw(self, x: Tensor) -> list[Tensor]:
        """The stride-16 and -32 output maps."""
        c4 = self.features(x)
        y5 = self.features32(c4)
        return [self.out4(lucid.cat([self.lateral5(y5), c4], dim=1)), self.out5(y5)]


class _SPP(nn.Module):
    """Spatial pyramid pooling of YOLO v4: max-pools 13, 9, 5 (stride 1), concatenated with
    the input (``[route] layers=-1,-3,-5,-6``)."""

    def forward(self, x: Tensor) -> Tensor:
        pools = [F.max_pool2d(x, k, 1, k // 2) for k in (13, 9, 5)]
        return lucid.cat([*pools, x], dim=1)


class YOLOv4(_AnchorYOLO):
    """YOLO v4 (Bochkovskiy et al. 2020) as ``yolov4.cfg`` builds it: CSPDarknet-53 (Mish),
    SPP on the stride-32 map, a PANet neck (top-down then bottom-up paths, leaky ReLU) and
    three outputs (strides 8, 16, 32; 3 anchors each); CIoU box loss."""

    def __init__(self, num_classes: int = 80,
                 anchors: Sequence[Sequence[Sequence[float]]] = YOLOV4_ANCHORS,
                 width_mult: float = 1.0, depths: Sequence[int] = (1, 2, 8, 8, 4),
                 scale_xy: Sequence[float] = (1.2, 1.1, 1.05), ignore_thresh: float = 0.7,
                 assign_thresh: float | None = 0.213, lambda_box: float = 0.07,
                 lambda_obj: float = 1.0, lambda_cls: float = 1.0, score_thresh: float = 0.05,
                 nms_thresh: float = 0.45, detections_per_img: int = 100) -> None:  # fmt: skip
        super().__init__()
        self.num_classes = num_classes
        self.backbone = CSPDarknet53(width_mult, depths)
        c3, c4, c5 = self.backbone.out_channels
        h5, h4, h3 = c5 // 2, c4 // 2, c3 // 2
        na = [len(a) for a in anchors]
        # the stride-32 map: 3 convolutions, SPP, 3 convolutions
        self.pre_spp = nn.Sequential(ConvBNAct(c5, h5, 1), ConvBNAct(h5, c5, 3),
                                     ConvBNAct(c5, h5, 1))  # fmt: skip
        self.spp = _SPP()
        self.post_spp = nn.Sequential(ConvBNAct(4 * h5, h5, 1), ConvBNAct(h5, c5, 3),
                                      ConvBNAct(c5, h5, 1))  # fmt: skip
        # top-down
        self.up5 = nn.Sequential(ConvBNAct(h5, h4, 1), nn.Upsample(scale_factor=2))
        self.lat4 = ConvBNAct(c4, h4, 1)
        self.td4 = _five(2 * h4, h4)
        self.up4 = nn.Sequential(ConvBNAct(h4, h3, 1), nn.Upsample(scale_factor=2))
        self.lat3 = ConvBNAct(c3, h3, 1)
        self.td3 = _five(2 * h3, h3)
        # bottom-up and the outputs
        self.out3 = nn.Sequential(ConvBNAct(h3, c3, 3), _head_out(c3, na[0], num_classes))
        self.down3 = ConvBNAct(h3, h4, 3, 2)
        self.bu4 = _five(2 * h4, h4)
        self.out4 = nn.Sequential(ConvBNAct(h4, c4, 3), _head_out(c4, na[1], num_classes))
        self.down4 = ConvBNAct(h4, h5, 3, 2)
        self.bu5 = _five(2 * h5, h5)
        self.out5 = nn.Sequential(ConvBNAct(h5, c5, 3), _head_out(c5, na[2], num_classes))
        self._setup_anchors(anchors, [8, 16, 32], scale_xy, "sigmoid", "ciou", ignore_thresh,
                            assign_thresh, lambda_box, lambda_obj, lambda_cls, score_thresh,
                            nms_thresh, detections_per_img)  # fmt: skip
        self._init_objectness([self.out3[1], self.out4[1], self.out5[1]])

    def forward_raw(self, x: Tensor) -> list[Tensor]:
        """The stride-8, -16 and -32 output maps."""
        c3, c4, c5 = self.backbone(x)
        p5 = self.post_spp(self.spp(self.pre_spp(c5)))
        p4 = self.td4(lucid.cat([self.lat4(c4), self.up5(p5)], dim=1))
        p3 = self.td3(lucid.cat([self.lat3(c3), self.up4(p4)], dim=1))
        n4 = self.bu4(lucid.cat([self.down3(p3), p4], dim=1))
        n5 = self.bu5(lucid.cat([self.down4(n4), p5], dim=1))
        return [self.out3(p3), self.out4(n4), self.out5(n5)]


# ----------------------------------------------------------------------------- builders
# The counts are those of the Darknet cfgs for 80 COCO classes as ports report them:
# yolov2.cfg 50,962,889 (YAD2K's Keras model summary, trainable parameters), yolov3.cfg
# 61,949,149 (ultralytics/yolov3's model summary), yolov3-tiny.cfg 8,852,366 (eriklindernoren/
# PyTorch-YOLOv3's build of the cfg, as the parity test checks), yolov4.cfg 64,363,101 (WongKinYiu's
# PyTorch_YOLOv4 model summary, 488 layers). YOLO v1's paper gives none: 271,703,550 is that
# of its Figure 3 (conv biases, no batch norm; 271,716,734 with ``batch_norm=True``).


@register_model(family="yolo", task="object-detection", paper=_V1_PAPER,
                num_params=271_703_550, input_size=(3, 448, 448), reference="paper")  # fmt: skip
def yolo_v1(**kwargs: Any) -> YOLOv1:
    """YOLO v1 for 20 VOC classes (7x7 grid, 2 boxes per cell, 448x448 input), the network of
    the paper's Figure 3: 271,703,550 parameters. Keywords go to :class:`YOLOv1`."""
    return YOLOv1(**kwargs)


@register_model(family="yolo", task="object-detection", paper=_V2_PAPER,
                num_params=50_962_889, input_size=(3, 416, 416), reference="darknet")  # fmt: skip
def yolo_v2(**kwargs: Any) -> YOLOv2:
    """YOLO v2 for 80 COCO classes (5 anchors), ``yolov2.cfg``: 50,962,889 parameters.
    Keywords go to :class:`YOLOv2`."""
    return YOLOv2(**kwargs)


@register_model(family="yolo", task="object-detection", paper=_V3_PAPER,
                num_params=61_949_149, input_size=(3, 416, 416), reference="darknet")  # fmt: skip
def yolo_v3(**kwargs: Any) -> YOLOv3:
    """YOLO v3 for 80 COCO classes (9 anchors over 3 outputs), ``yolov3.cfg``: 61,949,149
    parameters. Keywords go to :class:`YOLOv3` (``width_mult``, ``depths`` for small
    variants)."""
    return YOLOv3(**kwargs)


@register_model(family="yolo", task="object-detection", paper=_V3_PAPER,
                num_params=8_852_366, input_size=(3, 416, 416), reference="darknet")  # fmt: skip
def yolo_v3_tiny(**kwargs: Any) -> YOLOv3Tiny:
    """YOLO v3-tiny for 80 COCO classes (6 anchors over 2 outputs), ``yolov3-tiny.cfg``:
    8,852,366 parameters. Keywords go to :class:`YOLOv3Tiny`."""
    return YOLOv3Tiny(**kwargs)


@register_model(family="yolo", task="object-detection", paper=_V4_PAPER,
                num_params=64_363_101, input_size=(3, 608, 608), reference="darknet")  # fmt: skip
def yolo_v4(**kwargs: Any) -> YOLOv4:
    """YOLO v4 for 80 COCO classes (9 anchors over 3 outputs), ``yolov4.cfg``: 64,363,101
    parameters. Keywords go to :class:`YOLOv4`."""
    return YOLOv4(**kwargs)
