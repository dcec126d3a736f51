"""Adadelta: rates from running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_nonnegative
from ._updates import average_square_, l2_penalty
from .optimizer import Optimizer, ParamGroup

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012), as ``torch.optim.Adadelta``.

    :math:`v \leftarrow \rho v + (1-\rho) g^2`,
    :math:`\Delta = \sqrt{u + \epsilon} / \sqrt{v + \epsilon}\; g`,
    :math:`u \leftarrow \rho u + (1-\rho)\Delta^2`, :math:`p \leftarrow p - \text{lr}\,\Delta`.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_nonnegative("learning rate", group["lr"])
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        check_nonnegative("epsilon value", group["eps"])
        check_nonnegative("weight_decay value", group["weight_decay"])

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["square_avg"] = lucid.zeros_like(p)
        state["acc_delta"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        rho, eps = group["rho"], group["eps"]
        state["step"] += 1
        grad = l2_penalty(p, grad, group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        average_square_(square_avg, grad, rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        average_square_(acc_delta, delta, rho)
        p.add_(delta, alpha=-group["lr"])
