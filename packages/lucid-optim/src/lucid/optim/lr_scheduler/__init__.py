"""Learning-rate schedulers with ``torch.optim.lr_scheduler``'s names and semantics.

Call ``optimizer.step()`` then ``scheduler.step()`` once per epoch (per batch for CyclicLR
and OneCycleLR); ``get_last_lr()`` gives the lr of each param group. Schedulers compose:
several stepping one optimizer multiply their effects (see ``ChainedScheduler``), and
``SequentialLR`` switches from one to the next at milestones.
"""

from ._base import LRScheduler
from ._composite import ChainedScheduler, SequentialLR
from ._cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ._plateau import ReduceLROnPlateau
from ._simple import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)
from ._warmup import LinearWarmupCosineAnnealingLR, NoamLR

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "LinearWarmupCosineAnnealingLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "NoamLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]
