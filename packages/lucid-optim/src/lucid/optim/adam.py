"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._updates import AdamFamily
from .optimizer import ParamGroup

__all__ = ["Adam", "AdamW"]


class Adam(AdamFamily):
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

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        super()._init_state(p, state, group)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        step, _ = self._moments(p, grad, state, group)
        beta1, beta2 = group["betas"]
        exp_avg_sq = state["exp_avg_sq"]
        if group["amsgrad"]:
            exp_avg_sq = state["max_exp_avg_sq"].maximum_(exp_avg_sq)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / (1 - beta1**step))


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
