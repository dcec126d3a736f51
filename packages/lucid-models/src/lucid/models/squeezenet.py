"""SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x fewer
parameters and <0.5MB model size", arXiv 2016), in torchvision's layout."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier

_PAPER = (
    'Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x fewer parameters and <0.5MB '
    'model size", arXiv:1602.07360, 2016'
)


class Fire(nn.Module):
    """A squeeze 1x1 conv, then 1x1 and 3x3 expand convs side by side (concatenated)."""

    def __init__(self, inplanes: int, squeeze: int, expand1x1: int, expand3x3: int) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze, expand1x1, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze, expand3x3, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: Any) -> Any:
        x = self.squeeze_activation(self.squeeze(x))
        a = self.expand1x1_activation(self.expand1x1(x))
        return lucid.cat([a, self.expand3x3_activation(self.expand3x3(x))], 1)


def _pool() -> Any:
    return nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)


class SqueezeNet(nn.Module):
    """SqueezeNet ``version`` ``"1_0"`` or ``"1_1"`` (``torchvision.models.SqueezeNet``)."""

    def __init__(
        self,
        version: str = "1_0",
        num_classes: int = 1000,
        dropout: float = 0.5,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(in_channels, 96, kernel_size=7, stride=2),
                nn.ReLU(inplace=True),
                _pool(),
                Fire(96, 16, 64, 64),
                Fire(128, 16, 64, 64),
                Fire(128, 32, 128, 128),
                _pool(),
                Fire(256, 32, 128, 128),
                Fire(256, 48, 192, 192),
                Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256),
                _pool(),
                Fire(512, 64, 256, 256),
            )
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(in_channels, 64, kernel_size=3, stride=2),
                nn.ReLU(inplace=True),
                _pool(),
                Fire(64, 16, 64, 64),
                Fire(128, 16, 64, 64),
                _pool(),
                Fire(128, 32, 128, 128),
                Fire(256, 32, 128, 128),
                _pool(),
                Fire(256, 48, 192, 192),
                Fire(384, 48, 192, 192),
                Fire(384, 64, 256, 256),
                Fire(512, 64, 256, 256),
            )
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, num_classes, kernel_size=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.features(x)).flatten(1)


@classifier(_PAPER, 1_248_424)
def squeezenet1_0(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.0, 1,248,424 parameters for 1000 classes."""
    return SqueezeNet("1_0", **kwargs)


@classifier(_PAPER, 1_235_496)
def squeezenet1_1(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.1 (2.4x less computation than 1.0), 1,235,496 parameters."""
    return SqueezeNet("1_1", **kwargs)
