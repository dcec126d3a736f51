"""``ContinuousBernoulli(probs=... | logits=...)`` (``torch.distributions.ContinuousBernoulli``,
Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
from functools import cached_property
from numbers import Number
from typing import Any

from lucid._creation import ones_like, rand, zeros_like
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import (
    binary_cross_entropy_with_logits,
    broadcast_all,
    clamp_probs,
    logits_to_probs,
    probs_to_logits,
    where,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Density ``C(p) p^x (1 - p)^(1 - x)`` on ``[0, 1]``; near ``p = 1/2`` (inside ``lims``)
    the normaliser, mean and variance use torch's Taylor expansions."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(
        self,
        probs: Tensor | float | None = None,
        logits: Tensor | float | None = None,
        lims: tuple[float, float] = (0.499, 0.501),
        validate_args: bool | None = None,
    ) -> None:
        one_parameter(probs, logits)
        given = probs if probs is not None else logits
        assert given is not None  # one_parameter checked
        (param,) = broadcast_all(given)
        if probs is not None:
            if validate_args is not None and not bool(
                self.arg_constraints["probs"].check(param).all()
            ):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(param)
            self._param = self.probs
        else:
            self.logits = param
            self._param = param
        self._lims = lims
        super().__init__(() if isinstance(given, Number) else param.shape,
                         validate_args=validate_args)  # fmt: skip

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._expanded(ContinuousBernoulli, batch_shape, {"probs": (), "logits": ()},
                             _instance)  # fmt: skip
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @cached_property
    def logits(self) -> Tensor:  # noqa: D102
        return probs_to_logits(self.probs, is_binary=True)

    @cached_property
    def probs(self) -> Tensor:  # noqa: D102
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Any:
        """The shape of the parameter given."""
        return self._param.shape

    def _outside_unstable_region(self) -> Tensor:
        out: Tensor = (self.probs <= self._lims[0]) | (self.probs > self._lims[1])
        return out

    def _cut_probs(self) -> Tensor:
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))  # fmt: skip

    def _cont_bern_log_norm(self) -> Tensor:
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, zeros_like(cut))
        above = where(cut >= 0.5, cut, ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log()
        )
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / ((-cut).log1p() - cut.log()).pow(
            2
        )
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), var, taylor)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        out: Tensor = -binary_cross_entropy_with_logits(logits, value) + self._cont_bern_log_norm()
        return out

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), unbounded))  # fmt: skip

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        inner = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (
            cut.log() - (-cut).log1p()
        )
        return where(self._outside_unstable_region(), inner, value)

    def entropy(self) -> Tensor:
        log_p0, log_p1 = (-self.probs).log1p(), self.probs.log()
        out: Tensor = self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0
        return out

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        return (self.logits,)

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        (x,) = natural_params
        unstable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(unstable, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(unstable, log_norm, taylor)
