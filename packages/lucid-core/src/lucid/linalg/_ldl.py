"""The LDL factorisation of symmetric indefinite matrices (``ldl_factor``, ``ldl_factor_ex``,
``ldl_solve``): LAPACK's Bunch-Kaufman ``sytrf`` / ``sytrs`` with the lower triangle, so the
packed ``LD`` and the ``pivots`` are LAPACK's (as torch's).

``pivots[k] > 0``: a 1x1 block at ``k``, rows and columns ``k`` and ``pivots[k] - 1`` were
interchanged; ``pivots[k] = pivots[k + 1] < 0``: a 2x2 block at ``k, k + 1``, rows and columns
``k + 1`` and ``-pivots[k] - 1`` were interchanged (1-based, int32). The elimination runs on
NumPy on each matrix of the batch (the pivot choice is data dependent); as in torch neither
function has a derivative.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._common import LinAlgError

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0  # Bunch-Kaufman's growth bound (LAPACK's ALPHA)


class LDLFactorResult(NamedTuple):
    """``(LD, pivots)`` of :func:`ldl_factor`."""

    LD: Tensor
    pivots: Tensor


class LDLFactorExResult(NamedTuple):
    """``(LD, pivots, info)`` of :func:`ldl_factor_ex`."""

    LD: Tensor
    pivots: Tensor
    info: Tensor


def _argmax_abs(v: np.ndarray) -> int:
    return int(np.argmax(np.abs(v)))  # LAPACK's IDAMAX: the first of equal maxima


def _sytf2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's ``dsytf2`` (lower): ``a`` (n, n) overwritten by L and D; 1-based pivots; info."""
    n = a.shape[0]
    ipiv = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + _argmax_abs(a[k + 1 :, k])
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            if info == 0:
                info = k + 1  # a zero column: D[k, k] is exactly zero
            kp = k
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                jmax = k + _argmax_abs(a[imax, k:imax])
                rowmax = abs(a[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + _argmax_abs(a[imax + 1 :, imax])
                    rowmax = max(rowmax, abs(a[jmax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # interchange rows and columns kk and kp of the trailing lower part
                if kp < n - 1:
                    a[kp + 1 :, [kk, kp]] = a[kp + 1 :, [kp, kk]]
                col = a[kk + 1 : kp, kk].copy()
                a[kk + 1 : kp, kk] = a[kp, kk + 1 : kp]
                a[kp, kk + 1 : kp] = col
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    r1 = 1.0 / a[k, k]
                    x = a[k + 1 :, k].copy()
                    a[k + 1 :, k + 1 :] -= r1 * np.outer(x, x)  # only the lower part is read
                    a[k + 1 :, k] = x * r1
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                c0, c1 = a[k + 2 :, k].copy(), a[k + 2 :, k + 1].copy()
                wk = d21 * (d11 * c0 - c1)
                wkp1 = d21 * (d22 * c1 - c0)
                a[k + 2 :, k + 2 :] -= np.outer(c0, wk) + np.outer(c1, wkp1)
                a[k + 2 :, k], a[k + 2 :, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _sytrs(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray) -> np.ndarray:
    """LAPACK's ``dsytrs`` (lower): X with ``A X = b`` from ``_sytf2``'s result."""
    n = ld.shape[0]
    b = b.copy()
    k = 0
    while k < n:  # L D Y = b
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1 :] -= np.outer(ld[k + 1 :, k], b[k])
            b[k] /= ld[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2 :] -= np.outer(ld[k + 2 :, k], b[k]) + np.outer(ld[k + 2 :, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / akm1k
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / akm1k
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        if ipiv[k] > 0:
            b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= ld[k + 1 :, k] @ b[k + 1 :]
            b[k - 1] -= ld[k + 1 :, k - 1] @ b[k + 1 :]
            kp = -ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _host(x: Any) -> np.ndarray:
    return np.array(x, copy=True)  # a NumPy copy of a backend array (MLX arrays convert too)


class _LDLFactor(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        host = _host(a)
        batch, n = host.shape[:-2], host.shape[-1]
        flat = host.reshape(math.prod(batch), n, n)
        lds = np.empty_like(flat)
        pivs = np.empty(flat.shape[:-1], dtype=np.int32)
        infos = np.empty(flat.shape[0], dtype=np.int32)
        for i, m in enumerate(flat):
            lds[i], pivs[i], infos[i] = _sytf2(m.copy())
        xp = ctx.xp
        piv_out = xp.asarray(pivs.reshape(batch + (n,)))
        info_out = xp.asarray(infos.reshape(batch))
        ctx.mark_non_differentiable(piv_out, info_out)
        return xp.asarray(lds.reshape(host.shape)), piv_out, info_out

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


class _LDLSolve(Function):
    @staticmethod
    def forward(ctx: Any, ld: Any, pivots: Any, b: Any) -> Any:
        ld_h, piv_h, b_h = _host(ld), _host(pivots), _host(b)
        n, k = ld_h.shape[-1], b_h.shape[-1]
        batch = np.broadcast_shapes(ld_h.shape[:-2], b_h.shape[:-2])
        count = math.prod(batch)
        ld_b = np.broadcast_to(ld_h, batch + (n, n)).reshape(count, n, n)
        piv_b = np.broadcast_to(piv_h, batch + (n,)).reshape(count, n)
        b_b = np.broadcast_to(b_h, batch + (n, k)).reshape(count, n, k)
        out = np.empty(b_b.shape, dtype=np.result_type(ld_h.dtype, b_h.dtype))
        for i in range(out.shape[0]):
            out[i] = _sytrs(ld_b[i], piv_b[i], b_b[i])
        return ctx.xp.asarray(out.reshape(batch + (n, k)))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def _check_input(name: str, a: Any, arg: str = "A") -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"linalg.{name}: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2:
        raise RuntimeError(
            f"torch.linalg.{name}: The input tensor {arg} must have at least 2 dimensions."
        )
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"torch.linalg.{name}: {arg} must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if a.dtype.is_complex:
        raise NotImplementedError(
            f"linalg.{name}: complex matrices are not supported (real float32/float64 only; "
            "see docs/differences.md)"
        )
    if not a.dtype.is_floating_point:
        raise RuntimeError(
            f"torch.linalg.{name}: Expected a floating point or complex tensor as input. Got "
            f"{a.dtype.name.capitalize()}"
        )


def ldl_factor_ex(
    input: Tensor,  # noqa: A002
    *,
    hermitian: bool = False,
    check_errors: bool = False,
) -> LDLFactorExResult:
    """``(LD, pivots, info)``: the Bunch-Kaufman factorisation ``A = P L D L^T P^T`` of
    symmetric matrices (the lower triangle is read) in LAPACK's packed form: L (unit diagonal
    implied) below the diagonal of ``LD``, the 1x1 and 2x2 blocks of D on and next to it;
    ``pivots`` (int32) as LAPACK's ``sytrf``; ``info`` is ``k`` where ``D[k-1, k-1]`` is exactly
    zero (the matrix is singular), else 0. ``hermitian`` is the same factorisation for real
    matrices. No derivative (as torch)."""
    _check_input("ldl_factor_ex", input)
    ld, pivots, info = _LDLFactor.apply_multi(input)
    if check_errors and bool((info > 0).any()):
        first = int(info[info > 0].reshape(-1)[0].item())
        raise LinAlgError(
            f"torch.linalg.ldl_factor_ex: The factorization could not be completed because the "
            f"input is not invertible: D[{first - 1}, {first - 1}] is zero"
        )
    return LDLFactorExResult(ld, pivots, info)


def ldl_factor(input: Tensor, *, hermitian: bool = False) -> LDLFactorResult:  # noqa: A002
    """``(LD, pivots)`` of :func:`ldl_factor_ex` (a singular matrix is factored too: its zero
    block of D makes :func:`ldl_solve` give inf/nan, as LAPACK's)."""
    _check_input("ldl_factor", input)
    ld, pivots, _ = _LDLFactor.apply_multi(input)
    return LDLFactorResult(ld, pivots)


def ldl_solve(
    LD: Tensor,  # noqa: N803
    pivots: Tensor,
    B: Tensor,  # noqa: N803
    *,
    hermitian: bool = False,
) -> Tensor:
    """``X`` with ``A @ X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` (LAPACK's
    ``sytrs``); the batch dims of ``LD`` and ``B`` broadcast. No derivative (as torch)."""
    _check_input("ldl_solve", LD, "LD")
    if not isinstance(pivots, Tensor) or not isinstance(B, Tensor):
        raise TypeError("linalg.ldl_solve: expected Tensors for pivots and B")
    if B.ndim < 2:
        raise RuntimeError(
            "torch.linalg.ldl_solve: The input tensor B must have at least 2 dimensions."
        )
    if pivots.dtype is not dtypes.int32:
        raise RuntimeError(
            f"torch.linalg.ldl_solve: Expected pivots to be int32 (as ldl_factor returns "
            f"them). Got {pivots.dtype.name}"
        )
    if LD.shape[:-1] != pivots.shape:
        raise RuntimeError(
            f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, "
            f"but got pivots with shape {list(pivots.shape)} instead"
        )
    if B.dtype is not LD.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type "
            f"{B.dtype.name.capitalize()} and A of type {LD.dtype.name.capitalize()} instead."
        )
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is "
            f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is {B.shape[-2]} by "
            f"{B.shape[-1]}"
        )
    out: Tensor = _LDLSolve.apply(LD, pivots, B)
    return out
