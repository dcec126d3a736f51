"""Adagrad: per-coordinate rates from the sum of squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_nonnegative
from ._updates import l2_penalty
from .optimizer import Optimizer, ParamGroup

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011), as ``torch.optim.Adagrad``.

    :math:`s \leftarrow s + g^2`,
    :math:`p \leftarrow p - \eta_t\, g / (\sqrt{s} + \epsilon)` with
    :math:`\eta_t = \text{lr} / (1 + (t-1)\,\text{lr\_decay})`.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_nonnegative("learning rate", group["lr"])
        check_nonnegative("lr_decay value", group["lr_decay"])
        check_nonnegative("weight_decay value", group["weight_decay"])
        check_nonnegative("initial_accumulator_value value", group["initial_accumulator_value"])
        check_nonnegative("epsilon value", group["eps"])

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["sum"] = lucid.full_like(p, group["initial_accumulator_value"])

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] += 1
        grad = l2_penalty(p, grad, group["weight_decay"])
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"].addcmul_(grad, grad, value=1)
        std = state["sum"].sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)
