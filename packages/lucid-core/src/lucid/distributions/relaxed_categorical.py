"""``RelaxedOneHotCategorical(temperature, probs=... | logits=...)``
(``torch.distributions.RelaxedOneHotCategorical``): the Concrete / Gumbel-softmax
relaxation of a one-hot categorical, on the simplex."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, clamp_probs


class RelaxedOneHotCategorical(Distribution):
    """``softmax((logits + Gumbel noise) / temperature)``; reparameterised.

    torch builds it as a TransformedDistribution of ExpRelaxedCategorical with an
    ExpTransform; lucid computes the same density and draws directly.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self,
        temperature: Tensor | float,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(
        self, batch_shape: Any, _instance: RelaxedOneHotCategorical | None = None
    ) -> RelaxedOneHotCategorical:
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        new.temperature = self.temperature
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self) -> Tensor:
        """The normalised probabilities of the categories."""
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        """The normalised log-probabilities of the categories."""
        return self._categorical.logits

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        u = clamp_probs(rand(*shape, dtype=logits.dtype, device=logits.device))
        gumbels = -((-(u.log())).log())
        scores = (logits + gumbels) / self.temperature
        return (scores - scores.logsumexp(-1, keepdim=True)).exp()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k = self._event_shape[0]
        y = value.log()
        logits, y = broadcast_all(self.logits, y)
        t = self.temperature
        log_t = t.log() if isinstance(t, Tensor) else math.log(t)
        log_scale = math.lgamma(k) + (k - 1) * log_t
        score = logits - y * t
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        # minus log|d exp(y)/dy| summed over the event = -sum(y)
        return score + log_scale - y.sum(-1)
