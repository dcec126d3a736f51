"""The built-in NumPy backend (device "cpu"): arrays, the BLAS-aware namespace, fast kernels.

Creating the first NumPy backend also tunes glibc's allocator (``_alloc``;
``lucid.backends.cpu.tune_malloc = False`` turns that off), so ``import lucid`` alone changes
nothing in the process.

The CPU speed code lives here: ``_settings`` (``lucid.backends.cpu``, the switches, seeded from
the environment), ``_parallel`` (the threads: one pool, one budget shared with BLAS), ``_gemm``
(which threads run each matrix product), ``_ufuncs`` (big elementwise ops on every core),
``_compiled`` (which compiled kernels are available) and ``_numba`` (their runtime).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid import dtypes
from lucid.backends._base import Backend
from lucid.backends._numpy import _alloc, _errstate, _float8, _gemm, _ufuncs, kernels

_NATIVE = {d: np.dtype(d.name) for d in dtypes.ALL_DTYPES if d is not dtypes.bfloat16}
_FROM_NATIVE = {v: k for k, v in _NATIVE.items()}
_FLOAT8 = dtypes.FLOAT8_NATIVE  # empty until a float8 dtype is first used


def _load_bfloat16() -> Any:
    """NumPy's bfloat16 (from ml_dtypes), mapped on first use: its import takes about a second,
    so ``import lucid`` does not pay for it."""
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(
            "lucid.bfloat16 on device 'cpu' needs the ml_dtypes package (NumPy has no bfloat16 "
            "of its own): pip install ml_dtypes"
        ) from None
    native = np.dtype(ml_dtypes.bfloat16)
    _NATIVE[dtypes.bfloat16] = native
    _FROM_NATIVE[native] = dtypes.bfloat16
    _gemm.GEMM_IN_FLOAT32.add(native)
    return native


def _load_float8(dtype: dtypes.dtype) -> Any:
    """NumPy's float8 types (from ml_dtypes), all mapped on first use of one of them; each
    native lands in ``dtypes.FLOAT8_NATIVE``, which turns on ``Function.apply``'s check that
    refuses arithmetic on them as torch's CPU does."""
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(
            f"{dtype} on device 'cpu' needs the ml_dtypes package (NumPy has no float8 types "
            "of its own): pip install ml_dtypes"
        ) from None
    for d in dtypes.FLOAT8_DTYPES:
        native = np.dtype(getattr(ml_dtypes, d.name))
        _NATIVE[d] = native
        _FROM_NATIVE[native] = d
        dtypes.FLOAT8_NATIVE.add(native)
    # from now on the casts and writes that round into float8 as torch does (until then the
    # plain ones run, without a check of their own)
    NumpyBackend.astype = NumpyBackend.astype_float8  # type: ignore[method-assign]
    NumpyBackend.setitem = NumpyBackend.setitem_float8  # type: ignore[method-assign]
    return _NATIVE[dtype]


def _einsum(*operands: Any, **kwargs: Any) -> Any:
    """``numpy.einsum``; bfloat16 operands (which it rejects) are computed in float32."""
    bf16 = _NATIVE.get(dtypes.bfloat16)
    if bf16 is None or all(getattr(op, "dtype", None) != bf16 for op in operands):
        return np.einsum(*operands, **kwargs)
    wide = [op.astype(np.float32) if getattr(op, "dtype", None) == bf16 else op for op in operands]
    return np.einsum(*wide, **kwargs).astype(bf16)


class _NumpyNamespace(types.ModuleType):
    """``numpy`` as op code sees it: every numpy name, with ``matmul`` choosing BLAS threads and
    the common ufuncs splitting big arrays across the cores (``_ufuncs``)."""

    def __getattr__(self, name: str) -> Any:  # names numpy loads lazily
        return getattr(np, name)


def _namespace() -> Any:
    ns = _NumpyNamespace("lucid.backends.numpy_xp", np.__doc__)
    ns.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    ns.matmul = _gemm.matmul  # type: ignore[attr-defined]
    ns.matmul_pair = _gemm.matmul_pair  # type: ignore[attr-defined]
    ns.matmul_defer = _gemm.matmul_defer  # type: ignore[attr-defined]
    ns.linear = _gemm.linear  # type: ignore[attr-defined]
    ns.einsum = _einsum  # type: ignore[attr-defined]
    ns.__dict__.update(_ufuncs.threaded_ufuncs())
    return ns


_XP = _namespace()


class NumpyBackend(Backend):
    name = "numpy"
    weak_python_scalars = int(np.__version__.split(".")[0]) >= 2
    fp_quiet = _errstate.QUIET

    def __init__(self, device: str = "cpu") -> None:
        _alloc.tune_allocator_once()
        self.device = device
        self.xp = _XP
        self.kernels = {}
        kernels.register(self)

    def asarray(self, data: Any, dtype: dtypes.dtype | None = None) -> Any:
        if dtype is None:
            return np.asarray(data)
        if dtype._rank < 0:  # float8: rounded as torch rounds (through float32, saturating)
            arr = np.asarray(data)
            native = self.native_dtype(dtype)
            return arr if arr.dtype == native else _float8.cast(arr, dtype.name, native)
        return np.asarray(data, dtype=self.native_dtype(dtype))

    def to_numpy(self, arr: Any) -> Any:
        return np.asarray(arr)  # full reductions give numpy scalars: hand out 0-d arrays

    def check_index_range(
        self, arr: Any, low: int, high: int, error: Callable[[int], Exception]
    ) -> None:
        if type(arr) is not np.ndarray:  # vmap's batched arrays check themselves
            super().check_index_range(arr, low, high, error)
            return
        if not arr.size:
            return
        # two bare reductions, without stacking and transferring the bounds (embedding's and
        # gather's check each call, docs/performance.md)
        lo, hi = int(np.minimum.reduce(arr, axis=None)), int(np.maximum.reduce(arr, axis=None))
        if hi >= high or lo < low:
            raise error(hi if hi >= high else lo)

    def native_dtype(self, dtype: dtypes.dtype) -> Any:
        try:
            return _NATIVE[dtype]
        except KeyError:
            if dtype is dtypes.bfloat16:
                return _load_bfloat16()
            if dtype._rank < 0:
                return _load_float8(dtype)
            raise TypeError(f"{dtype} is not supported on device 'cpu' (NumPy)") from None

    def dtype_of(self, arr: Any) -> dtypes.dtype:
        found = _FROM_NATIVE.get(arr.dtype)
        return found if found is not None else self.dtype_from_native(arr.dtype)

    def dtype_from_native(self, native: Any) -> dtypes.dtype:
        try:
            return _FROM_NATIVE[np.dtype(native)]
        except KeyError:
            name = np.dtype(native).name
            if name == "bfloat16":  # made by ml_dtypes before lucid mapped it
                _load_bfloat16()
                return dtypes.bfloat16
            found = dtypes.BY_NAME.get(name)
            if found is not None and found._rank < 0:  # a float8 of ml_dtypes, likewise
                _load_float8(found)
                return found
            raise TypeError(f"NumPy dtype {native} has no lucid equivalent") from None

    def copy(self, arr: Any) -> Any:
        return _ufuncs.copy(arr)

    def astype(self, arr: Any, dtype: dtypes.dtype) -> Any:
        native = _NATIVE.get(dtype)
        if native is None:  # not mapped yet (bfloat16, float8) or unknown: map it (or raise)
            self.native_dtype(dtype)
            return self.astype(arr, dtype)  # (float8 mapped: astype_float8 from now on)
        return _ufuncs.astype(arr, native)

    def astype_float8(self, arr: Any, dtype: dtypes.dtype) -> Any:
        """``astype`` once a float8 type is mapped: into float8 rounded as torch rounds
        (through float32, saturating), out of it through float32, as torch."""
        if dtype._rank < 0:
            return _float8.cast(arr, dtype.name, self.native_dtype(dtype))
        if arr.dtype in _FLOAT8:
            arr = _float8.widen(arr)
        return _ufuncs.astype(arr, self.native_dtype(dtype))

    def assign(self, dst: Any, src: Any) -> Any:
        if (
            isinstance(dst, np.ndarray)
            and dst.flags.writeable
            and dst.shape == np.shape(src)
            and dst.dtype == getattr(src, "dtype", None)
        ):
            np.copyto(dst, src)
            return dst
        return np.asarray(src)

    def inplace_out(self, arr: Any) -> Any:
        return arr if type(arr) is np.ndarray and arr.flags.writeable else None

    def index_add(self, arr: Any, index: Any, values: Any) -> Any:
        return self.index_add_owned(arr.copy(), index, values)

    def index_add_owned(self, arr: Any, index: Any, values: Any) -> Any:
        # in place: an embedding's gradient is added into its fresh zeros without a copy of
        # them (a (10000, 200) table: 8 MB, docs/performance.md)
        if not _add_rows(arr, index, values):
            np.add.at(arr, index, values)
        return arr

    def setitem(self, arr: Any, index: Any, values: Any) -> Any:
        arr[index] = values
        return arr

    def setitem_float8(self, arr: Any, index: Any, values: Any) -> Any:
        """``setitem`` once a float8 type is mapped: values written into a float8 array are
        rounded as torch rounds them."""
        if arr.dtype in _FLOAT8 and getattr(values, "dtype", None) != arr.dtype:
            values = _float8.cast(values, arr.dtype.name, arr.dtype)
        arr[index] = values
        return arr

    def sliding_windows(
        self, arr: Any, window_shape: tuple[int, ...], axis: tuple[int, ...]
    ) -> Any:
        return np.lib.stride_tricks.sliding_window_view(arr, window_shape, axis=axis)

    def scatter(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        out = arr.copy()
        out[_along_axis(index, dim)] = values
        return out

    def scatter_add(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return self.scatter_reduce(arr, dim, index, values, "sum")

    def scatter_reduce(self, arr: Any, dim: int, index: Any, values: Any, reduce: str) -> Any:
        out = arr.copy()
        _SCATTER_UFUNCS[reduce].at(out, _along_axis(index, dim), values)
        return out


def _add_rows(out: Any, index: Any, values: Any) -> bool:
    """``np.add.at(out, index, values)`` for whole rows picked by one integer array (an
    embedding's gradient): the rows sorted by index and summed per index by ``reduceat``, 4-5x
    faster than ``add.at`` on 2-D values (docs/performance.md); False where it does not apply."""
    if isinstance(index, tuple):
        if len(index) != 1:
            return False
        index = index[0]
    if (
        not isinstance(index, np.ndarray)
        or index.dtype.kind not in "iu"
        or out.ndim < 2
        or not out.flags.c_contiguous
        or index.size < 2
        or values.shape != index.shape + out.shape[1:]
        or values.dtype != out.dtype
    ):
        return False
    idx = index.reshape(-1)
    if idx.dtype.kind == "i" and idx.min() < 0:
        idx = np.where(idx < 0, idx + out.shape[0], idx)  # out of range: NumPy's IndexError below
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    rows = values.reshape(idx.size, -1)[order]
    # summed in out's dtype, as add.at does (bool: a logical or; NumPy's reduce would give int64)
    sums = np.add.reduceat(rows, starts, axis=0, dtype=out.dtype)
    out.reshape(out.shape[0], -1)[ordered[starts]] += sums
    return True


_SCATTER_UFUNCS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _along_axis(index: Any, dim: int) -> tuple[Any, ...]:
    """The fancy-index tuple that addresses ``index``'s entries along ``dim``."""
    grids = np.ogrid[tuple(slice(0, s) for s in index.shape)]
    return tuple(index if d == dim else g for d, g in enumerate(grids))
