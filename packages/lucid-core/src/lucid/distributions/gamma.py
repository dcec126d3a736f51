"""``Gamma(concentration, rate)`` (``torch.distributions.Gamma``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions._standard_gamma import gammainc, standard_gamma
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import broadcast_all
from lucid.ops.elementwise import xlogy
from lucid.ops.gamma import digamma, lgamma


class Gamma(ExponentialFamily):
    """Density ``rate^a x^(a-1) e^(-rate x) / Gamma(a)`` for ``x > 0``, ``a = concentration``.

    ``rsample`` is reparameterised implicitly (gradients reach ``concentration`` and
    ``rate``), as in torch.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(
        self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        shape = () if numbers else self.concentration.shape
        super().__init__(shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Gamma | None = None) -> Gamma:
        params: dict[str, tuple[int, ...]] = {"concentration": (), "rate": ()}
        return self._expanded(Gamma, batch_shape, params, _instance)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, rate = self.concentration, self.rate
        return xlogy(a, rate) + xlogy(a - 1, value) - rate * value - lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)
