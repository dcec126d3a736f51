"""``LKJCholesky(dim, concentration)`` (``torch.distributions.LKJCholesky``): the LKJ
distribution over Cholesky factors of correlation matrices, sampled by the onion method."""

from __future__ import annotations

import math
from typing import Any

from lucid._creation import arange, randn
from lucid._tensor import Tensor
from lucid.autograd import no_grad
from lucid.distributions import constraints
from lucid.distributions.beta import Beta
from lucid.distributions.distribution import Distribution
from lucid.distributions.utils import broadcast_all, finfo
from lucid.ops.gamma import lgamma
from lucid.ops.join import cat
from lucid.special import multigammaln

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Density proportional to ``det(L L^T)^(concentration - 1)`` over lower Cholesky factors
    ``L`` of ``dim x dim`` correlation matrices (``concentration = 1``: uniform over them)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Tensor | float = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)  # fmt: skip
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(shape)
        new._beta = self._beta.expand(shape + (self.dim,))
        Distribution.__init__(new, shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = randn(*self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            sphere = u / u.norm(dim=-1, keepdim=True)
            sphere = cat([sphere[..., :1, :] * 0, sphere[..., 1:, :]], -2)  # row 0: no direction
            w = y.sqrt() * sphere.nan_to_num(0.0)
            tiny = finfo(w.dtype, "tiny")
            diag = (1 - (w**2).sum(-1)).clamp(min=tiny).sqrt()
            out: Tensor = w + diag.diag_embed()
        return out

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=self.concentration.dtype,
                       device=self.concentration.device)  # fmt: skip
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = (
            0.5 * dm1 * math.log(math.pi) + multigammaln(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        )
        out: Tensor = unnormalized - normalize
        return out
