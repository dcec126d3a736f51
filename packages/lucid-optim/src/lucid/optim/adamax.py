"""Adamax: Adam with the infinity norm."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from . import _foreach
from ._checks import ADAM_OPTIONS
from ._updates import l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Adamax"]


def _multi_tensor_adamax(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Adamax._update` on the arrays (see ``_foreach``); returns the positions it
    left to the per-tensor update."""
    lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        clr = lr / (1 - beta1 ** state["step"])
        for (pa, ga, m, u), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            xp.add(m, xp.multiply(xp.subtract(d, m, out=t2), 1 - beta1, out=t2), out=m)
            xp.multiply(u, beta2, out=u)
            xp.maximum(u, xp.add(xp.abs(d, out=t2), eps, out=t2), out=u)
            xp.add(pa, _foreach.scaled(xp, xp.true_divide(m, u, out=t2), -clr, t2), out=pa)

    hyper = (lr, eps, weight_decay, beta1, beta2)
    return _foreach.run(params, grads, states, hyper, ["exp_avg", "exp_inf"], update)


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba, 2014, section 7), as ``torch.optim.Adamax``.

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`u \leftarrow \max(\beta_2 u, |g| + \epsilon)`,
    :math:`p \leftarrow p - \frac{\text{lr}}{1-\beta_1^t} m / u`."""

    _checked_options = ADAM_OPTIONS
    _zero_state = ("exp_avg", "exp_inf")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,  # positional as in torch
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        beta1, beta2 = group["betas"]
        state["step"] += 1
        grad = l2_penalty(p, grad, group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.mul_(beta2).maximum_(grad.abs().add_(group["eps"]))
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p.addcdiv_(exp_avg, exp_inf, value=-clr)

    _multi_tensor_update = staticmethod(_multi_tensor_adamax)
