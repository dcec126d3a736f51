"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor, kernels

from . import _foreach
from ._updates import AdamFamily, adam_hyper, moments_arrays
from .optimizer import ParamGroup, _defaults

__all__ = ["Adam", "AdamW"]


def _multi_tensor_adam(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Adam._update` on the arrays (see ``_foreach``); returns the positions it left to
    the per-tensor update."""
    lr, eps, amsgrad = group["lr"], group["eps"], group["amsgrad"]
    beta1, beta2 = group["betas"]
    fused = None if amsgrad or not params else kernels.ADAM_STEP.find(params[0].backend)
    flags = (group["weight_decay"], group.get("decoupled_weight_decay", False),
             group.get("maximize", False))  # fmt: skip

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        step = state["step"]
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        value = -lr / (1 - beta1**step)
        if fused is not None:  # one pass a parameter, the same bits (docs/performance.md)
            hyper = (lr, beta1, beta2, eps, *flags, bias_correction2_sqrt, value)
            if fused.forward(p.backend, p.array, grad.array, own[0].array, own[1].array, hyper):
                return
        for (pa, ga, m, v, *vmax), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            moments_arrays(xp, pa, ga, m, v, t1, t2, group)
            if vmax:
                v = xp.maximum(vmax[0], v, out=vmax[0])
            denom = xp.true_divide(xp.sqrt(v, out=t1), bias_correction2_sqrt, out=t1)
            xp.add(denom, eps, out=denom)
            xp.add(pa, _foreach.scaled(xp, xp.true_divide(m, denom, out=t1), value, t1), out=pa)

    keys = ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"] if amsgrad else ["exp_avg", "exp_avg_sq"]
    return _foreach.run(params, grads, states, adam_hyper(group), keys, update)


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
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals()))

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

    _multi_tensor_update = staticmethod(_multi_tensor_adam)


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
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
