"""torch's top-level names of things lucid keeps elsewhere: the in-place functions
(``torch.abs_(t)`` is ``t.abs_()``), the ``igamma``/``igammac`` names of
``lucid.special.gammainc``/``gammaincc``, and torch's helpers and legacy names (``range``,
``frobenius_norm``, the ``*_autocast_cpu_*`` setters, thread and debug settings, ...).
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np  # frombuffer / from_file read raw bytes: no computation

from lucid import dtypes, linalg, special
from lucid._compat import (
    _numpy_type,
    are_deterministic_algorithms_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    use_deterministic_algorithms,
)
from lucid._creation import arange, from_numpy, tensor
from lucid._tensor import Tensor
from lucid.amp.autocast_mode import (
    get_autocast_dtype,
    is_autocast_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

# torch's top-level in-place functions, each a Tensor method of the same name.
INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "as_strided_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_",
    "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_",
)  # fmt: skip


def _method_function(name: str) -> Callable[..., Tensor]:
    def function(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        result: Tensor = getattr(input, name)(*args, **kwargs)
        return result

    function.__name__ = function.__qualname__ = name
    function.__module__ = "lucid"  # made here, published (and documented) as lucid's own
    function.__doc__ = f"``input.{name}(...)``: ``input`` changed in place and returned."
    return function


FUNCTIONS: dict[str, Callable[..., Tensor]] = {n: _method_function(n) for n in INPLACE_FUNCTIONS}


def _tensor_pair(name: str, input: Any, other: Any) -> None:  # noqa: A002
    for position, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )


def igamma(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(input, other)`` of two tensors
    (``torch.igamma``; :func:`lucid.special.gammainc`)."""
    _tensor_pair("igamma", input, other)
    return special.gammainc(input, other)


def igammac(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(input, other)`` of two tensors
    (``torch.igammac``; :func:`lucid.special.gammaincc`)."""
    _tensor_pair("igammac", input, other)
    return special.gammaincc(input, other)


# --- torch's top-level helpers and legacy names --------------------------------------------

newaxis = None  # torch.newaxis, as numpy's
has_lapack = True  # NumPy's linalg is LAPACK
has_spectral = True  # lucid.fft
has_mkl = False
has_openmp = False


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """``input.detach()`` (``torch.detach``)."""
    return input.detach()


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    """The conjugate transpose of the last two dims (``torch.adjoint``, ``input.mH``)."""
    result: Tensor = input.adjoint()
    return result


def is_signed(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s dtype is signed (``torch.is_signed``)."""
    result: bool = input.is_signed()
    return result


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """False: lucid has no inference tensors (``inference_mode`` is ``no_grad``)."""
    return False


def is_storage(obj: Any) -> bool:
    """False: lucid tensors have no separate storage objects (``torch.is_storage``)."""
    return False


def is_distributed(input: Tensor) -> bool:  # noqa: A002
    """False: no lucid tensor is a distributed tensor (``torch.is_distributed``)."""
    return False


def get_device(input: Tensor) -> int:  # noqa: A002
    """``input.get_device()``: -1 for the CPU (``torch.get_device``)."""
    result: int = input.get_device()
    return result


def range(  # noqa: A001
    start: float, end: float, step: float = 1, *, dtype: Any = None, device: Any = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """``start, start + step, ...`` up to and including ``end`` (torch's deprecated
    ``torch.range``; the default dtype is the default float dtype)."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if step == 0:
        raise RuntimeError("step must be nonzero")
    count = int(math.floor((end - start) / step)) + 1
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    out = arange(count, dtype=dtypes.float64, device=device) * step + start
    return out.to(dt).requires_grad_(requires_grad)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:  # noqa: A002
    """The 2-norm over ``dim`` (torch's deprecated ``torch.frobenius_norm``)."""
    return linalg.vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """The sum of the singular values over the matrix dims (torch's deprecated
    ``torch.nuclear_norm``; ``dim`` is two dims, the last two by default)."""
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) positionally
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm over every dim but ``dim``, kept as size-1 dims (all dims for -1)."""
    if dim == -1:
        return linalg.vector_norm(v, pow)
    others = tuple(d for d in builtins.range(v.ndim) if d != dim % max(v.ndim, 1))
    return linalg.vector_norm(v, pow, others, keepdim=True)


_THREADS = {"interop": 1, "warn_always": False}


def get_num_interop_threads() -> int:
    """Lucid runs ops one after another: one inter-op thread."""
    return int(_THREADS["interop"])


def set_num_interop_threads(num: int) -> None:
    """Recorded for :func:`get_num_interop_threads`; lucid has no inter-op pool to size."""
    if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
        raise RuntimeError(f"Expected positive number of threads, got {num!r}")
    _THREADS["interop"] = num


def init_num_threads() -> None:
    """Nothing to do: lucid's thread pools start on first use."""


def set_warn_always(b: bool) -> None:
    """Recorded for :func:`is_warn_always_enabled` (lucid's warnings follow Python's filters)."""
    _THREADS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    """What :func:`set_warn_always` set."""
    return bool(_THREADS["warn_always"])


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy gives no control of denormal flushing (torch's answer where unsupported)."""
    return False


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """0/"default", 1/"warn", 2/"error": :func:`lucid.use_deterministic_algorithms` off, on
    with ``warn_only``, or on."""
    mode = _DEBUG_MODES.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(
            "invalid value of debug_mode, expected one of `default`, `warn`, `error`, 0, 1, 2, "
            f"but got {debug_mode!r}"
        )
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    """The mode :func:`set_deterministic_debug_mode` sets (read from the deterministic flags)."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


def get_autocast_cpu_dtype() -> dtypes.dtype:
    """``get_autocast_dtype("cpu")`` (torch's deprecated name)."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: dtypes.dtype) -> None:
    """``set_autocast_dtype("cpu", dtype)`` (torch's deprecated name)."""
    set_autocast_dtype("cpu", dtype)


def is_autocast_cpu_enabled() -> bool:
    """``is_autocast_enabled("cpu")`` (torch's deprecated name)."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """``set_autocast_enabled("cpu", enabled)`` (torch's deprecated name)."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_gpu_dtype() -> dtypes.dtype:
    """``get_autocast_dtype("cuda")`` (torch's deprecated name)."""
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: dtypes.dtype) -> None:
    """``set_autocast_dtype("cuda", dtype)`` (torch's deprecated name)."""
    set_autocast_dtype("cuda", dtype)


_NESTING = [0]


def autocast_increment_nesting() -> int:
    """One more level of autocast nesting (the count torch's autocast keeps); the new level."""
    _NESTING[0] += 1
    return _NESTING[0]


def autocast_decrement_nesting() -> int:
    """One level less of autocast nesting; the new level."""
    _NESTING[0] -= 1
    return _NESTING[0]


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Any = ()) -> Any:  # fmt: skip
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)`` (``torch.cond``).

    Eagerly, only the branch ``pred`` picks runs. While :func:`lucid.compile` captures a
    function (``lucid.compiler.is_compiling()``) and ``pred`` is a tensor, both branches run
    and each output leaf is ``lucid.where(pred, true_out, false_out)``: the capture is one
    graph (no graph break on ``pred``'s value), and its replays pick the right branch for any
    ``pred``. The branches must then return the same pytree structure and tensors of the same
    shape and dtype (torch's errors otherwise).

    Caveat (compiled only): the branch not taken still runs, so its cost is paid and a NaN or
    inf it produces can reach the gradients (``where``'s backward sends zeros to it, and
    ``0 * inf`` is NaN), as with ``where`` itself.

    >>> import lucid
    >>> lucid.cond(lucid.tensor(True), lambda x: x + 1, lambda x: x - 1, (lucid.ones(2),))
    tensor([2., 2.])
    """
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, got {pred}")
        from lucid.compiler._api import is_compiling

        if is_compiling():
            return _cond_select(pred, true_fn, false_fn, operands)
        pred = bool(pred.item())
    return true_fn(*operands) if pred else false_fn(*operands)


def _cond_select(pred: Tensor, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                 operands: Any) -> Any:  # fmt: skip
    """Both branches run, their outputs merged leaf by leaf with ``where`` (cond captured)."""
    from lucid.ops import where
    from lucid.utils._pytree import tree_flatten, tree_unflatten

    true_leaves, true_spec = tree_flatten(true_fn(*operands))
    false_leaves, false_spec = tree_flatten(false_fn(*operands))
    if true_spec != false_spec:
        raise RuntimeError(
            "Unmatched output spec from torch.cond branches: "
            f"true branch tree_spec {true_spec} vs false branch tree_spec {false_spec}."
        )
    prefix = "When merging two branches' output in torch.cond, "
    p = pred.reshape(())
    if p.dtype is not dtypes.bool_:
        p = p != 0
    merged = []
    for a, b in zip(true_leaves, false_leaves, strict=True):
        if not isinstance(a, Tensor) or not isinstance(b, Tensor):
            if isinstance(a, Tensor) or isinstance(b, Tensor) or a != b:
                raise RuntimeError(
                    f"{prefix}expected both outputs to be tensors or equal values but got "
                    f"{a} and {b}."
                )
            merged.append(a)
            continue
        for attr, av, bv in (
            ("dim", a.ndim, b.ndim),
            ("shape", tuple(a.shape), tuple(b.shape)),
            ("dtype", a.dtype, b.dtype),
            ("device", a.device, b.device),
        ):
            if av != bv:
                raise RuntimeError(f"{prefix}expected same {attr} but got {av} and {bv}.")
        merged.append(where(p, a, b))
    return tree_unflatten(merged, true_spec)


_PENDING = object()


class Future:
    """A call's result (``torch.Future``): what :func:`fork` returns, done at once (lucid runs
    the function then), or one made empty (``Future()``) and completed by ``set_result``."""

    def __init__(self, value: Any = _PENDING, *, devices: Any = None) -> None:
        self._value = value
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Future], Any]] = []

    def done(self) -> bool:
        """Whether the result (or an error) is set."""
        return self._value is not _PENDING or self._error is not None

    def wait(self) -> Any:
        """The result; the error ``set_exception`` set is raised."""
        if self._error is not None:
            raise self._error
        if self._value is _PENDING:
            raise RuntimeError(
                "Future.wait(): no result is set, and nothing runs in the background in lucid "
                "to set it (fork runs its call at once); call set_result first"
            )
        return self._value

    def value(self) -> Any:
        """The result (as ``wait``)."""
        return self.wait()

    def set_result(self, result: Any) -> None:
        """Complete the future with ``result`` and run the callbacks added so far."""
        if self.done():
            raise RuntimeError("Future can only be marked completed once.")
        self._value = result
        self._run_callbacks()

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error that ``wait`` raises."""
        if self.done():
            raise RuntimeError("Future can only be marked completed once.")
        self._error = result
        self._run_callbacks()

    def then(self, callback: Callable[[Future], Any]) -> Future:
        """A new future holding ``callback(self)`` once this one is done."""
        out = Future()

        def chain(fut: Future) -> None:
            try:
                out.set_result(callback(fut))
            except Exception as exc:  # noqa: BLE001 - handed on, as torch's futures do
                out.set_exception(exc)

        self.add_done_callback(chain)
        return out

    def add_done_callback(self, callback: Callable[[Future], Any]) -> None:
        """Run ``callback(self)`` when the future is done (now, if it is)."""
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _run_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """``func(*args, **kwargs)`` as a :class:`Future` (``torch.jit.fork``'s eager behaviour:
    the call runs now)."""
    return Future(func(*args, **kwargs))


def wait(arg0: Future) -> Any:
    """``arg0.wait()``: the result of a future (``torch.jit.wait``; torch's binding names the
    future ``arg0``)."""
    return arg0.wait()


def frombuffer(
    buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False
) -> Tensor:
    """A 1-D tensor on ``buffer``'s memory (``torch.frombuffer``: no copy, so writes through
    either show in both)."""
    native = _numpy_type(dtypes.to_dtype(dtype))
    arr = np.frombuffer(buffer, dtype=native, count=count, offset=offset)
    return from_numpy(arr).requires_grad_(requires_grad)


def from_file(
    filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None,
    device: Any = None, requires_grad: bool = False, pin_memory: bool = False,
) -> Tensor:  # fmt: skip
    """The first ``size`` elements of a binary file as a 1-D tensor (``torch.from_file``; a
    copy: ``shared=True`` memory maps are not written back)."""
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    arr = np.fromfile(filename, dtype=_numpy_type(dt), count=size)
    if arr.size < size:
        raise RuntimeError(
            f"unexpected EOF, expected {size} elements in {filename!r}, got {arr.size}"
        )
    return tensor(arr, dtype=dt, device=device, requires_grad=requires_grad)


def get_default_device() -> Any:
    """The device factories use when no ``device=`` is given (``torch.get_default_device``):
    the innermost ``with lucid.device(...)`` block's, else :func:`set_default_device`'s, else
    ``device(type='cpu')``."""
    from lucid._device import default_device, device

    return device(default_device() or "cpu")


def get_device_module(device: Any = None) -> Any:
    """The module of a device type (``torch.get_device_module``): ``lucid.cpu`` for ``"cpu"``,
    ``lucid.cuda`` for ``"cuda"``; with no device, ``lucid.accelerator`` where the MLX GPU is
    present (lucid has no ``lucid.mlx`` module; the accelerator API is the device-agnostic
    one), else ``lucid.cpu``."""
    import importlib

    from lucid._device import device as _device

    if isinstance(device, (str, _device)):
        name = _device(device).type
    elif device is None:
        accel = importlib.import_module("lucid.accelerator")
        if accel.is_available():
            return accel
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    if name in ("cpu", "cuda"):
        return importlib.import_module(f"lucid.{name}")
    raise RuntimeError(
        f"Device '{name}' does not have a corresponding module registered as 'lucid.{name}'."
    )


def set_default_device(device: Any) -> None:  # noqa: A002
    """Make ``device`` the factories' default (``torch.set_default_device``; None: ``"cpu"``).

    Factories (``zeros``, ``tensor``, ``randn``, ...) and module constructors then create
    their tensors there when given no ``device=``; ``from_numpy`` and tensors made from other
    tensors keep their own device. An unknown device raises here, not at the first factory.
    """
    from lucid._device import device as _device
    from lucid._device import set_global_default
    from lucid.backends import get_backend

    if device is None:
        set_global_default(None)
        return
    name = str(_device(device))
    get_backend(name)  # raises DeviceError for a device without a backend
    set_global_default(name)


def set_default_tensor_type(t: Any) -> None:
    """torch's deprecated ``set_default_tensor_type``: a CPU floating legacy type (as a type
    or its name, ``lucid.DoubleTensor`` / ``"torch.DoubleTensor"``) sets the default dtype;
    other types are refused as torch refuses them."""
    from lucid import _legacy

    name = t if isinstance(t, str) else getattr(t, "__name__", type(t).__name__)
    short = name.rsplit(".", 1)[-1]
    dt = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
          "HalfTensor": dtypes.float16, "BFloat16Tensor": dtypes.bfloat16}.get(short)  # fmt: skip
    if dt is None or (not isinstance(t, str) and getattr(_legacy, short, None) is not t):
        raise TypeError(f"only floating-point types are supported as the default type, got {name}")
    warnings.warn(
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
        UserWarning,
        stacklevel=2,
    )
    dtypes.set_default_dtype(dt)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn autograd's anomaly detection on or off (``torch.set_anomaly_enabled``, what
    ``autograd.set_detect_anomaly`` calls)."""
    from lucid.autograd import anomaly_mode

    anomaly_mode._state.enabled, anomaly_mode._state.check_nan = bool(enabled), bool(check_nan)


def _rng(generator: Any) -> Any:
    from lucid.random import default_generator

    return (default_generator if generator is None else generator).numpy_rng


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson counts with the rates in ``input`` (``torch.poisson``), in ``input``'s
    floating dtype, without gradient."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"poisson(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"poisson_cpu\" not implemented for '{_torch_name(input.dtype)}'"
        )
    rates = input.detach().cpu().numpy().astype(np.float64)
    if (rates < 0).any() or np.isnan(rates).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    values = _rng(generator).poisson(rates).astype(np.dtype(input.dtype.name))
    return tensor(values, dtype=input.dtype, device=input.device)


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Binomial draws: successes in ``count`` trials of probability ``prob``
    (``torch.binomial``; the two broadcast, the result has their floating dtype)."""
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if count.dtype != prob.dtype:
        raise RuntimeError(
            f"Found dtype {_torch_name(prob.dtype)} but expected {_torch_name(count.dtype)}"
        )
    if not count.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"binomial_cpu\" not implemented for '{_torch_name(count.dtype)}'"
        )
    n = count.detach().cpu().numpy().astype(np.float64)
    p = prob.detach().cpu().numpy().astype(np.float64)
    n, p = np.broadcast_arrays(n, p)
    if (n < 0).any() or ((p < 0) | (p > 1) | np.isnan(p)).any():
        raise RuntimeError("binomial(): count must be >= 0 and prob in [0, 1]")
    draws = _rng(generator).binomial(n.astype(np.int64), p)
    return tensor(draws.astype(np.dtype(count.dtype.name)), dtype=count.dtype, device=count.device)


def _torch_name(dt: Any) -> str:
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
             "bool": "Bool"}  # fmt: skip
    name: str = dt.name
    return names.get(name, name)


def thread_safe_generator() -> Any:
    """``torch.thread_safe_generator``: a DataLoader thread worker's own generator, ``None``
    elsewhere (the default generator is then used). lucid's DataLoader runs its workers in
    processes (or in the main process), never in threads, so this is always ``None``."""
    return None
