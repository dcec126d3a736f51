"""Pieces of the per-parameter updates that several algorithms share, each written once.

Each is the exact sequence of in-place ops PyTorch's single-tensor implementation runs, so the
results match it to the last bit of float rounding.
"""

from __future__ import annotations

from typing import Any

from lucid import Tensor

from . import _foreach
from ._checks import ADAM_OPTIONS
from .optimizer import Optimizer, ParamGroup


def l2_penalty(p: Tensor, grad: Tensor, weight_decay: float) -> Tensor:
    """``grad + weight_decay * p``: L2 regularisation folded into the gradient."""
    return grad if weight_decay == 0 else grad.add(p, alpha=weight_decay)


def decay_weights_(p: Tensor, lr: float, weight_decay: float) -> None:
    """Decoupled weight decay (AdamW, Lion): shrink ``p`` by ``1 - lr * weight_decay``."""
    if weight_decay != 0:
        p.mul_(1 - lr * weight_decay)


def apply_weight_decay(p: Tensor, grad: Tensor, group: ParamGroup) -> Tensor:
    """The group's weight decay: decoupled (shrinks ``p``) when it says
    ``decoupled_weight_decay``, else L2 (returns the penalised gradient)."""
    if group.get("decoupled_weight_decay", False):
        decay_weights_(p, group["lr"], group["weight_decay"])
        return grad
    return l2_penalty(p, grad, group["weight_decay"])


def average_square_(avg: Tensor, x: Tensor, decay: float) -> Tensor:
    """The running mean of squares ``avg <- decay * avg + (1 - decay) * x**2``, in place."""
    return avg.mul_(decay).addcmul_(x, x, value=1 - decay)


class AdamFamily(Optimizer):
    """The shared part of Adam, RAdam and NAdam: their checks, their first and second moment
    estimates (``exp_avg``, ``exp_avg_sq``) and how a step starts."""

    _checked_options = ADAM_OPTIONS
    _zero_state = ("exp_avg", "exp_avg_sq")

    def _moments(
        self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup
    ) -> tuple[int, Tensor]:
        """Count the step, apply the weight decay, update both moments from the gradient;
        return the step number and the gradient the moments saw."""
        state["step"] += 1
        grad = apply_weight_decay(p, grad, group)
        beta1, beta2 = group["betas"]
        state["exp_avg"].lerp_(grad, 1 - beta1)
        average_square_(state["exp_avg_sq"], grad, beta2)
        return state["step"], grad


def penalized_arrays(
    xp: Any, p: Any, grad: Any, maximize: bool, weight_decay: float, t1: Any, t2: Any
) -> Any:
    """The gradient a per-tensor update sees, on arrays: ``grad`` negated for ``maximize``,
    plus ``weight_decay * p`` (:func:`l2_penalty`). Returns ``grad`` itself or ``t1``; uses
    ``t2``."""
    d = xp.negative(grad, out=t1) if maximize else grad
    if weight_decay != 0:
        d = xp.add(d, _foreach.scaled(xp, p, weight_decay, t2), out=t1)
    return d


def moments_arrays(
    xp: Any, p: Any, grad: Any, m: Any, v: Any, t1: Any, t2: Any, group: ParamGroup
) -> Any:
    """:meth:`AdamFamily._moments` on arrays (after the step count): the gradient negated
    for ``maximize``, the weight decay, then both moments, written into ``p``, ``m``, ``v``.
    Returns the gradient the moments saw (``grad`` itself or in ``t1``); uses ``t2``."""
    weight_decay = group["weight_decay"]
    beta1, beta2 = group["betas"]
    d = xp.negative(grad, out=t1) if group.get("maximize", False) else grad
    if weight_decay != 0:
        if group.get("decoupled_weight_decay", False):
            xp.multiply(p, 1 - group["lr"] * weight_decay, out=p)
        else:
            d = xp.add(d, _foreach.scaled(xp, p, weight_decay, t2), out=t1)
    xp.add(m, xp.multiply(xp.subtract(d, m, out=t2), 1 - beta1, out=t2), out=m)
    xp.multiply(v, beta2, out=v)
    xp.add(v, _foreach.scaled(xp, xp.multiply(d, d, out=t2), 1 - beta2, t2), out=v)
    return d


def adam_hyper(group: ParamGroup) -> tuple[Any, ...]:
    """The Adam family's hyper-parameters that the array-level update needs as plain Python
    numbers (see ``_foreach.run``)."""
    return (group["lr"], group["eps"], group["weight_decay"], *group["betas"])
