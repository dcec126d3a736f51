"""ShuffleNet V2 x0.5/x1.0/x1.5/x2.0 (Ma et al., "ShuffleNet V2: Practical Guidelines for
Efficient CNN Architecture Design", ECCV 2018), in torchvision's layout."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import classifier

_PAPER = (
    'Ma et al., "ShuffleNet V2: Practical Guidelines for Efficient CNN Architecture Design", '
    "ECCV 2018"
)


def channel_shuffle(x: Any, groups: int) -> Any:
    """Interleave the channels of ``groups`` groups: ``(N, g*c, H, W) -> (N, c*g, H, W)``."""
    n, c, h, w = x.shape
    x = x.reshape(n, groups, c // groups, h, w).transpose(1, 2)
    return x.reshape(n, c, h, w)


def _depthwise(i: int, o: int, stride: int) -> Any:
    return nn.Conv2d(i, o, 3, stride, 1, bias=False, groups=i)


class InvertedResidual(nn.Module):
    """ShuffleNet V2's unit: split (stride 1) or duplicate (stride 2), two branches, shuffle."""

    def __init__(self, inp: int, oup: int, stride: int) -> None:
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError(f"illegal stride value: expected 1, 2 or 3, got {stride}")
        self.stride = stride
        branch = oup // 2
        if stride == 1 and inp != branch << 1:
            raise ValueError(
                f"Invalid combination of stride {stride}, inp {inp} and oup {oup} values. If "
                "stride == 1 then inp should be equal to oup // 2 << 1."
            )
        if stride > 1:
            self.branch1 = nn.Sequential(
                _depthwise(inp, inp, stride),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch, 1, bias=False),
                nn.BatchNorm2d(branch),
                nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch, branch, 1, bias=False),
            nn.BatchNorm2d(branch),
            nn.ReLU(inplace=True),
            _depthwise(branch, branch, stride),
            nn.BatchNorm2d(branch),
            nn.Conv2d(branch, branch, 1, bias=False),
            nn.BatchNorm2d(branch),
            nn.ReLU(inplace=True),
        )

    def forward(self, x: Any) -> Any:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = lucid.cat([x1, self.branch2(x2)], 1)
        else:
            out = lucid.cat([self.branch1(x), self.branch2(x)], 1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """ShuffleNet V2 (``torchvision.models.ShuffleNetV2``)."""

    def __init__(
        self,
        stages_repeats: list[int],
        stages_out_channels: list[int],
        num_classes: int = 1000,
        in_channels: int = 3,
    ) -> None:
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        cin, cout = in_channels, stages_out_channels[0]
        self.conv1 = nn.Sequential(
            nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
        )
        cin = cout
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        stages = []
        for repeats, cout in zip(stages_repeats, stages_out_channels[1:]):
            seq = [InvertedResidual(cin, cout, 2)]
            seq += [InvertedResidual(cout, cout, 1) for _ in range(repeats - 1)]
            stages.append(nn.Sequential(*seq))
            cin = cout
        self.stage2, self.stage3, self.stage4 = stages
        cout = stages_out_channels[-1]
        self.conv5 = nn.Sequential(
            nn.Conv2d(cin, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
        )
        self.fc = nn.Linear(cout, num_classes)

    def forward(self, x: Any) -> Any:
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))


@classifier(_PAPER, 1_366_792)
def shufflenet_v2_x0_5(**kwargs: Any) -> ShuffleNetV2:
    """ShuffleNet V2 x0.5, 1,366,792 parameters for 1000 classes."""
    return ShuffleNetV2([4, 8, 4], [24, 48, 96, 192, 1024], **kwargs)


@classifier(_PAPER, 2_278_604)
def shufflenet_v2_x1_0(**kwargs: Any) -> ShuffleNetV2:
    """ShuffleNet V2 x1.0, 2,278,604 parameters for 1000 classes."""
    return ShuffleNetV2([4, 8, 4], [24, 116, 232, 464, 1024], **kwargs)


@classifier(_PAPER, 3_503_624)
def shufflenet_v2_x1_5(**kwargs: Any) -> ShuffleNetV2:
    """ShuffleNet V2 x1.5, 3,503,624 parameters for 1000 classes."""
    return ShuffleNetV2([4, 8, 4], [24, 176, 352, 704, 1024], **kwargs)


@classifier(_PAPER, 7_393_996)
def shufflenet_v2_x2_0(**kwargs: Any) -> ShuffleNetV2:
    """ShuffleNet V2 x2.0, 7,393,996 parameters for 1000 classes."""
    return ShuffleNetV2([4, 8, 4], [24, 244, 488, 976, 2048], **kwargs)
