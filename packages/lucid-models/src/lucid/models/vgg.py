"""VGG-11/13/16/19 with and without batch norm (Simonyan & Zisserman, "Very Deep Convolutional
Networks for Large-Scale Image Recognition", ICLR 2015), torchvision layout."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model
from lucid.models._weights import init_conv_bn_linear

_PAPER = (
    "Simonyan & Zisserman, "
    '"Very Deep Convolutional Networks for Large-Scale Image Recognition", ICLR 2015'
)

_CFGS: dict[str, list[Any]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}  # fmt: skip


def make_layers(cfg: list[Any], batch_norm: bool, in_channels: int = 3) -> Any:
    layers: list[Any] = []
    cin = in_channels
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(2, stride=2))
            continue
        layers.append(nn.Conv2d(cin, v, 3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        cin = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    """VGG (Simonyan and Zisserman 2014) built on a ``features`` stack, as
    ``torchvision.models.VGG``."""

    def __init__(self, features: Any, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Dropout(dropout),
            nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(dropout),
            nn.Linear(4096, num_classes),
        )  # fmt: skip
        init_conv_bn_linear(self)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _vgg(cfg: str, bn: bool, in_channels: int = 3, **kwargs: Any) -> VGG:
    return VGG(make_layers(_CFGS[cfg], bn, in_channels), **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=132_863_336,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg11(**kwargs: Any) -> VGG:
    """VGG-11 (Simonyan & Zisserman 2015), 132,863,336 parameters."""
    return _vgg("A", False, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=132_868_840,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg11_bn(**kwargs: Any) -> VGG:
    """VGG-11 with batch norm, 132,868,840 parameters."""
    return _vgg("A", True, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=133_047_848,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg13(**kwargs: Any) -> VGG:
    """VGG-13, 133,047,848 parameters."""
    return _vgg("B", False, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=133_053_736,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg13_bn(**kwargs: Any) -> VGG:
    """VGG-13 with batch norm, 133,053,736 parameters."""
    return _vgg("B", True, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=138_357_544,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg16(**kwargs: Any) -> VGG:
    """VGG-16, 138,357,544 parameters."""
    return _vgg("D", False, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=138_365_992,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg16_bn(**kwargs: Any) -> VGG:
    """VGG-16 with batch norm, 138,365,992 parameters."""
    return _vgg("D", True, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=143_667_240,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg19(**kwargs: Any) -> VGG:
    """VGG-19, 143,667,240 parameters."""
    return _vgg("E", False, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=143_678_248,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def vgg19_bn(**kwargs: Any) -> VGG:
    """VGG-19 with batch norm, 143,678,248 parameters."""
    return _vgg("E", True, **kwargs)
