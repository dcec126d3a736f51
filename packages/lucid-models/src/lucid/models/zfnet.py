"""ZFNet (Zeiler & Fergus, "Visualizing and Understanding Convolutional Networks", ECCV 2014):
AlexNet with a 7x7 stride-2 first layer and a stride-2 second layer (the paper's Figure 3:
96-256-384-384-256 filters, 110-26-13-13-13 maps for a 224x224 input), local response
normalisation after the first two layers, and three fully connected layers.

torchvision has no ZFNet: the count is that of the configuration the paper's Figure 3 gives
(62,357,608 with biases)."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import classifier

_PAPER = 'Zeiler & Fergus, "Visualizing and Understanding Convolutional Networks", ECCV 2014'


class ZFNet(nn.Module):
    """ZFNet for 224x224 inputs (``features``, ``avgpool`` to 6x6, ``classifier``)."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5, in_channels: int = 3) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 96, 7, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.LocalResponseNorm(5, 1e-4, 0.75, 2.0),
            nn.Conv2d(96, 256, 5, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.LocalResponseNorm(5, 1e-4, 0.75, 2.0),
            nn.Conv2d(256, 384, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 384, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(dropout),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: Any) -> Any:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


@classifier(_PAPER, 62_357_608, reference="paper")
def zfnet(**kwargs: Any) -> ZFNet:
    """ZFNet, 62,357,608 parameters for 1000 classes."""
    return ZFNet(**kwargs)
