"""``OneHotCategorical(probs=... | logits=...)`` (``torch.distributions.OneHotCategorical``)."""

from __future__ import annotations

from typing import Any

from lucid._creation import arange
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.categorical import Categorical
from lucid.distributions.distribution import Distribution


def one_hot(index: Tensor, num_classes: int, like: Tensor) -> Tensor:
    """``index`` as one-hot vectors along a new last dim, in ``like``'s dtype."""
    classes = arange(num_classes, device=index.device)
    return (index.unsqueeze(-1) == classes).to(like.dtype)


class OneHotCategorical(Distribution):
    """A Categorical whose samples are one-hot vectors of length ``K`` (the event shape)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(
        self, batch_shape: Any, _instance: OneHotCategorical | None = None
    ) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
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

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameter (``probs`` or ``logits``)."""
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return one_hot(self.probs.argmax(-1), self._event_shape[0], self.probs)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        index = self._categorical.sample(sample_shape)
        return one_hot(index, self._event_shape[0], self.probs)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The ``K`` one-hot vectors, along a new first dimension."""
        n = self._event_shape[0]
        values = one_hot(arange(n, device=self.probs.device), n, self.probs)
        values = values.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        out: Tensor = values.expand((n,) + self._batch_shape + (n,)) if expand else values
        return out


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` passes gradients straight through: the one-hot
    sample in the forward pass, the gradient of ``probs`` in the backward pass."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self.probs
        return samples + (probs - probs.detach())
