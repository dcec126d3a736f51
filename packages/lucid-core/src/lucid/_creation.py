"""Factory functions: tensor, zeros, ones, full, arange, randn, ... (``torch``'s signatures)."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from lucid import _memory_format, dtypes
from lucid._replay import replayable
from lucid._tensor import Tensor, to_array
from lucid.backends import get_backend

# torch's words (for `torch.tensor(t)`), naming lucid's function
_COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than lucid.tensor(sourceTensor)."
)


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Make a new tensor holding a copy of ``data``."""
    if isinstance(data, Tensor):
        warnings.warn(_COPY_CONSTRUCT, UserWarning, stacklevel=2)
        data = data.detach()
    elif isinstance(data, np.ndarray):
        data = data.copy()
    elif isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    return from_data(data, dtype, device, requires_grad)


def from_data(
    data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A Tensor of ``data`` with its dtype inferred (``lucid.tensor``'s rule, without its
    copy of arrays): what lucid's own code calls, where ``Tensor(n)`` would mean a size."""
    arr, backend = to_array(data, dtype, device)
    t = Tensor.from_backend_array(arr, backend)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Convert ``data`` to a tensor, sharing memory where it can (no copy of a tensor or array of
    the same dtype and device)."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return from_data(data, dtype, device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU tensor sharing memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return Tensor.from_backend_array(ndarray, get_backend("cpu"))


def _shape(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    if len(size) == 1 and not isinstance(size[0], int) and len(getattr(size[0], "shape", ())):
        # a sequence-like of sizes (a Size, an array); a 0-d one (a NumPy integer such as
        # ``np.prod(shape)``'s, a 0-d tensor) is one size, as in torch
        size = tuple(size[0])
    shape = tuple(_dim_size(s, i) for i, s in enumerate(size))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    return shape


def _size_keyword(
    name: str, positional: tuple[Any, ...], size: Any, layout: Any = None
) -> tuple[Any, ...]:
    """torch's factories take the size positionally or as ``size=`` (a sequence), not both;
    ``layout`` must be strided (the only layout lucid has)."""
    if layout is not None:
        _memory_format.check_layout(layout, name)
    if size is None:
        return positional
    if positional:
        raise TypeError(f"{name}() received an invalid combination of arguments - got the size "
                        "both positionally and as size=")  # fmt: skip
    return (size,)


def _dim_size(s: Any, pos: int) -> int:
    """An int size (ints, numpy ints, 0-d int tensors); floats, bools and strings are refused
    as torch refuses them."""
    try:
        if isinstance(s, (bool, np.bool_)):
            raise TypeError
        return operator.index(s)
    except TypeError:
        raise TypeError(
            f"argument 'size' must be tuple of ints, but found element of type "
            f"{type(s).__name__} at pos {pos}"
        ) from None


def _filled(shape: tuple[int, ...], value: Any, dtype: Any, device: Any, rg: bool) -> Tensor:
    backend = get_backend(device)
    if dtype is None:
        dt = dtypes.scalar_dtype(value) if not isinstance(value, float) else None
        dt = dt or dtypes.get_default_dtype()
    else:
        dt = dtypes.to_dtype(dtype)
    native = backend.native_dtype(dt)
    if dt._rank < 0:  # float8: the value rounded as torch rounds it (ml_dtypes differs)
        value = backend.asarray(value, dt)
    arr = backend.xp.full(shape, value, dtype=native)
    t = Tensor.from_backend_array(arr, backend)
    return t.requires_grad_(True) if rg else t


def _with_out(fn: str, out: Any, dtype: Any) -> Any:
    """The dtype a factory called with ``out=`` makes: ``out``'s, which ``dtype`` must equal."""
    if out is None:
        return dtype
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is not None and dtypes.to_dtype(dtype) is not out.dtype:
        raise RuntimeError(
            f"dtype {_torch_name(dtypes.to_dtype(dtype))} does not match dtype of out parameter "
            f"({_torch_name(out.dtype)})"
        )
    return out.dtype


def _torch_name(dt: dtypes.dtype) -> str:
    """torch's C++ name of a dtype, as its error messages print it (float64 -> Double)."""
    return {"float64": "Double", "float32": "Float", "float16": "Half",
            "bfloat16": "BFloat16"}.get(dt.name, dt.name)  # fmt: skip


def _into(result: Tensor, out: Tensor | None) -> Tensor:
    """``result``, or ``out`` resized to its shape and holding its values (``out=``)."""
    if out is None:
        return result
    if out.shape != result.shape:
        out.resize_(result.shape)
    out.copy_(result.detach())  # the values only: a factory's result has no history
    return out.requires_grad_(True) if result.requires_grad else out


def _plain_zeros(sizes: tuple[Any, ...]) -> Tensor | None:
    """``zeros(*sizes)`` of Python ints (or one tuple of them) in the default dtype on the
    default NumPy device: ``_filled``'s array as ``np.full`` makes it (``empty``, then the
    fill), without its checks and Python wrapper (a char-RNN's hidden state per step,
    per-call cost, docs/performance.md); None where the full path must run."""
    if len(sizes) == 1 and type(sizes[0]) is tuple:
        sizes = sizes[0]
    for s in sizes:
        if type(s) is not int or s < 0:
            return None
    backend = get_backend(None)
    dt = dtypes.get_default_dtype()
    if backend.xp.full is not np.full or dt._rank < 0:
        return None
    arr = np.empty(sizes, dtype=backend.native_dtype(dt))
    arr.fill(0.0)
    return Tensor.from_backend_array(arr, backend)


def zeros(
    *sizes: Any, size: Any = None, out: Any = None, dtype: Any = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """A tensor of the given size filled with zeros, as ``torch.zeros`` (also ``size=``)."""
    if (
        size is None and out is None and dtype is None and layout is None and device is None
        and not requires_grad and sizes
    ):  # fmt: skip
        plain = _plain_zeros(sizes)
        if plain is not None:
            return plain
    shape = _size_keyword("zeros", sizes, size, layout)
    dtype = _with_out("zeros", out, dtype)
    return _into(_filled(_shape(shape), 0.0, dtype, device, requires_grad), out)


def ones(
    *sizes: Any, size: Any = None, out: Any = None, dtype: Any = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """A tensor of the given size filled with ones, as ``torch.ones`` (also ``size=``)."""
    shape = _size_keyword("ones", sizes, size, layout)
    dtype = _with_out("ones", out, dtype)
    return _into(_filled(_shape(shape), 1.0, dtype, device, requires_grad), out)


def empty(
    *sizes: Any, size: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False, memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor of the given size with uninitialized values, as ``torch.empty``
    (``memory_format`` defaults to ``lucid.contiguous_format``; the size may be ``size=``)."""
    shape = _size_keyword("empty", sizes, size, layout)
    out = _filled(_shape(shape), 0.0, dtype, device, requires_grad)
    if memory_format is None:
        return out
    if memory_format is _memory_format.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    return _in_format(out, out, memory_format, "empty")


def empty_strided(
    size: Any, stride: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False, pin_memory: bool = False,
) -> Tensor:  # fmt: skip
    """A tensor of ``size`` with uninitialized values, as ``torch.empty_strided``. Lucid lays
    every tensor out contiguously: ``stride`` (one entry per dim) is checked, not kept."""
    shape = _shape((size,))
    if len(tuple(stride)) != len(shape):
        raise RuntimeError(
            f"mismatch in length of strides and shape: got stride {list(stride)} for size "
            f"{list(shape)}"
        )
    return _filled(shape, 0.0, dtype, device, requires_grad)


def empty_permuted(
    size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
) -> Tensor:  # fmt: skip
    """A tensor of ``size`` with uninitialized values, as ``torch.empty_permuted``. Lucid lays
    every tensor out contiguously: ``physical_layout`` (a permutation of the dims) is checked,
    not kept."""
    shape = _shape((size,))
    order = [int(d) for d in physical_layout]
    if len(order) != len(shape):
        raise RuntimeError(
            f"Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(shape)} is not equal to len(physical_layout) = {len(order)}"
        )
    for i, d in enumerate(order):
        if not 0 <= d < len(shape):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(shape) - 1}, but got "
                f"{d} at index {i}).  NB: negative dims not currently supported; file an issue "
                f"if you want it."
            )
        if d in order[:i]:
            raise RuntimeError("Duplicate dim not allowed")
    return _filled(shape, 0.0, dtype, device, requires_grad)


def full(
    size: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of the given size filled with ``fill_value``, as ``torch.full``."""
    return _filled(_shape((size,)), fill_value, dtype, device, requires_grad)


def _like(t: Any, dtype: Any, device: Any) -> tuple[Any, Any]:
    return (t.dtype if dtype is None else dtype), (t.device if device is None else device)


def zeros_like(
    input: Any,  # noqa: A002
    dtype: Any = None, device: Any = None, requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor of zeros with the size of ``input``, as ``torch.zeros_like``."""
    out = _filled(input.shape, 0.0, *_like(input, dtype, device), requires_grad)
    return _in_format(out, input, memory_format, "zeros_like")


def ones_like(
    input: Any,  # noqa: A002
    dtype: Any = None, device: Any = None, requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor of ones with the size of ``input``, as ``torch.ones_like``."""
    out = _filled(input.shape, 1.0, *_like(input, dtype, device), requires_grad)
    return _in_format(out, input, memory_format, "ones_like")


def empty_like(
    input: Any,  # noqa: A002
    dtype: Any = None, device: Any = None, requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """An uninitialized tensor with the size of ``input``, as ``torch.empty_like``."""
    out = _filled(input.shape, 0.0, *_like(input, dtype, device), requires_grad)
    return _in_format(out, input, memory_format, "empty_like")


def full_like(
    input: Any,  # noqa: A002
    fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor with the size of ``input`` filled with ``fill_value``, as ``torch.full_like``."""
    out = _filled(input.shape, fill_value, *_like(input, dtype, device), requires_grad)
    return _in_format(out, input, memory_format, "full_like")


def _in_format(out: Tensor, t: Any, memory_format: Any, fn: str) -> Tensor:
    """``out`` (a new contiguous tensor like ``t``) laid out in ``memory_format``; the default
    ``preserve_format`` keeps ``t``'s channels-last layout, as torch (other layouts of ``t``
    read as contiguous)."""
    fmt = _memory_format.check(memory_format, fn)
    if fmt is _memory_format.preserve_format:
        data = getattr(t, "_data", None)
        if data is None or _memory_format.marked_strides(data, tuple(t.shape)) is None:
            return out
        fmt = _memory_format.channels_last_format_of(t.ndim) or fmt
    _memory_format.check_rank(fmt, out.ndim)
    if out.backend.strides(out._data) is None or fmt is _memory_format.contiguous_format:
        return out
    arr = _memory_format.to_layout(out.backend.xp, out._data, fmt)
    return Tensor.from_backend_array(arr, out.backend, out.requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    *,
    out: Any = None,
    layout: Any = None,
) -> Tensor:
    """A 1-D tensor of values from ``start`` to ``end`` (exclusive) in steps of ``step``, as
    ``torch.arange``; ``out=`` writes them into that tensor (resized; its dtype is the
    result's)."""
    if layout is not None:
        _memory_format.check_layout(layout, "arange")
    dtype = _with_out("arange", out, dtype)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    lo, hi, st = vals
    if not (st > 0 or st < 0):  # nan too
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (lo, hi)):
        raise RuntimeError(f"unsupported range: {lo} -> {hi}")
    if (st > 0 and lo > hi) or (st < 0 and lo < hi):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in vals)
        dtype = dtypes.get_default_dtype() if is_float else dtypes.int64
    dt = dtypes.to_dtype(dtype)
    if dt is dtypes.bool_ or dt._rank < 0:  # (torch's CPU has no arange of float8 either)
        name = dtypes.SCALAR_TYPE_NAMES[dt.name]
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{name}'")
    if dt.is_floating_point or dt.is_complex:
        arr = np.arange(*vals, dtype=np.float64)
    else:
        # torch casts the bounds and step to int64 first (arange(0.1, -7.9, -4.0) counts as
        # arange(0, -7, -4)); int64 counts the truncated range, where a step that truncates to
        # 0 is a ValueError; other integer dtypes count the range unrounded (so a fractional
        # step below 1 repeats the start)
        ilo, ihi, ist = (int(v) for v in vals)
        if dt is dtypes.int64:
            if ist == 0:
                raise ValueError("step must be nonzero")
            sign = 1 if ist > 0 else -1
            n = (ihi - ilo + ist - sign) // ist
        else:
            n = math.ceil((hi - lo) / st)
        arr = ilo + ist * np.arange(max(n, 0), dtype=np.int64)
    result = tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)
    if out is not None and out.numel() == result.numel():
        result = result.reshape(out.shape)  # torch keeps out's shape where the count fits
    elif out is not None and out.numel():
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is "
            f"{out.numel()} which does not match the computed number of elements "
            f"{result.numel()}. Note that this may occur as a result of rounding error. The out "
            f"tensor will be resized to a tensor of shape ({result.numel()},).",
            UserWarning,
            stacklevel=2,
        )
    return _into(result, out)


def _check_space_args(name: str, start: Any, end: Any, steps: Any) -> None:
    """torch's errors for linspace/logspace: an int ``steps`` >= 0, 0-d tensor bounds."""
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer, Tensor)):
        kinds = ", ".join(type(v).__name__ for v in (start, end, steps))
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({kinds}), but "
            f"expected (Number start, Number end, int steps, ...)"
        )
    for v in (start, end):
        if isinstance(v, Tensor) and v.ndim != 0:
            raise RuntimeError(
                f"{name} only supports 0-dimensional start and end tensors, but got start "
                f"with {getattr(start, 'ndim', 0)} dimension(s) and end with "
                f"{getattr(end, 'ndim', 0)} dimension(s)."
            )
    if int(steps) < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")


def linspace(
    start: float,
    end: float,
    steps: int,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A 1-D tensor of ``steps`` values evenly spaced from ``start`` to ``end`` inclusive, as
    ``torch.linspace``."""
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    _check_space_args("linspace", start, end, steps)
    arr = np.linspace(float(start), float(end), int(steps))
    return tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)


def logspace(
    start: float, end: float, steps: int, base: float = 10.0, dtype: Any = None, device: Any = None
) -> Tensor:
    """A 1-D tensor of ``steps`` values evenly spaced on a log scale from ``base**start`` to
    ``base**end``."""
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    _check_space_args("logspace", start, end, steps)
    start, end = (float(v) for v in (start, end))
    return tensor(np.logspace(start, end, int(steps), base=base), dtype=dt, device=device)


def eye(
    n: int, m: int | None = None, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A 2-D tensor with ones on the diagonal and zeros elsewhere, as ``torch.eye``."""
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    return tensor(np.eye(n, m), dtype=dt, device=device, requires_grad=requires_grad)


@replayable
def _random(
    kind: str, size: Sequence[Any], dtype: Any, device: Any, generator: Any, rg: bool
) -> Tensor:
    backend = get_backend(device)
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if dt.is_complex:  # torch's: each part drawn alone, normal parts of variance 1/2
        part = dtypes.float64 if dt is dtypes.complex128 else dtypes.float32
        pair = _random(kind, (*_shape(size), 2), part, device, generator, False)._data
        scale = 0.5**0.5 if kind == "normal" else 1.0
        arr = backend.astype(pair[..., 0] * scale + pair[..., 1] * (scale * 1j), dt)
        t = Tensor.from_backend_array(arr, backend)
        return t.requires_grad_(True) if rg else t
    if not dt.is_floating_point:
        raise RuntimeError(f"\"{kind}\" not implemented for '{dt.name}'")
    if dt._rank < 0:  # float8: torch's CPU has no random kernels for them
        kernel = "normal_kernel_cpu" if kind == "normal" else "check_uniform_bounds"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.SCALAR_TYPE_NAMES[dt.name]}'"
        )
    shape = _shape(size)
    if kind == "normal":
        arr = backend.random_normal(shape, dt, generator)
    else:
        arr = backend.random_uniform(shape, dt, generator)
    t = Tensor.from_backend_array(arr, backend)
    return t.requires_grad_(True) if rg else t


def randn(
    *sizes: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Samples from N(0, 1) (the size positionally or as ``size=``)."""
    shape = _size_keyword("randn", sizes, size, layout)
    dtype = _with_out("randn", out, dtype)
    return _into(_random("normal", shape, dtype, device, generator, requires_grad), out)


def rand(
    *sizes: Any,
    size: Any = None,
    generator: Any = None,
    out: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Samples from U[0, 1) (the size positionally or as ``size=``)."""
    shape = _size_keyword("rand", sizes, size, layout)
    dtype = _with_out("rand", out, dtype)
    return _into(_random("uniform", shape, dtype, device, generator, requires_grad), out)


def randn_like(
    input: Any,  # noqa: A002
    dtype: Any = None, device: Any = None, generator: Any = None,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor with the size of ``input`` of samples from the standard normal, as
    ``torch.randn_like``."""
    out = randn(*input.shape, generator=generator, **_like_kw(input, dtype, device))
    return _in_format(out, input, memory_format, "randn_like")


def rand_like(
    input: Any,  # noqa: A002
    dtype: Any = None, device: Any = None, generator: Any = None,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor with the size of ``input`` of samples uniform on ``[0, 1)``, as
    ``torch.rand_like``."""
    out = rand(*input.shape, generator=generator, **_like_kw(input, dtype, device))
    return _in_format(out, input, memory_format, "rand_like")


def _like_kw(t: Any, dtype: Any, device: Any) -> dict[str, Any]:
    dt, dev = _like(t, dtype, device)
    return {"dtype": dt, "device": dev}


@replayable
def randint(
    low: int,
    high: Any = None,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniformly from [low, high) (``randint(high, size)`` also works), in ``dtype``
    (int64 by default). ``requires_grad=True`` is refused for an integer dtype as torch refuses
    it, and kept for a floating one (``randint(..., dtype=float32, requires_grad=True)``)."""
    if layout is not None:
        _memory_format.check_layout(layout, "randint")
    if requires_grad and (dtype is None or not dtypes.to_dtype(dtype).is_floating_point):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if int(low) >= int(high):
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    backend = get_backend(device)
    dt = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    arr = backend.random_integers(int(low), int(high), _shape((size,)), dt, generator)
    out = Tensor.from_backend_array(arr, backend)
    return out.requires_grad_() if requires_grad else out


def randint_like(
    input: Any,  # noqa: A002
    low: int, high: int | None = None, *, generator: Any = None, dtype: Any = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
    memory_format: Any = None,
) -> Tensor:  # fmt: skip
    """A tensor with the size of ``input`` of random integers in ``[low, high)`` (``[0, low)`` with
    one bound), as ``torch.randint_like``; ``layout`` is accepted for torch's signature (lucid's
    tensors are strided)."""
    dt, dev = _like(input, dtype, device)
    out = randint(low, high, input.shape, generator=generator, dtype=dt, device=dev)
    out = _in_format(out, input, memory_format, "randint_like")
    return out.requires_grad_() if requires_grad else out
