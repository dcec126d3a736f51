"""Rprop: sign-based steps with per-coordinate adaptive step sizes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from ._checks import check_nonnegative
from .optimizer import Optimizer, ParamGroup

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller & Braun, 1993), as ``torch.optim.Rprop``.

    Each coordinate's step size grows by ``etas[1]`` while its gradient keeps its sign and
    shrinks by ``etas[0]`` when the sign flips (that step is then skipped), clipped to
    ``step_sizes``; the parameter moves by the step size against the gradient's sign.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50.0),
        *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group_options(self, group: ParamGroup) -> None:
        check_nonnegative("learning rate", group["lr"])
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["step"] = 0
        state["prev"] = lucid.zeros_like(p)
        state["step_size"] = lucid.full_like(p, group["lr"])

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        state["step"] += 1
        sign = grad.mul(state["prev"]).sign()
        flipped = sign < 0
        factor = lucid.ones_like(sign).masked_fill(sign > 0, etaplus).masked_fill(flipped, etaminus)
        step_size = state["step_size"]
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        # NOTE: where the sign flipped the step is skipped and the gradient forgotten, so the
        # next step neither grows nor shrinks that coordinate.
        grad = grad.masked_fill(flipped, 0.0)
        p.addcmul_(grad.sign(), step_size, value=-1)
        state["prev"].copy_(grad)
