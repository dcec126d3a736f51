"""LR-ASPP (Howard et al., "Searching for MobileNetV3", ICCV 2019) on a dilated
MobileNetV3-Large, in torchvision's layout (``torchvision.models.segmentation.lraspp``: the
same state-dict keys)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.mobilenetv3 import mobilenet_v3_large
from lucid.models.segmentation._utils import IntermediateLayerGetter, stage_indices
from lucid.nn import functional as F

__all__ = ["LRASPP", "LRASPPHead", "lraspp_mobilenet_v3_large"]

_PAPER = 'Howard et al., "Searching for MobileNetV3", ICCV 2019'


class LRASPPHead(nn.Module):
    """The high-level map through a 1x1 conv gated by its pooled sigmoid, upsampled to the
    low-level map's size; logits of both summed."""

    def __init__(self, low_channels: int, high_channels: int, num_classes: int,
                 inter_channels: int) -> None:  # fmt: skip
        super().__init__()
        self.cbr = nn.Sequential(
            nn.Conv2d(high_channels, inter_channels, 1, bias=False),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(inplace=True),
        )
        self.scale = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(high_channels, inter_channels, 1, bias=False),
            nn.Sigmoid(),
        )
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, features: dict[str, Tensor]) -> Any:
        low, high = features["low"], features["high"]
        x = self.cbr(high) * self.scale(high)
        x = F.interpolate(x, size=tuple(low.shape[-2:]), mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


class LRASPP(nn.Module):
    """Lite R-ASPP (``torchvision.models.segmentation.LRASPP``): ``backbone`` returns
    ``{"low", "high"}``; forward returns ``{"out"}``, upsampled to the input."""

    def __init__(self, backbone: nn.Module, low_channels: int, high_channels: int,
                 num_classes: int, inter_channels: int = 128) -> None:  # fmt: skip
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, x: Tensor) -> dict[str, Tensor]:
        out = self.classifier(self.backbone(x))
        out = F.interpolate(out, size=tuple(x.shape[-2:]), mode="bilinear", align_corners=False)
        return OrderedDict(out=out)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=3_221_538,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def lraspp_mobilenet_v3_large(num_classes: int | None = None, weights_backbone: Any = None,
                              **kwargs: Any) -> LRASPP:  # fmt: skip
    """LR-ASPP on a dilated MobileNetV3-Large (21 VOC classes: 3,221,538 parameters).
    ``weights_backbone`` (a ``MobileNet_V3_Large_Weights``) loads a pretrained backbone
    (default None, where torchvision's defaults to ImageNet weights)."""
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    if kwargs:
        raise TypeError(f"lraspp_mobilenet_v3_large() got unexpected keyword arguments "
                        f"{sorted(kwargs)}")  # fmt: skip
    num_classes = 21 if num_classes is None else num_classes
    features = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = stage_indices(features)
    low_pos, high_pos = stages[-4], stages[-1]
    low_channels = features[low_pos].out_channels
    high_channels = features[high_pos].out_channels
    backbone = IntermediateLayerGetter(features, {str(low_pos): "low", str(high_pos): "high"})
    return LRASPP(backbone, low_channels, high_channels, num_classes)
