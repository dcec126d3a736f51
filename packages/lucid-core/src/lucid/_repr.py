"""PyTorch-like ``repr`` of tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import _dtype


def _format(arr: Any, dt: _dtype.dtype) -> str:
    opts: dict[str, Any] = {"threshold": 1000, "edgeitems": 3}
    if dt.is_floating_point:
        finite = arr[np.isfinite(arr)] if arr.size else arr
        if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
            opts["formatter"] = {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)}
        else:
            opts["precision"] = 4
            opts["floatmode"] = "maxprec_equal"
    with np.printoptions(**opts):
        body = np.array2string(arr, separator=", ", prefix="tensor(")
    return body


def tensor_repr(t: Any) -> str:
    arr = np.asarray(t.backend.to_numpy(t.data))
    dt = t.dtype
    body = _format(arr, dt)
    extras = []
    if arr.size == 0 and arr.ndim != 1:
        extras.append(f"size={tuple(arr.shape)}")
    if str(t.device) != "cpu":
        extras.append(f"device='{t.device}'")
    default_kinds = (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_)
    if dt not in default_kinds:
        extras.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    tail = "".join(", " + e for e in extras)
    return f"tensor({body}{tail})"
