"""torchvision's ``AnchorGenerator``: per feature map, ``len(sizes) * len(aspect_ratios)``
anchors (rounded, centred at 0) shifted over the map's grid by its stride."""

from __future__ import annotations

import lucid
from lucid import Tensor, nn


class AnchorGenerator(nn.Module):
    """``sizes[i]`` and ``aspect_ratios[i]`` are the anchors of the ``i``-th feature map.

    ``forward(image_size, feature_sizes)``: the padded batch's ``(H, W)`` and each map's
    ``(h, w)``, to the anchors of one image ``(sum(h w A), 4)`` (xyxy), level after level.
    """

    def __init__(
        self,
        sizes: tuple[tuple[int, ...], ...] = ((128, 256, 512),),
        aspect_ratios: tuple[tuple[float, ...], ...] = ((0.5, 1.0, 2.0),),
    ) -> None:
        super().__init__()
        if len(sizes) != len(aspect_ratios):
            raise ValueError(f"AnchorGenerator: sizes and aspect_ratios must have one entry per "
                             f"feature map, got {len(sizes)} and {len(aspect_ratios)}")  # fmt: skip
        self.sizes, self.aspect_ratios = sizes, aspect_ratios
        self.cell_anchors = [self.generate_anchors(s, a) for s, a in zip(sizes, aspect_ratios)]

    @staticmethod
    def generate_anchors(scales: tuple[int, ...], aspect_ratios: tuple[float, ...]) -> Tensor:
        """The ``(A, 4)`` anchors of one location: heights ``s sqrt(r)``, widths
        ``s / sqrt(r)``, centred at 0, rounded."""
        h_ratios = lucid.sqrt(lucid.tensor(list(aspect_ratios), dtype=lucid.float32))
        w_ratios = 1 / h_ratios
        s = lucid.tensor(list(scales), dtype=lucid.float32)
        ws = (w_ratios[:, None] * s[None, :]).reshape(-1)
        hs = (h_ratios[:, None] * s[None, :]).reshape(-1)
        return (lucid.stack([-ws, -hs, ws, hs], dim=1) / 2).round()

    def num_anchors_per_location(self) -> list[int]:
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def forward(self, image_size: tuple[int, int],
                feature_sizes: list[tuple[int, int]]) -> Tensor:  # fmt: skip
        if len(feature_sizes) != len(self.cell_anchors):
            raise ValueError(f"AnchorGenerator: {len(self.cell_anchors)} levels of anchors, "
                             f"got {len(feature_sizes)} feature maps")  # fmt: skip
        out = []
        for (gh, gw), base in zip(feature_sizes, self.cell_anchors):
            sy, sx = image_size[0] // gh, image_size[1] // gw
            ys, xs = lucid.meshgrid(lucid.arange(gh) * sy, lucid.arange(gw) * sx, indexing="ij")
            xs, ys = xs.reshape(-1), ys.reshape(-1)
            shifts = lucid.stack([xs, ys, xs, ys], dim=1).to(lucid.float32)
            out.append((shifts.reshape(-1, 1, 4) + base.reshape(1, -1, 4)).reshape(-1, 4))
        return lucid.cat(out, dim=0)
