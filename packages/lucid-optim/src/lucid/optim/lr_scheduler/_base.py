"""The scheduler base class, with ``torch.optim.lr_scheduler.LRScheduler``'s semantics.

A scheduler's ``get_lr()`` is written in the *chainable* form (the next lr from the group's
current lr), so several schedulers stepping one optimizer compose; ``_get_closed_form_lr()``
(where it exists) answers ``step(epoch)`` directly.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available."
)


def format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per param group: a list/tuple checked for length, a scalar repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    return [group[key] for group in optimizer.param_groups]


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class of the learning-rate schedulers.

    ``last_epoch`` counts the ``step()`` calls (it is 0 after construction); the constructor
    records each group's ``initial_lr`` (kept if already there) and sets the lr of epoch 0.
    To resume, pass ``last_epoch`` >= 0 to a scheduler built on an optimizer whose groups
    already hold ``initial_lr``, or use ``load_state_dict``.
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0: load the optimizer's state "
                        "dict first, or build the scheduler with last_epoch=-1"
                    )
        self.base_lrs: list[float] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the scheduler from ``state_dict()``'s result."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The lr of each group as last set by this scheduler."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        """The lr of each group for the current ``last_epoch`` (chainable form)."""
        raise NotImplementedError

    def _warn_if_called_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``, deprecated) and set each group's lr."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. You should "
                "call them in the opposite order: `optimizer.step()` before "
                "`lr_scheduler.step()`. Failure to do this will result in skipping the first "
                "value of the learning rate schedule.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _within_step(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values: Sequence[float]) -> None:
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__} computed {len(values)} learning rates for an optimizer "
                f"with {len(groups)} param groups; was a param group added after the "
                "scheduler was built?"
            )
        for group, lr in zip(groups, values):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")


@contextmanager
def _within_step(scheduler: LRScheduler) -> Iterator[None]:
    scheduler._get_lr_called_within_step = True
    try:
        yield
    finally:
        scheduler._get_lr_called_within_step = False


@contextmanager
def _initial_mode(scheduler: LRScheduler) -> Iterator[None]:
    scheduler._is_initial = True
    try:
        yield
    finally:
        scheduler._is_initial = False
