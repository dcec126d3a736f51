"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_common
from .optimizer import Optimizer, ParamGroup

__all__ = ["RAdam"]


class RAdam(Optimizer):
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
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_common(group)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["exp_avg"] = lucid.zeros_like(p)
        state["exp_avg_sq"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        state["step"] += 1
        step = state["step"]
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = (
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
            p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
