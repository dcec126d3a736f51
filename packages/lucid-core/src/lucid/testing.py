"""``lucid.testing``: ``torch.testing``'s ``assert_close`` and ``make_tensor`` for test suites.

``assert_close(actual, expected)`` compares tensors (and NumPy arrays, numbers, and sequences
and mappings of them, recursively) by shape, dtype, device and values, with torch's default
tolerances per dtype and torch's failure messages, so a test written for ``torch.testing`` runs
unchanged. ``make_tensor`` draws a tensor of a given shape and dtype from a small range, as
torch's test suites do.

>>> lucid.testing.assert_close(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 2.0 + 1e-7]))
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

import numpy as np

from lucid import dtypes
from lucid._creation import rand, randint
from lucid._creation import tensor as _tensor
from lucid._tensor import Tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# torch.testing's defaults (rtol, atol) per dtype; (0, 0) for every other dtype
_PRECISIONS: dict[Any, tuple[float, float]] = {
    dtypes.float16: (1e-3, 1e-5),
    dtypes.bfloat16: (1.6e-2, 1e-5),
    dtypes.float32: (1.3e-6, 1e-5),
    dtypes.float64: (1e-7, 1e-7),
    dtypes.complex64: (1.3e-6, 1e-5),
    dtypes.complex128: (1e-7, 1e-7),
}

_Msg = str | Callable[[str], str] | None


class _Mismatch(Exception):
    """A failed comparison: the error class, its message, and where in the nesting."""

    def __init__(self, kind: type[Exception], msg: str) -> None:
        super().__init__(msg)
        self.kind, self.msg = kind, msg
        self.path: tuple[Any, ...] = ()


def _tolerances(*ts: Tensor, rtol: float | None, atol: float | None) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in ts]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(
    identifier: _Msg, default: str, extra: str, abs_diff: Any, abs_idx: Any,
    rel_diff: Any, rel_idx: Any, rtol: float, atol: float,
) -> str:  # fmt: skip
    equality = rtol == 0 and atol == 0
    name = default if identifier is None else (
        identifier(default) if callable(identifier) else identifier
    )  # fmt: skip
    msg = f"{name} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):  # fmt: skip
        line = f"{kind.title()} difference: {diff}" if idx is None else (
            f"Greatest {kind} difference: {diff} at index {idx}"
        )  # fmt: skip
        msg += line + ("" if equality else f" (up to {tol} allowed)") + "\n"
    return msg.strip()


def _scalar_msg(actual: Any, expected: Any, rtol: float, atol: float, identifier: _Msg) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                         abs_diff, None, rel_diff, None, rtol, atol)  # fmt: skip


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> Any:
    with np.errstate(invalid="ignore", over="ignore"):
        if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
            close = a == e
        else:
            close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=False)
    if equal_nan and a.dtype.kind in "fc":
        close = close | (np.isnan(a) & np.isnan(e))
    return close


def _compare_tensors(
    actual: Tensor, expected: Tensor, *, rtol: float | None, atol: float | None,
    equal_nan: bool, check_device: bool, check_dtype: bool, identifier: _Msg,
) -> None:  # fmt: skip
    for attr, check in (("shape", True), ("device", check_device), ("dtype", check_dtype)):
        a, e = getattr(actual, attr), getattr(expected, attr)
        if check and a != e:
            shown = (str(a), str(e)) if attr == "device" else (repr(a), repr(e))
            raise _Mismatch(
                AssertionError,
                f"The values for attribute '{attr}' do not match: {shown[0]} != {shown[1]}.",
            )
    rt, at = _tolerances(actual, expected, rtol=rtol, atol=atol)
    a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    if a.dtype != e.dtype:  # check_dtype=False: compare in the promoted dtype
        common = np.result_type(a.dtype, e.dtype)
        a, e = a.astype(common), e.astype(common)
    matches = _isclose(a, e, rt, at, equal_nan)
    if bool(np.all(matches)):
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(a.item(), e.item(), rt, at, identifier))
    n = matches.size
    bad = n - int(np.count_nonzero(matches))
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if af.dtype.kind not in "fc":  # integers and bools: differences in int64, as torch
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(ef)
        if af.dtype.kind == "i":  # torch divides integers into the default float dtype
            rel_diff = rel_diff.astype(np.float32)
        rel_diff[mf] = 0
    i, j = _nanargmax(abs_diff), _nanargmax(rel_diff)
    raise _Mismatch(
        AssertionError,
        _mismatch_msg(
            identifier,
            "Tensor-likes",
            extra,
            abs_diff[i].item(),
            _index(np.unravel_index(i, a.shape)),
            rel_diff[j].item(),
            _index(np.unravel_index(j, a.shape)),
            rt,
            at,
        ),  # fmt: skip
    )


def _nanargmax(x: np.ndarray) -> int:
    # torch.max propagates NaN: the first NaN wins, as in its reduction
    nan = np.isnan(x) if x.dtype.kind in "fc" else np.zeros(x.shape, bool)
    if nan.any():
        return int(np.argmax(nan))
    return int(np.argmax(x))


def _index(idx: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in idx)


def _compare(actual: Any, expected: Any, **kw: Any) -> None:
    tensor_like = (Tensor, np.ndarray)
    if isinstance(actual, tensor_like) and isinstance(expected, tensor_like):
        if isinstance(actual, np.ndarray) != isinstance(expected, np.ndarray):
            raise _Mismatch(
                TypeError,
                f"No comparison pair was able to handle inputs of type {type(actual)} and "
                f"{type(expected)}.",
            )
        a = actual if isinstance(actual, Tensor) else _tensor(actual)
        e = expected if isinstance(expected, Tensor) else _tensor(expected)
        _compare_tensors(a, e, **kw)
        return
    if isinstance(actual, Number) and isinstance(expected, Number):
        _compare_numbers(actual, expected, **kw)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(
                AssertionError,
                f"The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}",
            )
        for key in expected:
            _nested(key, actual[key], expected[key], **kw)
        return
    seq = (Sequence,)
    if (isinstance(actual, seq) and isinstance(expected, seq)
            and not isinstance(actual, str) and not isinstance(expected, str)):  # fmt: skip
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
            )
        for i, (x, y) in enumerate(zip(actual, expected)):
            _nested(i, x, y, **kw)
        return
    if actual is None and expected is None:
        return
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.",
    )


def _nested(key: Any, actual: Any, expected: Any, **kw: Any) -> None:
    try:
        _compare(actual, expected, **kw)
    except _Mismatch as m:
        m.path = (key, *m.path)
        raise


def _compare_numbers(
    actual: Any, expected: Any, *, rtol: float | None, atol: float | None, equal_nan: bool,
    check_dtype: bool, identifier: _Msg, check_device: bool,
) -> None:  # fmt: skip
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError,
            f"The (d)types do not match: {type(actual)} != {type(expected)}.",
        )
    if (rtol is None) != (atol is None):
        _tolerances(rtol=rtol, atol=atol)
    if rtol is None or atol is None:
        rt, at = max(_PRECISIONS.get(_number_dtype(x), (0.0, 0.0)) for x in (actual, expected))
    else:
        rt, at = rtol, atol
    if actual == expected:
        return
    if isinstance(actual, bool) or isinstance(expected, bool):
        ok = False
    elif any(isinstance(x, complex) for x in (actual, expected)):
        ok = abs(actual - expected) <= at + rt * abs(expected)
    else:
        fa, fe = float(actual), float(expected)
        both_nan = math.isnan(fa) and math.isnan(fe)
        ok = (equal_nan and both_nan) or abs(fa - fe) <= at + rt * abs(fe)
    if not ok:
        raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rt, at, identifier))


def _number_dtype(x: Any) -> Any:
    if isinstance(x, bool):
        return dtypes.bool_
    if isinstance(x, int):
        return dtypes.int64
    if isinstance(x, float):
        return dtypes.float64
    return dtypes.complex128


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise unless ``actual`` and ``expected`` are close (``torch.testing.assert_close``).

    Tensors must agree in shape, device and (with ``check_dtype``) dtype, and elementwise
    ``|actual - expected| <= atol + rtol * |expected|``; without ``rtol``/``atol``, torch's
    defaults for the dtype (float32: ``1.3e-6``/``1e-5``, float64: ``1e-7``/``1e-7``, integers
    and bools: exact). Sequences and mappings are compared item by item. ``msg`` replaces the
    message (a callable receives the generated one). Lucid's tensors are dense and strided
    like NumPy's: ``check_layout`` and ``check_stride`` are accepted and have nothing to check.
    """
    kw = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
          "check_dtype": check_dtype, "identifier": None}  # fmt: skip
    try:
        _compare(actual, expected, **kw)
    except _Mismatch as m:
        text = m.msg
        if m.path:
            text += f"\n\nThe failure occurred for item {''.join(f'[{p!r}]' for p in m.path)}"
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise m.kind(text) from None


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """torch's deprecated ``assert_allclose``: ``assert_close`` without the dtype check, with
    ``equal_nan=True``; non-tensor ``expected`` is converted to ``actual``'s dtype."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, msg=msg or None)  # fmt: skip


def make_tensor(
    *shape: int | Sequence[int],
    dtype: Any,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """A tensor of ``shape`` drawn uniformly from ``[low, high)`` (``torch.testing.make_tensor``).

    The default range is ``[-9, 9)`` for floating and signed integer dtypes and ``[0, 10)`` for
    ``uint8``; bools are drawn fairly. ``exclude_zero`` replaces zeros by the dtype's smallest
    normal number (1 for integers); ``noncontiguous`` returns a strided view of a larger tensor.
    Draws come from lucid's generator (seed it with ``lucid.manual_seed``).
    """
    dims: tuple[int, ...] = tuple(
        shape[0] if len(shape) == 1 and isinstance(shape[0], Sequence) else shape  # type: ignore[arg-type]
    )
    dt = dtypes.to_dtype(dtype)
    if requires_grad and not (dt.is_floating_point or dt.is_complex):
        raise ValueError(f"make_tensor: requires_grad must be False for integral dtype {dt}")
    for name, v in (("low", low), ("high", high)):
        if v is not None and math.isnan(v):
            raise ValueError(f"`{name}` cannot be NaN, but got {name}={v}")
    if dt == dtypes.bool_:
        out = randint(0, 2, dims, device=device).to(dtypes.bool_)
    elif dt.is_floating_point or dt.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        if lo > hi:
            raise ValueError(f"`low` must be less than or equal to `high`, but got {lo} > {hi}")
        real = dtypes.float64 if dt.is_complex else dt
        out = rand(*dims, dtype=real, device=device) * (hi - lo) + lo
        if dt.is_complex:
            out = out + 1j * (rand(*dims, dtype=real, device=device) * (hi - lo) + lo)
        out = out.to(dt)
    else:
        unsigned = dt == dtypes.uint8
        lo = int(math.ceil((0 if unsigned else -9) if low is None else low))
        hi = int(math.ceil(10 if high is None else high))  # exclusive, as torch's
        if low is not None and high is not None and low == high:
            hi = lo + 1
        if lo >= hi:
            raise ValueError(f"`low` must be less than or equal to `high`, but got {lo} > {hi}")
        out = randint(lo, hi, dims, device=device).to(dt)
    if exclude_zero:
        fill = np.finfo(np.float32).tiny if dt.is_floating_point else 1
        out = out.masked_fill(out == 0, fill)
    if noncontiguous and out.numel() > 1:
        doubled = out.repeat_interleave(2, dim=-1)
        out = doubled[..., ::2]
    out.requires_grad_(requires_grad)
    return out
