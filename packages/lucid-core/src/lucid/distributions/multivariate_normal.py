"""``MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)``
(``torch.distributions.MultivariateNormal``).

Everything is computed from the lower Cholesky factor ``L`` of the covariance (``Sigma = L
L^T``): ``rsample = loc + L eps``; the log density needs ``|L^-1 (x - loc)|^2`` (a triangular
solve) and ``log det L``.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from lucid._creation import eye, randn
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_shapes
from lucid.linalg import cholesky, solve_triangular

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


def batch_mahalanobis(tril: Tensor, x: Tensor) -> Tensor:
    """``|L^-1 x|^2`` over the last dimension, ``L`` and ``x`` broadcast over batch dims."""
    batch = broadcast_shapes(tril.shape[:-2], x.shape[:-1])
    n = x.shape[-1]
    z = solve_triangular(
        tril.expand(batch + (n, n)), x.expand(batch + (n,)).unsqueeze(-1), upper=False
    )
    return z.squeeze(-1).pow(2).sum(-1)


def half_log_det(tril: Tensor) -> Tensor:
    """``log det L`` of a lower Cholesky factor (half the log determinant of ``L L^T``)."""
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """The lower Cholesky factor of ``precision^-1`` (through the flipped Cholesky, as torch)."""
    lf = cholesky(precision.flip(-2, -1))
    l_inv = lf.flip(-2, -1).mT
    identity = eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return solve_triangular(l_inv, identity, upper=False)


class MultivariateNormal(Distribution):
    """The normal distribution over vectors (``event_shape = loc.shape[-1:]``); exactly one of
    ``covariance_matrix``, ``precision_matrix`` and ``scale_tril`` gives its covariance."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = {
            k: v
            for k, v in zip(
                _MATRICES, (covariance_matrix, precision_matrix, scale_tril), strict=True
            )
            if v is not None
        }
        if len(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril "
                "may be specified."
            )
        ((name, matrix),) = given.items()
        if matrix.ndim < 2:
            raise ValueError(
                f"{name} must be at least two-dimensional, with optional leading batch dimensions"
            )
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + matrix.shape[-2:]))
        self.loc = loc.expand(batch_shape + loc.shape[-1:])
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril(name, matrix)

    def expand(
        self, batch_shape: Any, _instance: MultivariateNormal | None = None
    ) -> MultivariateNormal:
        event = self._event_shape
        params = {"loc": event, **{name: event + event for name in _MATRICES}}
        new = self._expanded(MultivariateNormal, batch_shape, params, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @cached_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape)

    @cached_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape)

    @cached_property
    def precision_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        identity = eye(tril.shape[-1], dtype=tril.dtype, device=tril.device)
        inv = solve_triangular(tril, identity, upper=False)
        return (inv.mT @ inv).expand(self._matrix_shape)

    @property
    def _matrix_shape(self) -> tuple[int, ...]:
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self) -> Tensor:
        return self.loc

    mode = mean

    @property
    def variance(self) -> Tensor:
        variance = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return variance.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        out: Tensor = self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        tril = self._unbroadcasted_scale_tril
        m = batch_mahalanobis(tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det(tril)

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h if not self._batch_shape else h.expand(self._batch_shape)


def _scale_tril(name: str, matrix: Tensor) -> Tensor:
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return cholesky(matrix)
    return _precision_to_scale_tril(matrix)
