"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_common
from ._updates import l2_penalty
from .optimizer import Optimizer, ParamGroup

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba, 2014, section 7), as ``torch.optim.Adamax``.

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`u \leftarrow \max(\beta_2 u, |g| + \epsilon)`,
    :math:`p \leftarrow p - \frac{\text{lr}}{1-\beta_1^t} m / u`.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_common(group)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["exp_avg"] = lucid.zeros_like(p)
        state["exp_inf"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        beta1, beta2 = group["betas"]
        state["step"] += 1
        grad = l2_penalty(p, grad, group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.mul_(beta2).maximum_(grad.abs().add_(group["eps"]))
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p.addcdiv_(exp_avg, exp_inf, value=-clr)
