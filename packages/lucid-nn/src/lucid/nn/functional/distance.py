"""Distances and similarities: cosine_similarity, pairwise_distance."""

from __future__ import annotations

import numpy as np

import lucid
from lucid import Tensor

__all__ = ["cosine_similarity", "pairwise_distance"]


def _norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    if p == 2.0:
        result: Tensor = (x * x).sum(dim, keepdim=keepdim).sqrt()
        return result
    result = (x.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)
    return result


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs broadcast)."""
    # Broadcast first, as torch does: a size-1 ``dim`` of one input is repeated before the norms.
    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    x1, x2 = lucid.broadcast_to(x1, shape), lucid.broadcast_to(x2, shape)
    n1 = _norm(x1, 2.0, dim, True).clamp(min=eps)
    n2 = _norm(x2, 2.0, dim, True).clamp(min=eps)
    result: Tensor = ((x1 / n1) * (x2 / n2)).sum(dim)
    return result


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dim."""
    return _norm(x1 - x2 + eps, p, -1, keepdim)
