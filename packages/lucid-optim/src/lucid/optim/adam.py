"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_common
from .optimizer import Optimizer, ParamGroup

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    r"""Adam (Kingma & Ba, 2014), as ``torch.optim.Adam``.

    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`,
    :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`,
    :math:`p \leftarrow p - \text{lr}\,\hat m / (\sqrt{\hat v} + \epsilon)` with the bias
    corrections :math:`\hat m = m / (1-\beta_1^t)`, :math:`\hat v = v / (1-\beta_2^t)`.
    ``amsgrad`` uses the running maximum of :math:`v`; ``weight_decay`` adds
    :math:`\lambda p` to the gradient, or with ``decoupled_weight_decay=True`` (AdamW)
    multiplies :math:`p` by :math:`1 - \text{lr}\,\lambda` first.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        decoupled_weight_decay: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_common(group)

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["exp_avg"] = lucid.zeros_like(p)
        state["exp_avg_sq"] = lucid.zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = lucid.zeros_like(p)

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
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            max_sq = state["max_exp_avg_sq"]
            max_sq.maximum_(exp_avg_sq)
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            decoupled_weight_decay=True,
        )
