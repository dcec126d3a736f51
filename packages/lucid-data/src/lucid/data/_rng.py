"""The numpy random streams that samplers, splits and transforms draw from.

Everything random in lucid.data goes through ``numpy_rng(generator)``: the given
``lucid.Generator`` or the global default one, so ``lucid.manual_seed`` makes shuffling and
random transforms reproducible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import lucid

_SEED_MASK = (1 << 63) - 1
_GOLDEN = 0x9E3779B97F4A7C15  # Weyl-sequence step: consecutive batches get unrelated seeds


def default_generator() -> Any:
    return lucid.random.default_generator


def numpy_rng(generator: Any = None) -> np.random.Generator:
    """The numpy Generator behind ``generator`` (a lucid.Generator), or behind the default one."""
    gen = default_generator() if generator is None else generator
    rng = getattr(gen, "numpy_rng", None)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"expected a lucid.Generator (with a .numpy_rng numpy Generator), got {type(gen)!r}"
        )
    return rng


def draw_seed(generator: Any = None) -> int:
    """A fresh 63-bit seed drawn from ``generator`` (or the default generator)."""
    return int(numpy_rng(generator).integers(0, _SEED_MASK, dtype=np.int64))


def derive_seed(base_seed: int, index: int) -> int:
    """The seed of stream ``index`` under ``base_seed``: the same in every process."""
    return (base_seed + (index + 1) * _GOLDEN) & _SEED_MASK


@contextlib.contextmanager
def seeded_default_generator(seed: int) -> Iterator[None]:
    """Run a block with the default generator seeded to ``seed``, then restore its state.

    The DataLoader fetches every batch under its own seed, so random transforms give the same
    batch whichever process (main or a worker) fetches it.
    """
    gen = default_generator()
    saved = gen.numpy_rng
    # the stream of ``lucid.Generator().manual_seed(seed)``, swapped in and out without
    # touching the generator's initial_seed (cheaper than get_state/set_state)
    gen.numpy_rng = np.random.Generator(np.random.PCG64(seed))
    try:
        yield
    finally:
        gen.numpy_rng = saved
