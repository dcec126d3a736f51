"""``LogisticNormal(loc, scale)`` (``torch.distributions.LogisticNormal``)."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.normal import Normal
from lucid.distributions.transformed_distribution import TransformedDistribution
from lucid.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A Normal pushed onto the simplex by :class:`StickBreakingTransform`: ``K - 1`` normal
    coordinates give a point of the ``K``-simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        base: Any = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        out = super().expand(batch_shape, _instance=new)
        assert isinstance(out, LogisticNormal)
        return out

    @property
    def loc(self) -> Tensor:
        """The Normal's mean."""
        out: Tensor = self.base_dist.base_dist.loc  # type: ignore[attr-defined]
        return out

    @property
    def scale(self) -> Tensor:
        """The Normal's standard deviation."""
        out: Tensor = self.base_dist.base_dist.scale  # type: ignore[attr-defined]
        return out
