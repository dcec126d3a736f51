"""Stochastic weight averaging and exponential moving averages (``torch.optim.swa_utils``).

``AveragedModel`` keeps a copy of a model whose parameters are the running average (SWA) or
exponential moving average (EMA, ``multi_avg_fn=get_ema_multi_avg_fn(decay)``) of the
model's; ``SWALR`` anneals each group's lr to a constant SWA lr; ``update_bn`` recomputes
batch-norm statistics for the averaged weights.

``AveragedModel`` is an ``nn.Module``, so this module needs lucid-nn (the ``nn`` extra:
``pip install "lucid-optim[nn]"``); the rest of lucid.optim does not.

>>> import lucid, lucid.nn as nn
>>> from lucid.optim.swa_utils import AveragedModel
>>> model = nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> swa.update_parameters(model)
>>> [k for k in swa.state_dict()]
['n_averaged', 'module.weight', 'module.bias']
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import lucid
from lucid import Tensor
from lucid.autograd import no_grad

try:
    from lucid.nn import BatchNorm1d, BatchNorm2d, BatchNorm3d, Module
except ModuleNotFoundError as exc:  # pragma: no cover - only without lucid-nn installed
    raise ModuleNotFoundError(
        "lucid.optim.swa_utils needs lucid-nn (AveragedModel is an nn.Module): "
        'pip install "lucid-optim[nn]"'
    ) from exc

from .lr_scheduler import LRScheduler
from .lr_scheduler._base import format_param
from .optimizer import Optimizer

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]

ParamList = Sequence[Tensor]
AvgFn = Callable[[Tensor, Tensor, "Tensor | int"], Tensor]
MultiAvgFn = Callable[[ParamList, ParamList, "Tensor | int"], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def _as_float(n: Tensor | int) -> float:
    return float(n.item()) if isinstance(n, Tensor) else float(n)


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In-place EMA over lists: ``ema <- ema + (1 - decay) * (current - ema)``."""
    _check_decay(decay)

    def ema_update(ema_list: ParamList, current_list: ParamList, _: Tensor | int) -> None:
        with no_grad():
            if ema_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_list, current_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_list, current_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In-place running mean over lists: ``avg <- avg + (current - avg) / (n + 1)``."""

    def swa_update(
        avg_list: ParamList, current_list: ParamList, num_averaged: Tensor | int
    ) -> None:
        with no_grad():
            weight = 1.0 / (_as_float(num_averaged) + 1)
            if avg_list[0].is_floating_point():
                for p_avg, p_model in zip(avg_list, current_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(avg_list, current_list):
                    p_avg.copy_(p_avg + (p_model - p_avg) * weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """One tensor's EMA step: returns ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            result: Tensor = decay * ema_param + (1 - decay) * current_param
            return result

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """One tensor's running-mean step: returns ``avg + (current - avg) / (n + 1)``."""

    def swa_update(
        averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int
    ) -> Tensor:
        with no_grad():
            result: Tensor = averaged_param + (current_param - averaged_param) / (num_averaged + 1)
            return result

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters average the model's over
    :meth:`update_parameters` calls.

    By default the average is the equal-weight running mean (SWA). ``avg_fn(avg, current,
    n_averaged) -> new avg`` works per tensor, ``multi_avg_fn(avg_list, current_list,
    n_averaged)`` updates lists in place (``get_ema_multi_avg_fn(decay)`` for EMA); give at
    most one. With ``use_buffers=True`` buffers are averaged too; otherwise they are copied
    from the model. The state_dict holds ``n_averaged`` and the copy under ``module.``.
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", lucid.tensor(0, dtype=lucid.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Call the averaged copy."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average; the first call copies them."""
        if self.use_buffers:
            self_params = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            model_params = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            self_params = list(self.parameters())
            model_params = list(model.parameters())
        averaged = [p.detach() for p in self_params]
        current = [p.detach().to(a.device) for p, a in zip(model_params, averaged)]
        averaged = averaged[: len(current)]
        n = int(self.n_averaged.item())
        with no_grad():
            if n == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.multi_avg_fn is not None:
                self._by_dtype(self.multi_avg_fn, averaged, current)
            elif self.avg_fn is None:
                # torch's CPU path: the per-tensor SWA step (its lists are for CUDA)
                step = get_swa_avg_fn()
                for a, c in zip(averaged, current):
                    a.copy_(step(a, c, self.n_averaged))
            else:
                for a, c in zip(averaged, current):
                    a.copy_(self.avg_fn(a, c, self.n_averaged))
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach().to(b_swa.device))
            self.n_averaged.add_(1)

    def _by_dtype(self, fn: MultiAvgFn, averaged: list[Tensor], current: list[Tensor]) -> None:
        groups: dict[tuple[str, str], tuple[list[Tensor], list[Tensor]]] = {}
        for a, c in zip(averaged, current):
            avg_list, cur_list = groups.setdefault((str(a.device), str(a.dtype)), ([], []))
            avg_list.append(a)
            cur_list.append(c)
        for avg_list, cur_list in groups.values():
            fn(avg_list, cur_list, self.n_averaged)


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every batch norm in ``model`` with one pass over
    ``loader`` (a cumulative average: momentum ``None`` during the pass).

    Each item of ``loader`` is an input, or a list/tuple whose first element is. The model's
    training mode is restored afterwards.
    """
    momenta: dict[Module, Any] = {}
    for module in model.modules():
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d)):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for item in loader:
            if isinstance(item, (list, tuple)):
                item = item[0]
            if device is not None:
                item = item.to(device)
            model(item)
    for bn_module, momentum in momenta.items():
        bn_module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` epochs (``"cos"`` or
    ``"linear"``), then hold it there."""

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | Sequence[float],
        anneal_epochs: int = 10,
        anneal_strategy: Literal["cos", "linear"] = "cos",
        last_epoch: int = -1,
    ) -> None:
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        """The next lr of each group, from its current one (chainable form)."""
        self._warn_if_called_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer and the anneal function."""
        skip = ("optimizer", "anneal_func")
        return {key: value for key, value in self.__dict__.items() if key not in skip}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore from ``state_dict()``'s result."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
