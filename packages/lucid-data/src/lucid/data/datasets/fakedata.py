"""FakeData: random images, the same image for the same index, as torchvision's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lucid

from .vision import VisionDataset

__all__ = ["FakeData"]


def _to_image(chw: np.ndarray) -> np.ndarray:
    """A float ``C x H x W`` array as the uint8 image torchvision's ``ToPILImage`` makes of it:
    times 255, truncated and wrapped to a byte (``Tensor.byte()`` on the CPU), ``H x W x C``
    (``H x W`` for one channel)."""
    wrapped = (np.trunc(chw.astype(np.float64) * 255).astype(np.int64) & 0xFF).astype(np.uint8)
    hwc = np.ascontiguousarray(np.moveaxis(wrapped, 0, -1))
    return hwc[..., 0] if hwc.shape[-1] == 1 else hwc


class FakeData(VisionDataset):
    """A fake dataset of random images: ``size`` samples of ``image_size`` (``C x H x W``) and
    labels in ``[0, num_classes)``, each the same every time its index is read.

    As in torchvision, sample ``index`` is drawn from a generator seeded with
    ``index + random_offset``: ``randn(*image_size)`` for the image, then one ``randint`` for
    the label; the default generator is not touched. The image is what torchvision's
    ``ToPILImage`` makes of the draw, as a uint8 ``H x W x C`` numpy array (``H x W`` for one
    channel) instead of a PIL image. The values differ from torchvision's: lucid's generator
    is not torch's (see docs/differences.md, "Data").

    Example:
        >>> from lucid.data import transforms as T
        >>> img, label = FakeData(size=4, image_size=(3, 8, 8), transform=T.ToTensor())[0]
        >>> tuple(img.shape), 0 <= label < 10
        ((3, 8, 8), True)
    """

    def __init__(
        self,
        size: int = 1000,
        image_size: tuple[int, int, int] = (3, 224, 224),
        num_classes: int = 10,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        random_offset: int = 0,
    ) -> None:
        super().__init__(transform=transform, target_transform=target_transform)
        if len(image_size) != 3 or not 1 <= image_size[0] <= 4:
            raise ValueError(
                "image_size should be (channels, height, width) with 1 to 4 channels "
                f"(the channel counts an image has), got {image_size!r}"
            )
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, target)`` of sample ``index``, the target a class index."""
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        gen = lucid.Generator()
        gen.manual_seed(index + self.random_offset)
        draw = lucid.randn(*self.image_size, generator=gen)
        target: Any = lucid.randint(0, self.num_classes, (1,), generator=gen, dtype=lucid.int64)[0]
        img: Any = _to_image(draw.numpy())
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()

    def __getitems__(self, indices: Sequence[int]) -> Sequence[tuple[Any, Any]]:
        return [self[i] for i in indices]

    def __len__(self) -> int:
        return self.size
