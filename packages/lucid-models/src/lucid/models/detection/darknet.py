"""The YOLO backbones: the 24-convolution network of YOLO v1, Darknet-19 (YOLO v2),
Darknet-53 (YOLO v3) and CSPDarknet-53 (YOLO v4), laid out as the Darknet cfg files lay them
out (``yolov1.cfg``'s paper version, ``yolov2.cfg``, ``yolov3.cfg``, ``yolov4.cfg``).

Every convolution but YOLO v1's is Darknet's ``[convolutional] batch_normalize=1``: a
bias-free convolution, batch norm, then leaky ReLU (slope 0.1) or, in CSPDarknet-53, Mish.
``width_mult`` scales every channel count (at least 8 channels) and ``depths`` sets the number
of residual blocks per stage, so that small variants can be trained on a CPU; the defaults are
the papers' networks.
"""

from __future__ import annotations

from collections.abc import Sequence

import lucid
from lucid import Tensor, nn

__all__ = ["ConvBNAct", "CSPDarknet53", "Darknet19", "Darknet53", "YOLOv1Backbone"]


def _ch(c: int, width_mult: float) -> int:
    return max(8, int(round(c * width_mult)))


class ConvBNAct(nn.Module):
    """Darknet's ``[convolutional]`` block: ``Conv2d`` (``padding = k // 2``, no bias when
    batch-normalised), ``BatchNorm2d``, then ``LeakyReLU(0.1)`` (``act="leaky"``), ``Mish``
    (``act="mish"``) or nothing (``act="linear"``)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3,
                 stride: int = 1, act: str = "leaky", batch_norm: bool = True) -> None:  # fmt: skip
        super().__init__()
        if act not in ("leaky", "mish", "linear"):
            raise ValueError(f"ConvBNAct: act must be 'leaky', 'mish' or 'linear', got {act!r}")
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                              padding=kernel_size // 2, bias=not batch_norm)  # fmt: skip
        self.bn = nn.BatchNorm2d(out_channels) if batch_norm else nn.Identity()
        self.act = (nn.LeakyReLU(0.1) if act == "leaky" else nn.Mish() if act == "mish"
                    else nn.Identity())  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.act(self.bn(self.conv(x)))  # type: ignore[no-any-return]


class YOLOv1Backbone(nn.Module):
    """The 24 convolutional layers of YOLO v1 (Redmon et al. 2016, Figure 3): 7x7/2 64,
    maxpool, 3x3 192, maxpool, 1x1 128, 3x3 256, 1x1 256, 3x3 512, maxpool, four times
    (1x1 256, 3x3 512), 1x1 512, 3x3 1024, maxpool, twice (1x1 512, 3x3 1024), 3x3 1024,
    3x3/2 1024, 3x3 1024, 3x3 1024; leaky ReLU 0.1 and biases, no batch norm (v1 had none;
    ``batch_norm=True`` adds it). Output stride 64, 1024 channels (times ``width_mult``)."""

    def __init__(self, width_mult: float = 1.0, batch_norm: bool = False) -> None:
        super().__init__()

        def c(n: int) -> int:
            return _ch(n, width_mult)

        def conv(i: int, o: int, k: int, s: int = 1) -> ConvBNAct:
            return ConvBNAct(c(i) if i != 3 else 3, c(o), k, s, batch_norm=batch_norm)

        layers: list[nn.Module] = [conv(3, 64, 7, 2), nn.MaxPool2d(2, 2),
                                   conv(64, 192, 3), nn.MaxPool2d(2, 2),
                                   conv(192, 128, 1), conv(128, 256, 3), conv(256, 256, 1),
                                   conv(256, 512, 3), nn.MaxPool2d(2, 2)]  # fmt: skip
        for _ in range(4):
            layers += [conv(512, 256, 1), conv(256, 512, 3)]
        layers += [conv(512, 512, 1), conv(512, 1024, 3), nn.MaxPool2d(2, 2)]
        for _ in range(2):
            layers += [conv(1024, 512, 1), conv(512, 1024, 3)]
        layers += [conv(1024, 1024, 3), conv(1024, 1024, 3, 2), conv(1024, 1024, 3),
                   conv(1024, 1024, 3)]  # fmt: skip
        self.features = nn.Sequential(*layers)
        self.out_channels = c(1024)

    def forward(self, x: Tensor) -> Tensor:
        return self.features(x)  # type: ignore[no-any-return]


class Darknet19(nn.Module):
    """Darknet-19 (Redmon & Farhadi 2017, Table 6) without its classifier: 18 convolutions
    and 5 max-pools. ``forward`` returns the 512-channel stride-16 map (the passthrough
    layer's input) and the 1024-channel stride-32 map."""

    def __init__(self, width_mult: float = 1.0) -> None:
        super().__init__()

        def conv(i: int, o: int, k: int) -> ConvBNAct:
            return ConvBNAct(_ch(i, width_mult) if i != 3 else 3, _ch(o, width_mult), k)

        pool = nn.MaxPool2d(2, 2)
        self.stage1 = nn.Sequential(
            conv(3, 32, 3), pool, conv(32, 64, 3), nn.MaxPool2d(2, 2),
            conv(64, 128, 3), conv(128, 64, 1), conv(64, 128, 3), nn.MaxPool2d(2, 2),
            conv(128, 256, 3), conv(256, 128, 1), conv(128, 256, 3), nn.MaxPool2d(2, 2),
            conv(256, 512, 3), conv(512, 256, 1), conv(256, 512, 3), conv(512, 256, 1),
            conv(256, 512, 3),
        )  # fmt: skip
        self.stage2 = nn.Sequential(
            nn.MaxPool2d(2, 2), conv(512, 1024, 3), conv(1024, 512, 1), conv(512, 1024, 3),
            conv(1024, 512, 1), conv(512, 1024, 3),
        )  # fmt: skip
        self.out_channels = (_ch(512, width_mult), _ch(1024, width_mult))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        c4 = self.stage1(x)
        return c4, self.stage2(c4)


class _Residual(nn.Module):
    """Darknet's ``[shortcut]`` block: 1x1 ``hidden``, 3x3 ``channels``, plus the input."""

    def __init__(self, channels: int, hidden: int, act: str = "leaky") -> None:
        super().__init__()
        self.conv1 = ConvBNAct(channels, hidden, 1, act=act)
        self.conv2 = ConvBNAct(hidden, channels, 3, act=act)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.conv2(self.conv1(x))  # type: ignore[no-any-return]


class Darknet53(nn.Module):
    """Darknet-53 (Redmon & Farhadi 2018, Table 1) without its classifier: a 3x3 32
    convolution, then five stages of a 3x3/2 down-sampling convolution and 1, 2, 8, 8, 4
    residual blocks. ``forward`` returns the stride-8, -16 and -32 maps (256, 512, 1024
    channels)."""

    def __init__(self, width_mult: float = 1.0, depths: Sequence[int] = (1, 2, 8, 8, 4)) -> None:
        super().__init__()
        if len(depths) != 5:
            raise ValueError(f"Darknet53: depths must have 5 entries, got {tuple(depths)}")
        chans = [_ch(c, width_mult) for c in (32, 64, 128, 256, 512, 1024)]
        self.stem = ConvBNAct(3, chans[0], 3)
        self.stages = nn.ModuleList(
            nn.Sequential(ConvBNAct(chans[i], chans[i + 1], 3, 2),
                          *[_Residual(chans[i + 1], chans[i + 1] // 2) for _ in range(d)])
            for i, d in enumerate(depths)
        )  # fmt: skip
        self.out_channels = tuple(chans[3:])

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x = self.stem(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs[2], outs[3], outs[4]


class _CSPStage(nn.Module):
    """A CSPDarknet-53 stage (``yolov4.cfg``): a 3x3/2 down-sampling convolution, then two
    1x1 branches; one goes through ``depth`` residual blocks and a 1x1 convolution, the two
    are concatenated and fused by a 1x1 convolution. The first stage keeps the full width in
    both branches (hidden width half of it in its residual block), as the cfg does."""

    def __init__(self, in_channels: int, out_channels: int, depth: int, first: bool) -> None:
        super().__init__()
        half = out_channels if first else out_channels // 2
        self.down = ConvBNAct(in_channels, out_channels, 3, 2, act="mish")
        self.split_short = ConvBNAct(out_channels, half, 1, act="mish")
        self.split_main = ConvBNAct(out_channels, half, 1, act="mish")
        hidden = out_channels // 2 if first else half
        self.blocks = nn.Sequential(*[_Residual(half, hidden, act="mish") for _ in range(depth)])
        self.transition = ConvBNAct(half, half, 1, act="mish")
        self.fuse = ConvBNAct(2 * half, out_channels, 1, act="mish")

    def forward(self, x: Tensor) -> Tensor:
        x = self.down(x)
        main = self.transition(self.blocks(self.split_main(x)))
        return self.fuse(lucid.cat([main, self.split_short(x)], dim=1))  # type: ignore[no-any-return]


class CSPDarknet53(nn.Module):
    """CSPDarknet-53 (Wang et al. 2020; Bochkovskiy et al. 2020), YOLO v4's backbone: a 3x3
    32 Mish convolution, then five cross-stage-partial stages with 1, 2, 8, 8, 4 residual
    blocks. ``forward`` returns the stride-8, -16 and -32 maps (256, 512, 1024 channels)."""

    def __init__(self, width_mult: float = 1.0, depths: Sequence[int] = (1, 2, 8, 8, 4)) -> None:
        super().__init__()
        if len(depths) != 5:
            raise ValueError(f"CSPDarknet53: depths must have 5 entries, got {tuple(depths)}")
        chans = [_ch(c, width_mult) for c in (32, 64, 128, 256, 512, 1024)]
        self.stem = ConvBNAct(3, chans[0], 3, act="mish")
        self.stages = nn.ModuleList(
            _CSPStage(chans[i], chans[i + 1], d, first=i == 0) for i, d in enumerate(depths)
        )
        self.out_channels = tuple(chans[3:])

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x = self.stem(x)
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.append(x)
        return outs[2], outs[3], outs[4]
