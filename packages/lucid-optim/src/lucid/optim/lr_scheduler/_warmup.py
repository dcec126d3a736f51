"""Schedules PyTorch lacks: linear warmup then cosine decay, and the Transformer's (Noam)."""

from __future__ import annotations

import math

from ..optimizer import Optimizer
from ._base import LRScheduler

__all__ = ["LinearWarmupCosineAnnealingLR", "NoamLR"]


class LinearWarmupCosineAnnealingLR(LRScheduler):
    r"""Linear warmup from ``warmup_start_lr`` to the initial lr over ``warmup_epochs``, then
    cosine decay to ``eta_min`` at ``max_epochs`` (and ``eta_min`` after).

    For epoch :math:`e`, warmup :math:`W`, end :math:`T`:

    - :math:`e \le W`: :math:`s + (b - s)\, e / W`
    - :math:`W < e \le T`: :math:`\eta + (b - \eta)(1 + \cos(\pi (e - W) / (T - W))) / 2`

    Example::

        >>> import lucid, lucid.optim as optim
        >>> opt = optim.SGD([lucid.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = optim.lr_scheduler.LinearWarmupCosineAnnealingLR(opt, 2, 4)
        >>> lrs = []
        >>> for _ in range(5):
        ...     lrs.append(round(sched.get_last_lr()[0], 3))
        ...     opt.step()
        ...     sched.step()
        >>> lrs
        [0.0, 0.5, 1.0, 0.5, 0.0]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        warmup_epochs: int,
        max_epochs: int,
        warmup_start_lr: float = 0.0,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if not 0 <= warmup_epochs < max_epochs:
            raise ValueError(
                "Expected 0 <= warmup_epochs < max_epochs, but got "
                f"warmup_epochs={warmup_epochs}, max_epochs={max_epochs}"
            )
        self.warmup_epochs = warmup_epochs
        self.max_epochs = max_epochs
        self.warmup_start_lr = warmup_start_lr
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_outside_step()
        return self._get_closed_form_lr()

    def _get_closed_form_lr(self) -> list[float]:
        e, warmup, start = self.last_epoch, self.warmup_epochs, self.warmup_start_lr
        if e < warmup:
            return [start + (base - start) * e / warmup for base in self.base_lrs]
        if e >= self.max_epochs:
            return [self.eta_min for _ in self.base_lrs]
        cos = math.cos(math.pi * (e - warmup) / (self.max_epochs - warmup))
        return [self.eta_min + (base - self.eta_min) * (1 + cos) / 2 for base in self.base_lrs]


class NoamLR(LRScheduler):
    r"""The Transformer schedule ("Attention Is All You Need", section 5.3).

    lr = initial lr x ``factor`` x :math:`d^{-1/2} \min(s^{-1/2},\, s\, w^{-3/2})` with
    :math:`s` = ``last_epoch + 1`` (so the first step is not zero), model size :math:`d` and
    ``warmup_steps`` :math:`w`: a linear rise for :math:`w` steps, then decay as
    :math:`1/\sqrt{s}`. With Adam at ``lr=1`` it is the paper's schedule.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        d_model: int,
        warmup_steps: int = 4000,
        factor: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        if d_model <= 0 or warmup_steps <= 0:
            raise ValueError(
                "Expected positive d_model and warmup_steps, but got "
                f"d_model={d_model}, warmup_steps={warmup_steps}"
            )
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.factor = factor
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_if_called_outside_step()
        return self._get_closed_form_lr()

    def _get_closed_form_lr(self) -> list[float]:
        s = self.last_epoch + 1
        scale = self.factor * self.d_model**-0.5 * min(s**-0.5, s * self.warmup_steps**-1.5)
        return [base * scale for base in self.base_lrs]
