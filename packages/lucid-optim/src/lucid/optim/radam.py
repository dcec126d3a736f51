"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from . import _foreach
from ._updates import AdamFamily, adam_hyper, moments_arrays
from .optimizer import ParamGroup, _defaults

__all__ = ["RAdam"]


def _multi_tensor_radam(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`RAdam._update` on the arrays (see ``_foreach``); returns the positions it left
    to the per-tensor update."""
    lr, eps = group["lr"], group["eps"]
    beta1, beta2 = group["betas"]

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        step = state["step"]
        bias_correction2 = 1 - beta2**step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        for (pa, ga, m, v), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            moments_arrays(xp, pa, ga, m, v, t1, t2, group)
            x = xp.multiply(xp.true_divide(m, 1 - beta1**step, out=t2), lr, out=t2)
            if rho_t > 5.0:
                adaptive_lr = xp.add(xp.sqrt(v, out=t1), eps, out=t1)
                adaptive_lr = xp.true_divide(bias_correction2**0.5, adaptive_lr, out=t1)
                x = xp.multiply(
                    xp.multiply(x, adaptive_lr, out=t2), _rectification(rho_t, rho_inf), out=t2
                )
            xp.add(pa, xp.multiply(x, -1.0, out=t2), out=pa)

    keys = ["exp_avg", "exp_avg_sq"]
    return _foreach.run(params, grads, states, adam_hyper(group), keys, update)


# torch's ``defaults`` order (not its signature's), which a printed state_dict shows
_ORDER = (
    "lr",
    "betas",
    "eps",
    "weight_decay",
    "maximize",
    "foreach",
    "capturable",
    "decoupled_weight_decay",
    "differentiable",
)


class RAdam(AdamFamily):
    r"""RAdam, as ``torch.optim.RAdam``.

    While the variance of the adaptive rate is intractable
    (:math:`\rho_t \le 5`) the step is plain bias-corrected momentum; afterwards it is Adam's
    step scaled by the rectification term :math:`r_t`. ``decoupled_weight_decay=True`` gives
    RAdamW.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals(), _ORDER))

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        step, _ = self._moments(p, grad, state, group)
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = state["exp_avg"] / (1 - beta1**step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            adaptive_lr = (bias_correction2**0.5) / state["exp_avg_sq"].sqrt().add_(eps)
            rect = _rectification(rho_t, rho_inf)
            p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)

    _multi_tensor_update = staticmethod(_multi_tensor_radam)


def _rectification(rho_t: float, rho_inf: float) -> float:
    r"""RAdam's :math:`r_t`, the variance rectification term (defined for :math:`\rho_t > 4`)."""
    ratio = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
    rect: float = ratio**0.5
    return rect
