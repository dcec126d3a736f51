"""The Backend protocol every array library implements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from lucid import dtypes
from lucid.kernels import KernelContract


class DeviceError(RuntimeError):
    """Raised when tensors on different devices meet, or a device is unknown."""


class Backend:
    """What op code needs from an array library.

    ``xp`` is a numpy-like namespace: op code calls ``xp.exp``, ``xp.matmul``, ``xp.sum`` ...
    with NumPy's signatures, and nothing else. What NumPy does not express functionally (in-place
    writes, scatter-add) is a method here. ``kernels`` maps a fused-op contract (``lucid.kernels``)
    to the kernel that replaces the default implementation (``contract.register(backend, impl)``
    fills it, type-checked against the contract's protocol).
    """

    name: ClassVar[str] = "abstract"
    is_lazy: ClassVar[bool] = False
    # Whether ``xp.op(array, python_number)`` keeps the array's dtype for 0-d arrays too
    # (NEP 50). NumPy < 2 promotes float32 0-d arrays with Python floats to float64.
    weak_python_scalars: ClassVar[bool] = True
    # Whether basic indexing / reshape / transpose return arrays that share memory with their
    # source, so that writing into one changes the other (NumPy). Backends with immutable
    # arrays (MLX) say False: in-place ops on a view then write the value back into its base.
    views_share_memory: ClassVar[bool] = True
    # ``(state, value)`` that ``Function.apply`` sets around each forward (``token =
    # state.set(value)``, then ``state.reset(token)``), or None: NumPy's quiets its
    # floating-point warnings there (see ``_numpy/_errstate``).
    fp_quiet: ClassVar[tuple[Any, Any] | None] = None
    device: str
    xp: Any
    kernels: dict[KernelContract[Any], Any]

    # -- arrays -------------------------------------------------------------------------------
    def asarray(self, data: Any, dtype: dtypes.dtype | None = None) -> Any:
        """A native array from ``data`` (nested lists, numbers, arrays), of ``dtype`` if given."""
        raise NotImplementedError

    def to_numpy(self, arr: Any) -> Any:
        """A ``numpy.ndarray`` with the values of the native array ``arr``."""
        raise NotImplementedError

    def from_numpy(self, arr: Any) -> Any:
        """A native array from a ``numpy.ndarray``."""
        return self.asarray(arr)

    def native_dtype(self, dtype: dtypes.dtype) -> Any:
        """The backend's own dtype for a ``lucid.dtype``."""
        raise NotImplementedError

    def dtype_of(self, arr: Any) -> dtypes.dtype:
        """The ``lucid.dtype`` of the native array ``arr``."""
        raise NotImplementedError

    def dtype_from_native(self, native: Any) -> dtypes.dtype:
        """The ``lucid.dtype`` of a native dtype."""
        raise NotImplementedError

    def copy(self, arr: Any) -> Any:
        """A copy that no other array shares memory with (immutable arrays may return arr)."""
        return arr

    def strides(self, arr: Any) -> tuple[int, ...] | None:
        """``arr``'s strides in elements where the backend shows its memory layout (NumPy's
        ``arr.strides`` in bytes, divided by the item size), else None."""
        raw = getattr(arr, "strides", None)
        return None if raw is None else tuple(s // arr.itemsize for s in raw)

    def astype(self, arr: Any, dtype: dtypes.dtype) -> Any:
        """``arr`` converted to ``dtype``."""
        return arr.astype(self.native_dtype(dtype))

    def evaluate(self, *arrays: Any) -> None:
        """Force pending computation (lazy backends); a no-op for eager ones."""

    def assign(self, dst: Any, src: Any) -> Any:
        """Write ``src`` into ``dst`` in place where the library allows; return the array to
        keep."""
        return src

    def inplace_out(self, arr: Any) -> Any:
        """``arr`` where an elementwise function may write its result straight into it
        (``fn(x, y, out=arr)``, as NumPy's ufuncs take), else None (immutable arrays)."""
        return None

    def getitem(self, arr: Any, index: Any) -> Any:
        """``arr[index]`` (an index from ``lucid.ops.indexing``: ints, slices, arrays)."""
        return arr[index]

    def check_index_range(
        self, arr: Any, low: int, high: int, error: Callable[[int], Exception]
    ) -> None:
        """Raise ``error(value)`` for a value of the integer array ``arr`` outside
        ``[low, high)``. Eager backends check now (one reduction and one transfer); a lazy
        one may raise at its next sync point instead, so that the check costs no sync.
        An array-like that stands for several arrays (vmap's batched arrays) checks itself."""
        own = getattr(type(arr), "check_index_range", None)
        if own is not None:
            own(arr, low, high, error)
            return
        if not self.xp.size(arr):
            return
        bounds = self.xp.stack([self.xp.min(arr), self.xp.max(arr)])
        lo, hi = (int(v) for v in self.to_numpy(bounds).tolist())
        if hi >= high or lo < low:
            raise error(hi if hi >= high else lo)

    def any_true(self, arr: Any) -> bool:
        """Whether any element of ``arr`` is true (nonzero): a value check's one sync. An
        array-like that stands for several arrays (vmap's batched arrays) answers for all of
        them, so a check such as "all inputs in [0, 1]" runs on the whole batch."""
        own = getattr(type(arr), "any_true", None)
        if own is not None:
            return bool(own(arr))
        return bool(self.to_numpy(self.xp.any(arr)))

    def index_add(self, arr: Any, index: Any, values: Any) -> Any:
        """Return ``arr`` with ``values`` added at ``index`` (repeated indices accumulate)."""
        raise NotImplementedError

    def index_add_owned(self, arr: Any, index: Any, values: Any) -> Any:
        """``index_add`` on an array the caller owns (a fresh one): an eager backend may add in
        place instead of copying it first."""
        return self.index_add(arr, index, values)

    def setitem(self, arr: Any, index: Any, values: Any) -> Any:
        """Return ``arr`` with ``arr[index] = values`` applied (in place where possible)."""
        raise NotImplementedError

    def scatter(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        """A new array: ``arr`` with ``values`` written at ``index`` along ``dim``; only
        ``index``'s extent is addressed (``values`` broadcasts to ``index``'s shape)."""
        raise NotImplementedError

    def scatter_add(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        """A new array: ``arr`` with ``values`` added at ``index`` along ``dim``; repeated
        indices accumulate (``torch.scatter_add``)."""
        raise NotImplementedError

    def scatter_reduce(self, arr: Any, dim: int, index: Any, values: Any, reduce: str) -> Any:
        """A new array: ``arr`` with ``values`` combined into it at ``index`` along ``dim`` by
        ``reduce`` ("sum", "prod", "amax" or "amin"); repeated indices all take part. Only
        ``index``'s extent is addressed (``values`` has ``index``'s shape)."""
        raise NotImplementedError

    def sliding_windows(
        self, arr: Any, window_shape: tuple[int, ...], axis: tuple[int, ...]
    ) -> Any:
        """A read-only view of every window of ``window_shape`` along ``axis`` (no copy).

        Same contract as ``numpy.lib.stride_tricks.sliding_window_view``: the window dims are
        appended after the others; stride and dilation are basic slices of the result. Used by
        im2col (convolution, pooling, unfold).
        """
        raise NotImplementedError(f"{type(self).__name__} has no sliding_windows")

    # -- random -------------------------------------------------------------------------------
    # Defaults draw on the CPU generator and convert; backends with their own RNG (MLX)
    # override them so samples are made on the device.
    def manual_seed(self, seed: int) -> None:
        """Seed the backend's own RNG (if it has one)."""

    def random_normal(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        """A native array of standard normal samples drawn from ``generator``."""
        return self.asarray(_rng(generator).standard_normal(shape), dtype)

    def random_uniform(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        """A native array of samples uniform on ``[0, 1)`` drawn from ``generator``."""
        return self.asarray(_rng(generator).random(shape), dtype)

    def random_integers(
        self, low: int, high: int, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any
    ) -> Any:
        """A native array of integers uniform on ``[low, high)`` drawn from ``generator``."""
        return self.asarray(_rng(generator).integers(low, high, shape), dtype)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} device={self.device!r}>"


_default_generator: list[Any] = []  # lucid.random's default_generator, set when it is made


def set_default_generator(generator: Any) -> None:
    """Make ``generator`` the stream a backend draws from when an op passes none
    (``lucid._generator`` registers ``lucid.random.default_generator`` here: backends sit
    below Tensor and never import it)."""
    _default_generator[:] = [generator]


def _rng(generator: Any) -> Any:
    if generator is None:
        if not _default_generator:
            raise RuntimeError("no default generator registered: import lucid first")
        generator = _default_generator[0]
    return generator.numpy_rng
