"""Random number generation: generators, global seeding, and RNG state.

``lucid.manual_seed(s)`` seeds the default generator and every loaded backend, so every
stream (factories, dropout, samplers, transforms) is reproducible from one seed.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import numpy as np

_DEFAULT_SEED = 67280421310721  # PyTorch's default initial seed


class Generator:
    """A random stream (``torch.Generator``). ``numpy_rng`` is its numpy.random.Generator."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self._seed = _DEFAULT_SEED
        self.numpy_rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        seed = int(seed)
        if seed < 0:
            seed &= 0xFFFF_FFFF_FFFF_FFFF
        self._seed = seed
        self.numpy_rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Seed from a non-deterministic source and return the seed used."""
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Any:
        """The full state as a uint8 tensor (like ``torch.Generator.get_state``)."""
        from lucid._creation import tensor

        state = {"seed": self._seed, "bit_generator": self.numpy_rng.bit_generator.state}
        raw = np.frombuffer(json.dumps(state).encode(), dtype=np.uint8).copy()
        return tensor(raw)

    def set_state(self, state: Any) -> Generator:
        raw = state.numpy() if hasattr(state, "numpy") else np.asarray(state, dtype=np.uint8)
        try:
            decoded = json.loads(bytes(raw.astype(np.uint8)).decode())
            bit_state = decoded["bit_generator"]
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(f"invalid generator state: {exc}") from None
        self._seed = int(decoded["seed"])
        bitgen = np.random.PCG64()
        bitgen.state = bit_state
        self.numpy_rng = np.random.Generator(bitgen)
        return self

    def __repr__(self) -> str:
        return f"<lucid.Generator device={self.device!r} initial_seed={self._seed}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator and every loaded backend's own RNG."""
    from lucid.backends import loaded_backends

    default_generator.manual_seed(seed)
    for backend in loaded_backends():
        backend.manual_seed(int(seed))
    return default_generator


def seed() -> int:
    s = default_generator.seed()
    from lucid.backends import loaded_backends

    for backend in loaded_backends():
        backend.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    return default_generator.get_state()


def set_rng_state(state: Any) -> None:
    default_generator.set_state(state)
