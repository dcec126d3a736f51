"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from . import _foreach
from ._updates import l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["SGD"]


def _multi_tensor_sgd(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`SGD._update` on the arrays (see ``_foreach``); returns the positions it left to
    the per-tensor update (a first momentum step, which makes the buffer, among them)."""
    lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
    weight_decay, nesterov = group["weight_decay"], group["nesterov"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        for (pa, ga, *ba), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            if ba:
                b = ba[0]
                xp.multiply(b, momentum, out=b)
                xp.add(b, _foreach.scaled(xp, d, 1 - dampening, t2), out=b)
                d = xp.add(d, _foreach.scaled(xp, b, momentum, t2), out=t1) if nesterov else b
            xp.add(pa, _foreach.scaled(xp, d, -lr, t2), out=pa)

    hyper = (lr, momentum, dampening, weight_decay)
    keys = ["momentum_buffer"] if momentum != 0 else []
    return _foreach.run(params, grads, states, hyper, keys, update, scalars=())


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    With :math:`g = \nabla + \lambda p` (weight decay :math:`\lambda`),
    :math:`b \leftarrow \mu b + (1 - \tau) g` (the first step sets :math:`b = g`),
    :math:`p \leftarrow p - \text{lr}\,(g + \mu b)` with ``nesterov``, else
    :math:`p \leftarrow p - \text{lr}\, b`.
    """

    _supports_complex = True

    _checked_options = ("lr", "momentum", "weight_decay")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _check_group_options(self, group: ParamGroup) -> None:
        super()._check_group_options(group)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        grad = l2_penalty(p, grad, group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-group["lr"])

    _multi_tensor_update = staticmethod(_multi_tensor_sgd)
