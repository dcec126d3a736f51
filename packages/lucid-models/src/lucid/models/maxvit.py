"""MaxViT T/S/B/L (Tu et al., "MaxViT: Multi-Axis Vision Transformer", ECCV 2022), in timm's
layout: ``timm.create_model("maxvit_tiny_tf_224")``'s state dict (timm's configuration that
matches the paper's TensorFlow models) loads unchanged. The network is in
``lucid.models._maxxvit``, shared with CoAtNet."""

from __future__ import annotations

from functools import partial
from typing import Any

from lucid.models._maxxvit import MaxxVit, MaxxVitCfg
from lucid.models._registry import classifier

_PAPER = 'Tu et al., "MaxViT: Multi-Axis Vision Transformer", ECCV 2022'


class MaxVit(MaxxVit):
    """MaxViT: a conv stem and four stages of MaxViT blocks (MBConv, 7x7 window attention, 7x7
    grid attention at 224x224), a pool-norm-MLP head. ``img_size`` (a multiple of 32) sets the
    input size; the windows are ``img_size // 32`` wide."""


def _maxvit(dims: tuple[int, ...], depths: tuple[int, ...], stem: int,
            kwargs: dict[str, Any]) -> MaxVit:  # fmt: skip
    cfg = MaxxVitCfg(dims, depths, ("M",) * 4, (stem, stem), True, dims[-1], tf=True)
    return MaxVit(cfg, **kwargs)


_mv = partial(classifier, _PAPER, reference="timm")


@_mv(30_916_528)
def maxvit_tiny_tf_224(**kwargs: Any) -> MaxVit:
    """MaxViT-T (dims 64-512, depths 2-2-5-2), 30,916,528 parameters for 1000 classes."""
    return _maxvit((64, 128, 256, 512), (2, 2, 5, 2), 64, kwargs)


@_mv(68_927_956)
def maxvit_small_tf_224(**kwargs: Any) -> MaxVit:
    """MaxViT-S (dims 96-768, depths 2-2-5-2), 68,927,956 parameters for 1000 classes."""
    return _maxvit((96, 192, 384, 768), (2, 2, 5, 2), 64, kwargs)


@_mv(119_467_708)
def maxvit_base_tf_224(**kwargs: Any) -> MaxVit:
    """MaxViT-B (dims 96-768, depths 2-6-14-2), 119,467,708 parameters for 1000 classes."""
    return _maxvit((96, 192, 384, 768), (2, 6, 14, 2), 64, kwargs)


@_mv(211_785_560)
def maxvit_large_tf_224(**kwargs: Any) -> MaxVit:
    """MaxViT-L (dims 128-1024, depths 2-6-14-2), 211,785,560 parameters for 1000 classes."""
    return _maxvit((128, 256, 512, 1024), (2, 6, 14, 2), 128, kwargs)
