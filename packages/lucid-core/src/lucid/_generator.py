"""Random streams: generators, global seeding and RNG state (layer 2; ``lucid.random`` is the
public face, with the sampling functions).

``lucid.manual_seed(s)`` seeds the default generator and every loaded backend, so every
stream (factories, dropout, samplers, transforms) is reproducible from one seed. The sampling
functions (``normal``, ``uniform``, ``bernoulli``, ``multinomial``, ``randperm``) take
``generator=`` and otherwise draw from :data:`default_generator`; they draw uniforms/normals
through the tensor's backend and do the rest with its ``xp`` namespace.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.backends import get_backend, loaded_backends, set_default_generator

_DEFAULT_SEED = 67280421310721  # PyTorch's default initial seed


class Generator:
    """A random stream (``torch.Generator``). ``numpy_rng`` is its numpy.random.Generator."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self._seed = _DEFAULT_SEED
        self.numpy_rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator with ``seed`` (a non-negative int); returns the generator."""
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
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self) -> Any:
        """The full state as a uint8 tensor (like ``torch.Generator.get_state``)."""
        state = {"seed": self._seed, "bit_generator": self.numpy_rng.bit_generator.state}
        return _bytes_tensor(state)

    def set_state(self, state: Any) -> Generator:
        """Restore the state that ``get_state()`` returned (a uint8 tensor); returns the
        generator."""
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
set_default_generator(default_generator)  # the stream backends draw from when given none


def _bytes_tensor(state: Any) -> Tensor:
    """``state`` as JSON in a uint8 CPU tensor (what ``get_state`` returns, as torch's)."""
    raw = np.frombuffer(json.dumps(state).encode(), dtype=np.uint8).copy()
    return Tensor.from_backend_array(raw, get_backend("cpu"))


def manual_seed(seed: int) -> Generator:
    """Seed the default generator and every loaded backend's own RNG."""
    default_generator.manual_seed(seed)
    for backend in loaded_backends():
        backend.manual_seed(int(seed))
    return default_generator


def seed() -> int:
    """Seed every backend's default generator with a non-deterministic seed and return it."""
    s = default_generator.seed()
    for backend in loaded_backends():
        backend.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was last seeded with, as ``torch.initial_seed``."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """Every RNG lucid draws from, as a uint8 tensor (``torch.get_rng_state``).

    Holds the default generator's state and, for each loaded backend that exposes one
    (``backend.get_rng_state()``, JSON-serialisable), the backend's own RNG state.
    """
    backends = {}
    for backend in loaded_backends():
        getter = getattr(backend, "get_rng_state", None)
        if getter is not None:
            backends[backend.device] = getter()
    state = {"format": "lucid-rng-1", "default": _generator_state(default_generator),
             "backends": backends}  # fmt: skip
    return _bytes_tensor(state)


def set_rng_state(new_state: Any) -> None:
    """Restore what :func:`get_rng_state` returned (a ``Generator.get_state()`` also works)."""
    decoded = _decode_state(new_state)
    if decoded.get("format") != "lucid-rng-1":
        default_generator.set_state(new_state)
        return
    _restore_generator(default_generator, decoded["default"])
    for device, backend_state in decoded.get("backends", {}).items():
        setter = getattr(get_backend(device), "set_rng_state", None)
        if setter is not None:
            setter(backend_state)


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Run a block and then put every RNG back where it was (``torch.random.fork_rng``).

    torch's signature: ``devices`` (the CUDA/accelerator device indices whose RNGs torch
    forks) and ``device_type`` are accepted for torch's callers (reversible networks pass
    ``devices=[]`` or the devices they recorded); lucid forks the default generator and every
    backend's RNG whatever they name. ``device_type="meta"`` forks nothing, as torch's.
    """
    if device_type == "meta" or not enabled:
        yield
        return
    if devices is not None:
        list(devices)  # a generator is consumed once, as torch's traversal does
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def _generator_state(g: Generator) -> dict[str, Any]:
    return {"seed": g._seed, "bit_generator": g.numpy_rng.bit_generator.state}


def _restore_generator(g: Generator, state: dict[str, Any]) -> None:
    bitgen = np.random.PCG64()
    bitgen.state = state["bit_generator"]
    g._seed = int(state["seed"])
    g.numpy_rng = np.random.Generator(bitgen)


def _decode_state(state: Any) -> dict[str, Any]:
    raw = state.numpy() if hasattr(state, "numpy") else np.asarray(state, dtype=np.uint8)
    try:
        decoded = json.loads(bytes(raw.astype(np.uint8)).decode())
    except (ValueError, TypeError) as exc:
        raise RuntimeError(f"invalid RNG state: {exc}") from None
    if not isinstance(decoded, dict):
        raise RuntimeError(f"invalid RNG state: expected a JSON object, got {type(decoded)}")
    return decoded
