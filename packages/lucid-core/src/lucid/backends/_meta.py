"""The ``meta`` device: tensors with a shape and a dtype and no data (torch's ``device='meta'``).

A meta array is a :class:`MetaArray`, a NumPy array whose every stride is 0 over a single
element, so that a tensor of any size costs one element. Ops on meta tensors run the ops' own
forwards with NumPy dispatching to :class:`MetaArray`, which never allocates a result of the
full size: elementwise ufuncs are evaluated on that one element and broadcast, reductions and
``matmul`` by their shape rules, views (reshape, transpose, basic indexing, broadcast) stay
views. A NumPy function without such a rule raises NotImplementedError naming it (rather than
allocate), as do reading values (``item``, ``numpy``, ``tolist``, printing shows no data) and
moving to another device (torch's errors; ``Module.to_empty`` makes real storage).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from lucid import dtypes
from lucid.backends._numpy import NumpyBackend

NO_DATA = "Cannot copy out of meta tensor; no data!"
_MOVE_HINT = (
    " Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module "
    "from meta to a different device."
)


def meta_array(shape: tuple[int, ...], dtype: Any) -> MetaArray:
    """A meta array of ``shape`` and NumPy ``dtype``: one element, every stride 0."""
    one = np.zeros(1, dtype=dtype)
    raw = np.lib.stride_tricks.as_strided(one, shape=tuple(shape), strides=(0,) * len(shape))
    return raw.view(MetaArray)


def _plain(x: Any) -> Any:
    return x.view(np.ndarray) if isinstance(x, MetaArray) else x


def _seed(x: Any) -> Any:
    """The one element of a meta array, as an array of its ndim with every size 1 (so NumPy
    1.x promotes as for the real array: a 0-d seed of an n-d array would take its scalar
    rules and turn float32 * Python float into float64); other values as they are."""
    if isinstance(x, MetaArray):
        return np.zeros((1,) * x.ndim, dtype=x.dtype)
    if isinstance(x, np.ndarray) and x.ndim:
        # a constant an op computed from shapes (pooling's divisors, say): only its dtype and
        # shape matter (mixing meta and real tensors is refused at the Tensor level)
        return np.zeros((1,) * x.ndim, dtype=x.dtype)
    return x


def _reduced_shape(shape: tuple[int, ...], axis: Any, keepdims: bool) -> tuple[int, ...]:
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    else:
        axes = {int(a) % ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


# NumPy functions that only make views (no allocation): run on the plain view, re-wrap
_VIEWS = frozenset({
    "reshape", "transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze",
    "broadcast_to", "broadcast_arrays", "ravel", "flip", "fliplr", "flipud", "diagonal",
    "atleast_1d", "atleast_2d", "atleast_3d", "real", "imag", "shape", "ndim", "size",
    "result_type", "may_share_memory", "shares_memory", "iscomplexobj", "isrealobj",
    "sliding_window_view", "split", "array_split",
})  # fmt: skip
# NumPy functions written in Python over ufuncs and views (each step dispatches back here)
_COMPOSED = frozenset({
    "sum", "mean", "var", "std", "prod", "amax", "amin", "max", "min", "any", "all",
    "around", "round", "clip", "nansum", "nanmean", "cumsum", "cumprod", "stack", "hstack",
    "vstack", "dstack", "column_stack", "average", "isclose", "allclose", "array_equal",
})  # fmt: skip


def _einsum(subscripts: str, operands: Any) -> MetaArray:
    """The shape and dtype of ``np.einsum(subscripts, *operands)``."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    sizes: dict[str, int] = {}
    ellipsis: tuple[int, ...] = ()
    counts: dict[str, int] = {}
    for term, op in zip(inputs.split(","), operands, strict=True):
        letters = term.replace("...", "")
        shape = tuple(np.shape(op))
        lead = len(shape) - len(letters)
        if "..." in term:
            at = term.index("...")
            ellipsis = np.broadcast_shapes(ellipsis, shape[at : at + lead])
            shape = shape[:at] + shape[at + lead :]
        for letter, n in zip(letters, shape, strict=True):
            if sizes.get(letter, 1) != 1 and n not in (1, sizes[letter]):
                raise ValueError(f"einsum: size {n} of {letter!r} does not match {sizes[letter]}")
            sizes[letter] = max(n, sizes.get(letter, n)) if n != 1 else sizes.get(letter, 1)
            counts[letter] = counts.get(letter, 0) + 1
    if not arrow:
        output = "..." + "".join(sorted(k for k, c in counts.items() if c == 1))
    out: list[int] = []
    rest = output
    while rest:
        if rest.startswith("..."):
            out.extend(ellipsis)
            rest = rest[3:]
        else:
            out.append(sizes[rest[0]])
            rest = rest[1:]
    dtype = np.result_type(*(getattr(o, "dtype", o) for o in operands))
    return meta_array(tuple(out), dtype)


class MetaArray(np.ndarray):
    """A NumPy array with a shape and a dtype and no data (see the module docstring)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if method == "__call__" and ufunc.signature is None:
            shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
            with np.errstate(all="ignore"):  # the one element's value means nothing
                value = ufunc(*(_seed(x) for x in inputs), **kwargs)
            if isinstance(value, tuple):
                return tuple(meta_array(shape, v.dtype) for v in value)
            result = meta_array(shape, np.asarray(value).dtype)
        elif method == "__call__" and ufunc.__name__ == "matmul":
            a, b = (np.shape(x) for x in inputs)
            a2, b2 = (a if len(a) > 1 else (1,) + a), (b if len(b) > 1 else b + (1,))
            if a2[-1] != b2[-2]:
                raise ValueError(f"matmul: shapes {a} and {b} do not fit")
            shape = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
            shape = shape[:-2] + shape[-2:][int(len(a) == 1) : 2 - int(len(b) == 1)]
            dtype = np.result_type(*(getattr(x, "dtype", x) for x in inputs))
            result = meta_array(shape, dtype)
        elif method in ("reduce", "accumulate"):
            (x,) = inputs
            axis = kwargs.get("axis", 0)
            keep = bool(kwargs.get("keepdims", False))
            tiny = np.zeros((1,) * x.ndim, dtype=x.dtype)
            dtype = getattr(ufunc, method)(tiny, **kwargs).dtype
            shape = x.shape if method == "accumulate" else _reduced_shape(x.shape, axis, keep)
            result = meta_array(shape, dtype)
        else:
            raise NotImplementedError(
                f"numpy {ufunc.__name__}.{method} has no shape rule on the meta device"
            )
        return result if out is None else out[0] if isinstance(out, tuple) else out

    def __array_function__(self, func: Any, types_: Any, args: Any, kwargs: Any) -> Any:
        name = func.__name__
        if name in _VIEWS:
            plain = func(*(_plain(a) for a in args), **kwargs)
            if isinstance(plain, np.ndarray):
                return plain.view(MetaArray)
            if isinstance(plain, (list, tuple)):
                return type(plain)(p.view(MetaArray) if isinstance(p, np.ndarray) else p
                                   for p in plain)  # fmt: skip
            return plain
        if name in _COMPOSED:
            return func._implementation(*args, **kwargs)
        if name == "concatenate":
            arrays = list(args[0])
            axis = kwargs.get("axis", args[1] if len(args) > 1 else 0)
            if axis is None:
                return meta_array((sum(a.size for a in arrays),), np.result_type(*arrays))
            first = list(arrays[0].shape)
            first[axis] = sum(a.shape[axis] for a in arrays)
            return meta_array(tuple(first), np.result_type(*arrays))
        if name == "where" and len(args) == 3:
            shape = np.broadcast_shapes(*(np.shape(a) for a in args))
            return meta_array(shape, np.result_type(*(_seed(a) for a in args[1:])))
        if name in ("copy", "ascontiguousarray", "array", "asarray", "asanyarray"):
            src = args[0]
            dtype = kwargs.get("dtype") or src.dtype
            return meta_array(src.shape, dtype)
        if name == "pad":
            arr = args[0]
            width = np.broadcast_to(np.asarray(kwargs.get("pad_width", args[1]), dtype=np.int64),
                                    (arr.ndim, 2))  # fmt: skip
            shape = tuple(int(n + w[0] + w[1]) for n, w in zip(arr.shape, width))
            return meta_array(shape, arr.dtype)
        if name == "einsum":
            return _einsum(args[0], args[1:])
        if name == "take_along_axis":
            arr, idx = args[0], args[1]
            axis = kwargs.get("axis", args[2] if len(args) > 2 else None)
            if axis is None:
                return meta_array(idx.shape, arr.dtype)
            axis %= arr.ndim
            spread = tuple(1 if i == axis else n for i, n in enumerate(arr.shape))
            return meta_array(np.broadcast_shapes(spread, idx.shape), arr.dtype)
        if name in ("sort", "partition", "tril", "triu", "roll", "nan_to_num"):
            return meta_array(args[0].shape, args[0].dtype)
        if name in ("argsort", "argpartition"):
            return meta_array(args[0].shape, np.intp)
        if name in ("argmax", "argmin"):
            axis = kwargs.get("axis", args[1] if len(args) > 1 else None)
            keep = bool(kwargs.get("keepdims", False))
            return meta_array(_reduced_shape(args[0].shape, axis, keep), np.intp)
        if name in ("zeros_like", "ones_like", "empty_like", "full_like"):
            dtype = kwargs.get("dtype") or args[0].dtype
            return meta_array(args[0].shape, dtype)
        raise NotImplementedError(
            f"numpy.{name} has no shape rule on the meta device: this op cannot run on meta tensors"
        )

    # methods that would copy the data
    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        return meta_array(self.shape, dtype)

    def copy(self, order: Any = "C") -> Any:
        return meta_array(self.shape, self.dtype)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise NotImplementedError(NO_DATA)

    def item(self, *args: Any) -> Any:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def tolist(self) -> Any:
        raise NotImplementedError(NO_DATA)

    def __reduce__(self) -> Any:
        return (meta_array, (self.shape, self.dtype))


def _creation(shape: Any, dtype: Any = None, **kwargs: Any) -> MetaArray:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return meta_array(shape, np.dtype(dtype) if dtype is not None else np.float64)


def _full(shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> MetaArray:
    native = dtype if dtype is not None else np.asarray(fill_value).dtype
    return _creation(shape, native)


def _fft_rule(name: str) -> Any:
    """``np.fft.<name>`` on a meta array: run it on a seed whose transformed axis keeps its
    length (every other size 1) for the result's length and dtype."""
    real = getattr(np.fft, name)

    def rule(a: Any, n: int | None = None, axis: int = -1, norm: Any = None) -> MetaArray:
        axis %= a.ndim
        seed = np.zeros(tuple(k if i == axis else 1 for i, k in enumerate(a.shape)), a.dtype)
        out = real(seed, n=n, axis=axis, norm=norm)
        shape = tuple(out.shape[i] if i == axis else k for i, k in enumerate(a.shape))
        return meta_array(shape, out.dtype)

    return rule


def _namespace() -> Any:
    """NumPy as meta op code sees it: the plain functions (MetaArray dispatch gives shapes),
    creation functions that make meta arrays."""
    ns = types.ModuleType("lucid.backends.meta_xp", np.__doc__)
    ns.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    ns.__dict__.update(zeros=_creation, ones=_creation, empty=_creation, full=_full)
    fft = types.SimpleNamespace(**{k: _fft_rule(k) for k in ("fft", "ifft", "rfft", "irfft")})
    ns.__dict__["fft"] = fft
    return ns


_XP = _namespace()


class MetaBackend(NumpyBackend):
    """Device ``"meta"``: arrays with a shape and a dtype and no data."""

    name = "meta"

    def __init__(self, device: str = "meta") -> None:
        self.device = "meta"
        self.xp = _XP
        self.kernels = {}  # no fused kernels: they would compute on the data

    def asarray(self, data: Any, dtype: dtypes.dtype | None = None) -> Any:
        if isinstance(data, MetaArray):
            return data if dtype is None else meta_array(data.shape, self.native_dtype(dtype))
        probe = np.asarray(data) if not isinstance(data, np.ndarray) else data
        native = probe.dtype if dtype is None else self.native_dtype(dtype)
        return meta_array(probe.shape, native)

    def from_numpy(self, arr: Any) -> Any:
        return meta_array(np.shape(arr), arr.dtype)

    def to_numpy(self, arr: Any) -> Any:
        raise NotImplementedError(NO_DATA + _MOVE_HINT)

    def copy(self, arr: Any) -> Any:
        return meta_array(arr.shape, arr.dtype)

    def astype(self, arr: Any, dtype: dtypes.dtype) -> Any:
        return meta_array(arr.shape, self.native_dtype(dtype))

    def assign(self, dst: Any, src: Any) -> Any:
        return dst if np.shape(dst) == np.shape(src) else meta_array(np.shape(src), src.dtype)

    def inplace_out(self, arr: Any) -> Any:
        return None

    def any_true(self, arr: Any) -> bool:
        # No values: the checks that need them pass, and a branch on them takes the path for
        # "none" (both give the same shapes), as torch's meta kernels skip value checks.
        return False

    def check_index_range(self, *args: Any, **kwargs: Any) -> None:
        return  # no values to check

    def setitem(self, arr: Any, index: Any, values: Any) -> Any:
        return arr

    def index_add(self, arr: Any, index: Any, values: Any) -> Any:
        return arr

    def scatter(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return arr

    def scatter_add(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return arr

    def scatter_reduce(self, arr: Any, dim: int, index: Any, values: Any, reduce: str) -> Any:
        return arr

    def random_normal(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        return meta_array(shape, self.native_dtype(dtype))

    def random_uniform(self, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any) -> Any:
        return meta_array(shape, self.native_dtype(dtype))

    def random_integers(
        self, low: int, high: int, shape: tuple[int, ...], dtype: dtypes.dtype, generator: Any
    ) -> Any:
        return meta_array(shape, self.native_dtype(dtype))
