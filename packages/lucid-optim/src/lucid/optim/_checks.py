"""Hyper-parameter checks shared by the algorithms, with PyTorch's error wording."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# The checks of the Adam family, Adamax and Lion, in PyTorch's order.
ADAM_OPTIONS: tuple[str, ...] = ("lr", "eps", "betas", "weight_decay")

# How PyTorch's messages name a hyper-parameter; any other is "<name> value".
_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_nonnegative(what: str, value: Any) -> None:
    """Raise ``ValueError("Invalid <what>: <value>")`` unless ``value >= 0``."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def check_betas(betas: Sequence[float]) -> None:
    """Each beta must lie in [0, 1)."""
    if len(betas) != 2:
        raise ValueError(f"betas must be a pair (beta1, beta2), but got {betas!r}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def check_options(group: dict[str, Any], names: Sequence[str]) -> None:
    """Check the hyper-parameters ``names`` that the group has, in that order (PyTorch's, so
    the first bad one is the one reported): ``betas`` each in [0, 1), ``rho`` in [0, 1],
    ``etas`` as ``0 < etaminus < 1 < etaplus``, every other one ``>= 0``."""
    for name in names:
        if name not in group:
            continue
        value = group[name]
        if name == "betas":
            check_betas(value)
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif name == "etas":
            etaminus, etaplus = value
            if not 0.0 < etaminus < 1.0 < etaplus:
                raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")
        else:
            check_nonnegative(_LABELS.get(name, f"{name} value"), value)
