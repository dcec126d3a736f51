"""Dropout family. Masks come from lucid's RNG on the input's device (``lucid.rand``)."""

from __future__ import annotations

import warnings

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


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, name: str) -> Tensor:
    """torch's feature dropout: one draw per (dim 0, dim 1) pair, shared by the other dims."""
    if not training or p == 0.0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    check_float(name, input)
    if p == 1.0:
        return maybe_inplace(input, input * 0.0, inplace)
    shape = (*input.shape[:2], *([1] * (input.ndim - 2)))
    mask = _keep_mask(input, shape, p) * (1.0 / (1.0 - p))
    return maybe_inplace(input, input * mask, inplace)


def _unbatched_feature_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, name: str
) -> Tensor:
    """Feature dropout of ``input`` read as one sample (a batch dim is added, then removed)."""
    if not training or p == 0.0:
        return input
    out = _feature_dropout(input.unsqueeze(0), p, training, False, name).squeeze(0)
    return maybe_inplace(input, out, inplace)


def _warn_dims(name: str, ndim: int, spatial: int) -> None:
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on inputs "
        f"with {spatial} spatial dimensions, a channel dimension, and an optional batch dimension "
        f"(i.e. {spatial + 1}D or {spatial + 2}D inputs).",
        stacklevel=3,
    )


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
            "a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
        )
    if input.ndim == 2:
        return _unbatched_feature_dropout(input, p, training, inplace, "dropout1d")
    return _feature_dropout(input, p, training, inplace, "dropout1d")


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, H, W) inputs (Tompson et al., 2015), as torch's.

    Other ranks behave as in torch, with its warnings: dims 0 and 1 are read as (N, C), so a
    3-D input gets channel-wise 1-D dropout and an (N, C) input is dropped elementwise.
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        _warn_dims("dropout2d", input.ndim, 2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, "dropout2d")


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs, as torch's.

    Other ranks warn as in torch and are read as one sample: an (N, C) input loses whole rows.
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        _warn_dims("dropout3d", input.ndim, 3)
    if input.ndim != 5:
        return _unbatched_feature_dropout(input, p, training, inplace, "dropout3d")
    return _feature_dropout(input, p, training, inplace, "dropout3d")


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
