"""DeepLabV3 (Chen et al., "Rethinking Atrous Convolution for Semantic Image Segmentation",
2017) on a dilated ResNet-50/101 or MobileNetV3-Large, in torchvision's layout
(``torchvision.models.segmentation.deeplabv3``: the same state-dict keys)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import lucid
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.mobilenetv3 import mobilenet_v3_large
from lucid.models.segmentation._utils import (
    IntermediateLayerGetter,
    _SimpleSegmentationModel,
    stage_indices,
)
from lucid.models.segmentation.fcn import FCNHead, resnet_backbone
from lucid.nn import functional as F

__all__ = [
    "DeepLabV3",
    "DeepLabHead",
    "deeplabv3_mobilenet_v3_large",
    "deeplabv3_resnet50",
    "deeplabv3_resnet101",
]

_PAPER = ('Chen et al., "Rethinking Atrous Convolution for Semantic Image Segmentation", '
          "arXiv 2017")  # fmt: skip


class DeepLabV3(_SimpleSegmentationModel):
    """DeepLabV3: a backbone's ``"out"`` map through :class:`DeepLabHead`, upsampled to the
    input (``torchvision.models.segmentation.DeepLabV3``); forward returns
    ``{"out"[, "aux"]}``."""


class ASPPConv(nn.Sequential):
    """A 3x3 conv of dilation ``dilation``, BatchNorm, ReLU."""

    def __init__(self, in_channels: int, out_channels: int, dilation: int) -> None:
        super().__init__(
            nn.Conv2d(
                in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False
            ),  # fmt: skip
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )


class ASPPPooling(nn.Sequential):
    """Image pooling: global average, 1x1 conv, BatchNorm, ReLU, upsampled back."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(in_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        )

    def forward(self, x: Tensor) -> Any:
        size = tuple(x.shape[-2:])
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    """Atrous spatial pyramid pooling: a 1x1 conv, a dilated 3x3 conv per rate and image
    pooling, concatenated and projected to ``out_channels`` (dropout 0.5)."""

    def __init__(self, in_channels: int, atrous_rates: Sequence[int],
                 out_channels: int = 256) -> None:  # fmt: skip
        super().__init__()
        modules: list[nn.Module] = [
            nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(),
            )
        ]
        modules += [ASPPConv(in_channels, out_channels, rate) for rate in atrous_rates]
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(
            nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Dropout(0.5),
        )

    def forward(self, x: Tensor) -> Any:
        return self.project(lucid.cat([conv(x) for conv in self.convs], dim=1))


class DeepLabHead(nn.Sequential):
    """ASPP, a 3x3 conv, BatchNorm, ReLU and a 1x1 conv to the classes."""

    def __init__(self, in_channels: int, num_classes: int,
                 atrous_rates: Sequence[int] = (12, 24, 36)) -> None:  # fmt: skip
        super().__init__(
            ASPP(in_channels, atrous_rates),
            nn.Conv2d(256, 256, 3, padding=1, bias=False),
            nn.BatchNorm2d(256),
            nn.ReLU(),
            nn.Conv2d(256, num_classes, 1),
        )


def _check(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")


def _deeplabv3_resnet(depth: int, num_classes: int | None, aux_loss: bool | None,
                      weights_backbone: Any) -> DeepLabV3:  # fmt: skip
    num_classes = 21 if num_classes is None else num_classes
    aux = bool(aux_loss)
    backbone = resnet_backbone(depth, weights_backbone, aux)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    return DeepLabV3(backbone, DeepLabHead(2048, num_classes), aux_classifier)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=39_638_869,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def deeplabv3_resnet50(num_classes: int | None = None, aux_loss: bool | None = None,
                       weights_backbone: Any = None, **kwargs: Any) -> DeepLabV3:  # fmt: skip
    """DeepLabV3-ResNet-50 (21 VOC classes: 39,638,869 parameters; 42,004,074 with
    ``aux_loss``). ``weights_backbone`` (a ``ResNet50_Weights``) loads a pretrained backbone;
    it defaults to None where torchvision's defaults to ImageNet weights."""
    _check("deeplabv3_resnet50", kwargs)
    return _deeplabv3_resnet(50, num_classes, aux_loss, weights_backbone)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=58_630_997,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def deeplabv3_resnet101(num_classes: int | None = None, aux_loss: bool | None = None,
                        weights_backbone: Any = None, **kwargs: Any) -> DeepLabV3:  # fmt: skip
    """DeepLabV3-ResNet-101 (21 VOC classes: 58,630,997 parameters; 60,996,202 with
    ``aux_loss``); ``weights_backbone`` as :func:`deeplabv3_resnet50`'s."""
    _check("deeplabv3_resnet101", kwargs)
    return _deeplabv3_resnet(101, num_classes, aux_loss, weights_backbone)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=11_025_477,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def deeplabv3_mobilenet_v3_large(
    num_classes: int | None = None,
    aux_loss: bool | None = None,
    weights_backbone: Any = None,
    **kwargs: Any,
) -> DeepLabV3:
    """DeepLabV3 on a dilated MobileNetV3-Large (21 VOC classes: 11,025,477 parameters;
    11,029,328 with ``aux_loss``). ``weights_backbone`` (a
    ``MobileNet_V3_Large_Weights``) loads a pretrained backbone (default None)."""
    _check("deeplabv3_mobilenet_v3_large", kwargs)
    num_classes = 21 if num_classes is None else num_classes
    features = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = stage_indices(features)
    out_pos, aux_pos = stages[-1], stages[-4]
    out_inplanes = features[out_pos].out_channels
    aux_inplanes = features[aux_pos].out_channels
    layers = {str(out_pos): "out", **({str(aux_pos): "aux"} if aux_loss else {})}
    backbone = IntermediateLayerGetter(features, layers)
    aux_classifier = FCNHead(aux_inplanes, num_classes) if aux_loss else None
    return DeepLabV3(backbone, DeepLabHead(out_inplanes, num_classes), aux_classifier)
