"""The MLX backend plugin for Lucid: devices ``"mlx"``, ``"mlx:cpu"``, ``"mlx:gpu"`` (``"gpu"``).

Installed, it is found through the ``lucid.backends`` entry points; importing this module also
registers it, so ``lucid.ones(3, device="mlx")`` works either way.

>>> import lucid
>>> x = lucid.ones(3, device="mlx")
>>> (x * 2).sum().item()
6.0
"""

from __future__ import annotations

from lucid.backends import Backend, register_backend
from lucid.backends.mlx import _compile, _kernels
from lucid.backends.mlx._backend import MlxBackend
from lucid.compiler import register_backend_compiler

__all__ = ["MlxBackend", "create_backend"]

_ALIASES = {"gpu": "mlx", "mlx": "mlx", "mlx:cpu": "mlx:cpu", "mlx:gpu": "mlx:gpu"}
_instances: dict[str, MlxBackend] = {}


def create_backend(device: str = "mlx") -> Backend:
    """The backend for ``device`` (one object per canonical device, so tensors can meet)."""
    canonical = _ALIASES.get(str(device), str(device))
    backend = _instances.get(canonical)
    if backend is None:
        backend = MlxBackend(canonical)
        _kernels.register(backend)
        _instances[canonical] = backend
    return backend


register_backend("mlx", create_backend)
register_backend("gpu", create_backend)
register_backend_compiler(MlxBackend, _compile.make_compiler)
