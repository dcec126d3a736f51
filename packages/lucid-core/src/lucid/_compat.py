"""torch's top-level helpers that programs call around the ops: ``finfo``/``iinfo``,
``asarray``, ``scalar_tensor``, ``typename`` and the deterministic-algorithms switches
(lucid's CPU kernels are deterministic)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._creation import as_tensor, full
from lucid._tensor import Tensor


def _numpy_type(dt: dtypes.dtype) -> Any:
    if dt is dtypes.bfloat16 or dt._rank < 0:
        import ml_dtypes  # bfloat16 and float8, which NumPy lacks (an optional dependency)

        return getattr(ml_dtypes, dt.name)
    return np.dtype("bool" if dt is dtypes.bool_ else dt.name)


class finfo:  # noqa: N801 - torch's name
    """The limits of a floating dtype (``torch.finfo``): ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name)."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002
        dt = dtypes.get_default_dtype() if type is None else dtypes.to_dtype(type)
        if not dt.is_floating_point:
            raise TypeError(
                f"torch.finfo() requires a floating point input type. Use torch.iinfo to "
                f"handle '{dt}'"
            )
        native = _numpy_type(dt)
        ml = dt is dtypes.bfloat16 or dt._rank < 0
        info = _ml_finfo(native) if ml else np.finfo(native)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min) if dt is not dtypes.float8_e8m0fnu else float(info.tiny)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)  # torch: a power of ten, exactly
        if dt._rank < 0:  # float8: torch's resolution is 1 (no whole decimal digit), and its
            self.resolution = 1.0  # float8_e5m2fnuz eps is 2**-3 (c10's epsilon for it)
            if dt is dtypes.float8_e5m2fnuz:
                self.eps = 0.125
        self.dtype = dt.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")  # fmt: skip


def _ml_finfo(native: Any) -> Any:
    import ml_dtypes

    return ml_dtypes.finfo(native)  # type: ignore[no-untyped-call]


class iinfo:  # noqa: N801 - torch's name
    """The limits of an integer dtype (``torch.iinfo``): ``bits``, ``max``, ``min``, ``dtype``."""

    def __init__(self, type: Any) -> None:  # noqa: A002
        dt = dtypes.to_dtype(type)
        if dt.category not in (dtypes.INT, dtypes.BOOL):
            raise TypeError(
                f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{dt}'"
            )
        if dt is dtypes.bool_:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(_numpy_type(dt))
            self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = dt.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def asarray(
    obj: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool | None = None,
) -> Tensor:
    """``obj`` (a tensor, array, sequence or number) as a tensor, sharing memory where it can
    unless ``copy``; ``copy=False`` where a copy is needed raises, as torch."""
    out = as_tensor(obj, dtype=dtype, device=device)
    shares = out is obj or (isinstance(obj, np.ndarray) and np.shares_memory(out.numpy(), obj))
    if copy and shares:
        out = out.clone()
    elif copy is False and not shares and isinstance(obj, (Tensor, np.ndarray)):
        raise ValueError("asarray(): copy=False was requested, but a copy is needed")
    if requires_grad:
        out = out.detach().requires_grad_()
    return out


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:  # fmt: skip
    """A 0-d tensor holding ``s`` (the default float dtype unless ``dtype``)."""
    dt = dtypes.get_default_dtype() if dtype is None else dtype
    out: Tensor = full((), s, dtype=dt, device=device)
    return out.requires_grad_() if requires_grad else out


def typename(obj: Any) -> str:
    """``'torch.FloatTensor'``-style names for tensors, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        name: str = obj.type()
        return name
    kind = type(obj)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


_DETERMINISTIC = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the switch (lucid's kernels are deterministic whatever it says)."""
    _DETERMINISTIC["on"], _DETERMINISTIC["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """What :func:`use_deterministic_algorithms` last set."""
    return _DETERMINISTIC["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The ``warn_only`` of :func:`use_deterministic_algorithms`."""
    return _DETERMINISTIC["warn_only"]
