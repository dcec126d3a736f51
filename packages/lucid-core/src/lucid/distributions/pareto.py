"""``Pareto(scale, alpha)`` (``torch.distributions.Pareto``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from lucid._creation import rand
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all


class Pareto(Distribution):
    """Density ``alpha scale^alpha / x^(alpha + 1)`` for ``x >= scale``.

    torch builds it as a TransformedDistribution of Exponential; lucid computes it directly
    (the same values and ``rsample``).
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(
        self, scale: Tensor | float, alpha: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        numbers = isinstance(scale, Number) and isinstance(alpha, Number)
        super().__init__(() if numbers else self.scale.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Pareto | None = None) -> Pareto:
        return self._expanded(Pareto, batch_shape, {"scale": (), "alpha": ()}, _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(*shape, dtype=self.scale.dtype, device=self.scale.device)
        out: Tensor = self.scale * (-(-u).log1p() / self.alpha).exp()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.alpha
        return a.log() + a * self.scale.log() - (a + 1) * value.log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (self.scale / value).pow(self.alpha)

    def icdf(self, value: Tensor) -> Tensor:
        out: Tensor = self.scale * (-(-value).log1p() / self.alpha).exp()
        return out

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
