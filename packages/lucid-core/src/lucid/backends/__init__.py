"""Backends: the array libraries a Tensor can live on.

NumPy is built in as device ``"cpu"``. Plugins register a factory under the entry-point group
``lucid.backends`` (name -> callable taking the device string and returning a Backend); they
are loaded on first use. This package is extendable so plugins can ship ``lucid.backends.<x>``.

``lucid.backends.cpu`` holds the NumPy backend's switches (compiled kernels, Winograd), read at
each call, as ``torch.backends.cudnn`` does; ``get_num_threads``/``set_num_threads`` the thread
budget its BLAS, its pool and numba's threads share.
"""

from __future__ import annotations

import pkgutil

__path__ = pkgutil.extend_path(__path__, __name__)

from lucid.backends import cuda, cudnn, mps
from lucid.backends._base import Backend, DeviceError, set_default_generator
from lucid.backends._numpy._parallel import (
    PARALLEL_FLOPS,
    BlasThreads,
    blas_threads,
    get_num_threads,
    set_num_threads,
)
from lucid.backends._numpy._settings import CpuSettings, cpu
from lucid.backends._registry import (
    available_backends,
    canonical_device,
    get_backend,
    loaded_backends,
    register_backend,
    synchronize,
)

__all__ = [
    "PARALLEL_FLOPS",
    "Backend",
    "BlasThreads",
    "CpuSettings",
    "blas_threads",
    "cpu",
    "get_num_threads",
    "set_num_threads",
    "DeviceError",
    "available_backends",
    "canonical_device",
    "get_backend",
    "loaded_backends",
    "set_default_generator",
    "register_backend",
    "synchronize",
    "cuda",
    "cudnn",
    "mps",
]
