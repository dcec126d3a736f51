"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``
(``torch.distributions.LowRankMultivariateNormal``): covariance ``W W^T + diag(D)``, with the
log-density, entropy and samples in ``O(n m^2)`` through the ``m x m`` capacitance matrix."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from lucid._creation import eye, randn
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.multivariate_normal import batch_mahalanobis
from lucid.distributions.utils import broadcast_shapes
from lucid.linalg import cholesky, solve_triangular

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """Cholesky factor of ``I + W^T D^-1 W``."""
    m = w.shape[-1]
    k = (w.mT / d.unsqueeze(-2)) @ w + eye(m, dtype=w.dtype, device=w.device)
    return cholesky(k)


def _logdet(d: Tensor, cap_tril: Tensor) -> Tensor:
    out: Tensor = 2 * cap_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)
    return out


def _mahalanobis(w: Tensor, d: Tensor, x: Tensor, cap_tril: Tensor) -> Tensor:
    wt_dinv_x = ((w.mT / d.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    out: Tensor = (x.pow(2) / d).sum(-1) - batch_mahalanobis(cap_tril, wt_dinv_x)
    return out


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is low rank plus diagonal."""

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        cov_factor: Tensor,
        cov_diag: Tensor,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError(
                "cov_factor must be at least two-dimensional, with optional leading batch "
                "dimensions"
            )
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m"
            )
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            batch = broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                     tuple(cov_diag.shape[:-1]))  # fmt: skip
        except (RuntimeError, ValueError) as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                f"{tuple(cov_factor.shape)}, cov_diag {tuple(cov_diag.shape)}"
            ) from e
        n, m = event_shape[0], cov_factor.shape[-1]
        self.loc = loc.expand(batch + (n,))
        self.cov_diag = cov_diag.expand(batch + (n,))
        self.cov_factor = cov_factor.expand(batch + (n, m))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        shape = tuple(batch_shape) + tuple(self._event_shape)
        new.loc = self.loc.expand(shape)
        new.cov_diag = self.cov_diag.expand(shape)
        new.cov_factor = self.cov_factor.expand(shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @cached_property
    def variance(self) -> Tensor:
        out: Tensor = (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                       + self._unbroadcasted_cov_diag).expand(self._extended_shape())  # fmt: skip
        return out

    @cached_property
    def scale_tril(self) -> Tensor:
        """A lower-triangular factor of the covariance."""
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dw = self._unbroadcasted_cov_factor / d_sqrt
        k = dw @ dw.mT + eye(n, dtype=dw.dtype, device=dw.device)
        out: Tensor = (d_sqrt * cholesky(k)).expand(self._extended_shape() + (n,))
        return out

    @cached_property
    def covariance_matrix(self) -> Tensor:
        """``W W^T + diag(D)``."""
        w = self._unbroadcasted_cov_factor
        cov = w @ w.mT + self._unbroadcasted_cov_diag.diag_embed()
        out: Tensor = cov.expand(self._extended_shape() + tuple(self._event_shape))
        return out

    @cached_property
    def precision_matrix(self) -> Tensor:
        """The inverse covariance, by the Woodbury identity."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        prec = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        out: Tensor = prec.expand(self._extended_shape() + tuple(self._event_shape))
        return out

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        eps_w = randn(*w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        low_rank = (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
        out: Tensor = self.loc + low_rank + self._unbroadcasted_cov_diag.sqrt() * eps_d
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _mahalanobis(w, d, value - self.loc, self._capacitance_tril)
        log_det = _logdet(d, self._capacitance_tril)
        out: Tensor = -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)
        return out

    def entropy(self) -> Tensor:
        log_det = _logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        out: Tensor = h if not self._batch_shape else h.expand(self._batch_shape)
        return out
