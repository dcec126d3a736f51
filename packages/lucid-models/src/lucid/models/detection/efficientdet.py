"""EfficientDet (Tan, Pang and Le, "EfficientDet: Scalable and Efficient Object Detection", CVPR
2020): an EfficientNet backbone, a weighted bidirectional feature pyramid (BiFPN) over levels
P3-P7 and shared class and box heads of depthwise-separable convs.

The layout follows Ross Wightman's ``efficientdet-pytorch`` (``effdet``, the PyTorch port of
the official TensorFlow models, https://github.com/rwightman/efficientdet-pytorch,
``effdet/efficientdet.py`` and ``effdet/config/model_config.py``): its ``tf_efficientdet_d0``
... ``d7`` configurations (backbone, BiFPN width and cells, head depth, fusion). D0's count,
3,880,067 (3,877,763 without the redundant biases), is the one effdet's README states; D1-D7
are the same construction from effdet's configurations, and the paper's Table 2 gives all
eight rounded (3.9M ... 52M), which the tests check to its digits. The backbone is lucid's
torchvision-layout EfficientNet without its 1x1 head conv (``backbone.features.0`` ..
``.7``: effdet's timm backbone has the same parameters under other names). Padding is
PyTorch's symmetric padding, not TensorFlow's ``SAME`` (the parameters do not change; the
outputs of stride-2 layers on even sizes do). The model returns the raw per-level class and box
outputs (effdet's ``EfficientDet.forward``); anchors, the focal-loss training and the decoding
are not part of it.

Example:
    >>> model = efficientdet_d0(num_classes=3).eval()
    >>> cls, box = model(lucid.randn(1, 3, 128, 128))
    >>> [tuple(c.shape) for c in cls][:2], tuple(box[0].shape)
    ([(1, 27, 16, 16), (1, 27, 8, 8)], (1, 36, 16, 16))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial
from typing import Any

import lucid
import lucid.nn.functional as F
from lucid import Tensor, nn
from lucid.models import efficientnet as _effnet
from lucid.models._registry import register_model

__all__ = [
    "BiFpn",
    "EfficientDet",
    "EfficientNetFeatures",
    "HeadNet",
    "bifpn_config",
    "efficientdet_d0",
    "efficientdet_d1",
    "efficientdet_d2",
    "efficientdet_d3",
    "efficientdet_d4",
    "efficientdet_d5",
    "efficientdet_d6",
    "efficientdet_d7",
]

_PAPER = 'Tan, Pang and Le, "EfficientDet: Scalable and Efficient Object Detection", CVPR 2020'
_BN = partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)  # TensorFlow's batch-norm settings


def bifpn_config(min_level: int = 3, max_level: int = 7) -> list[dict[str, Any]]:
    """The BiFPN graph (the official ``fpn_configs.bifpn``): a top-down pass, then a bottom-up
    pass; each node ``{"reduction", "inputs_offsets"}``, the offsets counting the input levels
    first, then the nodes in order."""
    num_levels = max_level - min_level + 1
    node_ids = {min_level + i: [i] for i in range(num_levels)}
    ids = itertools.count(num_levels)
    nodes: list[dict[str, Any]] = []
    for i in range(max_level - 1, min_level - 1, -1):  # top-down
        nodes.append({"reduction": 1 << i, "inputs_offsets": [node_ids[i][-1],
                                                              node_ids[i + 1][-1]]})  # fmt: skip
        node_ids[i].append(next(ids))
    for i in range(min_level + 1, max_level + 1):  # bottom-up
        nodes.append({"reduction": 1 << i,
                      "inputs_offsets": node_ids[i] + [node_ids[i - 1][-1]]})  # fmt: skip
        node_ids[i].append(next(ids))
    return nodes


class EfficientNetFeatures(nn.Module):
    """An EfficientNet's stem and seven stages (``features.0`` .. ``features.7``, its 1x1 head
    conv dropped), returning the maps of stages 3, 5 and 7 (strides 8, 16, 32)."""

    def __init__(self, width_mult: float = 1.0, depth_mult: float = 1.0) -> None:
        super().__init__()
        net = _effnet._v1(width_mult, depth_mult, 0.2, {}, norm_layer=_BN)
        self.features = nn.Sequential(*list(net.features.children())[:8])
        self.out_indices = (3, 5, 7)
        self.channels = [self._out_channels(self.features[i]) for i in self.out_indices]

    @staticmethod
    def _out_channels(stage: nn.Module) -> int:
        convs = [m for m in stage.modules() if isinstance(m, nn.Conv2d)]
        return int(convs[-1].out_channels)

    def forward(self, x: Tensor) -> list[Tensor]:
        out = []
        for i, layer in enumerate(self.features):
            x = layer(x)
            if i in self.out_indices:
                out.append(x)
        return out


class ConvBnAct2d(nn.Module):
    """``conv`` then optional ``bn`` (effdet's 1x1 resampling conv)."""

    def __init__(self, cin: int, cout: int, bias: bool, bn: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=bias)
        self.bn = _BN(cout) if bn else None

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x)
        return self.bn(x) if self.bn is not None else x


class SeparableConv2d(nn.Module):
    """Depthwise 3x3 (``conv_dw``, no bias), pointwise 1x1 (``conv_pw``), optional ``bn``."""

    def __init__(self, cin: int, cout: int, bias: bool, bn: bool) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(cin, cin, 3, padding=1, groups=cin, bias=False)
        self.conv_pw = nn.Conv2d(cin, cout, 1, bias=bias)
        self.bn = _BN(cout) if bn else None

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv_pw(self.conv_dw(x))
        return self.bn(x) if self.bn is not None else x


class ResampleFeatureMap(nn.Module):
    """To ``cout`` channels (1x1 conv + BN, when they differ) and to the target stride (max
    pool 3x3 stride 2 down, nearest up)."""

    def __init__(self, cin: int, cout: int, ratio: float, redundant_bias: bool) -> None:
        super().__init__()
        self.conv = ConvBnAct2d(cin, cout, redundant_bias, True) if cin != cout else None
        self.ratio = ratio

    def forward(self, x: Tensor, size: tuple[int, int] | None = None) -> Tensor:
        if self.conv is not None:
            x = self.conv(x)
        if self.ratio > 1:
            return F.max_pool2d(x, 3, stride=2, padding=1)  # type: ignore[no-any-return]
        if self.ratio < 1:
            return F.interpolate(x, size=size, mode="nearest")
        return x


class FpnCombine(nn.Module):
    """Resample a node's inputs and fuse them: fast normalised fusion
    ``sum(relu(w_i) x_i) / (sum(relu(w_i)) + 1e-4)`` (``edge_weights``), or a plain sum."""

    def __init__(self, in_info: list[tuple[int, int]], fpn_channels: int, offsets: list[int],
                 reduction: int, weighted: bool, redundant_bias: bool) -> None:  # fmt: skip
        super().__init__()
        self.offsets = offsets
        self.resample = nn.ModuleDict({
            str(o): ResampleFeatureMap(in_info[o][0], fpn_channels, reduction / in_info[o][1],
                                       redundant_bias)
            for o in offsets})  # fmt: skip
        self.edge_weights = nn.Parameter(lucid.ones(len(offsets))) if weighted else None

    def forward(self, x: list[Tensor], size: tuple[int, int]) -> Tensor:
        nodes: list[Tensor] = [self.resample[str(o)](x[o], size) for o in self.offsets]
        if self.edge_weights is None:
            out = nodes[0]
            for n in nodes[1:]:
                out = out + n
            return out
        w = F.relu(self.edge_weights)
        total = w.sum() + 0.0001
        out = nodes[0] * (w[0] / total)
        for i in range(1, len(nodes)):
            out = out + nodes[i] * (w[i] / total)
        return out


class Fnode(nn.Module):
    """One BiFPN node: ``combine``, then swish and a separable conv (``after_combine``)."""

    def __init__(self, combine: FpnCombine, after_combine: SeparableConv2d) -> None:
        super().__init__()
        self.combine = combine
        self.after_combine = nn.Sequential()
        self.after_combine.add_module("conv", after_combine)

    def forward(self, x: list[Tensor], size: tuple[int, int]) -> Tensor:
        return self.after_combine(F.silu(self.combine(x, size)))  # type: ignore[no-any-return]


class BiFpnLayer(nn.Module):
    """One BiFPN cell: its eight nodes; returns the last ``num_levels`` maps."""

    def __init__(self, in_info: list[tuple[int, int]], fpn_channels: int, num_levels: int,
                 weighted: bool, redundant_bias: bool) -> None:  # fmt: skip
        super().__init__()
        info = list(in_info)
        self.fnode = nn.ModuleList()
        self.reductions = []
        for cfg in bifpn_config(3, 2 + num_levels):
            combine = FpnCombine(info, fpn_channels, cfg["inputs_offsets"], cfg["reduction"],
                                 weighted, redundant_bias)  # fmt: skip
            self.fnode.append(Fnode(combine, SeparableConv2d(fpn_channels, fpn_channels,
                                                             redundant_bias, True)))  # fmt: skip
            info.append((fpn_channels, cfg["reduction"]))
            self.reductions.append(cfg["reduction"])
        self.num_levels = num_levels

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        sizes = {8 << i: (int(t.shape[-2]), int(t.shape[-1])) for i, t in enumerate(x)}
        x = list(x)
        for node, reduction in zip(self.fnode, self.reductions):
            x.append(node(x, sizes[reduction]))
        return x[-self.num_levels :]


class BiFpn(nn.Module):
    """P6 and P7 from the backbone's last map (``resample``), then ``cell`` repeats."""

    def __init__(self, in_channels: list[int], fpn_channels: int, repeats: int,
                 weighted: bool, redundant_bias: bool, num_levels: int = 5) -> None:  # fmt: skip
        super().__init__()
        self.resample = nn.ModuleDict()
        info = [(c, 8 << i) for i, c in enumerate(in_channels)]
        cin = in_channels[-1]
        for level in range(len(in_channels), num_levels):
            self.resample[str(level)] = ResampleFeatureMap(cin, fpn_channels, 2.0, redundant_bias)
            cin = fpn_channels
            info.append((fpn_channels, 8 << level))
        cells = []
        for _ in range(repeats):
            cells.append(BiFpnLayer(info, fpn_channels, num_levels, weighted, redundant_bias))
            info = [(fpn_channels, 8 << i) for i in range(num_levels)]
        self.cell = nn.Sequential(*cells)

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        x = list(x)
        for resample in self.resample.values():
            x.append(resample(x[-1]))
        for cell in self.cell:
            x = cell(x)
        return x


class HeadNet(nn.Module):
    """``repeats`` separable convs shared across levels, each with its own batch norm per level
    (``bn_rep[i][level]``), swish, then ``predict`` (``num_outputs`` per anchor)."""

    def __init__(self, fpn_channels: int, num_outputs: int, repeats: int, redundant_bias: bool,
                 num_levels: int = 5, num_anchors: int = 9) -> None:  # fmt: skip
        super().__init__()
        self.conv_rep = nn.ModuleList([SeparableConv2d(fpn_channels, fpn_channels,
                                                       redundant_bias, False)
                                       for _ in range(repeats)])  # fmt: skip
        self.bn_rep = nn.ModuleList()
        for _ in range(repeats):
            levels = nn.ModuleList()
            for _ in range(num_levels):
                seq = nn.Sequential()
                seq.add_module("bn", _BN(fpn_channels))
                levels.append(seq)
            self.bn_rep.append(levels)
        self.predict = SeparableConv2d(fpn_channels, num_outputs * num_anchors, True, False)

    def forward(self, x: list[Tensor]) -> list[Tensor]:
        out = []
        for level, t in enumerate(x):
            for conv, bns in zip(self.conv_rep, self.bn_rep):
                t = F.silu(bns[level](conv(t)))  # type: ignore[index]
            out.append(self.predict(t))
        return out


class EfficientDet(nn.Module):
    """Backbone, BiFPN, class and box heads; ``model(x)`` returns ``(class_outputs,
    box_outputs)``: per level P3-P7, ``(N, 9 num_classes, H, W)`` logits and ``(N, 36, H, W)``
    box regressions (9 anchors: 3 scales x 3 aspect ratios)."""

    def __init__(self, backbone: EfficientNetFeatures, fpn_channels: int, fpn_repeats: int,
                 head_repeats: int, num_classes: int = 90, weighted_fusion: bool = True,
                 redundant_bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.backbone = backbone
        self.fpn = BiFpn(backbone.channels, fpn_channels, fpn_repeats, weighted_fusion,
                         redundant_bias)  # fmt: skip
        self.class_net = HeadNet(fpn_channels, num_classes, head_repeats, redundant_bias)
        self.box_net = HeadNet(fpn_channels, 4, head_repeats, redundant_bias)
        self.num_classes = num_classes

    def forward(self, x: Tensor) -> tuple[list[Tensor], list[Tensor]]:
        if x.ndim != 4:
            raise ValueError(
                f"EfficientDet expects images of shape (batch, channels, height, width), got "
                f"{tuple(x.shape)}"
            )
        feats = self.fpn(self.backbone(x))
        return self.class_net(feats), self.box_net(feats)


# name -> (backbone, fpn channels, BiFPN cells, head repeats, weighted fusion, image size,
# parameters with 90 classes: effdet's tf_efficientdet_dX)
_CONFIGS: dict[str, tuple[tuple[float, float], int, int, int, bool, int, int]] = {
    "d0": ((1.0, 1.0), 64, 3, 3, True, 512, 3_880_067),
    "d1": ((1.0, 1.1), 88, 4, 3, True, 640, 6_625_898),
    "d2": ((1.1, 1.2), 112, 5, 3, True, 768, 8_097_039),
    "d3": ((1.2, 1.4), 160, 6, 4, True, 896, 12_032_296),
    "d4": ((1.4, 1.8), 224, 7, 4, True, 1024, 20_723_675),
    "d5": ((1.6, 2.2), 288, 7, 4, True, 1280, 33_653_315),
    "d6": ((1.8, 2.6), 384, 8, 5, False, 1280, 51_871_782),
    "d7": ((1.8, 2.6), 384, 8, 5, False, 1536, 51_871_782),
}


def _build(variant: str, num_classes: int, **kwargs: Any) -> EfficientDet:
    (width, depth), ch, cells, heads, weighted, _, _ = _CONFIGS[variant]
    return EfficientDet(EfficientNetFeatures(width, depth), ch, cells, heads, num_classes,
                        weighted, **kwargs)  # fmt: skip


def _register(variant: str) -> Callable[[Callable[..., EfficientDet]], Callable[..., Any]]:
    size, count = _CONFIGS[variant][5], _CONFIGS[variant][6]
    return register_model(task="object-detection", paper=_PAPER, num_params=count,
                          input_size=(3, size, size), reference="paper",
                          family="efficientdet")  # fmt: skip


@_register("d0")
def efficientdet_d0(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D0 (EfficientNet-B0, BiFPN 64 channels x 3 cells, heads of 3 convs, 512
    pixels): 3,880,067 parameters with 90 classes (effdet's ``tf_efficientdet_d0``; the
    paper's 3.9M)."""
    return _build("d0", num_classes, **kwargs)


@_register("d1")
def efficientdet_d1(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D1 (B1, 88 x 4, 3, 640 px): 6,625,898 parameters (the paper's 6.6M)."""
    return _build("d1", num_classes, **kwargs)


@_register("d2")
def efficientdet_d2(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D2 (B2, 112 x 5, 3, 768 px): 8,097,039 parameters (the paper's 8.1M)."""
    return _build("d2", num_classes, **kwargs)


@_register("d3")
def efficientdet_d3(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D3 (B3, 160 x 6, 4, 896 px): 12,032,296 parameters (the paper's 12M)."""
    return _build("d3", num_classes, **kwargs)


@_register("d4")
def efficientdet_d4(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D4 (B4, 224 x 7, 4, 1024 px): 20,723,675 parameters (the paper's 21M)."""
    return _build("d4", num_classes, **kwargs)


@_register("d5")
def efficientdet_d5(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D5 (B5, 288 x 7, 4, 1280 px): 33,653,315 parameters (the paper's 34M)."""
    return _build("d5", num_classes, **kwargs)


@_register("d6")
def efficientdet_d6(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D6 (B6, 384 x 8, 5, 1280 px; unweighted sum fusion): 51,871,782
    parameters (the paper's 52M)."""
    return _build("d6", num_classes, **kwargs)


@_register("d7")
def efficientdet_d7(num_classes: int = 90, **kwargs: Any) -> EfficientDet:
    """EfficientDet-D7 (D6's network at 1536 px): 51,871,782 parameters (the paper's 52M)."""
    return _build("d7", num_classes, **kwargs)
