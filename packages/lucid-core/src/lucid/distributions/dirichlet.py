"""``Dirichlet(concentration)`` on the probability simplex (``torch.distributions.Dirichlet``)."""

from __future__ import annotations

from typing import Any

from lucid._creation import arange
from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions._standard_gamma import standard_gamma
from lucid.distributions.exp_family import ExponentialFamily
from lucid.ops.elementwise import where, xlogy
from lucid.ops.gamma import digamma, lgamma


class Dirichlet(ExponentialFamily):
    """Vectors on the simplex with density proportional to ``prod x_i^(c_i - 1)``.

    ``rsample`` normalises Gamma(c_i, 1) draws, each reparameterised implicitly, so
    gradients reach ``concentration``.
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.ndim < 1:
            raise ValueError(
                "`concentration` parameter must be at least one-dimensional, got a 0-d tensor."
            )
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Dirichlet | None = None) -> Dirichlet:
        params = {"concentration": self._event_shape}
        return self._expanded(Dirichlet, batch_shape, params, _instance)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        g = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        """``(c - 1) / sum(c - 1)``; where every ``c < 1``, a vertex (the first largest)."""
        cm1 = (self.concentration - 1).clamp(min=0.0)
        total = cm1.sum(-1, keepdim=True)
        mode = cm1 / where(total > 0, total, 1.0)
        k = self.concentration.shape[-1]
        vertex = (arange(k, device=cm1.device) == cm1.argmax(-1).unsqueeze(-1)).to(cm1.dtype)
        out: Tensor = where((self.concentration < 1).all(-1).unsqueeze(-1), vertex, mode)
        return out

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        c0 = c.sum(-1)
        return (
            lgamma(c).sum(-1)
            - lgamma(c0)
            - (k - c0) * digamma(c0)
            - ((c - 1.0) * digamma(c)).sum(-1)
        )
