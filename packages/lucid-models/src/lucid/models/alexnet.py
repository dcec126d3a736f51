"""AlexNet (Krizhevsky et al., "ImageNet Classification with Deep Convolutional Neural Networks",
NeurIPS 2012), in torchvision's single-tower layout."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model

_PAPER = (
    "Krizhevsky et al., "
    '"ImageNet Classification with Deep Convolutional Neural Networks", NeurIPS 2012'
)


class AlexNet(nn.Module):
    """AlexNet (Krizhevsky et al. 2012), as ``torchvision.models.AlexNet``."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5, in_channels: int = 3) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 64, 11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2),
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2),
        )  # fmt: skip
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )  # fmt: skip

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=61_100_840,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def alexnet(**kwargs: Any) -> AlexNet:
    """AlexNet (Krizhevsky et al. 2012), 61,100,840 parameters for 1000 classes."""
    return AlexNet(**kwargs)
