"""RMSprop: rates from a running average of squared gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from . import _foreach
from ._updates import average_square_, l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["RMSprop"]


def _multi_tensor_rmsprop(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`RMSprop._update` on the arrays (see ``_foreach``); returns the positions it
    left to the per-tensor update."""
    lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
    weight_decay, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        for (pa, ga, v, *more), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            buf = more.pop(0) if momentum > 0 else None
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            xp.multiply(v, alpha, out=v)
            xp.add(v, _foreach.scaled(xp, xp.multiply(d, d, out=t2), 1 - alpha, t2), out=v)
            if centered:
                g_avg = more[0]
                diff = xp.multiply(xp.subtract(d, g_avg, out=t2), 1 - alpha, out=t2)
                xp.add(g_avg, diff, out=g_avg)
                avg = xp.multiply(xp.multiply(g_avg, g_avg, out=t2), -1, out=t2)
                avg = xp.sqrt(xp.add(v, avg, out=t2), out=t2)
            else:
                avg = xp.sqrt(v, out=t2)
            avg = xp.add(avg, eps, out=t2)
            q = xp.true_divide(d, avg, out=t2)
            if buf is not None:
                xp.multiply(buf, momentum, out=buf)
                xp.add(buf, q, out=buf)
                xp.add(pa, _foreach.scaled(xp, buf, -lr, t2), out=pa)
            else:
                xp.add(pa, _foreach.scaled(xp, q, -lr, t2), out=pa)

    keys = ["square_avg"]
    if momentum > 0:
        keys.append("momentum_buffer")
    if centered:
        keys.append("grad_avg")
    hyper = (lr, alpha, eps, weight_decay, momentum)
    return _foreach.run(params, grads, states, hyper, keys, update)


# torch's ``defaults`` order (not its signature's), which a printed state_dict shows
_ORDER = (
    "lr",
    "momentum",
    "alpha",
    "eps",
    "centered",
    "weight_decay",
    "capturable",
    "foreach",
    "maximize",
    "differentiable",
)


class RMSprop(Optimizer):
    r"""RMSprop (Hinton), as ``torch.optim.RMSprop``.

    :math:`v \leftarrow \alpha v + (1-\alpha) g^2`; ``centered`` subtracts the square of the
    running mean gradient :math:`\bar g` from :math:`v`; the step is
    :math:`g / (\sqrt{v} + \epsilon)`, accumulated into a momentum buffer when
    ``momentum > 0``."""

    _checked_options = ("lr", "eps", "momentum", "weight_decay", "alpha")
    _zero_state = ("square_avg",)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,  # positional, as in torch
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals(), _ORDER))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        super()._init_state(p, state, group)
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

    _multi_tensor_update = staticmethod(_multi_tensor_rmsprop)
