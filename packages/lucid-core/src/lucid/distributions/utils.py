"""Helpers shared by the distributions (``torch.distributions.utils``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

from lucid import dtypes
from lucid._creation import tensor
from lucid._tensor import Tensor
from lucid.ops._util import OfInput
from lucid.ops.elementwise import where as _where
from lucid.ops.grids import tril_indices
from lucid.ops.join import cat
from lucid.random import default_generator

# torch.finfo's numbers for the float dtypes (bfloat16 has no NumPy dtype without ml_dtypes).
_BFLOAT16 = {"eps": 0.0078125, "tiny": 1.1754943508222875e-38, "min": -3.3895313892515355e38}


def finfo(dt: dtypes.dtype, field: str) -> float:
    """``torch.finfo(dt).<field>`` for ``field`` in eps, tiny, min."""
    if dt.name == "bfloat16":
        return _BFLOAT16[field]
    return float(getattr(np.finfo(np.dtype(dt.name)), field))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape all of ``shapes`` broadcast to (``torch.broadcast_shapes``)."""
    try:
        return tuple(int(s) for s in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"shapes {[list(s) for s in shapes]} are not broadcastable") from None


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """Numbers become tensors (the dtype and device of the first tensor, else the default
    float dtype), then every value is expanded to the common shape."""
    if not all(isinstance(v, Tensor | Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number or lucid.Tensor.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    options: dict[str, Any] = {"dtype": dtypes.get_default_dtype()}
    if first is not None:
        options = {"dtype": first.dtype, "device": first.device}
    ts = [v if isinstance(v, Tensor) else tensor(float(v), **options) for v in values]
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(t if t.shape == shape else t.expand(shape) for t in ts)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[: value.ndim - dim] + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    eps = finfo(probs.dtype, "eps")
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (``is_binary``) or log-probabilities of clamped probabilities."""
    ps = clamp_probs(probs)
    return ps.log() - ps.neg().log1p() if is_binary else ps.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def _softplus_values(xp: Any, x: Any) -> Any:
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def _sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()


class _Softplus(OfInput):
    # NOTE: one op, so the slope at 0 is sigmoid(0) = 1/2; relu + log1p(exp(-|x|)) gives 0 there.
    values = staticmethod(_softplus_values)
    derivative = staticmethod(_sigmoid)


def softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))``, without overflow; its gradient is ``sigmoid(x)``."""
    return _Softplus.apply(x)


def binary_cross_entropy_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """``-(target log sigmoid(logits) + (1 - target) log sigmoid(-logits))``, elementwise."""
    return softplus(logits) - logits * target


def numpy_draws(draw: Any, like: Tensor, *params: Tensor) -> Tensor:
    """Draws of ``draw(numpy_rng, *param_arrays)`` from lucid's default generator (seeded by
    ``lucid.manual_seed``), as a tensor of ``like``'s dtype and device, without gradient."""
    arrays = [p.detach().cpu().numpy() for p in params]
    values = np.asarray(draw(default_generator.numpy_rng, *arrays))
    return tensor(values.astype(np.dtype(like.dtype.name)), dtype=like.dtype, device=like.device)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries (below diagonal ``diag``) of ``mat``, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = tril_indices(n, n, diag, device=mat.device)
    out: Tensor = mat[..., rows, cols]
    return out


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a square matrix with ``vec`` row by row below
    diagonal ``diag`` and zeros elsewhere (a gather, so gradients flow to ``vec``)."""
    k = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * k + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-6:
        raise ValueError(
            f"The size of last dimension is {k} which cannot be expressed as the lower "
            "triangular part of a square D x D matrix."
        )
    size = round(n)
    rows, cols = (np.asarray(a) for a in np.tril_indices(size, diag, size))
    where = np.full(size * size, k, dtype=np.int64)  # k: the zero appended below
    where[rows * size + cols] = np.arange(k)
    padded = cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    out: Tensor = padded[..., tensor(where, device=vec.device)]
    return out.reshape(tuple(vec.shape[:-1]) + (size, size))


def where(condition: Any, input: Any, other: Any) -> Tensor:  # noqa: A002
    """``lucid.where`` typed for the distributions (a Tensor, always)."""
    out: Tensor = _where(condition, input, other)
    return out
