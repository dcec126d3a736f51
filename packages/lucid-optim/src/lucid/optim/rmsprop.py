"""RMSprop: rates from a running average of squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_nonnegative
from ._updates import average_square_, l2_penalty
from .optimizer import Optimizer, ParamGroup

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), as ``torch.optim.RMSprop``.

    :math:`v \leftarrow \alpha v + (1-\alpha) g^2`; ``centered`` subtracts the square of the
    running mean gradient :math:`\bar g` from :math:`v`; the step is
    :math:`g / (\sqrt{v} + \epsilon)`, accumulated into a momentum buffer when
    ``momentum > 0``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            alpha=alpha,
            eps=eps,
            weight_decay=weight_decay,
            momentum=momentum,
            centered=centered,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_nonnegative("learning rate", group["lr"])
        check_nonnegative("epsilon value", group["eps"])
        check_nonnegative("momentum value", group["momentum"])
        check_nonnegative("weight_decay value", group["weight_decay"])
        check_nonnegative("alpha value", group["alpha"])

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["square_avg"] = lucid.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = lucid.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        alpha, lr = group["alpha"], group["lr"]
        state["step"] += 1
        grad = l2_penalty(p, grad, group["weight_decay"])
        square_avg = average_square_(state["square_avg"], grad, alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
