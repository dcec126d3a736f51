"""Dropout family. Masks come from lucid's RNG on the input's device (``lucid.rand``)."""

from __future__ import annotations

import lucid
from lucid import Tensor
from lucid.nn.functional._util import check_float, maybe_inplace

__all__ = [
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
]

_SELU_NEG_SAT = -1.7580993408473766  # -scale * alpha of SELU: where dropped units sit


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(x: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    """1.0 where kept (probability 1 - p), else 0.0, in ``x``'s dtype and device."""
    result: Tensor = (lucid.rand(*shape, device=x.device) >= p).to(x.dtype)
    return result


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    check_float("dropout", input)
    if p == 1.0:
        return maybe_inplace(input, input * 0.0, inplace)
    mask = _keep_mask(input, input.shape, p) * (1.0 / (1.0 - p))
    return maybe_inplace(input, input * mask, inplace)


def _feature_dropout(
    name: str, input: Tensor, p: float, training: bool, inplace: bool, spatial: int
) -> Tensor:
    _check_p(p)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(
            f"{name}: expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input, "
            f"got input of shape {tuple(input.shape)}"
        )
    if not training or p == 0.0:
        return input
    check_float(name, input)
    lead = input.shape[: input.ndim - spatial]
    shape = (*lead, *([1] * spatial))
    if p == 1.0:
        return maybe_inplace(input, input * 0.0, inplace)
    mask = _keep_mask(input, shape, p) * (1.0 / (1.0 - p))
    return maybe_inplace(input, input * mask, inplace)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    return _feature_dropout("dropout1d", input, p, training, inplace, 1)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs (Tompson et al., 2015)."""
    return _feature_dropout("dropout2d", input, p, training, inplace, 2)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    return _feature_dropout("dropout3d", input, p, training, inplace, 3)


def _alpha(input: Tensor, p: float, training: bool, shape: tuple[int, ...]) -> Tensor:
    _check_p(p)
    if not training or p == 0.0:
        return input
    check_float("alpha_dropout", input)
    if p == 1.0:
        return input * 0.0
    keep = _keep_mask(input, shape, p)
    a = ((1.0 - p) * (1.0 + p * _SELU_NEG_SAT**2)) ** -0.5
    b = -a * _SELU_NEG_SAT * p
    result: Tensor = (input * keep + (1.0 - keep) * _SELU_NEG_SAT) * a + b
    return result


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance (Klambauer et al., 2017)."""
    return maybe_inplace(input, _alpha(input, p, training, input.shape), inplace)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels."""
    shape = (*input.shape[:2], *([1] * (input.ndim - 2)))
    return maybe_inplace(input, _alpha(input, p, training, shape), inplace)
