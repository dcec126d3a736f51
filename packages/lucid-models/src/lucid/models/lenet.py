"""LeNet-1, LeNet-4 and LeNet-5 (LeCun et al., "Gradient-based learning applied to document
recognition", Proc. IEEE 1998).

``classic=True`` is the paper's style (tanh, average pooling); the default is the modern variant
(ReLU, max pooling) that trains faster. Inputs are 1x28x28 (padded to 32 by the first conv for
LeNet-5, as in most reimplementations) or 1x32x32 with ``padding=0``.
"""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import register_model

_PAPER = 'LeCun et al., "Gradient-Based Learning Applied to Document Recognition", Proc. IEEE 1998'


def _act(classic: bool) -> Any:
    return nn.Tanh() if classic else nn.ReLU()


def _pool(classic: bool) -> Any:
    return nn.AvgPool2d(2) if classic else nn.MaxPool2d(2)


class LeNet5(nn.Module):
    """LeNet-5: conv(6,5x5) pool conv(16,5x5) pool fc120 fc84 fc10. 61,706 parameters."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1, classic: bool = False,
                 padding: int = 2) -> None:  # fmt: skip
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, 5, padding=padding), _act(classic), _pool(classic),
            nn.Conv2d(6, 16, 5), _act(classic), _pool(classic),
        )  # fmt: skip
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 5 * 5, 120), _act(classic),
            nn.Linear(120, 84), _act(classic),
            nn.Linear(84, num_classes),
        )  # fmt: skip

    def forward(self, x: Any) -> Any:
        return self.classifier(self.features(x))


class LeNet4(nn.Module):
    """LeNet-4: conv(4,5x5) pool conv(16,5x5) pool fc120 fc10 on 28x28 (padded). 51,050 params."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1, classic: bool = False) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 4, 5, padding=2), _act(classic), _pool(classic),
            nn.Conv2d(4, 16, 5), _act(classic), _pool(classic),
        )  # fmt: skip
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), _act(classic), nn.Linear(120, num_classes)
        )

    def forward(self, x: Any) -> Any:
        return self.classifier(self.features(x))


class LeNet1(nn.Module):
    """LeNet-1: conv(4,5x5) pool conv(12,5x5) pool fc10 on 28x28. 3,246 parameters."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1, classic: bool = False) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 4, 5), _act(classic), _pool(classic),
            nn.Conv2d(4, 12, 5), _act(classic), _pool(classic),
        )  # fmt: skip
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(12 * 4 * 4, num_classes))

    def forward(self, x: Any) -> Any:
        return self.classifier(self.features(x))


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=3_246,
    input_size=(1, 28, 28),
    reference="paper",
)
def lenet1(**kwargs: Any) -> LeNet1:
    """LeNet-1 (LeCun et al. 1998), 3,246 parameters for 10 classes."""
    return LeNet1(**kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=51_050,
    input_size=(1, 28, 28),
    reference="paper",
)
def lenet4(**kwargs: Any) -> LeNet4:
    """LeNet-4 (LeCun et al. 1998), 51,050 parameters for 10 classes."""
    return LeNet4(**kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=61_706,
    input_size=(1, 28, 28),
    reference="paper",
)
def lenet5(**kwargs: Any) -> LeNet5:
    """LeNet-5, modern variant (ReLU, max-pool), 61,706 parameters for 10 classes."""
    return LeNet5(**kwargs)


@register_model(
    task="image-classification",
    paper=_PAPER,
    num_params=61_706,
    input_size=(1, 28, 28),
    reference="paper",
)
def lenet5_classic(**kwargs: Any) -> LeNet5:
    """LeNet-5 as in the paper's spirit (tanh, average pooling), 61,706 parameters."""
    return LeNet5(classic=True, **kwargs)
