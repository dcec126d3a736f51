"""Adadelta: rates from running averages of squared gradients and squared updates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from . import _foreach
from ._updates import average_square_, l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Adadelta"]


def _multi_tensor_adadelta(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Adadelta._update` on the arrays (see ``_foreach``); returns the positions it
    left to the per-tensor update."""
    lr, rho, eps, weight_decay = group["lr"], group["rho"], group["eps"], group["weight_decay"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        for (pa, ga, v, u), (t1, t2, t3) in _foreach.pieces(xp, [p, grad, *own], 3):
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            xp.multiply(v, rho, out=v)
            xp.add(v, _foreach.scaled(xp, xp.multiply(d, d, out=t2), 1 - rho, t2), out=v)
            std = xp.sqrt(xp.add(v, eps, out=t2), out=t2)
            delta = xp.sqrt(xp.add(u, eps, out=t3), out=t3)
            delta = xp.multiply(xp.true_divide(delta, std, out=t3), d, out=t3)
            xp.multiply(u, rho, out=u)
            sq = xp.multiply(delta, delta, out=t2)
            xp.add(u, _foreach.scaled(xp, sq, 1 - rho, t2), out=u)
            xp.add(pa, _foreach.scaled(xp, delta, -lr, t2), out=pa)

    hyper = (lr, rho, eps, weight_decay)
    return _foreach.run(params, grads, states, hyper, ["square_avg", "acc_delta"], update)


# torch's ``defaults`` order (not its signature's), which a printed state_dict shows
_ORDER = ("lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach", "differentiable")


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012), as ``torch.optim.Adadelta``.

    :math:`v \leftarrow \rho v + (1-\rho) g^2`,
    :math:`\Delta = \sqrt{u + \epsilon} / \sqrt{v + \epsilon}\; g`,
    :math:`u \leftarrow \rho u + (1-\rho)\Delta^2`, :math:`p \leftarrow p - \text{lr}\,\Delta`."""

    _checked_options = ("lr", "rho", "eps", "weight_decay")
    _zero_state = ("square_avg", "acc_delta")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,  # positional as in torch
        *,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals(), _ORDER))

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

    _multi_tensor_update = staticmethod(_multi_tensor_adadelta)
