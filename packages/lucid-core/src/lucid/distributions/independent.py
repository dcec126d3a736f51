"""``Independent(base, n)``: the base's ``n`` rightmost batch dims become event dims
(``torch.distributions.Independent``)."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.distribution import Distribution, as_shape
from lucid.distributions.utils import sum_rightmost


class Independent(Distribution):
    """``log_prob`` and ``entropy`` of ``base_distribution`` summed over the reinterpreted
    dims; a diagonal ``MultivariateNormal`` is ``Independent(Normal(loc, scale), 1)``."""

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        batch_ndims = len(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > batch_ndims:
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= "
                "len(base_distribution.batch_shape), actual "
                f"{reinterpreted_batch_ndims} vs {batch_ndims}"
            )
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Independent | None = None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        shape = as_shape(batch_shape)
        reinterpreted = self._event_shape[: self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(shape + reinterpreted)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        base = self.base_dist.support
        n = self.reinterpreted_batch_ndims
        return constraints.independent(base, n) if n else base

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
