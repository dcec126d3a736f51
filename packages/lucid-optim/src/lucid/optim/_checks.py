"""Hyper-parameter checks shared by the algorithms, with PyTorch's error wording."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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


def check_common(group: dict[str, Any]) -> None:
    """lr, eps, betas and weight_decay, where the group has them, in PyTorch's order."""
    check_nonnegative("learning rate", group["lr"])
    if "eps" in group and not isinstance(group["eps"], (tuple, list)):
        check_nonnegative("epsilon value", group["eps"])
    if "betas" in group:
        check_betas(group["betas"])
    if "weight_decay" in group:
        check_nonnegative("weight_decay value", group["weight_decay"])
