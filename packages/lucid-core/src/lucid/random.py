"""Random number generation (``torch.random``): generators, global seeding, RNG state, and the
sampling functions.

``lucid.manual_seed(s)`` seeds the default generator and every loaded backend, so every
stream (factories, dropout, samplers, transforms) is reproducible from one seed. The sampling
functions (``normal``, ``uniform``, ``bernoulli``, ``multinomial``, ``randperm``) take
``generator=`` and otherwise draw from :data:`default_generator`. The generators live in
``lucid._generator`` (below Tensor's ops); the sampling functions in ``lucid.ops.sampling``.
"""

from __future__ import annotations

from lucid._generator import (
    Generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from lucid.ops.sampling import bernoulli, multinomial, normal, randperm, uniform

__all__ = [
    "Generator", "bernoulli", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
    "manual_seed", "multinomial", "normal", "randperm", "seed", "set_rng_state",
    "uniform",
]  # fmt: skip
