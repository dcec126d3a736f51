"""softmax and log_softmax: fused, numerically stable (the max is subtracted first).

Both are Functions naming a fused-kernel contract (``contract``): a backend may compute the
values with its own array kernel. A plain backward is one fused array expression; under
``create_graph=True`` the same formula runs in lucid ops on the saved output, so it is
differentiable again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from lucid import dtypes, kernels
from lucid._tensor import Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import (
    Function,
    applies_directly,
    direct_node,
    forward_direct,
    record_direct,
)
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim

OPS = OpTable(
    op("softmax", sample((3, 5), dim=1)),
    op("log_softmax", sample((3, 5), dim=0)),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _shifted(xp: Any, x: Any, dim: int) -> Any:
    """``x - max(x, dim)``; rows that are all -inf stay -inf - (-inf) = nan (as PyTorch). An
    empty ``x`` has no max to take (and nothing to shift)."""
    if x.size == 0:
        return x
    return xp.subtract(x, xp.max(x, axis=dim, keepdims=True))


class _Normalize(Function):
    """softmax / log_softmax along ``dim``: the subclass gives the values and the gradient
    formula, over arrays (``array_grad``, a plain backward) and over Tensors (``grad``,
    recorded under ``create_graph=True``); both read the saved output."""

    contract: ClassVar[kernels.KernelContract[kernels.SoftmaxKernel]]
    grad_contract: ClassVar[kernels.KernelContract[kernels.SoftmaxGradKernel]]

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int) -> Any:
        cls = type(ctx)
        # a backend's own kernel, arrays in and out (an empty input has nothing to compute)
        fused = cls.contract.find(ctx.backend) if x.size else None
        out = None if fused is None else fused.forward(ctx.backend, x, dim)
        if out is None:
            out = cls.values(ctx.xp, x, dim)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (y,) = ctx.saved_tensors
        cls = type(ctx)
        if not grad_mode._state.enabled:  # plain backward: one fused array expression
            fused = cls.grad_contract.find(ctx.backend)
            gx = None if fused is None else fused.forward(ctx.backend, g._data, y._data, ctx.dim)
            if gx is None:
                gx = cls.array_grad(ctx.xp, g._data, y._data, ctx.dim)
            return Tensor.from_backend_array(gx, g.backend), None
        return cls.grad(g, y, ctx.dim), None

    @staticmethod
    def values(xp: Any, x: Any, dim: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def array_grad(xp: Any, g: Any, y: Any, dim: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def grad(g: Tensor, y: Tensor, dim: int) -> Tensor:
        raise NotImplementedError


class Softmax(_Normalize):
    contract = kernels.SOFTMAX
    grad_contract = kernels.SOFTMAX_GRAD

    @staticmethod
    def values(xp: Any, x: Any, dim: int) -> Any:
        e = xp.exp(_shifted(xp, x, dim))
        return xp.divide(e, xp.sum(e, axis=dim, keepdims=True))

    @staticmethod
    def array_grad(xp: Any, g: Any, y: Any, dim: int) -> Any:
        gy = g * y
        return gy - y * xp.sum(gy, axis=dim, keepdims=True)

    @staticmethod
    def grad(g: Tensor, y: Tensor, dim: int) -> Tensor:
        gy = g * y
        return gy - y * gy.sum(dim=dim, keepdim=True)


class LogSoftmax(_Normalize):
    contract = kernels.LOG_SOFTMAX
    grad_contract = kernels.LOG_SOFTMAX_GRAD

    @staticmethod
    def values(xp: Any, x: Any, dim: int) -> Any:
        s = _shifted(xp, x, dim)
        return xp.subtract(s, xp.log(xp.sum(xp.exp(s), axis=dim, keepdims=True)))

    @staticmethod
    def array_grad(xp: Any, g: Any, y: Any, dim: int) -> Any:
        return g - xp.exp(y) * xp.sum(g, axis=dim, keepdims=True)

    @staticmethod
    def grad(g: Tensor, y: Tensor, dim: int) -> Tensor:
        return g - y.exp() * g.sum(dim=dim, keepdim=True)


def _prepare(name: str, x: Tensor, dim: int | None, dtype: Any) -> tuple[Tensor, int]:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtypes.to_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            f"{name}(): expected a floating point input (or pass dtype=), got {x.dtype}"
        )
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return x, normalize_dim(dim, x.ndim)


# NumPy's dtypes of lucid's float16, float32 and float64: ``apply_direct``'s inputs
_FLOAT_NATIVE = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def apply_direct(cls: type[_Normalize], x: Tensor, d: int) -> Tensor:
    """``cls.apply(x, d)`` (``Softmax`` or ``LogSoftmax``, ``d`` a dim of ``x`` in range)
    without the call where ``x`` is a float16/32/64 NumPy tensor and ``applies_directly()``:
    the same forward, node and output (a batch-1 classifier's log_softmax per step, per-call
    cost, docs/performance.md); else the call itself."""
    arr = x._data
    if type(arr) is not np.ndarray or arr.dtype not in _FLOAT_NATIVE or not applies_directly():
        return cls.apply(x, d)
    rg = x.requires_grad
    ctx = direct_node(cls, x._backend, (rg, False))
    out = forward_direct(ctx, (x, d), arr, d)
    if rg and grad_mode._state.enabled:
        return record_direct(ctx, (x, d), [arr, d], out)  # type: ignore[no-any-return]
    return Tensor.from_backend_array(out, ctx.backend)


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed as ``exp(x - max)`` so large logits don't overflow.

    >>> lucid.softmax(lucid.tensor([1e4, 1e4 + 1.0]), dim=0)
    tensor([0.2689, 0.7311])
    """
    x, d = _prepare("softmax", input, dim, dtype)
    if x.ndim == 0:
        return Softmax.apply(x.reshape(1), 0).reshape(())
    return apply_direct(Softmax, x, d)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None) -> Tensor:
    """``log(softmax(x, dim))`` without forming the softmax (stable for large logits)."""
    x, d = _prepare("log_softmax", input, dim, dtype)
    if x.ndim == 0:
        return LogSoftmax.apply(x.reshape(1), 0).reshape(())
    return apply_direct(LogSoftmax, x, d)
