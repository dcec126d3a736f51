"""Gradient clipping over an iterable of parameters."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.autograd import no_grad


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _array_norms(grads: list[Tensor], p: float) -> list[float] | None:
    """Each gradient's ``p``-norm in one pass over its NumPy array (a BLAS dot product for
    ``p = 2``), or None where some gradient is not a NumPy array."""
    arrays = [g.array for g in grads]
    if not all(type(a) is np.ndarray for a in arrays):
        return None
    out = []
    for a in arrays:
        flat = a.reshape(-1)
        if p == 2.0:
            out.append(math.sqrt(float(np.dot(flat, flat))) if flat.size else 0.0)
        elif p == math.inf:
            if not flat.size:
                raise RuntimeError(
                    "_foreach_norm cannot compute the infinity norm on an empty tensor because "
                    "the operation does not have an identity"
                )
            out.append(float(np.max(np.abs(flat))))
        elif p == 1.0:
            out.append(float(np.sum(np.abs(flat))))
        else:
            out.append(float(np.sum(np.abs(flat) ** p)) ** (1.0 / p))
    return out


def _total(norms: list[float], p: float) -> float:
    if p == math.inf:
        return max(norms)
    return float(math.fsum(n**p for n in norms) ** (1.0 / p))


def _tensors(tensors: Any) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(
    tensors: Iterable[Tensor] | Tensor,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The ``norm_type``-norm of ``tensors`` taken together (a 0-d tensor), as
    ``torch.nn.utils.get_total_norm``; 0 for no tensors.

    ``foreach`` (None: where it applies) computes the norms on the arrays, one pass each;
    ``foreach=True`` on tensors that are not NumPy arrays raises, as PyTorch does for a device
    without it; ``False`` runs lucid ops per tensor.
    """
    items = _tensors(tensors)
    if not items:
        result: Tensor = lucid.tensor(0.0)
        return result
    p = float(norm_type)
    norms = None if foreach is False else _array_norms(items, p)
    if norms is None and foreach:
        raise RuntimeError(
            f"foreach=True was passed, but can't use the foreach API on {items[0].device.type} "
            "tensors"
        )
    with no_grad():
        if norms is not None:
            total = lucid.tensor(_total(norms, p), dtype=items[0].dtype, device=items[0].device)
        elif p == math.inf:
            each = [g.abs().amax() for g in items]
            total = each[0] if len(each) == 1 else lucid.stack(each).amax()
        else:
            acc = [(g.abs() ** p).sum() for g in items]
            total = acc[0]
            for a in acc[1:]:
                total = total + a.to(total.device)
            total = total ** (1.0 / p)
        if error_if_nonfinite and not math.isfinite(float(total.item())):
            raise RuntimeError(
                f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
    return total


def clip_grads_with_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    total_norm: Tensor | float,
    foreach: bool | None = None,
) -> None:
    """Scale the gradients of ``parameters`` by ``max_norm / (total_norm + 1e-6)`` where that is
    below 1, in place (``torch.nn.utils.clip_grads_with_norm_``; ``total_norm`` as
    :func:`get_total_norm` gives it)."""
    grads = _grads(parameters)
    if not grads:
        return
    value = float(total_norm.item() if isinstance(total_norm, Tensor) else total_norm)
    coef = float(max_norm) / (value + 1e-6)
    if coef < 1.0:  # torch multiplies by min(coef, 1): skipping the x1.0 pass changes no value
        with no_grad():
            for g in grads:
                g.mul_(coef)


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale all gradients together so their joint ``norm_type``-norm is at most ``max_norm``.

    Returns the total norm before clipping (a 0-d tensor), as PyTorch does: it is
    :func:`get_total_norm` of the gradients followed by :func:`clip_grads_with_norm_`.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    parameters = list(parameters)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Deprecated spelling of :func:`clip_grad_norm_` (warns, as PyTorch does)."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(
    parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place (``foreach`` is
    accepted; each gradient is clamped in one pass either way)."""
    v = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-v, v)
