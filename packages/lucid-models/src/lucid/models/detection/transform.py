"""torchvision's ``GeneralizedRCNNTransform``: normalise each image, resize it so that its
short side is ``min_size`` (its long side at most ``max_size``), pad the batch to a multiple of
32; and map the detections back to the original sizes."""

from __future__ import annotations

import math

import lucid
from lucid import Tensor, nn
from lucid.nn import functional as F


class GeneralizedRCNNTransform(nn.Module):
    """``forward(images)``: a list of ``(3, H, W)`` images in [0, 1] to the padded batch and
    each resized image's ``(h, w)``."""

    def __init__(self, min_size: int, max_size: int, image_mean: list[float],
                 image_std: list[float], size_divisible: int = 32) -> None:  # fmt: skip
        super().__init__()
        self.min_size, self.max_size = min_size, max_size
        self.image_mean, self.image_std = image_mean, image_std
        self.size_divisible = size_divisible

    def resize(self, image: Tensor) -> Tensor:
        h, w = image.shape[-2:]
        scale = min(self.min_size / min(h, w), self.max_size / max(h, w))
        size = (math.floor(h * scale), math.floor(w * scale))  # recompute_scale_factor=True
        return F.interpolate(image[None], size=size, mode="bilinear", align_corners=False)[0]

    def forward(self, images: list[Tensor]) -> tuple[Tensor, list[tuple[int, int]]]:
        resized = []
        for img in images:
            if img.ndim != 3:
                raise ValueError(f"images is expected to be a list of 3d tensors of shape "
                                 f"[C, H, W], got {tuple(img.shape)}")  # fmt: skip
            mean = lucid.tensor(self.image_mean, dtype=img.dtype).reshape(-1, 1, 1)
            std = lucid.tensor(self.image_std, dtype=img.dtype).reshape(-1, 1, 1)
            resized.append(self.resize((img - mean) / std))
        sizes = [(int(r.shape[-2]), int(r.shape[-1])) for r in resized]
        d = self.size_divisible
        height = int(math.ceil(max(s[0] for s in sizes) / d) * d)
        width = int(math.ceil(max(s[1] for s in sizes) / d) * d)
        batch = lucid.stack([F.pad(r, (0, width - r.shape[-1], 0, height - r.shape[-2]))
                             for r in resized])  # fmt: skip
        return batch, sizes

    def resize_targets(self, targets: list[dict[str, Tensor]], original: list[tuple[int, int]],
                       sizes: list[tuple[int, int]]) -> list[dict[str, Tensor]]:  # fmt: skip
        """The training targets of images resized from ``original`` to ``sizes``: ``boxes``
        scaled, ``masks`` ``(N, H, W)`` resized (nearest) to uint8, other keys kept."""
        out = []
        for t, orig, new in zip(targets, original, sizes):
            t = dict(t)
            t["boxes"] = self.resize_boxes(t["boxes"], orig, new)
            if "masks" in t:
                m = t["masks"].to(lucid.float32)[:, None]
                if m.shape[0]:
                    m = F.interpolate(m, size=new, mode="nearest")
                else:
                    m = lucid.zeros((0, 1, *new), dtype=lucid.float32)
                t["masks"] = m[:, 0].to(lucid.uint8)
            out.append(t)
        return out

    @staticmethod
    def resize_boxes(boxes: Tensor, new: tuple[int, int], original: tuple[int, int]) -> Tensor:
        """Boxes of an image resized to ``new``, in the ``original`` image's coordinates."""
        ry = float(lucid.tensor(original[0], dtype=lucid.float32)
                   / lucid.tensor(new[0], dtype=lucid.float32))  # fmt: skip
        rx = float(lucid.tensor(original[1], dtype=lucid.float32)
                   / lucid.tensor(new[1], dtype=lucid.float32))  # fmt: skip
        scale = lucid.tensor([rx, ry, rx, ry], dtype=boxes.dtype)
        return boxes * scale
