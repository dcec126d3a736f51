"""``MlxBackend``: lucid's Backend protocol over ``mlx.core``.

MLX is lazy: operations build a graph that runs when a value is needed. This backend evaluates
at lucid's sync points only (``to_numpy``: ``item()``, ``numpy()``, ``tolist()``, printing,
``bool()``; and ``evaluate``, which the optimizers call at the end of ``step()``), so users
never call an eval function and the graph never grows across training steps.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

import mlx.core as mx
from lucid import dtypes
from lucid.backends import Backend, DeviceError
from lucid.backends.mlx import _dtypes
from lucid.backends.mlx._checks import PendingChecks, check_allocation
from lucid.backends.mlx._xp import MlxNumpy

DEVICES = ("mlx", "mlx:cpu", "mlx:gpu")


class MlxBackend(Backend):
    """The MLX backend for one device: ``"mlx"`` (MLX's default), ``"mlx:cpu"``, ``"mlx:gpu"``."""

    name = "mlx"
    is_lazy = True
    views_share_memory = False  # mx arrays are immutable: in-place on a view writes back

    def __init__(self, device: str = "mlx") -> None:
        if device not in DEVICES:
            raise DeviceError(f"unknown MLX device {device!r}; expected one of {DEVICES}")
        if device == "mlx:gpu" and not mx.is_available(mx.gpu):
            raise DeviceError(
                "device 'mlx:gpu' is not available: this MLX build has no GPU "
                "(use 'mlx:cpu', or 'mlx' for MLX's default device)"
            )
        self.device = device
        self.stream: Any = {"mlx": None, "mlx:cpu": mx.cpu, "mlx:gpu": mx.gpu}[device]
        self.checks = PendingChecks()
        self.xp = MlxNumpy(self.stream, self.to_numpy, self.checks, self._check_allocation)
        self.kernels = {}
        self.host_transfers = 0  # device-to-host conversions (to_numpy calls) so far
        # Arrays written in place (parameters, optimizer state, running statistics) since the
        # last evaluate(): evaluated with it, so no in-place chain grows across steps.
        self._written: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        from lucid.random import default_generator

        self._key = mx.random.key(default_generator.initial_seed() & 0xFFFF_FFFF_FFFF_FFFF)

    # -- the device --------------------------------------------------------------------------
    def mlx_device(self) -> Any:
        """The ``mx.Device`` ops run on (MLX's current default for plain ``"mlx"``)."""
        return mx.default_device() if self.stream is None else self.stream

    def _on_gpu(self) -> bool:
        return bool(self.mlx_device() == mx.gpu)

    def _check_allocation(self, shape: Any, dtype: Any) -> None:
        check_allocation(shape, dtype, self.device, self._on_gpu())

    # -- arrays ------------------------------------------------------------------------------
    def asarray(self, data: Any, dtype: dtypes.dtype | None = None) -> Any:
        native = None if dtype is None else self.native_dtype(dtype)
        if isinstance(data, mx.array):
            return data if native is None or data.dtype == native else data.astype(native)
        if native is None:
            if isinstance(data, np.ndarray) or np.ndim(data) > 0:
                return self.from_numpy(np.asarray(data))
            native = self.native_dtype(dtypes.scalar_dtype(data))
        if isinstance(data, np.ndarray) and data.dtype == np.float64 and native != mx.float64:
            data = data.astype(np.float32)  # MLX converts float64 input on the host anyway
        return mx.array(data, dtype=native)

    def from_numpy(self, arr: Any) -> Any:
        arr = np.asarray(arr)
        dtype = self.native_dtype(_dtypes.from_any(arr.dtype))
        if arr.dtype.kind == "V" or str(arr.dtype) == "bfloat16":
            arr = arr.astype(np.float32)
        return mx.array(arr, dtype=dtype)

    def to_numpy(self, arr: Any) -> Any:
        """A NumPy copy of ``arr`` (evaluates it: a sync point). Counted in ``host_transfers``."""
        if not isinstance(arr, mx.array):
            return np.asarray(arr)
        self.checks.raise_failed()
        self.host_transfers += 1
        if arr.dtype == mx.bfloat16:
            arr = arr.astype(mx.float32)
        return np.array(arr)

    def native_dtype(self, dtype: dtypes.dtype) -> Any:
        native = _dtypes.TO_MLX.get(dtype)
        if native is None:
            raise TypeError(f"{dtype} is not supported on device {self.device!r} (MLX)")
        if native == mx.float64 and self._on_gpu():
            raise TypeError(
                f"float64 is not supported on device {self.device!r}: MLX has no float64 on the "
                "GPU. Use float32, or device 'mlx:cpu' where MLX supports float64."
            )
        return native

    def dtype_of(self, arr: Any) -> dtypes.dtype:
        try:
            return _dtypes.FROM_MLX[arr.dtype]
        except KeyError:
            return _dtypes.from_any(arr.dtype)

    def dtype_from_native(self, native: Any) -> dtypes.dtype:
        return _dtypes.from_any(native)

    def copy(self, arr: Any) -> Any:
        # MLX data is immutable, so sharing the buffer is safe; only the object must be new.
        return mx.stop_gradient(arr)

    def astype(self, arr: Any, dtype: dtypes.dtype) -> Any:
        native = self.native_dtype(dtype)
        return arr if arr.dtype == native else arr.astype(native, stream=self.stream)

    def evaluate(self, *arrays: Any) -> None:
        """Compute ``arrays`` and every array written in place since the last call."""
        self.checks.raise_failed()
        written = list(self._written.values())
        self._written.clear()
        mx.eval(*[a for a in arrays if isinstance(a, mx.array)], *written)

    def assign(self, dst: Any, src: Any) -> Any:
        out = src if isinstance(src, mx.array) else mx.array(src)
        self._written[id(out)] = out
        return out

    def getitem(self, arr: Any, index: Any) -> Any:
        self.checks.index_tuple(arr.shape, index)
        return arr[index]

    def check_index_range(
        self, arr: Any, low: int, high: int, error: Callable[[int], Exception]
    ) -> None:
        own = getattr(type(arr), "check_index_range", None)  # vmap's batched arrays check
        if own is not None:  # themselves (Backend.check_index_range)
            own(arr, low, high, error)
            return
        self.checks.add(arr, low, high, error)  # read at the next sync point: no sync here

    def index_add(self, arr: Any, index: Any, values: Any) -> Any:
        return arr.at[index].add(values)

    def setitem(self, arr: Any, index: Any, values: Any) -> Any:
        self.checks.index_tuple(arr.shape, index)
        # MLX's ``a[i] = v`` rebinds the object ``a`` to new data; other holders of that object
        # (a Function's saved input, an upstream gradient) must keep the old value: a new object.
        out = mx.stop_gradient(arr)
        out[index] = values
        self._written[id(out)] = out
        return out

    def scatter(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        values = mx.broadcast_to(values, index.shape) if isinstance(values, mx.array) else values
        out = mx.stop_gradient(arr)  # a new object: other holders of ``arr`` keep its value
        out[_along_axis(index, dim)] = values
        return out

    def scatter_add(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return self.scatter_reduce(arr, dim, index, values, "sum")

    def scatter_reduce(self, arr: Any, dim: int, index: Any, values: Any, reduce: str) -> Any:
        at = arr.at[_along_axis(index, dim)]
        return getattr(at, _SCATTER_METHODS[reduce])(values)

    def sliding_windows(
        self, arr: Any, window_shape: tuple[int, ...], axis: tuple[int, ...]
    ) -> Any:
        return self.xp.sliding_window_view(arr, window_shape, axis)

    # -- random: MLX's own counter-based RNG, split once per draw ----------------------------
    def manual_seed(self, seed: int) -> None:
        self._key = mx.random.key(int(seed) & 0xFFFF_FFFF_FFFF_FFFF)

    def get_rng_state(self) -> list[int]:
        """The RNG key as plain ints (what ``lucid.get_rng_state`` stores for this backend)."""
        return [int(v) for v in np.array(self._key).reshape(-1).tolist()]

    def set_rng_state(self, state: Any) -> None:
        """Restore the MLX random key from ``get_rng_state()``'s result."""
        self._key = mx.array(list(state), dtype=mx.uint32)

    def _next_key(self, generator: Any) -> Any:
        if generator is not None:  # an explicit lucid.Generator: derive the key from its stream
            return mx.random.key(int(generator.numpy_rng.integers(0, 2**63)))
        self._key, sub = mx.random.split(self._key, stream=mx.cpu)
        return sub

    def random_normal(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        self._check_allocation(shape, self.native_dtype(dtype))
        key = self._next_key(generator)
        return mx.random.normal(shape, self.native_dtype(dtype), key=key, stream=self.stream)

    def random_uniform(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        self._check_allocation(shape, self.native_dtype(dtype))
        key = self._next_key(generator)
        native = self.native_dtype(dtype)
        return mx.random.uniform(0.0, 1.0, shape, native, key=key, stream=self.stream)

    def random_integers(
        self, low: int, high: int, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any
    ) -> Any:
        native = self.native_dtype(dtype)
        self._check_allocation(shape, native)
        key = self._next_key(generator)
        return mx.random.randint(low, high, shape, native, key=key, stream=self.stream)


_SCATTER_METHODS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _along_axis(index: Any, dim: int) -> tuple[Any, ...]:
    """The fancy-index tuple that addresses ``index``'s entries along ``dim``."""
    nd = index.ndim
    out = []
    for d, size in enumerate(index.shape):
        if d == dim % nd:
            out.append(index)
        else:
            shape = [1] * nd
            shape[d] = size
            out.append(mx.reshape(mx.arange(size), shape))
    return tuple(out)
