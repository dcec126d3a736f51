"""Finding a backend for a device string, loading plugins lazily through entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from lucid._device import default_device
from lucid.backends._base import Backend, DeviceError
from lucid.backends._meta import MetaBackend
from lucid.backends._numpy import NumpyBackend

_GROUP = "lucid.backends"
_HINTS = {"mlx": "lucid-backend-mlx", "gpu": "lucid-backend-mlx", "metal": "lucid-backend-mlx"}

_cpu: Backend | None = None  # made on first use (that also tunes the allocator, see _numpy)
_by_device: dict[str, Backend] = {}
_factories: dict[str, Callable[[str], Backend]] = {}


def register_backend(name: str, factory: Callable[[str], Backend]) -> None:
    """Register a backend factory for device type ``name`` (what an entry point does)."""
    _factories[name] = factory


def _entry_point_factory(kind: str) -> Callable[[str], Backend] | None:
    for ep in metadata.entry_points(group=_GROUP):
        if ep.name == kind:
            factory: Callable[[str], Backend] = ep.load()
            _factories[kind] = factory
            return factory
    return None


def available_backends() -> list[str]:
    """Device types that can be used here: built-in and installed plugins."""
    names = {"cpu", "meta", *_factories}
    names.update(ep.name for ep in metadata.entry_points(group=_GROUP))
    return sorted(names)


def get_backend(device: Any = None) -> Backend:
    """The Backend for a device string (``"cpu"``, ``"mlx"``, ``"mlx:gpu"``, ``"gpu"``)."""
    if device is None:
        device = default_device()  # `with lucid.device(...)`, set_default_device
        if device is None:
            return _cpu or _make_cpu()
    if isinstance(device, Backend):
        return device
    key = str(device)
    found = _by_device.get(key)
    if found is not None:
        return found
    if key == "cpu":
        return _make_cpu()
    if key == "meta":  # shapes and dtypes without data (lucid.backends._meta)
        meta: Backend = MetaBackend()
        _by_device["meta"] = meta
        return meta
    kind = key.split(":", 1)[0]
    factory = _factories.get(kind) or _entry_point_factory(kind)
    if factory is None:
        hint = _HINTS.get(kind)
        extra = f" Install it with: pip install {hint}" if hint else ""
        raise DeviceError(
            f"unknown device {key!r}: no backend is registered for {kind!r} "
            f"(available: {', '.join(available_backends())}).{extra}"
        )
    backend = factory(key)
    _by_device[key] = backend
    _by_device.setdefault(backend.device, backend)
    return backend


def _make_cpu() -> Backend:
    global _cpu
    if _cpu is None:
        _cpu = NumpyBackend("cpu")
        _by_device["cpu"] = _cpu
    return _cpu


def canonical_device(device: Any) -> str:
    """The device name of the backend that serves ``device`` (``"gpu"`` names the MLX one)."""
    return get_backend(device).device


def loaded_backends() -> list[Backend]:
    """The backends created so far in this process."""
    seen: dict[int, Backend] = {}
    for b in _by_device.values():
        seen[id(b)] = b
    return list(seen.values())


def synchronize(tensors: Any) -> None:
    """Run the pending work of lazy backends (MLX) for these tensors; a no-op on NumPy.

    Optimizers call this at the end of ``step()`` with the parameters and their state, so a
    lazy backend's graph never grows across training steps.
    """
    pending: dict[int, tuple[Backend, list[Any]]] = {}
    for t in tensors:
        backend = getattr(t, "_backend", None)
        if backend is None or not backend.is_lazy:
            continue
        pending.setdefault(id(backend), (backend, []))[1].append(t._data)
    for backend, arrays in pending.values():
        backend.evaluate(*arrays)
