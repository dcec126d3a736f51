"""``RelaxedBernoulli(temperature, probs=... | logits=...)``
(``torch.distributions.RelaxedBernoulli``): the binary Concrete / Gumbel-softmax relaxation."""

from __future__ import annotations

import math
from functools import cached_property
from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import (
    broadcast_all,
    clamp_probs,
    finfo,
    logits_to_probs,
    probs_to_logits,
    softplus,
)


class RelaxedBernoulli(Distribution):
    """``sigmoid((logits + logistic noise) / temperature)`` on (0, 1); reparameterised.

    torch builds it as a TransformedDistribution of LogitRelaxedBernoulli with a
    SigmoidTransform; lucid computes the same density and draws directly.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor | float,
        probs: Tensor | float | None = None,
        logits: Tensor | float | None = None,
        validate_args: bool | None = None,
    ) -> None:
        one_parameter(probs, logits)
        given = probs if probs is not None else logits
        assert given is not None  # one_parameter checked
        (param,) = broadcast_all(given)
        self.temperature = temperature
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        shape = () if isinstance(given, Number) else param.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(
        self, batch_shape: Any, _instance: RelaxedBernoulli | None = None
    ) -> RelaxedBernoulli:
        params: dict[str, tuple[int, ...]] = {"probs": (), "logits": ()}
        new = self._expanded(RelaxedBernoulli, batch_shape, params, _instance)
        new.temperature = self.temperature
        return new

    @cached_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @cached_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    def _logit_rsample(self, sample_shape: Any) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(*shape, dtype=probs.dtype, device=probs.device))
        noise = u.log() - (-u).log1p() + probs.log() - (-probs).log1p()
        return noise / self.temperature

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return clamp_probs(self._logit_rsample(sample_shape).sigmoid())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        x = value.clamp(min=finfo(value.dtype, "tiny"))
        y = x.log() - (-x).log1p()  # the logit of value
        logits, y = broadcast_all(self.logits, y)
        temperature = self.temperature
        log_t = temperature.log() if isinstance(temperature, Tensor) else math.log(temperature)
        diff = logits - y * temperature
        base = log_t + diff - 2 * diff.exp().log1p()
        # minus log|d sigmoid(y)/dy| = softplus(-y) + softplus(y)
        return base + softplus(-y) + softplus(y)
