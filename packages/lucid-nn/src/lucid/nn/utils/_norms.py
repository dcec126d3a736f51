"""The norms behind weight normalisation (``torch.norm_except_dim``, ``torch._weight_norm``)."""

from __future__ import annotations

from lucid import Tensor


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept with size 1 there.

    ``dim=-1`` means no dim is kept: the norm of the whole tensor, 0-d (torch's convention).
    """
    if dim == -1:
        result: Tensor = v.norm(pow)
        return result
    ndim = v.ndim
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})"
        )
    dim %= ndim
    others = tuple(d for d in range(ndim) if d != dim)
    if not others:
        return v.abs() if pow != 0 else (v != 0).to(v.dtype)
    result = v.norm(pow, dim=others, keepdim=True)
    return result


def weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / norm_except_dim(v, 2, dim))``: ``v``'s direction with ``g``'s magnitude."""
    result: Tensor = v * (g / norm_except_dim(v, 2, dim))
    return result
