"""Adafactor: factored second moments, relative step sizes (Shazeer & Stern, 2018)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._updates import decay_weights_
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Adafactor"]

# Machine epsilon per floating dtype name (the default eps1, as torch.finfo(dtype).eps).
_MACHINE_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class Adafactor(Optimizer):
    r"""Adafactor, as ``torch.optim.Adafactor``.

    For a matrix (or a batch of them) only the row and column means of :math:`g^2` are kept,
    and the second moment is their outer product over the mean row factor; vectors keep the
    full :math:`g^2` average. :math:`\hat\beta_{2,t} = 1 - t^{\text{beta2\_decay}}`, the
    relative step is :math:`\min(\text{lr}, 1/\sqrt t)` scaled by
    :math:`\max(\epsilon_2, \text{RMS}(p))`, and the update's RMS is clipped at ``d``.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _check_group_options(self, group: ParamGroup) -> None:
        eps1, eps2 = group["eps"]
        if not 0.0 <= group["lr"]:
            raise ValueError(f"Learning rate should be >= 0 but is: {group['lr']}")
        if not 0.0 >= group["beta2_decay"]:
            raise ValueError(f"beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        if eps1 is not None and not 0.0 <= eps1:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps1}")
        if not 0.0 <= eps2:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps2}")
        if not 1.0 <= group["d"]:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {group['d']}")
        if not 0.0 <= group["weight_decay"]:
            raise ValueError(f"weight_decay should be >= 0 but is: {group['weight_decay']}")

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        if p.ndim > 1:
            state["row_var"] = lucid.zeros(*p.shape[:-1], 1, dtype=p.dtype, device=p.device)
            col_shape = (*p.shape[:-2], 1, p.shape[-1])
            state["col_var"] = lucid.zeros(*col_shape, dtype=p.dtype, device=p.device)
        else:
            state["variance"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        lr = group["lr"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = _MACHINE_EPS.get(p.dtype.name, 2.0**-23)
        state["step"] += 1
        step = float(state["step"])
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step**0.5))
        alpha = max(eps2, _rms(p)) * rho_t
        decay_weights_(p, lr, group["weight_decay"])
        if grad.ndim > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            grad_sq = grad * grad
            row_var.lerp_(grad_sq.mean(dim=-1, keepdim=True), one_minus_beta2_t)
            col_var.lerp_(grad_sq.mean(dim=-2, keepdim=True), one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate = var_estimate / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance
        update = var_estimate.clamp(min=eps1 * eps1).rsqrt().mul_(grad)
        denom = max(1.0, _rms(update) / group["d"])
        p.add_(update, alpha=-alpha / denom)


def _rms(t: Tensor) -> float:
    """Root mean square of all elements, as a Python float."""
    return math.sqrt(float(t.mul(t).mean().item()))
