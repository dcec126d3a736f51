"""Muon: momentum orthogonalised by a Newton-Schulz iteration, as ``torch.optim.Muon``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor

from .optimizer import Optimizer, ParamGroup, _defaults

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(
    grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
) -> Tensor:
    """An approximate orthogonalisation ``U S' V^T`` of a 2-D ``grad`` (``S'`` near 1): ``ns_steps``
    quintic Newton-Schulz iterations in bfloat16, on the wide orientation, as torch's."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x @ x.T
        update = lucid.addmm(gram, gram, gram, beta=b, alpha=c)
        x = lucid.addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1.0, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    r"""Muon ("MomentUm Orthogonalized by Newton-Schulz"), as ``torch.optim.Muon``, for the 2-D
    weights of hidden layers (biases, embeddings and heads belong to AdamW or the like).

    .. math::
        B &\leftarrow \mu B + (1 - \mu)\, g \quad\text{(as } \operatorname{lerp}\text{)} \\
        U &= \operatorname{NS}_k\big(\text{nesterov} ? \operatorname{lerp}(g, B, \mu) : B\big) \\
        p &\leftarrow p\,(1 - \text{lr}\,\lambda) - \operatorname{adjust}(\text{lr})\, U

    ``adjust_lr_fn``: ``"original"`` (default) scales by :math:`\sqrt{\max(1, A/B)}`,
    ``"match_rms_adamw"`` by :math:`0.2\sqrt{\max(A, B)}`. The iteration runs in bfloat16, as
    torch's.
    """

    _checked_options = ("lr", "momentum", "weight_decay")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, _defaults(locals()))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        state["momentum_buffer"] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = float(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        ortho = _zeropower_via_newtonschulz(
            update, tuple(group["ns_coefficients"]), group["ns_steps"], group["eps"]
        )
        adjusted = _adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(ortho.to(p.dtype), alpha=-adjusted)
