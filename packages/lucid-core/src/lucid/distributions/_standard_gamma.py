"""Gamma(alpha, 1) draws with implicit reparameterisation gradients.

A draw ``z`` with CDF ``P(alpha, z) = u`` moves with ``alpha`` as ``dz/dalpha =
-(dP/dalpha) / (dP/dz)`` (Figurnov et al., 2018, the approach of torch's
``_standard_gamma_grad``). ``dP/dz`` is the density; ``dP/dalpha`` comes from the series
``P(a, x) = sum_n t_n``, ``t_n = x^(a+n) e^(-x) / Gamma(a+n+1)``, differentiated term by term:
``dt_n/da = t_n (log x - digamma(a+1) - sum_{k<=n} 1/(a+k))``. The terms peak near
``n = x - a`` and then fall faster than geometrically, so the loop runs until they are below
the float64 rounding of the sum. The same series gives ``Gamma.cdf`` (``gammainc``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid._tensor import Tensor
from lucid.autograd.function import DoubleBackwardError, Function
from lucid.distributions.utils import finfo
from lucid.ops.gamma import digamma_array, lgamma_array
from lucid.random import default_generator

_CHECK_EVERY = 16


def _series_terms(a: Any, x: Any) -> int:
    """How many series terms every element needs at most (past the peak, 12 widths of it)."""
    peak = np.maximum(x - a, 0) + 12 * np.sqrt(x + a) + 40
    return int(np.max(peak)) if peak.size else 0


def gamma_series(a: Any, x: Any) -> tuple[Any, Any]:
    """``(P(a, x), dP(a, x)/da)`` for the regularized lower incomplete gamma function ``P``,
    on NumPy float64 arrays."""
    log_x = np.log(x)
    t = np.exp(a * log_x - x - lgamma_array(np, a + 1))
    s = log_x - digamma_array(np, a + 1)
    total, slope = t, t * s
    for n in range(1, _series_terms(a, x) + 1):
        t = t * x / (a + n)
        s = s - 1 / (a + n)
        total, slope = total + t, slope + t * s
        if n % _CHECK_EVERY == 0 and bool(np.all(t <= 1e-17 * total)):
            break
    return total, slope


def gamma_log_pdf(a: Any, x: Any) -> Any:
    """``log`` of the Gamma(a, 1) density at ``x`` (NumPy)."""
    return (a - 1) * np.log(x) - x - lgamma_array(np, a)


def standard_gamma_grad(a: Any, x: Any) -> Any:
    """``dz/dalpha`` at the Gamma(alpha, 1) draws ``x`` (``torch._standard_gamma_grad``), on
    NumPy arrays, computed in float64."""
    a64, x64 = np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64)
    grad = -gamma_series(a64, x64)[1] / np.exp(gamma_log_pdf(a64, x64))
    return grad.astype(np.asarray(a).dtype)


class StandardGamma(Function):
    """Gamma(alpha, 1) draws (at least the dtype's smallest normal number, as torch clamps)."""

    @staticmethod
    def forward(ctx: Any, alpha: Any) -> Any:
        draws = default_generator.numpy_rng.standard_gamma(ctx.backend.to_numpy(alpha))
        tiny = finfo(ctx.backend.dtype_of(alpha), "tiny")
        x = ctx.xp.maximum(_native(ctx.backend, draws, alpha), tiny)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return _NoDoubleBackward.apply(g * _sample_slope(*ctx.saved_tensors))


def _sample_slope(alpha: Tensor, x: Tensor) -> Tensor:
    """``dz/dalpha`` at the saved draws, as a tensor on alpha's backend."""
    backend = alpha.backend
    slope = standard_gamma_grad(backend.to_numpy(alpha.array), backend.to_numpy(x.array))
    return Tensor.from_backend_array(_native(backend, slope, alpha.array), backend)


class _NoDoubleBackward(Function):
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        raise DoubleBackwardError(
            "the second derivative of a Gamma sample with respect to its "
            "concentration is not implemented"
        )


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(``alpha``, 1) draws of ``alpha``'s shape; differentiable with respect to alpha."""
    return StandardGamma.apply(alpha)


class GammaCDF(Function):
    """``P(a, x)`` (``torch.special.gammainc``), differentiable in both arguments."""

    @staticmethod
    def forward(ctx: Any, a: Any, x: Any) -> Any:
        backend = ctx.backend
        a64, x64 = (np.asarray(backend.to_numpy(v), dtype=np.float64) for v in (a, x))
        a64, x64 = np.broadcast_arrays(a64, x64)
        safe = np.maximum(x64, np.finfo(np.float64).tiny)
        p, dp_da = gamma_series(a64, safe)
        inside = x64 > 0
        pdf = np.where(inside, np.exp(gamma_log_pdf(a64, safe)), 0.0)
        ctx.save_for_backward(*(_native(backend, v, a) for v in (np.where(inside, dp_da, 0), pdf)))
        return _native(backend, np.where(inside, np.minimum(p, 1.0), 0.0), a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        dp_da, pdf = ctx.saved_tensors
        return _NoDoubleBackward.apply(g * dp_da), _NoDoubleBackward.apply(g * pdf)


def _native(backend: Any, arr: Any, like: Any) -> Any:
    return backend.astype(backend.from_numpy(np.ascontiguousarray(arr)), backend.dtype_of(like))


def gammainc(a: Tensor, x: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)`` (0 for ``x <= 0``)."""
    return GammaCDF.apply(a, x)
