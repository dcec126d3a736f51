"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

import lucid
from lucid import Tensor
from lucid.autograd import no_grad


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's values, in order (differentiable)."""
    params = list(parameters)
    if not params:
        raise ValueError("parameters_to_vector() needs at least one parameter")
    device = params[0].device
    for p in params:
        if p.device != device:
            raise TypeError(
                f"Found two parameters on different devices, this is currently not supported "
                f"({device} and {p.device})"
            )
    result: Tensor = lucid.cat([p.reshape(-1) for p in params])
    return result


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into ``parameters`` (in place)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected lucid.Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters expects a 1-D vector, got shape {vec.shape}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.numel():
        raise ValueError(
            f"vector has {vec.numel()} elements but the parameters hold {total} in total"
        )
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset : offset + n].reshape(p.shape))
            offset += n
