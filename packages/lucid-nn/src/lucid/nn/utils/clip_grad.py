"""Gradient clipping over an iterable of parameters."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import lucid
from lucid import Tensor
from lucid.autograd import no_grad


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
) -> Tensor:
    """Scale all gradients together so their joint ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm before clipping (a 0-d tensor), as PyTorch does.
    """
    grads = _grads(parameters)
    if not grads:
        result: Tensor = lucid.tensor(0.0)
        return result
    with no_grad():
        if norm_type == math.inf:
            norms = [g.abs().amax() for g in grads]
            total = norms[0] if len(norms) == 1 else lucid.stack(norms).amax()
        else:
            p = float(norm_type)
            acc = [(g.abs() ** p).sum() for g in grads]
            total = acc[0]
            for a in acc[1:]:
                total = total + a.to(total.device)
            total = total ** (1.0 / p)
        value = float(total.item())
        if error_if_nonfinite and not math.isfinite(value):
            raise RuntimeError(
                f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        coef = float(max_norm) / (value + 1e-6)
        if coef < 1.0:
            for g in grads:
                g.mul_(coef)
    result = total
    return result


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    v = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-v, v)
