"""Lion: sign of an interpolated momentum (Chen et al., 2023). PyTorch has no Lion."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from . import _foreach
from ._checks import ADAM_OPTIONS
from ._updates import decay_weights_, penalized_arrays
from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Lion"]


def _multi_tensor_lion(
    params: list[Tensor], grads: list[Tensor], states: list[dict[str, Any]], group: ParamGroup
) -> list[int]:
    """:meth:`Lion._update` on the arrays (see ``_foreach``); returns the positions it left to
    the per-tensor update."""
    lr, weight_decay = group["lr"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    maximize = group.get("maximize", False)

    def update(xp: Any, p: Tensor, grad: Tensor, state: dict[str, Any], own: list[Tensor]) -> None:
        for (pa, ga, m), (t1, t2) in _foreach.pieces(xp, [p, grad, *own], 2):
            d = penalized_arrays(xp, pa, ga, maximize, 0, t1, t2)
            if weight_decay != 0:
                xp.multiply(pa, 1 - lr * weight_decay, out=pa)
            c = xp.multiply(xp.subtract(d, m, out=t2), 1 - beta1, out=t2)
            c = xp.sign(xp.add(m, c, out=t2), out=t2)
            xp.add(pa, _foreach.scaled(xp, c, -lr, t2), out=pa)
            xp.add(m, xp.multiply(xp.subtract(d, m, out=t2), 1 - beta2, out=t2), out=m)

    hyper = (lr, weight_decay, beta1, beta2)
    return _foreach.run(params, grads, states, hyper, ["exp_avg"], update, scalars=())


class Lion(Optimizer):
    r"""Lion ("EvoLved Sign Momentum"), as in the paper and ``mlx.optimizers.Lion``.

    .. math::
        c &= \beta_1 m + (1-\beta_1) g \\
        p &\leftarrow p\,(1 - \text{lr}\,\lambda) - \text{lr}\,\operatorname{sign}(c) \\
        m &\leftarrow \beta_2 m + (1-\beta_2) g

    Sign updates have a larger norm than Adam's: use a learning rate 3-10x smaller and a
    weight decay 3-10x larger than for AdamW.

    Example::

        >>> import lucid, lucid.optim as optim
        >>> w = lucid.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = optim.Lion([w], lr=0.1)
        >>> w.grad = lucid.tensor([0.5, -2.0])
        >>> opt.step()
        >>> [round(v, 6) for v in w.tolist()]
        [0.9, -0.9]
    """

    _checked_options = ADAM_OPTIONS

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-4,
        betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
    ) -> None:
        super().__init__(params, _defaults(locals()))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["exp_avg"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        lr = group["lr"]
        beta1, beta2 = group["betas"]
        exp_avg = state["exp_avg"]
        decay_weights_(p, lr, group["weight_decay"])
        p.add_(exp_avg.lerp(grad, 1 - beta1).sign(), alpha=-lr)
        exp_avg.lerp_(grad, 1 - beta2)

    _multi_tensor_update = staticmethod(_multi_tensor_lion)
