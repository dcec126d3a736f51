"""einops's layers as lucid modules (``einops.layers.torch`` for lucid): ``Rearrange``,
``Reduce`` and ``EinMix`` in a ``lucid.nn`` model. Needs the ``einops`` package.

>>> from lucid.nn.einops import Rearrange, Reduce
>>> head = nn.Sequential(Reduce("b c h w -> b c", "mean"), nn.Linear(8, 2))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

import lucid
from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter

__all__ = ["EinMix", "Rearrange", "Reduce"]


class Rearrange(RearrangeMixin, Module):
    """``einops.rearrange(x, pattern, **axes_lengths)`` as a layer."""

    def forward(self, input: Tensor) -> Tensor:
        """Rearrange ``input`` by the layer's pattern."""
        out: Tensor = self._apply_recipe(input)  # type: ignore[no-untyped-call]
        return out


class Reduce(ReduceMixin, Module):
    """``einops.reduce(x, pattern, reduction, **axes_lengths)`` as a layer."""

    def forward(self, input: Tensor) -> Tensor:
        """Reduce ``input`` by the layer's pattern and reduction."""
        out: Tensor = self._apply_recipe(input)  # type: ignore[no-untyped-call]
        return out


class EinMix(_EinmixMixin, Module):
    """einops's ``EinMix``: a linear layer written as an einsum pattern, with its weights."""

    def _create_parameters(self, weight_shape: Any, weight_bound: float, bias_shape: Any,
                           bias_bound: float) -> None:  # fmt: skip
        self.weight = Parameter(lucid.empty(*weight_shape).uniform_(-weight_bound, weight_bound))
        self.bias = (
            None if bias_shape is None
            else Parameter(lucid.empty(*bias_shape).uniform_(-bias_bound, bias_bound))
        )  # fmt: skip

    def _create_rearrange_layers(self, pre_reshape_pattern: str | None,
                                 pre_reshape_lengths: dict[str, int] | None,
                                 post_reshape_pattern: str | None,
                                 post_reshape_lengths: dict[str, int] | None) -> None:  # fmt: skip
        self.pre_rearrange = None
        if pre_reshape_pattern is not None:
            self.pre_rearrange = Rearrange(pre_reshape_pattern, **(pre_reshape_lengths or {}))
        self.post_rearrange = None
        if post_reshape_pattern is not None:
            self.post_rearrange = Rearrange(post_reshape_pattern, **(post_reshape_lengths or {}))

    def forward(self, input: Tensor) -> Tensor:
        """Mix ``input`` with the weights by the einsum pattern (plus the bias)."""
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = lucid.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result = result + self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result
