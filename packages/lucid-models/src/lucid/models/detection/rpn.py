"""torchvision's region proposal network (inference): a shared 3x3 conv and 1x1 objectness and
box-regression convs on each FPN level; the anchors decoded, the best ``pre_nms_top_n`` per
level kept, clipped, small and low-scoring boxes dropped, NMS per level, the best
``post_nms_top_n`` proposals kept."""

from __future__ import annotations

import lucid
from lucid import Tensor, nn
from lucid.data.ops import batched_nms, clip_boxes_to_image, remove_small_boxes
from lucid.models.detection._utils import BoxCoder
from lucid.models.detection.anchor_utils import AnchorGenerator
from lucid.models.ops import Conv2dNormActivation


class RPNHead(nn.Module):
    """``conv_depth`` 3x3 conv + ReLU layers, then ``cls_logits`` (A per location) and
    ``bbox_pred`` (4 A per location)."""

    def __init__(self, in_channels: int, num_anchors: int, conv_depth: int = 1) -> None:
        super().__init__()
        self.conv = nn.Sequential(*[Conv2dNormActivation(in_channels, in_channels, kernel_size=3,
                                                         norm_layer=None)
                                    for _ in range(conv_depth)])  # fmt: skip
        self.cls_logits = nn.Conv2d(in_channels, num_anchors, 1)
        self.bbox_pred = nn.Conv2d(in_channels, num_anchors * 4, 1)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.01)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: list[Tensor]) -> tuple[list[Tensor], list[Tensor]]:
        logits, bbox_reg = [], []
        for feature in x:
            t = self.conv(feature)
            logits.append(self.cls_logits(t))
            bbox_reg.append(self.bbox_pred(t))
        return logits, bbox_reg


def permute_and_flatten(layer: Tensor, n: int, c: int) -> Tensor:
    """``(N, A C, H, W)`` to ``(N, H W A, C)``: the anchors of a location next to each other."""
    _, _, h, w = layer.shape
    return layer.reshape(n, -1, c, h, w).permute(0, 3, 4, 1, 2).reshape(n, -1, c)


def concat_box_prediction_layers(
    box_cls: list[Tensor], box_regression: list[Tensor]
) -> tuple[Tensor, Tensor]:
    """All levels' predictions in the anchors' order: ``(N sum(HWA), C)`` and ``(.., 4)``."""
    cls, reg = [], []
    for c, r in zip(box_cls, box_regression):
        n, a = c.shape[0], r.shape[1] // 4
        cls.append(permute_and_flatten(c, n, c.shape[1] // a))
        reg.append(permute_and_flatten(r, n, 4))
    return lucid.cat(cls, dim=1).flatten(0, -2), lucid.cat(reg, dim=1).reshape(-1, 4)


class RegionProposalNetwork(nn.Module):
    """The RPN: ``forward(images, image_sizes, features)`` gives one ``(K, 4)`` tensor of
    proposals per image. Training (its losses) is not implemented: the model must be in
    eval mode."""

    def __init__(
        self,
        anchor_generator: AnchorGenerator,
        head: RPNHead,
        pre_nms_top_n: int,
        post_nms_top_n: int,
        nms_thresh: float,
        score_thresh: float = 0.0,
    ) -> None:
        super().__init__()
        self.anchor_generator = anchor_generator
        self.head = head
        self.box_coder = BoxCoder((1.0, 1.0, 1.0, 1.0))
        self.pre_nms_top_n, self.post_nms_top_n = pre_nms_top_n, post_nms_top_n
        self.nms_thresh, self.score_thresh = nms_thresh, score_thresh
        self.min_size = 1e-3

    def filter_proposals(self, proposals: Tensor, objectness: Tensor,
                         image_sizes: list[tuple[int, int]],
                         per_level: list[int]) -> list[Tensor]:  # fmt: skip
        n = proposals.shape[0]
        objectness = objectness.detach().reshape(n, -1)
        levels = lucid.cat([lucid.full((k,), i, dtype=lucid.int64)
                            for i, k in enumerate(per_level)])  # fmt: skip
        top, offset = [], 0
        for ob in objectness.split(per_level, 1):
            k = min(self.pre_nms_top_n, ob.shape[1])
            top.append(ob.topk(k, dim=1)[1] + offset)
            offset += ob.shape[1]
        idx = lucid.cat(top, dim=1)
        out = []
        for i, size in enumerate(image_sizes):
            boxes = clip_boxes_to_image(proposals[i][idx[i]], size)
            scores, lvl = lucid.sigmoid(objectness[i][idx[i]]), levels[idx[i]]
            keep = remove_small_boxes(boxes, self.min_size)
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = lucid.where(scores >= self.score_thresh)[0]
            boxes, scores, lvl = boxes[keep], scores[keep], lvl[keep]
            keep = batched_nms(boxes, scores, lvl, self.nms_thresh)[: self.post_nms_top_n]
            out.append(boxes[keep])
        return out

    def forward(self, images: Tensor, image_sizes: list[tuple[int, int]],
                features: dict[str, Tensor]) -> list[Tensor]:  # fmt: skip
        if self.training:
            raise NotImplementedError("lucid's RegionProposalNetwork has no training losses "
                                      "yet: call model.eval() for inference")  # fmt: skip
        feats = list(features.values())
        objectness, deltas = self.head(feats)
        fsizes = [(int(f.shape[-2]), int(f.shape[-1])) for f in feats]
        anchors = self.anchor_generator((int(images.shape[-2]), int(images.shape[-1])), fsizes)
        per_level = [o.shape[1] * o.shape[2] * o.shape[3] for o in objectness]
        objectness, deltas = concat_box_prediction_layers(objectness, deltas)
        n = images.shape[0]
        proposals = self.box_coder.decode(deltas.detach(), [anchors] * n).reshape(n, -1, 4)
        return self.filter_proposals(proposals, objectness, image_sizes, per_level)
