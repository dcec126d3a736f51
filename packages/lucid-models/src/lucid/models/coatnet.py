"""CoAtNet-0 to 5 (Dai et al., "CoAtNet: Marrying Convolution and Attention for All Data
Sizes", NeurIPS 2021), in timm's layout: timm's paper-like configurations
``coatnet_{0..5}_224`` (not its ``_rw`` variants, which differ from the paper: deeper stages,
SiLU, no MBConv output bias), whose state dicts load unchanged. The network is in
``lucid.models._maxxvit``, shared with MaxViT."""

from __future__ import annotations

from functools import partial
from typing import Any

from lucid.models._maxxvit import MaxxVit, MaxxVitCfg
from lucid.models._registry import classifier

_PAPER = (
    'Dai et al., "CoAtNet: Marrying Convolution and Attention for All Data Sizes", NeurIPS 2021'
)


class CoAtNet(MaxxVit):
    """CoAtNet: a conv stem, two stages of MBConv blocks and two of transformer blocks with
    relative attention over the whole feature map, a pool-norm-MLP head. ``img_size`` (a
    multiple of 32) sets the input size the position biases are made for."""


def _coatnet(dims: tuple[int, ...], depths: tuple[int, ...], stem: int,
             kwargs: dict[str, Any]) -> CoAtNet:  # fmt: skip
    cfg = MaxxVitCfg(dims, depths, ("C", "C", "T", "T"), (stem, stem), False, dims[-1], tf=False)
    return CoAtNet(cfg, **kwargs)


_ca = partial(classifier, _PAPER, reference="timm")


@_ca(25_036_820)
def coatnet_0_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-0 (dims 96-768, depths 2-3-5-2), 25,036,820 parameters for 1000 classes."""
    return _coatnet((96, 192, 384, 768), (2, 3, 5, 2), 64, kwargs)


@_ca(42_225_776)
def coatnet_1_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-1 (dims 96-768, depths 2-6-14-2), 42,225,776 parameters for 1000 classes."""
    return _coatnet((96, 192, 384, 768), (2, 6, 14, 2), 64, kwargs)


@_ca(74_684_744)
def coatnet_2_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-2 (dims 128-1024, depths 2-6-14-2), 74,684,744 parameters for 1000 classes."""
    return _coatnet((128, 256, 512, 1024), (2, 6, 14, 2), 128, kwargs)


@_ca(166_966_264)
def coatnet_3_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-3 (dims 192-1536, depths 2-6-14-2), 166,966,264 parameters for 1000 classes."""
    return _coatnet((192, 384, 768, 1536), (2, 6, 14, 2), 192, kwargs)


@_ca(275_425_288)
def coatnet_4_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-4 (dims 192-1536, depths 2-12-28-2), 275,425,288 parameters for 1000 classes."""
    return _coatnet((192, 384, 768, 1536), (2, 12, 28, 2), 192, kwargs)


@_ca(687_472_008)
def coatnet_5_224(**kwargs: Any) -> CoAtNet:
    """CoAtNet-5 (dims 256-2048, depths 2-12-28-2), 687,472,008 parameters for 1000 classes."""
    return _coatnet((256, 512, 1280, 2048), (2, 12, 28, 2), 192, kwargs)
