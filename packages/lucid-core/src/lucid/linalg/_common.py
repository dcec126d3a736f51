"""Shared checks and small helpers for lucid.linalg."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from lucid import dtypes
from lucid._creation import eye
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import Function

_warned: set[str] = set()


def warn_once(key: str, message: str) -> None:
    """torch's ``TORCH_WARN_ONCE`` for a deprecated function: ``message`` the first time
    ``key`` is asked for in this process, pointing at the caller's caller."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


class LinAlgError(RuntimeError):
    """A linear-algebra routine failed (singular matrix, not positive-definite, no convergence)."""


def check_matrix(name: str, a: Any, square: bool = True) -> Tensor:
    """``a`` as a floating tensor of shape (*, m, n), square when asked."""
    if not isinstance(a, Tensor):
        raise TypeError(f"linalg.{name}: expected a Tensor, got {type(a).__name__}")
    if a.ndim < 2:
        raise RuntimeError(
            f"linalg.{name}: The input tensor A must have at least 2 dimensions, got {a.ndim}"
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"linalg.{name}: A must be batches of square matrices, but they are "
            f"{a.shape[-2]} by {a.shape[-1]} matrices"
        )
    if a.dtype.category < dtypes.FLOAT:
        return a.to(dtypes.get_default_dtype())
    if a.dtype.is_complex:
        _check_complex(name, a)
    return a


# Complex input: these compute for real matrices only (their formulas transpose, not conjugate),
# and these differentiate in torch's complex convention only for real input (see
# docs/differences.md); the rest take complex input with torch's values and gradients.
_COMPLEX_UNSUPPORTED = frozenset({"pinv", "lstsq"})
_COMPLEX_NO_GRAD = frozenset({"cholesky", "qr", "svd", "eigh"})


def _check_complex(name: str, a: Tensor) -> None:
    if name in _COMPLEX_UNSUPPORTED:
        raise NotImplementedError(f"linalg.{name}: complex input is not supported yet")
    if name in _COMPLEX_NO_GRAD and a.requires_grad and grad_mode.is_grad_enabled():
        raise NotImplementedError(
            f"linalg.{name}: the gradient for complex input is not implemented yet (its values "
            "are); call it on a detached tensor or under lucid.no_grad()"
        )


def lapack(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a backend routine, turning its linear-algebra failure into :class:`LinAlgError`."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        if "LinAlgError" not in type(exc).__name__ and "linalg" not in str(exc).lower():
            raise
        raise LinAlgError(f"linalg.{name}: {exc}") from None


def lapack_saved(ctx: Any, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """:func:`lapack`, its outputs saved for backward (the gradients are written in them)."""
    out = lapack(name, fn, *args, **kwargs)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    ctx.save_for_backward(*outs)
    return outs if len(outs) > 1 else out


def eye_like(a: Tensor) -> Tensor:
    """The identity with ``a``'s trailing square shape, dtype and device."""
    n = a.shape[-1]
    return eye(n, dtype=a.dtype, device=a.device)


def off_diagonal_quotient(num: Tensor, vals: Tensor) -> Tensor:
    """``num[i, j] / (vals[j] - vals[i])`` off the diagonal, 0 on it.

    NOTE: where two values coincide (repeated eigenvalues / singular values) the quotient is
    infinite: the derivative of the vectors is undefined there, as in PyTorch.
    """
    e = vals.unsqueeze(-2) - vals.unsqueeze(-1)
    eye = eye_like(e)
    out: Tensor = num * (1 - eye) / (e + eye)
    return out


class Solve(Function):
    """``X`` with ``A @ X = B`` (B a batch of matrices)."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        out = lapack("solve", ctx.xp.linalg.solve, a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        a, x = ctx.saved_tensors
        gb = Solve.apply(a.mT, g)
        ga = -(gb @ x.mT) if ctx.needs_input_grad[0] else None
        return ga, gb
