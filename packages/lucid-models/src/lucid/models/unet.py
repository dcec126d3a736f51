"""U-Net (Ronneberger et al., "U-Net: Convolutional Networks for Biomedical Image
Segmentation", MICCAI 2015) as the paper's Figure 1 draws it: unpadded 3x3 convolutions, 2x2
max pooling, 2x2 up-convolutions that halve the channels, the contracting path's maps cropped
to the expanding path's and concatenated, a final 1x1 convolution to the classes (a 572x572
tile gives a 388x388 map)."""

from __future__ import annotations

from typing import Any

import lucid
from lucid import nn
from lucid.models._registry import register_model

_PAPER = (
    'Ronneberger et al., "U-Net: Convolutional Networks for Biomedical Image Segmentation", '
    "MICCAI 2015"
)


class DoubleConv(nn.Sequential):
    """Two unpadded 3x3 convolutions, each followed by ReLU."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.Conv2d(cin, cout, 3), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3), nn.ReLU(inplace=True))  # fmt: skip


def _center_crop(x: Any, h: int, w: int) -> Any:
    top, left = (x.shape[2] - h) // 2, (x.shape[3] - w) // 2
    return x[:, :, top : top + h, left : left + w]


class UNet(nn.Module):
    """``model(x)``: ``(batch, in_channels, H, W)`` to per-pixel class scores
    ``(batch, num_classes, H', W')``, ``H' = H - 184`` for the valid sizes (572 -> 388).

    ``base`` is the first level's width (64 in the paper; it doubles down to ``16 * base``).
    """

    def __init__(self, in_channels: int = 1, num_classes: int = 2, base: int = 64) -> None:
        super().__init__()
        widths = [base * 2**i for i in range(5)]
        self.down = nn.ModuleList()
        cin = in_channels
        for w in widths:
            self.down.append(DoubleConv(cin, w))
            cin = w
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList()
        self.up_conv = nn.ModuleList()
        for w in reversed(widths[:-1]):
            self.up.append(nn.ConvTranspose2d(2 * w, w, 2, stride=2))
            self.up_conv.append(DoubleConv(2 * w, w))
        self.head = nn.Conv2d(base, num_classes, 1)

    def forward(self, x: Any) -> Any:
        if x.ndim != 4:
            raise ValueError(f"UNet: expected input of shape (batch, channels, H, W), got "
                             f"{tuple(x.shape)}")  # fmt: skip
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else self.pool(x))
            skips.append(x)
        for up, conv, skip in zip(self.up, self.up_conv, reversed(skips[:-1])):
            x = up(x)
            x = conv(lucid.cat([_center_crop(skip, x.shape[2], x.shape[3]), x], dim=1))
        return self.head(x)


@register_model(task="image-segmentation", paper=_PAPER, num_params=31_030_658,
                input_size=(1, 572, 572), reference="paper")  # fmt: skip
def unet(**kwargs: Any) -> UNet:
    """The paper's U-Net (1 input channel, 2 classes, 64 to 1024 channels); 31,030,658
    parameters."""
    return UNet(**kwargs)
