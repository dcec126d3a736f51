"""Rprop: sign-based steps with per-coordinate adaptive step sizes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from . import _foreach
from ._updates import penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Rprop"]


def _multi_tensor_rprop(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Rprop._update` on the arrays (see ``_foreach``); ``masked_fill`` becomes a
    masked ``copyto`` of the value in the tensor's dtype. Returns the positions it left to the
    per-tensor update."""
    etaminus, etaplus = group["etas"]
    step_size_min, step_size_max = group["step_sizes"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        state["step"] += 1
        dtype = p.array.dtype
        one, minus, plus, zero = (xp.asarray(v, dtype=dtype) for v in (1, etaminus, etaplus, 0))
        for (pa, ga, prev, size), (t1, t2, t3) in _foreach.pieces(xp, [p, grad, *own], 3):
            d = penalized_arrays(xp, pa, ga, maximize, 0, t1, t2)
            sign = xp.sign(xp.multiply(d, prev, out=t2), out=t2)
            flipped = xp.less(sign, 0)
            xp.copyto(t3, one)
            xp.copyto(t3, plus, where=xp.greater(sign, 0))
            xp.copyto(t3, minus, where=flipped)
            xp.multiply(size, t3, out=size)
            xp.minimum(xp.maximum(size, step_size_min, out=size), step_size_max, out=size)
            kept = t2
            xp.copyto(kept, d)
            xp.copyto(kept, zero, where=flipped)
            step = xp.multiply(xp.multiply(xp.sign(kept, out=t3), size, out=t3), -1, out=t3)
            xp.add(pa, step, out=pa)
            xp.copyto(prev, kept)

    hyper = (etaminus, etaplus, step_size_min, step_size_max)
    return _foreach.run(params, grads, states, hyper, ["prev", "step_size"], update)


# torch's ``defaults`` order (not its signature's), which a printed state_dict shows
_ORDER = ("lr", "etas", "step_sizes", "foreach", "maximize", "differentiable", "capturable")


class Rprop(Optimizer):
    r"""Resilient backpropagation (Riedmiller & Braun, 1993), as ``torch.optim.Rprop``.

    Each coordinate's step size grows by ``etas[1]`` while its gradient keeps its sign and
    shrinks by ``etas[0]`` when the sign flips (that step is then skipped), clipped to
    ``step_sizes``; the parameter moves by the step size against the gradient's sign.
    """

    _checked_options = ("lr", "etas")
    _zero_state = ("prev",)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        super().__init__(params, _defaults(locals(), _ORDER))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        super()._init_state(p, state, group)
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

    _multi_tensor_update = staticmethod(_multi_tensor_rprop)
