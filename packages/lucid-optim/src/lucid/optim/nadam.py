"""NAdam: Adam with Nesterov momentum (Dozat, 2016)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid import Tensor

from . import _foreach
from ._checks import ADAM_OPTIONS
from ._updates import AdamFamily, adam_hyper, moments_arrays
from .optimizer import ParamGroup, _defaults

__all__ = ["NAdam"]


def _multi_tensor_nadam(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`NAdam._update` on the arrays (see ``_foreach``); returns the positions it left
    to the per-tensor update."""
    lr, psi, eps = group["lr"], group["momentum_decay"], group["eps"]
    beta1, beta2 = group["betas"]

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        step = state["step"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        state["mu_product"] *= mu
        mu_product = state["mu_product"]
        grad_value = -lr * (1.0 - mu) / (1.0 - mu_product)
        avg_value = -lr * mu_next / (1.0 - mu_product * mu_next)
        for (pa, ga, m, v), (t1, t2, t3) in _foreach.pieces(xp, [p, grad, *own], 3):
            d = moments_arrays(xp, pa, ga, m, v, t1, t2, group)
            denom = xp.sqrt(xp.true_divide(v, 1 - beta2**step, out=t2), out=t2)
            denom = xp.add(denom, eps, out=t2)
            q = _foreach.scaled(xp, xp.true_divide(d, denom, out=t3), grad_value, t3)
            xp.add(pa, q, out=pa)
            q = _foreach.scaled(xp, xp.true_divide(m, denom, out=t3), avg_value, t3)
            xp.add(pa, q, out=pa)

    hyper = (*adam_hyper(group), psi)
    keys = ["exp_avg", "exp_avg_sq"]
    scalars = ("step", "mu_product")
    return _foreach.run(params, grads, states, hyper, keys, update, scalars)


class NAdam(AdamFamily):
    r"""NAdam, as ``torch.optim.NAdam``.

    The momentum schedule is :math:`\mu_t = \beta_1 (1 - \tfrac12 0.96^{t\psi})` with
    ``momentum_decay`` :math:`\psi`; the update mixes the current gradient and the first moment
    with weights :math:`(1-\mu_t)/(1-\prod_{i\le t}\mu_i)` and
    :math:`\mu_{t+1}/(1-\prod_{i\le t+1}\mu_i)`. ``decoupled_weight_decay=True`` gives NAdamW.
    """

    _scalar_state = ("step", "mu_product")

    _checked_options = (*ADAM_OPTIONS, "momentum_decay")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state.update(step=0, mu_product=1.0)  # PyTorch's key order: step, mu_product, moments
        super()._init_state(p, state, group)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        step, grad = self._moments(p, grad, state, group)
        lr, psi = group["lr"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        state["mu_product"] *= mu
        mu_product = state["mu_product"]
        denom = state["exp_avg_sq"].div(1 - beta2**step).sqrt().add_(group["eps"])
        p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
        p.addcdiv_(state["exp_avg"], denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))

    _multi_tensor_update = staticmethod(_multi_tensor_nadam)
