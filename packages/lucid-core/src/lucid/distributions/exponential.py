"""``Exponential(rate)`` (``torch.distributions.Exponential``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._creation import rand, zeros_like
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import broadcast_all


class Exponential(ExponentialFamily):
    """Density ``rate * exp(-rate * x)`` for ``x >= 0``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        shape = () if isinstance(rate, Number) else self.rate.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Exponential | None = None) -> Exponential:
        return self._expanded(Exponential, batch_shape, {"rate": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.rate.dtype, device=self.rate.device)
        out: Tensor = -(-u).log1p() / self.rate
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        out: Tensor = -(-value).log1p() / self.rate
        return out

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()
