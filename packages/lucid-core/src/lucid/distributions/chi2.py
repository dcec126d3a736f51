"""``Chi2(df)`` (``torch.distributions.Chi2``): ``Gamma(df / 2, 1 / 2)``."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.distributions import constraints
from lucid.distributions.gamma import Gamma


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Gamma | None = None) -> Chi2:
        new = self._get_checked_instance(Chi2, _instance)  # type: ignore[arg-type]
        out = super().expand(batch_shape, new)
        assert isinstance(out, Chi2)
        return out

    @property
    def df(self) -> Tensor:
        """The degrees of freedom."""
        return self.concentration * 2
