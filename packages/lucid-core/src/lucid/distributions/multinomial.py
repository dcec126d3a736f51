"""``Multinomial(total_count=1, probs=... | logits=...)``
(``torch.distributions.Multinomial``)."""

from __future__ import annotations

import math
from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution, as_shape
from lucid.distributions.one_hot_categorical import one_hot
from lucid.distributions.utils import broadcast_all
from lucid.ops.elementwise import where
from lucid.ops.gamma import lgamma


class Multinomial(Distribution):
    """Counts of each of ``K`` categories in ``total_count`` draws (the event shape is
    ``(K,)``); ``log_prob`` accepts counts of any total, as torch's does."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(
        self,
        total_count: int = 1,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Multinomial | None = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def probs(self) -> Tensor:
        """The normalised probabilities of the categories."""
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        """The normalised log-probabilities of the categories."""
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameter (``probs`` or ``logits``)."""
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        index = self._categorical.sample((self.total_count, *as_shape(sample_shape)))
        return one_hot(index, self._event_shape[0], self.probs).sum(0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_powers: Tensor = where((value == 0) & (logits == -math.inf), 0.0, logits) * value
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers.sum(-1)
