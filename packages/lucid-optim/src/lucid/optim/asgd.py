"""ASGD: SGD with Polyak-Ruppert averaging."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from . import _foreach
from ._updates import l2_penalty, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["ASGD"]


def _multi_tensor_asgd(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`ASGD._update` on the arrays (see ``_foreach``); returns the positions it left to
    the per-tensor update (complex parameters among them)."""
    lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
    weight_decay, maximize = group["weight_decay"], group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        eta, mu = state["eta"], state["mu"]
        state["step"] += 1
        step = state["step"]
        for (pa, ga, ax), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            d = penalized_arrays(xp, pa, ga, maximize, weight_decay, t1, t2)
            xp.multiply(pa, 1 - lambd * eta, out=pa)
            xp.add(pa, _foreach.scaled(xp, d, -eta, t2), out=pa)
            if mu != 1:
                xp.add(ax, xp.multiply(xp.subtract(pa, ax, out=t2), mu, out=t2), out=ax)
            else:
                xp.copyto(ax, pa)
        state["eta"] = lr / ((1 + lambd * lr * step) ** alpha)
        state["mu"] = 1 / max(1, step - t0)

    hyper = (lr, lambd, alpha, t0, weight_decay)
    scalars = ("step", "eta", "mu")
    return _foreach.run(params, grads, states, hyper, ["ax"], update, scalars)


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak & Juditsky, 1992), as ``torch.optim.ASGD``.

    :math:`p \leftarrow (1 - \lambda\eta_t)\,p - \eta_t g`, with
    :math:`\eta_t = \text{lr} / (1 + \lambda\,\text{lr}\,t)^\alpha`; from step ``t0`` on the
    average ``ax`` of the iterates is kept in the state."""

    _supports_complex = True
    _scalar_state = ("step", "eta", "mu")

    _checked_options = ("lr", "weight_decay")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,  # positional as in torch
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["eta"] = float(group["lr"])
        state["mu"] = 1.0
        state["ax"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        lr, lambd = group["lr"], group["lambd"]
        state["step"] += 1
        step = state["step"]
        grad = l2_penalty(p, grad, group["weight_decay"])
        eta = state["eta"]
        p.mul_(1 - lambd * eta)
        p.add_(grad, alpha=-eta)
        ax = state["ax"]
        if state["mu"] != 1:
            ax.add_(p.sub(ax).mul_(state["mu"]))
        else:
            ax.copy_(p.detach())
        state["eta"] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"] = 1 / max(1, step - group["t0"])

    _multi_tensor_update = staticmethod(_multi_tensor_asgd)
