"""``Beta(concentration1, concentration0)`` on [0, 1] (``torch.distributions.Beta``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._creation import tensor
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.dirichlet import Dirichlet
from lucid.distributions.distribution import Distribution
from lucid.distributions.exp_family import ExponentialFamily
from lucid.distributions.utils import broadcast_all
from lucid.ops.join import stack


class Beta(ExponentialFamily):
    """Density proportional to ``x^(c1 - 1) (1 - x)^(c0 - 1)``: the first coordinate of a
    two-category Dirichlet, which also gives its reparameterised ``rsample``."""

    arg_constraints = dict.fromkeys(("concentration1", "concentration0"), constraints.positive)
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        concentration1: Tensor | float,
        concentration0: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            both = tensor([float(concentration1), float(concentration0)])
        else:
            both = stack(broadcast_all(concentration1, concentration0), -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Beta | None = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        """The first concentration parameter, alpha."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        """The second concentration parameter, beta."""
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()
