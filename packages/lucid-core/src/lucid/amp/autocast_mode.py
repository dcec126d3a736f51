"""``lucid.autocast``: run the ops PyTorch autocasts in lower precision, the rest as they are.

Inside ``with lucid.autocast("cpu"):`` the ops of :data:`LOWER_PRECISION_OPS` cast their
floating inputs to the autocast dtype (bfloat16 by default on "cpu") and compute in it; the ops
of :data:`FLOAT32_OPS` cast half-precision inputs up to float32; every other op (``mv``,
``dot``, ``addmv``, elementwise ops, softmax, normalisation ...) runs in its inputs' dtype.
float64 tensors are never cast. The casts are ordinary differentiable ops, so a float32
parameter gets a float32 gradient. Each op calls :func:`lower_precision_inputs` or
:func:`float32_inputs` on its tensors first; outside an enabled region those return their
arguments untouched, so ``enabled=False`` runs bit for bit as without autocast.

The state is per thread and per device type, as in PyTorch. Backward passes run without
autocast: gradients come out in the dtype their forward op computed in.

>>> with lucid.autocast("cpu"):
...     y = lucid.randn(4, 8) @ lucid.randn(8, 2)
>>> y.dtype
lucid.bfloat16
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.backends import available_backends, get_backend

P = ParamSpec("P")
R = TypeVar("R")

# What PyTorch's CPU autocast runs in lower precision and in float32 (the ops Lucid has).
LOWER_PRECISION_OPS = (
    "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "einsum", "tensordot", "inner",
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "prelu", "scaled_dot_product_attention",
)  # fmt: skip
FLOAT32_OPS = (
    "cdist", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss",
    "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
)  # fmt: skip

_DEFAULT_DTYPE = {"cpu": dtypes.bfloat16}  # every other device type: float16, as PyTorch
_LOW = (dtypes.float16, dtypes.bfloat16)
# Device types PyTorch knows; one without a Lucid backend here is disabled with a warning.
_TORCH_DEVICE_TYPES = ("cuda", "xpu", "mps", "hpu", "mtia", "maia", "xla", "ipu", "privateuseone")
_ALIASES = {"gpu": "mlx"}


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, dtypes.dtype] = {}
        self.cache_enabled = True
        self.active = False  # some device type is enabled: the ops' one check when it is not
        self.depth = 0
        self.cache: dict[tuple[int, dtypes.dtype], tuple[Tensor, Tensor]] = {}

    def refresh(self) -> None:
        self.active = any(self.enabled.values())


_state = _State()


def _device_key(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(
            f"Expected `device_type` of type `str`, got: `{type(device_type).__name__}`"
        )
    return _ALIASES.get(device_type, device_type)


def autocast_active() -> bool:
    """Whether autocast is enabled for some device type (the ops' one cheap check)."""
    return _state.active


def is_autocast_available(device_type: str) -> bool:
    """Whether a Lucid backend exists for ``device_type`` ("cpu", "mlx" when installed)."""
    return _device_key(device_type) in available_backends()


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (no argument: "cuda", as PyTorch)."""
    return _state.enabled.get(_device_key(device_type or "cuda"), False)


def get_autocast_dtype(device_type: str) -> dtypes.dtype:
    """The dtype autocast computes in on ``device_type`` (bfloat16 on "cpu", else float16)."""
    key = _device_key(device_type)
    return _state.dtype.get(key) or _DEFAULT_DTYPE.get(key, dtypes.float16)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type``, as ``torch.set_autocast_enabled``."""
    key = _device_key(device_type)
    _state.enabled[key] = bool(enabled)
    _state.refresh()


def set_autocast_dtype(device_type: str, dtype: dtypes.dtype) -> None:
    """Set the dtype that autocast casts to on ``device_type``, as ``torch.set_autocast_dtype``."""
    _state.dtype[_device_key(device_type)] = dtypes.to_dtype(dtype)


def is_autocast_cache_enabled() -> bool:
    """Whether autocast caches the casts of leaf tensors, as ``torch.is_autocast_cache_enabled``."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    """Turn autocast's cast cache on or off, as ``torch.set_autocast_cache_enabled``."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Free the cached casts that autocast keeps, as ``torch.clear_autocast_cache``."""
    _state.cache.clear()


class autocast:  # noqa: N801 - PyTorch's name
    """Context manager and decorator: ops in the region run in mixed precision (see module).

    ``device_type`` is "cpu" or "mlx" (or "gpu"); a PyTorch device type with no Lucid backend
    here ("cuda" on a machine without one) is disabled with a warning, as PyTorch does.
    ``enabled=False`` turns autocast off inside the region (also inside an enabled one).
    ``cache_enabled`` keeps one cast of each parameter per outermost region.
    """

    def __init__(
        self,
        device_type: str,
        dtype: dtypes.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device = _device_key(device_type)
        self.fast_dtype = (
            get_autocast_dtype(self.device) if dtype is None else dtypes.to_dtype(dtype)
        )
        self._cache_enabled = _state.cache_enabled if cache_enabled is None else bool(cache_enabled)
        self._enabled = bool(enabled) and _usable(self.device, self.fast_dtype)
        self._saved: list[tuple[bool, dtypes.dtype | None, bool]] = []

    def __enter__(self) -> autocast:
        s, key = _state, self.device
        self._saved.append((s.enabled.get(key, False), s.dtype.get(key), s.cache_enabled))
        s.enabled[key] = self._enabled
        s.dtype[key] = self.fast_dtype
        s.cache_enabled = self._cache_enabled
        s.depth += 1
        s.refresh()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        s, key = _state, self.device
        enabled, dtype, s.cache_enabled = self._saved.pop()
        s.enabled[key] = enabled
        if dtype is None:
            s.dtype.pop(key, None)
        else:
            s.dtype[key] = dtype
        s.depth -= 1
        if s.depth == 0:
            s.cache.clear()
        s.refresh()

    def __call__(self, func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def in_autocast(*args: P.args, **kwargs: P.kwargs) -> R:
            with self:
                return func(*args, **kwargs)

        return in_autocast


def _usable(key: str, dtype: dtypes.dtype) -> bool:
    """Whether autocast can run on ``key`` in ``dtype``: warn (as PyTorch) where the device or
    the dtype is not one autocast handles; raise where the backend lacks the dtype."""
    if key not in available_backends():
        if key in _TORCH_DEVICE_TYPES:
            warnings.warn(
                f"User provided device_type of {key!r}, but no Lucid backend for {key!r} is "
                f"available (available: {', '.join(available_backends())}). Disabling autocast.",
                stacklevel=3,
            )
            return False
        raise RuntimeError(
            f"autocast: unknown device_type {key!r}; expected one of "
            f"{', '.join(available_backends())} (or a PyTorch device type, which is disabled)"
        )
    if dtype not in _LOW:
        warnings.warn(
            f"In {key} autocast, but the target dtype {dtype} is not supported. Disabling "
            f"autocast. Autocast only supports dtypes of lucid.bfloat16, lucid.float16.",
            stacklevel=3,
        )
        return False
    try:
        get_backend(key).native_dtype(dtype)
    except TypeError as exc:
        raise RuntimeError(
            f"autocast(device_type={key!r}, dtype={dtype}) can't run: the {key!r} backend has "
            f"no {dtype} ({exc})"
        ) from None
    return True


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Autocast off for every device type inside (the autograd engine runs backward so)."""
    s = _state
    if not s.active:
        yield
        return
    saved = s.enabled
    s.enabled = {}
    s.refresh()
    try:
        yield
    finally:
        s.enabled = saved
        s.refresh()


# -- what the ops call -----------------------------------------------------------------------


def lower_precision_inputs(*args: Any) -> tuple[Any, ...]:
    """``args`` with each floating tensor (not float64) on an autocast-enabled device cast to
    that device's autocast dtype; everything else unchanged."""
    if not _state.active:
        return args
    return tuple(_to_lower(a) if isinstance(a, Tensor) else a for a in args)


def float32_inputs(*args: Any) -> tuple[Any, ...]:
    """``args`` with each float16/bfloat16 tensor on an autocast-enabled device cast to
    float32; everything else unchanged."""
    if not _state.active:
        return args
    return tuple(_to_float32(a) if isinstance(a, Tensor) else a for a in args)


def float32_op(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator: ``func``'s tensor arguments go through :func:`float32_inputs` first."""

    @functools.wraps(func)
    def in_float32(*args: P.args, **kwargs: P.kwargs) -> R:
        if not _state.active:
            return func(*args, **kwargs)
        wide = {k: _to_float32(v) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
        return func(*float32_inputs(*args), **wide)  # type: ignore[arg-type]

    return in_float32


def _enabled_dtype(t: Tensor) -> dtypes.dtype | None:
    key = t.device.type
    return _state.dtype.get(key) if _state.enabled.get(key) else None


def _to_lower(t: Tensor) -> Tensor:
    target = _enabled_dtype(t)
    if target is None or t.dtype is target or t.dtype.category != dtypes.FLOAT:
        return t
    if t.dtype is dtypes.float64:
        return t
    if not (_state.cache_enabled and t.requires_grad and t.grad_fn is None):
        return t.to(target)
    key = (id(t), target)
    hit = _state.cache.get(key)
    if hit is not None and hit[0] is t:
        return hit[1]
    cast = t.to(target)
    _state.cache[key] = (t, cast)  # holds t: its id is not reused while the entry lives
    return cast


def _to_float32(t: Tensor) -> Tensor:
    if t.dtype in _LOW and _enabled_dtype(t) is not None:
        return t.to(dtypes.float32)
    return t


def _cast_floating(value: Any, device_type: str, dtype: dtypes.dtype) -> Any:
    """``value`` with its floating-point tensors on ``device_type`` (not float64) cast to
    ``dtype``, through containers (torch.amp's ``_cast``)."""
    if isinstance(value, Tensor):
        eligible = (value.dtype.is_floating_point and value.device.type == device_type
                    and value.dtype is not dtypes.float64)  # fmt: skip
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)) or type(value).__module__ == "numpy":
        return value
    if isinstance(value, dict):
        return {_cast_floating(k, device_type, dtype): _cast_floating(v, device_type, dtype)
                for k, v in value.items()}  # fmt: skip
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floating(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """``torch.amp.custom_fwd``: a decorator for a custom ``Function``'s ``forward``. It notes
    on ``ctx`` whether autocast was on (``custom_bwd`` runs the backward in the same state);
    with ``cast_inputs`` set and autocast on, the floating-point tensor inputs are cast to it
    and ``forward`` runs with autocast off."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    target = None if cast_inputs is None else dtypes.to_dtype(cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if target is None:
            ctx._fwd_used_autocast = enabled
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_floating(args, device_type, target),
                       **_cast_floating(kwargs, device_type, target))  # fmt: skip

    return decorate_fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """``torch.amp.custom_bwd``: a decorator for a custom ``Function``'s ``backward``: it runs
    under the autocast state (and dtype) its ``custom_fwd`` forward saw."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
