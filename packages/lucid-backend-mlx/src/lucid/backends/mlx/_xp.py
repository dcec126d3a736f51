"""``xp`` for MLX: NumPy's signatures over ``mlx.core``.

Op code calls ``ctx.xp.<numpy function>``; most names exist in ``mlx.core`` with the same
meaning and are forwarded (with the backend's stream bound). This module holds the ones whose
name or signature differ, and the few that need the host (data-dependent shapes: ``nonzero``,
``unique``), which go through the backend's counted device-to-host conversion.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

import mlx.core as mx
from lucid.backends.mlx import _dtypes
from lucid.backends.mlx._checks import PendingChecks, out_of_bounds
from lucid.backends.mlx._linalg import MlxLinalg

_INDEX = _dtypes.INDEX_DTYPES
_FLOATS = (mx.float16, mx.bfloat16, mx.float32, mx.float64, mx.complex64)


def _axis(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple) else axis


def _no_out(out: Any) -> None:
    if out is not None:
        raise TypeError("MLX arrays are immutable: out= is not supported; use the return value")


class MlxNumpy:
    """A NumPy-like namespace bound to one MLX stream (``None``: the default device)."""

    ndarray = mx.array
    newaxis = None
    inf = float("inf")
    nan = float("nan")
    pi = float(np.pi)
    e = float(np.e)
    bool_ = mx.bool_

    def __init__(
        self,
        stream: Any,
        host: Any,
        checks: PendingChecks | None = None,
        guard: Callable[[Any, Any], None] | None = None,
    ) -> None:
        self._s = stream
        self._host = host  # callable: mx.array -> numpy array, counted by the backend
        self._checks = checks or PendingChecks()  # index bounds, read at the next sync point
        self._guard = guard or (lambda shape, dtype: None)  # (shape, dtype): refuse too large
        self.linalg = MlxLinalg(stream, host)
        self.lib = SimpleNamespace(
            stride_tricks=SimpleNamespace(sliding_window_view=self.sliding_window_view)
        )

    def __getattr__(self, name: str) -> Any:
        """Forward names NumPy and MLX share, binding the stream; cache the result."""
        try:
            obj = getattr(mx, name)
        except AttributeError:
            raise AttributeError(
                f"the MLX backend's xp has no {name!r} (NumPy has it, MLX does not); "
                "add it to lucid/backends/mlx/_xp.py"
            ) from None
        if self._s is not None and callable(obj) and "stream" in (obj.__doc__ or ""):
            obj = functools.partial(obj, stream=self._s)
        setattr(self, name, obj)
        return obj

    # -- creation ----------------------------------------------------------------------------
    def asarray(self, a: Any, dtype: Any = None) -> Any:
        if isinstance(a, mx.array):
            return a if dtype is None or a.dtype == dtype else a.astype(dtype, stream=self._s)
        return self.array(a, dtype)

    def array(self, a: Any, dtype: Any = None, copy: bool = True) -> Any:
        if isinstance(a, mx.array):
            return mx.array(a) if dtype is None else a.astype(dtype, stream=self._s)
        if dtype is None and isinstance(a, np.ndarray):
            # numpy's "bool" is mx.bool_ (mx.bool does not exist); bfloat16 comes from ml_dtypes
            name = {"bool": "bool_"}.get(a.dtype.name, a.dtype.name)
            dtype = mx.bfloat16 if name == "bfloat16" else getattr(mx, name)
        return mx.array(a, dtype=dtype)

    def ascontiguousarray(self, a: Any, dtype: Any = None) -> Any:
        return self.asarray(a, dtype)

    def copy(self, a: Any) -> Any:
        return mx.array(a)

    def zeros(self, shape: Any, dtype: Any = mx.float32) -> Any:
        self._guard(shape, dtype)
        return mx.zeros(shape, dtype=dtype, stream=self._s)

    def ones(self, shape: Any, dtype: Any = mx.float32) -> Any:
        self._guard(shape, dtype)
        return mx.ones(shape, dtype=dtype, stream=self._s)

    empty = zeros

    def full(self, shape: Any, fill_value: Any, dtype: Any = None) -> Any:
        self._guard(shape, dtype)
        out = mx.full(shape, fill_value, stream=self._s)
        # MLX keeps a float fill's dtype even when asked for an integer or bool one: cast.
        return out if dtype is None or out.dtype == dtype else out.astype(dtype, stream=self._s)

    def zeros_like(self, a: Any, dtype: Any = None) -> Any:
        return self.zeros(a.shape, dtype or a.dtype)

    def ones_like(self, a: Any, dtype: Any = None) -> Any:
        return self.ones(a.shape, dtype or a.dtype)

    empty_like = zeros_like

    def full_like(self, a: Any, fill_value: Any, dtype: Any = None) -> Any:
        return self.full(a.shape, fill_value, dtype or a.dtype)

    def arange(self, start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
        if stop is None:
            start, stop = 0, start
        kw: dict[str, Any] = {"stream": self._s}
        if dtype is not None:
            kw["dtype"] = dtype
        step = 1 if step is None else step
        self._guard((max(0, math.ceil((stop - start) / step)),), dtype)
        return mx.arange(start, stop, step, **kw)

    def eye(self, n: int, m: int | None = None, k: int = 0, dtype: Any = mx.float32) -> Any:
        self._guard((n, n if m is None else m), dtype)
        return mx.eye(n, m, k, dtype=dtype, stream=self._s)

    def broadcast_to(self, a: Any, shape: Any) -> Any:
        self._guard(shape, a.dtype if isinstance(a, mx.array) else None)
        return mx.broadcast_to(a, shape, stream=self._s)

    # -- shape -------------------------------------------------------------------------------
    @staticmethod
    def ndim(a: Any) -> int:
        return a.ndim if isinstance(a, mx.array) else int(np.ndim(a))

    @staticmethod
    def shape(a: Any) -> tuple[int, ...]:
        return tuple(a.shape) if isinstance(a, mx.array) else tuple(np.shape(a))

    @staticmethod
    def size(a: Any) -> int:
        return a.size if isinstance(a, mx.array) else int(np.size(a))

    def reshape(self, a: Any, shape: Any = None, newshape: Any = None) -> Any:
        target = shape if shape is not None else newshape
        return mx.reshape(a, (target,) if isinstance(target, int) else target, stream=self._s)

    def ravel(self, a: Any) -> Any:
        return mx.reshape(a, (-1,), stream=self._s)

    def transpose(self, a: Any, axes: Any = None) -> Any:
        if axes is None:
            return mx.transpose(a, stream=self._s)
        return mx.transpose(a, list(axes), stream=self._s)

    def expand_dims(self, a: Any, axis: Any) -> Any:
        return mx.expand_dims(a, _axis(axis), stream=self._s)

    def squeeze(self, a: Any, axis: Any = None) -> Any:
        return mx.squeeze(a, _axis(axis), stream=self._s)

    def concatenate(self, arrays: Sequence[Any], axis: Any = 0) -> Any:
        if axis is None:
            return mx.concatenate([mx.reshape(a, (-1,)) for a in arrays], 0, stream=self._s)
        return mx.concatenate(list(arrays), axis, stream=self._s)

    concat = concatenate

    def stack(self, arrays: Sequence[Any], axis: int = 0) -> Any:
        return mx.stack(list(arrays), axis, stream=self._s)

    def split(self, a: Any, indices_or_sections: Any, axis: int = 0) -> Any:
        if not isinstance(indices_or_sections, int):
            indices_or_sections = [int(i) for i in indices_or_sections]
        return mx.split(a, indices_or_sections, axis, stream=self._s)

    def array_split(self, a: Any, sections: int, axis: int = 0) -> Any:
        n = a.shape[axis]
        each, extra = divmod(n, sections)
        bounds, pos = [], 0
        for i in range(sections - 1):
            pos += each + (1 if i < extra else 0)
            bounds.append(pos)
        return self.split(a, bounds, axis)

    def flip(self, a: Any, axis: Any = None) -> Any:
        axes = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        index = [slice(None)] * a.ndim
        for ax in axes:
            index[ax] = slice(None, None, -1)
        return a[tuple(index)]

    def roll(self, a: Any, shift: Any, axis: Any = None) -> Any:
        return mx.roll(a, shift, _axis(axis), stream=self._s)

    def pad(self, a: Any, pad_width: Any, mode: Any = "constant", constant_values: Any = 0) -> Any:
        if isinstance(pad_width, int):
            pad_width = [(pad_width, pad_width)] * a.ndim
        widths: Any = [tuple(int(v) for v in w) for w in pad_width]
        return mx.pad(a, widths, mode, constant_values, stream=self._s)

    def sliding_window_view(self, x: Any, window_shape: Any, axis: Any = None) -> Any:
        """NumPy's ``sliding_window_view`` as an MLX strided view (row-major element strides)."""
        window = (window_shape,) if isinstance(window_shape, int) else tuple(window_shape)
        axes = tuple(range(x.ndim - len(window), x.ndim)) if axis is None else axis
        axes = (axes,) if isinstance(axes, int) else tuple(a % x.ndim for a in axes)
        strides = [1] * x.ndim
        for i in range(x.ndim - 2, -1, -1):
            strides[i] = strides[i + 1] * x.shape[i + 1]
        shape = list(x.shape)
        for ax, w in zip(axes, window):
            if shape[ax] < w:
                raise ValueError("window shape cannot be larger than input array shape")
            shape[ax] -= w - 1
        shape += list(window)
        strides += [strides[ax] for ax in axes]
        return mx.as_strided(x, shape, strides, stream=self._s)

    # -- reductions (NumPy's dtype=/out= handled here) --------------------------------------
    def _reduce(self, fn: Any, a: Any, axis: Any, keepdims: bool, dtype: Any) -> Any:
        if dtype is not None and a.dtype != dtype:
            a = a.astype(dtype, stream=self._s)
        return fn(a, _axis(axis), keepdims, stream=self._s)

    def sum(self, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:  # fmt: skip
        _no_out(out)
        return self._reduce(mx.sum, a, axis, keepdims, dtype)

    def prod(self, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False) -> Any:  # fmt: skip
        _no_out(out)
        return self._reduce(mx.prod, a, axis, keepdims, dtype)

    def mean(self, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False) -> Any:  # fmt: skip
        _no_out(out)
        return self._reduce(mx.mean, a, axis, keepdims, dtype)

    def max(self, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        _no_out(out)
        return mx.max(a, _axis(axis), keepdims, stream=self._s)

    def min(self, a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        _no_out(out)
        return mx.min(a, _axis(axis), keepdims, stream=self._s)

    amax = max
    amin = min

    def all(self, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return mx.all(a, _axis(axis), keepdims, stream=self._s)

    def any(self, a: Any, axis: Any = None, keepdims: bool = False) -> Any:
        return mx.any(a, _axis(axis), keepdims, stream=self._s)

    def var(self, a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
            ddof: int = 0) -> Any:  # fmt: skip
        if dtype is not None:
            a = a.astype(dtype, stream=self._s)
        return mx.var(a, _axis(axis), keepdims, int(ddof), stream=self._s)

    def std(self, a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
            ddof: int = 0) -> Any:  # fmt: skip
        if dtype is not None:
            a = a.astype(dtype, stream=self._s)
        return mx.std(a, _axis(axis), keepdims, int(ddof), stream=self._s)

    def argmax(self, a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        return self._index(mx.argmax(a, axis, keepdims, stream=self._s))

    def argmin(self, a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        return self._index(mx.argmin(a, axis, keepdims, stream=self._s))

    def cumsum(self, a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        if dtype is not None:
            a = a.astype(dtype, stream=self._s)
        return mx.cumsum(a, axis, stream=self._s)

    def cumprod(self, a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        if dtype is not None:
            a = a.astype(dtype, stream=self._s)
        return mx.cumprod(a, axis, stream=self._s)

    def _index(self, arr: Any) -> Any:
        # stop_gradient: positions carry no gradient; without it mx.vjp (lucid.compile's
        # backward) refuses a gather whose indices depend on a differentiated input
        out = arr.astype(mx.int64, stream=self._s) if arr.dtype in _INDEX else arr
        return mx.stop_gradient(out)

    # -- sorting -----------------------------------------------------------------------------
    def sort(self, a: Any, axis: int | None = -1, kind: Any = None, stable: Any = None) -> Any:
        return mx.sort(a, axis, stream=self._s)

    def argsort(self, a: Any, axis: int | None = -1, kind: Any = None, stable: Any = None) -> Any:
        return self._index(mx.argsort(a, axis, stream=self._s))

    def partition(self, a: Any, kth: int, axis: int | None = -1) -> Any:
        return mx.partition(a, kth, axis, stream=self._s)

    def argpartition(self, a: Any, kth: int, axis: int | None = -1) -> Any:
        return self._index(mx.argpartition(a, kth, axis, stream=self._s))

    # -- data-dependent shapes: through the host ---------------------------------------------
    def nonzero(self, a: Any) -> tuple[Any, ...]:
        return tuple(mx.array(i.astype(np.int64)) for i in np.nonzero(self._host(a)))

    def argwhere(self, a: Any) -> Any:
        return mx.array(np.argwhere(self._host(a)).astype(np.int64))

    def flatnonzero(self, a: Any) -> Any:
        return mx.array(np.flatnonzero(self._host(a)).astype(np.int64))

    def nextafter(self, a: Any, b: Any) -> Any:  # MLX has no nextafter: on the host
        host_b = self._host(b) if isinstance(b, mx.array) else b
        return self.array(np.nextafter(self._host(a), host_b))

    def frexp(self, a: Any) -> tuple[Any, Any]:  # MLX has no frexp: on the host
        mantissa, exponent = np.frexp(self._host(a))
        return self.array(mantissa), self.array(exponent.astype(np.int32))

    def unique(self, a: Any, **kwargs: Any) -> Any:
        out = np.unique(self._host(a), **kwargs)
        if isinstance(out, tuple):
            return tuple(self.array(o) for o in out)
        return self.array(out)

    def bincount(self, x: Any, weights: Any = None, minlength: int = 0) -> Any:
        w = None if weights is None else self._host(weights)
        return self.array(np.bincount(self._host(x), w, minlength))

    def searchsorted(self, a: Any, v: Any, side: Any = "left", sorter: Any = None) -> Any:
        host_v = self._host(v) if isinstance(v, mx.array) else v
        return self.array(np.searchsorted(self._host(a), host_v, side).astype(np.int64))

    # -- selection ---------------------------------------------------------------------------
    def where(self, condition: Any, x: Any = None, y: Any = None) -> Any:
        if x is None and y is None:
            return self.nonzero(condition)
        return mx.where(condition, x, y, stream=self._s)

    def clip(self, a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None,
             max: Any = None) -> Any:  # fmt: skip  # noqa: A002
        lo = a_min if a_min is not None else min
        hi = a_max if a_max is not None else max
        return mx.clip(a, lo, hi, stream=self._s)

    def take(self, a: Any, indices: Any, axis: int | None = None) -> Any:
        self._check_indices(a, indices, axis)
        return mx.take(a, indices, axis, stream=self._s)

    def take_along_axis(self, a: Any, indices: Any, axis: int | None) -> Any:
        self._check_indices(a, indices, axis)
        return mx.take_along_axis(a, indices, axis, stream=self._s)

    def _check_indices(self, a: Any, indices: Any, axis: int | None) -> None:
        size = a.size if axis is None else a.shape[axis]
        if isinstance(indices, mx.array):
            self._checks.add(indices, -size, size, out_of_bounds(axis, size))

    def tril(self, m: Any, k: int = 0) -> Any:
        return mx.tril(m, k, stream=self._s)

    def triu(self, m: Any, k: int = 0) -> Any:
        return mx.triu(m, k, stream=self._s)

    def diagonal(self, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return mx.diagonal(a, offset, axis1, axis2, stream=self._s)

    def trace(self, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1,
              dtype: Any = None) -> Any:  # fmt: skip
        return mx.trace(a, offset, axis1, axis2, dtype, stream=self._s)

    # -- products ----------------------------------------------------------------------------
    def matmul(self, a: Any, b: Any) -> Any:
        if a.dtype in _FLOATS and b.dtype in _FLOATS:
            return mx.matmul(a, b, stream=self._s)
        # MLX multiplies floating matrices only: integer products go through float64 on CPU.
        out = mx.matmul(a.astype(mx.float64), b.astype(mx.float64), stream=mx.cpu)
        return out.astype(mx.promote_types(a.dtype, b.dtype) if hasattr(mx, "promote_types")
                          else a.dtype)  # fmt: skip

    def dot(self, a: Any, b: Any) -> Any:
        if a.ndim == 0 or b.ndim == 0:
            return mx.multiply(a, b, stream=self._s)
        if b.ndim > 2:
            axes: Any = ([a.ndim - 1], [b.ndim - 2])
            return mx.tensordot(a, b, axes, stream=self._s)
        return self.matmul(a, b)

    def einsum(self, subscripts: str, *operands: Any, **kwargs: Any) -> Any:
        return mx.einsum(subscripts, *operands, stream=self._s)

    def tensordot(self, a: Any, b: Any, axes: Any = 2) -> Any:
        if not isinstance(axes, int):
            axes = [list(ax) if isinstance(ax, (tuple, list)) else [ax] for ax in axes]
        return mx.tensordot(a, b, axes, stream=self._s)

    # -- elementwise names NumPy spells differently ------------------------------------------
    def true_divide(self, a: Any, b: Any) -> Any:
        return mx.divide(a, b, stream=self._s)

    def absolute(self, a: Any) -> Any:
        return mx.abs(a, stream=self._s)

    def mod(self, a: Any, b: Any) -> Any:
        return mx.remainder(a, b, stream=self._s)

    def fmod(self, a: Any, b: Any) -> Any:
        return mx.subtract(a, mx.multiply(mx.trunc(mx.divide(a, b)), b), stream=self._s)

    def float_power(self, a: Any, b: Any) -> Any:
        return mx.power(a, b, stream=self._s)

    def exp2(self, a: Any) -> Any:
        return mx.power(2.0, a, stream=self._s)

    def cbrt(self, a: Any) -> Any:
        return mx.multiply(mx.sign(a), mx.power(mx.abs(a), 1.0 / 3.0), stream=self._s)

    def hypot(self, a: Any, b: Any) -> Any:
        return mx.sqrt(mx.add(mx.square(a), mx.square(b)), stream=self._s)

    def signbit(self, a: Any) -> Any:
        neg_zero = mx.logical_and(a == 0, mx.divide(1.0, a) < 0)
        return mx.logical_or(a < 0, neg_zero, stream=self._s)

    def copysign(self, a: Any, b: Any) -> Any:
        return mx.where(self.signbit(b), -mx.abs(a), mx.abs(a), stream=self._s)

    def rint(self, a: Any) -> Any:
        return mx.round(a, stream=self._s)

    def around(self, a: Any, decimals: int = 0) -> Any:
        return mx.round(a, decimals, stream=self._s)

    def round(self, a: Any, decimals: int = 0) -> Any:
        return mx.round(a, decimals, stream=self._s)

    def fix(self, a: Any) -> Any:
        return mx.trunc(a, stream=self._s)

    def positive(self, a: Any) -> Any:
        return a

    def invert(self, a: Any) -> Any:
        if a.dtype == mx.bool_:
            return mx.logical_not(a, stream=self._s)
        return mx.bitwise_invert(a, stream=self._s)

    bitwise_not = invert

    def heaviside(self, a: Any, h0: Any) -> Any:
        return mx.where(a == 0, h0, (a > 0).astype(a.dtype), stream=self._s)

    def fmax(self, a: Any, b: Any) -> Any:
        return mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.maximum(a, b)))

    def fmin(self, a: Any, b: Any) -> Any:
        return mx.where(mx.isnan(b), a, mx.where(mx.isnan(a), b, mx.minimum(a, b)))

    def deg2rad(self, a: Any) -> Any:
        return mx.multiply(a, float(np.pi / 180), stream=self._s)

    def rad2deg(self, a: Any) -> Any:
        return mx.multiply(a, float(180 / np.pi), stream=self._s)

    def conjugate(self, a: Any) -> Any:
        return mx.conj(a, stream=self._s)

    # -- predicates --------------------------------------------------------------------------
    def isclose(self, a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
                equal_nan: bool = False) -> Any:  # fmt: skip
        return mx.isclose(a, b, rtol, atol, equal_nan=equal_nan, stream=self._s)

    def allclose(self, a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
                 equal_nan: bool = False) -> Any:  # fmt: skip
        return mx.allclose(a, b, rtol, atol, equal_nan=equal_nan, stream=self._s)

    # -- NumPy's floating-point error state has no MLX counterpart ----------------------------
    @staticmethod
    @contextlib.contextmanager
    def errstate(**kwargs: Any) -> Iterator[None]:
        yield

    @staticmethod
    def seterr(**kwargs: Any) -> dict[str, str]:
        return {}
