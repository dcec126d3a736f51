"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from ._updates import AdamFamily
from .optimizer import ParamGroup

__all__ = ["RAdam"]


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


def _rectification(rho_t: float, rho_inf: float) -> float:
    r"""RAdam's :math:`r_t`, the variance rectification term (defined for :math:`\rho_t > 4`)."""
    ratio = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
    rect: float = ratio**0.5
    return rect
