"""FCN (Long et al., "Fully Convolutional Networks for Semantic Segmentation", CVPR 2015) with a
dilated ResNet-50/101 backbone, in torchvision's layout (``torchvision.models.segmentation.fcn``:
the same state-dict keys)."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model
from lucid.models.resnet import ResNet, resnet50, resnet101
from lucid.models.segmentation._utils import IntermediateLayerGetter, _SimpleSegmentationModel

__all__ = ["FCN", "FCNHead", "fcn_resnet50", "fcn_resnet101"]

_PAPER = 'Long et al., "Fully Convolutional Networks for Semantic Segmentation", CVPR 2015'


class FCN(_SimpleSegmentationModel):
    """FCN: a backbone's ``"out"`` map through :class:`FCNHead`, upsampled to the input
    (``torchvision.models.segmentation.FCN``); forward returns ``{"out"[, "aux"]}``."""


class FCNHead(nn.Sequential):
    """3x3 conv to ``in_channels // 4``, BatchNorm, ReLU, dropout 0.1, 1x1 conv to
    ``channels`` (the classes)."""

    def __init__(self, in_channels: int, channels: int) -> None:
        inter = in_channels // 4
        super().__init__(
            nn.Conv2d(in_channels, inter, 3, padding=1, bias=False),
            nn.BatchNorm2d(inter),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Conv2d(inter, channels, 1),
        )


def resnet_backbone(depth: int, weights_backbone: Any, aux: bool) -> IntermediateLayerGetter:
    """A ResNet-50/101 with ``layer3`` and ``layer4`` dilated (output stride 8), returning
    ``layer4`` as ``"out"`` and, with ``aux``, ``layer3`` as ``"aux"``."""
    build = resnet50 if depth == 50 else resnet101
    backbone: ResNet = build(
        weights=weights_backbone, replace_stride_with_dilation=[False, True, True]
    )
    layers = {"layer4": "out", **({"layer3": "aux"} if aux else {})}
    return IntermediateLayerGetter(backbone, layers)


def _fcn_resnet(depth: int, num_classes: int | None, aux_loss: bool | None,
                weights_backbone: Any, kwargs: dict[str, Any]) -> FCN:  # fmt: skip
    if kwargs:
        raise TypeError(f"fcn_resnet{depth}() got unexpected keyword arguments {sorted(kwargs)}")
    num_classes = 21 if num_classes is None else num_classes
    aux = bool(aux_loss)
    backbone = resnet_backbone(depth, weights_backbone, aux)
    aux_classifier = FCNHead(1024, num_classes) if aux else None
    return FCN(backbone, FCNHead(2048, num_classes), aux_classifier)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=32_957_013,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def fcn_resnet50(num_classes: int | None = None, aux_loss: bool | None = None,
                 weights_backbone: Any = None, **kwargs: Any) -> FCN:  # fmt: skip
    """FCN-ResNet-50 (21 VOC classes: 32,957,013 parameters; 35,322,218 with ``aux_loss``).
    ``weights_backbone`` (a ``ResNet50_Weights``) loads a pretrained backbone; it defaults to
    None where torchvision's defaults to ImageNet weights (lucid downloads nothing)."""
    return _fcn_resnet(50, num_classes, aux_loss, weights_backbone, kwargs)


@register_model(task="semantic-segmentation", paper=_PAPER, num_params=51_949_141,
                input_size=(3, 520, 520), reference="torchvision")  # fmt: skip
def fcn_resnet101(num_classes: int | None = None, aux_loss: bool | None = None,
                  weights_backbone: Any = None, **kwargs: Any) -> FCN:  # fmt: skip
    """FCN-ResNet-101 (21 VOC classes: 51,949,141 parameters; 54,314,346 with ``aux_loss``);
    ``weights_backbone`` as :func:`fcn_resnet50`'s."""
    return _fcn_resnet(101, num_classes, aux_loss, weights_backbone, kwargs)
