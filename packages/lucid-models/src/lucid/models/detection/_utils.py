"""The shared pieces of torchvision's detection models: the box coder, the frozen batch norm
and the ResNet + FPN backbone (``backbone.body`` / ``backbone.fpn``, torchvision's keys)."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.models.ops import FeaturePyramidNetwork, LastLevelMaxPool
from lucid.models.ops import FrozenBatchNorm2d as FrozenBatchNorm2d  # (re-exported)
from lucid.models.resnet import Bottleneck, ResNet

BBOX_XFORM_CLIP = math.log(1000.0 / 16)


class BoxCoder:
    """Decodes ``(dx, dy, dw, dh)`` regression codes against reference boxes (xyxy), the
    codes divided by ``weights``, ``dw`` and ``dh`` clamped at ``log(1000 / 16)``."""

    def __init__(self, weights: tuple[float, float, float, float],
                 bbox_xform_clip: float = BBOX_XFORM_CLIP) -> None:  # fmt: skip
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def decode_single(self, rel_codes: Tensor, boxes: Tensor) -> Tensor:
        """``rel_codes`` ``(N, 4 k)`` against ``boxes`` ``(N, 4)``: ``(N, 4 k)`` boxes."""
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        wx, wy, ww, wh = self.weights
        dx, dy = rel_codes[:, 0::4] / wx, rel_codes[:, 1::4] / wy
        dw = (rel_codes[:, 2::4] / ww).clamp(max=self.bbox_xform_clip)
        dh = (rel_codes[:, 3::4] / wh).clamp(max=self.bbox_xform_clip)
        cx = dx * widths[:, None] + ctr_x[:, None]
        cy = dy * heights[:, None] + ctr_y[:, None]
        half_w = 0.5 * (lucid.exp(dw) * widths[:, None])
        half_h = 0.5 * (lucid.exp(dh) * heights[:, None])
        out = lucid.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], dim=2)
        return out.flatten(1)

    def decode(self, rel_codes: Tensor, boxes: list[Tensor]) -> Tensor:
        """The codes of all images (rows in the order of ``boxes``): ``(N, k, 4)``."""
        concat = lucid.cat(boxes, dim=0)
        return self.decode_single(rel_codes.reshape(concat.shape[0], -1), concat).reshape(
            concat.shape[0], -1, 4
        )


def _freeze_batch_norms(module: nn.Module) -> None:
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm2d):
            setattr(module, name, FrozenBatchNorm2d(child.num_features, child.eps))
        else:
            _freeze_batch_norms(child)


class ResNetBody(nn.Module):
    """A ResNet without its classifier, returning the maps of ``return_layers`` (torchvision's
    ``IntermediateLayerGetter``: ``{"layer1": "0", ...}``) as an ordered dict."""

    def __init__(self, resnet: ResNet, return_layers: dict[str, str]) -> None:
        super().__init__()
        for name in ("conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"):
            setattr(self, name, getattr(resnet, name))
        self.return_layers = return_layers

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out: dict[str, Tensor] = OrderedDict()
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for name in ("layer1", "layer2", "layer3", "layer4"):
            x = getattr(self, name)(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class BackboneWithFPN(nn.Module):
    """``body`` then ``fpn``: an image batch to the FPN's ordered dict of maps (``"0"`` ..
    ``"3"``, ``"pool"``), each ``out_channels`` wide."""

    def __init__(self, body: nn.Module, in_channels_list: list[int], out_channels: int,
                 extra_blocks: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.body = body
        self.fpn = FeaturePyramidNetwork(in_channels_list, out_channels,
                                         extra_blocks or LastLevelMaxPool())  # fmt: skip
        self.out_channels = out_channels

    def forward(self, x: Tensor) -> Any:
        return self.fpn(self.body(x))


def resnet50_fpn_backbone(trainable_layers: int = 5, frozen_batch_norm: bool = False,
                          returned_layers: tuple[int, ...] = (1, 2, 3, 4),
                          extra_blocks: Any = None) -> BackboneWithFPN:  # fmt: skip
    """torchvision's ``resnet_fpn_backbone("resnet50")``: the stem and the first
    ``5 - trainable_layers`` stages do not train (``requires_grad=False``); with
    ``frozen_batch_norm`` the batch norms are :class:`FrozenBatchNorm2d` (torchvision's layout
    when it loads pretrained weights), else ``BatchNorm2d`` (its layout with ``weights=None``)."""
    if not 0 <= trainable_layers <= 5:
        raise ValueError(f"trainable_layers must be in [0, 5], got {trainable_layers}")
    resnet = ResNet(Bottleneck, [3, 4, 6, 3])
    if frozen_batch_norm:
        _freeze_batch_norms(resnet)
    trainable = ["layer4", "layer3", "layer2", "layer1", "conv1"][:trainable_layers]
    if trainable_layers == 5:
        trainable.append("bn1")
    for name, p in resnet.named_parameters():
        if all(not name.startswith(layer) for layer in trainable):
            p.requires_grad_(False)
    body = ResNetBody(resnet, {f"layer{k}": str(i) for i, k in enumerate(returned_layers)})
    in_channels = [256 * 2 ** (k - 1) for k in returned_layers]
    return BackboneWithFPN(body, in_channels, 256, extra_blocks)
