"""DenseNet-121 (Huang et al., "Densely Connected Convolutional Networks", CVPR 2017),
torchvision layout (``features.denseblock1.denselayer1.norm1`` ...)."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import register_model

_PAPER = 'Huang et al., "Densely Connected Convolutional Networks", CVPR 2017'


class _DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int, bn_size: int, drop_rate: float) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)
        self.drop_rate = drop_rate

    def forward(self, features: list[Any]) -> Any:
        x = lucid.cat(features, 1)
        out = self.conv1(self.relu1(self.norm1(x)))
        out = self.conv2(self.relu2(self.norm2(out)))
        if self.drop_rate > 0:
            out = nn.functional.dropout(out, self.drop_rate, self.training)
        return out


class _DenseBlock(nn.ModuleDict):
    def __init__(self, n: int, cin: int, bn_size: int, growth: int, drop_rate: float) -> None:
        super().__init__()
        for i in range(n):
            layer = _DenseLayer(cin + i * growth, growth, bn_size, drop_rate)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, x: Any) -> Any:
        features = [x]
        for layer in self.values():
            features.append(layer(features))
        return lucid.cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.add_module("norm", nn.BatchNorm2d(cin))
        self.add_module("relu", nn.ReLU(inplace=True))
        self.add_module("conv", nn.Conv2d(cin, cout, 1, bias=False))
        self.add_module("pool", nn.AvgPool2d(2, stride=2))


class DenseNet(nn.Module):
    """DenseNet (Huang et al. 2017), as ``torchvision.models.DenseNet``."""

    def __init__(
        self,
        growth_rate: int = 32,
        block_config: tuple[int, ...] = (6, 12, 24, 16),
        num_init_features: int = 64,
        bn_size: int = 4,
        drop_rate: float = 0.0,
        num_classes: int = 1000,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module(
            "conv0", nn.Conv2d(in_channels, num_init_features, 7, stride=2, padding=3, bias=False)
        )
        self.features.add_module("norm0", nn.BatchNorm2d(num_init_features))
        self.features.add_module("relu0", nn.ReLU(inplace=True))
        self.features.add_module("pool0", nn.MaxPool2d(3, stride=2, padding=1))
        c = num_init_features
        for i, n in enumerate(block_config):
            self.features.add_module(
                f"denseblock{i + 1}", _DenseBlock(n, c, bn_size, growth_rate, drop_rate)
            )
            c += n * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}", _Transition(c, c // 2))
                c //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(c))
        self.classifier = nn.Linear(c, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, x: Any) -> Any:
        out = nn.functional.relu(self.features(x))
        out = nn.functional.adaptive_avg_pool2d(out, (1, 1)).flatten(1)
        return self.classifier(out)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=7_978_856,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def densenet121(**kwargs: Any) -> DenseNet:
    """DenseNet-121 (Huang et al. 2017), 7,978,856 parameters for 1000 classes."""
    return DenseNet(32, (6, 12, 24, 16), 64, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=28_681_000,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def densenet161(**kwargs: Any) -> DenseNet:
    """DenseNet-161 (growth rate 48), 28,681,000 parameters for 1000 classes."""
    return DenseNet(48, (6, 12, 36, 24), 96, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=14_149_480,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def densenet169(**kwargs: Any) -> DenseNet:
    """DenseNet-169, 14,149,480 parameters for 1000 classes."""
    return DenseNet(32, (6, 12, 32, 32), 64, **kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=20_013_928,
    input_size=(3, 224, 224),
    reference="torchvision",
)
def densenet201(**kwargs: Any) -> DenseNet:
    """DenseNet-201, 20,013,928 parameters for 1000 classes."""
    return DenseNet(32, (6, 12, 48, 32), 64, **kwargs)
