"""Parameters that several layers create the same way."""

from __future__ import annotations

from typing import Any

import lucid
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter


def empty_weight_and_bias(
    module: Module, weight_shape: tuple[int, ...], bias_size: int | None, device: Any, dtype: Any
) -> None:
    """Register an uninitialised ``weight`` and a ``bias`` of ``bias_size`` (``None``: the bias
    is registered as ``None``); the layer's ``reset_parameters`` fills them."""
    module.weight = Parameter(lucid.empty(*weight_shape, dtype=dtype, device=device))
    if bias_size is None:
        module.register_parameter("bias", None)
    else:
        module.bias = Parameter(lucid.empty(bias_size, dtype=dtype, device=device))
