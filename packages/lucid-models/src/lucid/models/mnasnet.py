"""MNASNet-B1 at depth multipliers 0.5, 0.75, 1.0 and 1.3 (Tan et al., "MnasNet: Platform-Aware
Neural Architecture Search for Mobile", CVPR 2019), in torchvision's layout."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.models._registry import classifier

_PAPER = 'Tan et al., "MnasNet: Platform-Aware Neural Architecture Search for Mobile", CVPR 2019'
_BN_MOMENTUM = 1 - 0.9997  # the TensorFlow reference's decay 0.9997, in torch's convention


class _InvertedResidual(nn.Module):
    def __init__(
        self,
        in_ch: int,
        out_ch: int,
        kernel_size: int,
        stride: int,
        expansion_factor: int,
        bn_momentum: float = 0.1,
    ) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in (3, 5):
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid, 1, bias=False),
            nn.BatchNorm2d(mid, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(
                mid,
                mid,
                kernel_size,
                padding=kernel_size // 2,
                stride=stride,
                groups=mid,
                bias=False,
            ),
            nn.BatchNorm2d(mid, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, x: Any) -> Any:
        return self.layers(x) + x if self.apply_residual else self.layers(x)


def _stack(cin: int, cout: int, k: int, stride: int, exp: int, repeats: int) -> Any:
    first = _InvertedResidual(cin, cout, k, stride, exp, _BN_MOMENTUM)
    rest = [_InvertedResidual(cout, cout, k, 1, exp, _BN_MOMENTUM) for _ in range(1, repeats)]
    return nn.Sequential(first, *rest)


def _round_to_multiple_of(val: float, divisor: int, round_up_bias: float = 0.9) -> int:
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


class MNASNet(nn.Module):
    """MNASNet-B1 with depth multiplier ``alpha`` (``torchvision.models.MNASNet``)."""

    def __init__(
        self, alpha: float, num_classes: int = 1000, dropout: float = 0.2, in_channels: int = 3
    ) -> None:
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        d = [_round_to_multiple_of(c * alpha, 8) for c in (32, 16, 24, 40, 80, 96, 192, 320)]
        m = _BN_MOMENTUM
        self.layers = nn.Sequential(
            nn.Conv2d(in_channels, d[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(d[0], momentum=m),
            nn.ReLU(inplace=True),
            nn.Conv2d(d[0], d[0], 3, padding=1, stride=1, groups=d[0], bias=False),
            nn.BatchNorm2d(d[0], momentum=m),
            nn.ReLU(inplace=True),
            nn.Conv2d(d[0], d[1], 1, bias=False),
            nn.BatchNorm2d(d[1], momentum=m),
            _stack(d[1], d[2], 3, 2, 3, 3),
            _stack(d[2], d[3], 5, 2, 3, 3),
            _stack(d[3], d[4], 5, 2, 6, 3),
            _stack(d[4], d[5], 3, 1, 6, 2),
            _stack(d[5], d[6], 5, 2, 6, 4),
            _stack(d[6], d[7], 3, 1, 6, 1),
            nn.Conv2d(d[7], 1280, 1, bias=False),
            nn.BatchNorm2d(1280, momentum=m),
            nn.ReLU(inplace=True),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes)
        )
        for mod in self.modules():
            if isinstance(mod, nn.Conv2d):
                nn.init.kaiming_normal_(mod.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(mod, nn.BatchNorm2d):
                nn.init.ones_(mod.weight)
                nn.init.zeros_(mod.bias)
            elif isinstance(mod, nn.Linear):
                nn.init.kaiming_uniform_(mod.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(mod.bias)

    def forward(self, x: Any) -> Any:
        return self.classifier(self.layers(x).mean([2, 3]))


@classifier(_PAPER, 2_218_512)
def mnasnet0_5(**kwargs: Any) -> MNASNet:
    """MNASNet-B1 0.5, 2,218,512 parameters for 1000 classes."""
    return MNASNet(0.5, **kwargs)


@classifier(_PAPER, 3_170_208)
def mnasnet0_75(**kwargs: Any) -> MNASNet:
    """MNASNet-B1 0.75, 3,170,208 parameters for 1000 classes."""
    return MNASNet(0.75, **kwargs)


@classifier(_PAPER, 4_383_312)
def mnasnet1_0(**kwargs: Any) -> MNASNet:
    """MNASNet-B1 1.0, 4,383,312 parameters for 1000 classes."""
    return MNASNet(1.0, **kwargs)


@classifier(_PAPER, 6_282_256)
def mnasnet1_3(**kwargs: Any) -> MNASNet:
    """MNASNet-B1 1.3, 6,282,256 parameters for 1000 classes."""
    return MNASNet(1.3, **kwargs)
