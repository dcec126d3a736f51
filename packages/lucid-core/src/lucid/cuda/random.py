"""``lucid.cuda.random``: ``torch.cuda.random``'s seeding calls, answering as PyTorch's CPU
build does: seeding and setting states do nothing, ``get_rng_state_all()`` is empty, and the
calls that read a CUDA generator raise. ``lucid.manual_seed`` / ``lucid.get_rng_state`` seed
and read lucid's generators."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.cuda._errors import refusal

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "set_rng_state",
    "set_rng_state_all",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
]


def get_rng_state(device: Any = "cuda") -> Any:
    """Raises: there is no CUDA generator (use ``lucid.get_rng_state()``)."""
    raise refusal("get_rng_state")


def get_rng_state_all() -> list[Any]:
    """The states of every CUDA generator: none, so ``[]`` (as on PyTorch's CPU build)."""
    return []


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Sets nothing: there is no CUDA generator (PyTorch's CPU build defers it forever)."""


def set_rng_state_all(new_states: Iterable[Any]) -> None:
    """Sets nothing: there is no CUDA generator."""


def manual_seed(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (``lucid.manual_seed`` seeds every backend)."""


def manual_seed_all(seed: int) -> None:
    """Seeds nothing: there is no CUDA generator (``lucid.manual_seed`` seeds every backend)."""


def seed() -> None:
    """Seeds nothing: there is no CUDA generator (``lucid.seed`` seeds lucid's)."""


def seed_all() -> None:
    """Seeds nothing: there is no CUDA generator."""


def initial_seed() -> int:
    """Raises: there is no CUDA generator (use ``lucid.initial_seed()``)."""
    raise refusal("initial_seed")
