"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from ._checks import check_nonnegative
from ._updates import l2_penalty
from .optimizer import Optimizer, ParamGroup

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    With :math:`g = \nabla + \lambda p` (weight decay :math:`\lambda`),
    :math:`b \leftarrow \mu b + (1 - \tau) g` (the first step sets :math:`b = g`),
    :math:`p \leftarrow p - \text{lr}\,(g + \mu b)` with ``nesterov``, else
    :math:`p \leftarrow p - \text{lr}\, b`.
    """

    _supports_complex = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_nonnegative("learning rate", group["lr"])
        check_nonnegative("momentum value", group["momentum"])
        check_nonnegative("weight_decay value", group["weight_decay"])
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
