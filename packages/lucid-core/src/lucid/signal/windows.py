"""``lucid.signal.windows`` (``torch.signal.windows``): window functions with SciPy's
conventions (``sym=True`` is the symmetric window for filter design, ``sym=False`` the periodic
one for spectral analysis).

Each window is computed as torch computes it, with lucid ops in the requested dtype (float32 or
float64), so it runs on every backend and matches torch's rounding.

>>> import lucid
>>> lucid.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from lucid import _creation, dtypes, ops, special
from lucid._tensor import Tensor

__all__ = [
    "bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
    "general_hamming", "hamming", "hann", "kaiser", "nuttall",
]  # fmt: skip


def _check(name: str, m: int, dtype: Any, layout: Any) -> dtypes.dtype:
    """The window's dtype, after torch's checks of the length, layout and dtype."""
    if m < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={m}")
    if layout is not None and str(layout) != "torch.strided" and layout != "strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dt = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    if dt not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dt}")
    return dt


def _ones(m: int, dt: dtypes.dtype, device: Any, requires_grad: bool) -> Tensor:
    return _creation.ones(m, dtype=dt, device=device, requires_grad=requires_grad)


def _ramp(start: float, step: float, m: int, dt: dtypes.dtype, device: Any, rg: bool) -> Tensor:
    """``m`` points from ``start`` by ``step`` (torch's ``linspace(start, start + (m-1) step)``)."""
    end = start + (m - 1) * step
    return _creation.linspace(start, end, m, dtype=dt, device=device, requires_grad=rg)


def _finish(w: Tensor, requires_grad: bool) -> Tensor:
    """A window is a leaf: ``requires_grad`` asks for a leaf that requires grad."""
    out = w.detach()
    return out.requires_grad_(True) if requires_grad else out


def exponential(
    M: int,  # noqa: N803 - torch's name
    *,
    center: float | None = None,
    tau: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``; ``center`` defaults to
    the middle and may be given only for a periodic window (``sym=False``)."""
    dt = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _ones(0, dt, device, requires_grad)
    c = (M if not sym and M > 1 else M - 1) / 2.0 if center is None else center
    k = _ramp(-c / tau, 1 / tau, M, dt, device, False)
    return _finish(ops.exp(-ops.abs(k)), requires_grad)


def cosine(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``."""
    dt = _check("cosine", M, dtype, layout)
    if M == 0:
        return _ones(0, dt, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _finish(ops.sin(_ramp(0.5 * step, step, M, dt, device, False)), requires_grad)


def gaussian(
    M: int,  # noqa: N803
    *,
    std: float = 1.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Gaussian window ``exp(-(n - center)^2 / (2 std^2))``."""
    dt = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _ones(0, dt, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    step = 1 / (std * math.sqrt(2))
    k = _ramp(start * step, step, M, dt, device, False)
    return _finish(ops.exp(-(k**2)), requires_grad)


def kaiser(
    M: int,  # noqa: N803
    *,
    beta: float = 12.0,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dt = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _ones(M, dt, device, requires_grad)
    b = _creation.tensor(
        beta, dtype=dt, device=device
    )  # in the dtype, as torch: no nan at the ends
    step = 2.0 * b / (M if not sym else M - 1)
    end = ops.minimum(b, -b + (M - 1) * step)
    k = _creation.linspace(-beta, float(end.item()), M, dtype=dt, device=device)
    w = special.i0(ops.sqrt(b * b - k**2)) / special.i0(b)
    return _finish(w, requires_grad)


def general_cosine(
    M: int,  # noqa: N803
    *,
    a: Iterable[float],
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The generalized cosine window ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dt = _check("general_cosine", M, dtype, layout)
    if M <= 1:
        return _ones(M, dt, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    coeffs = [(-1) ** i * float(w) for i, w in enumerate(a)]
    if not coeffs:
        raise ValueError("Coefficients cannot be empty")
    k = _ramp(0.0, 2 * math.pi / (M if not sym else M - 1), M, dt, device, False)
    a_i = _creation.tensor(coeffs, dtype=dt, device=device)
    i = _creation.arange(len(coeffs), dtype=dt, device=device)
    w = (a_i.unsqueeze(-1) * ops.cos(i.unsqueeze(-1) * k)).sum(0)
    return _finish(w, requires_grad)


def general_hamming(
    M: int,  # noqa: N803
    *,
    alpha: float = 0.54,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(
        M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
        requires_grad=requires_grad,
    )  # fmt: skip


def hamming(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hamming window (:func:`general_hamming` with ``alpha = 0.54``)."""
    return general_hamming(
        M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad
    )


def hann(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Hann window (:func:`general_hamming` with ``alpha = 0.5``)."""
    return general_hamming(
        M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
        requires_grad=requires_grad,
    )  # fmt: skip


def blackman(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Blackman window (:func:`general_cosine` with ``a = [0.42, 0.5, 0.08]``)."""
    _check("blackman", M, dtype, layout)
    return general_cosine(
        M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
        requires_grad=requires_grad,
    )  # fmt: skip


def bartlett(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2n / (M - 1) - 1|``."""
    dt = _check("bartlett", M, dtype, layout)
    if M <= 1:
        return _ones(M, dt, device, requires_grad)
    k = _ramp(-1.0, 2 / (M if not sym else M - 1), M, dt, device, False)
    return _finish(1 - ops.abs(k), requires_grad)


def nuttall(
    M: int,  # noqa: N803
    *,
    sym: bool = True,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(
        M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
        device=device, requires_grad=requires_grad,
    )  # fmt: skip
