"""``Categorical(probs=... | logits=...)``: one of K categories (``torch.distributions``)."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from lucid import dtypes
from lucid._creation import arange, full, zeros
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.bernoulli import one_parameter
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_shapes, finfo, logits_to_probs, probs_to_logits
from lucid.ops.sampling import multinomial


class Categorical(Distribution):
    """One of ``K`` categories, weighted by the last dimension of ``probs`` or ``logits``
    (normalised here: ``probs`` to sum 1, ``logits`` to log-probabilities)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        one_parameter(probs, logits)
        if probs is not None:
            param = _at_least_1d(probs, "probs")
            self.probs = param / param.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            assert logits is not None  # one_parameter checked
            param = _at_least_1d(logits, "logits")
            self.logits = param - param.logsumexp(-1, keepdim=True)
            self._param = self.logits
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Categorical | None = None) -> Categorical:
        tail = (self._num_events,)
        new = self._expanded(Categorical, batch_shape, {"probs": tail, "logits": tail}, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @cached_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @cached_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameter (``probs`` or ``logits``)."""
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        out: Tensor = full(
            self._extended_shape(), math.nan, dtype=self.probs.dtype, device=self.probs.device
        )
        return out

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        n = math.prod(shape[: len(shape) - len(self._batch_shape)])
        if n == 0:
            empty: Tensor = zeros(shape, dtype=dtypes.int64, device=self._param.device)
            return empty
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            return multinomial(probs_2d, n, True).T.reshape(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        shape = broadcast_shapes(index.shape, self.logits.shape[:-1] + (1,))
        log_pmf = self.logits.expand(shape[:-1] + (self._num_events,))
        return log_pmf.gather(-1, index.expand(shape)).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype, "min"))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every category index, along a new first dimension."""
        values = arange(self._num_events, dtype=dtypes.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        out: Tensor = values.expand((self._num_events,) + self._batch_shape) if expand else values
        return out


def _at_least_1d(param: Tensor, name: str) -> Tensor:
    if param.ndim < 1:
        raise ValueError(f"`{name}` parameter must be at least one-dimensional, got a 0-d tensor.")
    return param
