"""Adagrad: per-coordinate rates from the sum of squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from . import _foreach
from ._updates import l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup

__all__ = ["Adagrad"]


def _multi_tensor_adagrad(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Adagrad._update` on the arrays (see ``_foreach``); returns the positions it
    left to the per-tensor update."""
    lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
    weight_decay, maximize = group["weight_decay"], group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        clr = lr / (1 + (state["step"] - 1) * lr_decay)
        for (pa, ga, total), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            xp.add(total, xp.multiply(d, d, out=t2), out=total)
            std = xp.add(xp.sqrt(total, out=t2), eps, out=t2)
            q = xp.true_divide(d, std, out=t2)
            xp.add(pa, _foreach.scaled(xp, q, -clr, t2), out=pa)

    hyper = (lr, lr_decay, eps, weight_decay)
    return _foreach.run(params, grads, states, hyper, ["sum"], update)


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011), as ``torch.optim.Adagrad``.

    :math:`s \leftarrow s + g^2`,
    :math:`p \leftarrow p - \eta_t\, g / (\sqrt{s} + \epsilon)` with
    :math:`\eta_t = \text{lr} / (1 + (t-1)\,\text{lr\_decay})`."""

    _checked_options = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,  # positional as in torch
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,  # torch's order, which a printed state_dict shows
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)

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

    _multi_tensor_update = staticmethod(_multi_tensor_adagrad)
