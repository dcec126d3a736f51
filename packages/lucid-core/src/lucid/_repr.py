"""PyTorch's ``repr`` of tensors: same number formatting, line wrapping and suffixes.

Follows ``torch/_tensor_str.py`` (precision 4, line width 80, summarise over 1000 elements
with 3 edge items): one formatter picks integer, fixed or scientific notation for the whole
tensor and pads every element to the same width.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid import dtypes

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        lo, hi = float(np.abs(finite).min()), float(np.abs(finite).max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
            fmt = f"{{:.{PRECISION}e}}" if self.sci_mode else "{:.0f}."
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            fmt = f"{{:.{PRECISION}e}}" if self.sci_mode else f"{{:.{PRECISION}f}}"
        for v in finite.tolist():
            self.width = max(self.width, len(fmt.format(v)))

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.width - len(text)) + text


class _ComplexFormatter:
    """torch's complex elements: a formatter for the real parts and one for the imaginary
    parts, joined as ``1.5000+2.0000j``."""

    def __init__(self, values: np.ndarray) -> None:
        self.re = _Formatter(values.real, True)
        self.im = _Formatter(values.imag, True)
        self.width = self.re.width + self.im.width + 1  # the +/- between them

    def format(self, value: Any) -> str:
        value = complex(value)
        imag = (self.im.format(value.imag) + "j").lstrip()
        return self.re.format(value.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The edge items of every dim (what the formatter sizes itself on when summarising)."""
    for d in range(arr.ndim):
        if arr.shape[d] > 2 * EDGEITEMS:
            head = np.take(arr, range(EDGEITEMS), axis=d)
            tail = np.take(arr, range(arr.shape[d] - EDGEITEMS, arr.shape[d]), axis=d)
            arr = np.concatenate([head, tail], axis=d)
    return arr


_Fmt = _Formatter | _ComplexFormatter


def _vector(arr: np.ndarray, indent: int, summarize: bool, fmt: _Fmt) -> str:
    per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
    vals = arr.tolist()
    if summarize and len(vals) > 2 * EDGEITEMS:
        data = [fmt.format(v) for v in vals[:EDGEITEMS]] + [" ..."]
        data += [fmt.format(v) for v in vals[-EDGEITEMS:]]
    else:
        data = [fmt.format(v) for v in vals]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(arr: np.ndarray, indent: int, summarize: bool, fmt: _Fmt) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector(arr, indent, summarize, fmt)
    n = arr.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        rows = [_nested(arr[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
        rows += [_nested(arr[i], indent + 1, summarize, fmt) for i in range(n - EDGEITEMS, n)]
    else:
        rows = [_nested(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _body(arr: np.ndarray, dt: dtypes.dtype, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    summarize = arr.size > THRESHOLD
    values = _summarized(arr) if summarize else arr
    fmt: _Fmt = (
        _ComplexFormatter(values) if dt.is_complex else _Formatter(values, dt.is_floating_point)
    )
    return _nested(arr, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last_line + len(s) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            last_line = indent + len(s)
        else:
            parts.append(", " + s)
            last_line += len(s) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any) -> str:
    prefix = "tensor("
    if t.device == "meta":  # no data to show (torch's form, its autograd suffix too)
        meta = ["device='meta'", f"size={tuple(t.shape)}"]
        if t.dtype is not dtypes.get_default_dtype():
            meta.append(f"dtype={t.dtype}")
        return _add_suffixes(prefix + "...", meta + _grad_suffix(t), len(prefix))
    arr = np.asarray(t.backend.to_numpy(t._data))
    dt = t.dtype
    if dt is dtypes.bfloat16 or dt is dtypes.float16 or dt._rank < 0:  # (float8 too)
        arr = arr.astype(np.float32)
    suffixes = []
    if str(t.device) != "cpu":
        suffixes.append(f"device='{t.device}'")
    if arr.size == 0 and arr.ndim != 1:
        suffixes.append(f"size={tuple(arr.shape)}")
    default = dtypes.get_default_dtype()
    default_complex = dtypes.complex128 if default is dtypes.float64 else dtypes.complex64
    if dt not in (default, default_complex, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={dt!r}")
    suffixes += _grad_suffix(t)
    return _add_suffixes(prefix + _body(arr, dt, len(prefix)), suffixes, len(prefix))


def _grad_suffix(t: Any) -> list[str]:
    if t.grad_fn is not None:
        return [f"grad_fn=<{t.grad_fn.name}>"]
    return ["requires_grad=True"] if t.requires_grad else []
