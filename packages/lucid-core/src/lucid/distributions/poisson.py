"""``Poisson(rate)`` (``torch.distributions.Poisson``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import broadcast_all, numpy_draws
from lucid.ops.elementwise import xlogy
from lucid.ops.gamma import lgamma


class Poisson(ExponentialFamily):
    """Counts ``k = 0, 1, ...`` with mass ``rate^k e^(-rate) / k!``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        shape = () if isinstance(rate, Number) else self.rate.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Poisson | None = None) -> Poisson:
        return self._expanded(Poisson, batch_shape, {"rate": ()}, _instance)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return numpy_draws(lambda rng, r: rng.poisson(r), self.rate, self.rate.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)
