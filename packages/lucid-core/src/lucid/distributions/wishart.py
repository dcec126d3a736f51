"""``Wishart(df, covariance_matrix= | precision_matrix= | scale_tril=)``
(``torch.distributions.Wishart``): distribution of ``X^T X`` for ``df`` rows of a normal."""

from __future__ import annotations

import math
import warnings
from functools import cached_property
from typing import Any

from lucid._creation import arange, eye, randn, tensor
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.chi2 import Chi2
from lucid.distributions.distribution import Distribution
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.multivariate_normal import _precision_to_scale_tril
from lucid.distributions.utils import broadcast_shapes, finfo, vec_to_tril_matrix, where
from lucid.linalg import cholesky, slogdet, solve_triangular
from lucid.ops.gamma import digamma
from lucid.special import multigammaln

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    shift = arange(p, dtype=x.dtype, device=x.device) / 2
    out: Tensor = digamma(x.unsqueeze(-1) - shift).sum(-1)
    return out


def _cholesky_solve(b: Tensor, low: Tensor) -> Tensor:
    """``(L L^T)^-1 b`` by two triangular solves."""
    return solve_triangular(low.mT, solve_triangular(low, b, upper=False), upper=True)


class Wishart(ExponentialFamily):
    """Positive definite matrices; sampled by Bartlett's decomposition (differentiable in the
    scale). Lucid does not redraw singular samples (torch retries up to 10 times, warning):
    with ``df >= dim`` they have probability zero."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self,
        df: Tensor | float,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")  # fmt: skip
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading "
                             "batch dimensions")  # fmt: skip
        if not isinstance(df, Tensor):
            batch = tuple(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype, device=param.device)
        else:
            batch = broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(batch)
        event = tuple(param.shape[-2:])
        p = event[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch + event)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch + event)
        else:
            self.precision_matrix = param.expand(batch + event)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)  # fmt: skip
        super().__init__(batch, event, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch)

    def _chi2(self, df: Tensor, batch: tuple[int, ...]) -> Chi2:
        p = self._event_shape[-1]
        shift = arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=df.device)
        return Chi2(df=df.unsqueeze(-1) - shift.expand(batch + (p,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch = tuple(batch_shape)
        shape = batch + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(shape)
        new.df = self.df.expand(batch)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(shape))
        Distribution.__init__(new, batch, self._event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch)
        new._validate_args = self._validate_args
        return new

    @cached_property
    def scale_tril(self) -> Tensor:
        """The lower Cholesky factor of the scale matrix."""
        return self._unbroadcasted_scale_tril.expand(self._extended_shape())

    @cached_property
    def covariance_matrix(self) -> Tensor:
        """The scale matrix ``L L^T``."""
        low = self._unbroadcasted_scale_tril
        return (low @ low.mT).expand(self._extended_shape())

    @cached_property
    def precision_matrix(self) -> Tensor:
        """The inverse scale matrix."""
        low = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=low.dtype, device=low.device)
        return _cholesky_solve(identity, low).expand(self._extended_shape())

    @property
    def mean(self) -> Tensor:
        out: Tensor = self.df.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix
        return out

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = where(factor <= 0, math.nan, factor)
        out: Tensor = factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix
        return out

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        out: Tensor = self.df.reshape(tuple(self._batch_shape) + (1, 1)) * (
            v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2)
        )
        return out

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Tensor:
        p = self._event_shape[-1]
        sample_shape = tuple(sample_shape)
        chi = self._dist_chi2.rsample(sample_shape).sqrt()
        diag = chi.clamp(min=finfo(chi.dtype, "eps")).diag_embed()
        below = randn(*(sample_shape + tuple(self._batch_shape) + (p * (p - 1) // 2,)),
                      dtype=diag.dtype, device=diag.device)  # fmt: skip
        noise = diag + vec_to_tril_matrix(below, diag=-1)
        chol = self._unbroadcasted_scale_tril @ noise
        out: Tensor = chol @ chol.mT
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        low = self._unbroadcasted_scale_tril
        log_diag = low.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = _cholesky_solve(value, low).diagonal(dim1=-2, dim2=-1).sum(-1)
        out: Tensor = (-nu * (p * _LOG_2 / 2 + log_diag) - multigammaln(nu / 2, p)
                       + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)  # fmt: skip
        return out

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        log_diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        out: Tensor = ((p + 1) * (p * _LOG_2 / 2 + log_diag) + multigammaln(nu / 2, p)
                       - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)  # fmt: skip
        return out
