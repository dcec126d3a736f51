"""linear and bilinear."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid import Tensor
from lucid.amp import autocast_mode
from lucid.amp.autocast_mode import lower_precision_inputs
from lucid.autograd import Function, engine, grad_mode
from lucid.autograd.function import ops_watched, records_nothing

__all__ = ["bilinear", "linear"]

# A big product's bias added through the backend's ``add(out, b, out=out)``: in place, and on
# the NumPy backend in row blocks on every core from ~1M elements (the word_language_model's
# (700, 10,000) decoder output: ~2 ms of the main thread's serial work a step; the same bits,
# docs/performance.md, issue 30). False: ``out += b`` on the calling thread, as before.
SPLIT_BIAS_ADD = True


# Fewer elements than this never split: ``np.add`` itself, without the backend's threaded
# wrapper (~0.7 us a call on a batch-1 model's many small Linears; the same ufunc, the same bits).
_SPLIT_BIAS_ELEMENTS = 1 << 16


def _add_bias(xp: Any, out: Any, b: Any) -> Any:
    """``out += b``, split over the threads where ``SPLIT_BIAS_ADD`` and NumPy arrays."""
    if SPLIT_BIAS_ADD and type(out) is np.ndarray and type(b) is np.ndarray:
        if out.size < _SPLIT_BIAS_ELEMENTS:
            np.add(out, b, out=out)
        else:
            xp.add(out, b, out=out)
    else:
        out += b
    return out


# torch's name of linear's node by the input's dims (1, 2, more) and bias (with, without):
# its addmm or mm for a matrix, the view (or squeeze) of a reshaped product otherwise
_LINEAR_NAMES = (
    ("ViewBackward0", "SqueezeBackward4"),
    ("AddmmBackward0", "MmBackward0"),
    ("ViewBackward0", "UnsafeViewBackward0"),
)


class _Linear(Function):
    """``x @ w.T + b`` in one node: one GEMM each way, the bias gradient as one reduction."""

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any, b: Any) -> Any:
        ctx._to_save = (x, w)  # (save_for_backward's one statement, without its call)
        ctx.has_bias = b is not None
        shape = x.shape
        ctx._node_name = _LINEAR_NAMES[min(len(shape), 3) - 1][b is None]
        if len(shape) == 2 and shape[0] == 1 and type(x) is np.ndarray:
            # one row (a batch-1 model's Linears): _product_bias's route, ``matmul`` and the
            # add, without its tests for the fused kernel, which takes two rows or more
            out = ctx.xp.matmul(x, w.T)
            if b is None:
                return out
            if SPLIT_BIAS_ADD and type(out) is np.ndarray and type(b) is np.ndarray:
                if out.size < _SPLIT_BIAS_ELEMENTS:  # (_add_bias's first route, inline)
                    np.add(out, b, out=out)
                    return out
            return _add_bias(ctx.xp, out, b)
        return _product_bias(ctx.xp, x, w, b)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        if _plain(g, x, w):
            return _array_grads(ctx, g, x, w)
        gx = g @ w if need_x else None
        gw = gb = None
        if need_w or need_b:
            rows = math.prod(g.shape[:-1])  # not -1: a size-0 dim makes -1 ambiguous
            g2 = g.reshape(rows, g.shape[-1])
            if need_w:
                gw = g2.mT @ x.reshape(rows, x.shape[-1])
            if need_b:
                gb = g2.sum(0)
        return gx, gw, gb


def _plain(g: Tensor, x: Tensor, w: Tensor) -> bool:
    """Whether the backward may run on the arrays: no graph to record (no ``create_graph``),
    no autocast, vmap or op observer that would see the ops, one dtype. (The grad-mode and
    autocast switches read directly: a batch-1 model runs this per Linear per step.)"""
    dtype = g._data.dtype
    return not (grad_mode._state.enabled or autocast_mode._state.active or ops_watched()) and (
        x._data.dtype == dtype and w._data.dtype == dtype
    )


def _array_grads(ctx: Any, g: Tensor, x: Tensor, w: Tensor) -> Any:
    """The op-level backward's arrays (the same array calls the ops make: the same bits),
    without a Function call per product (a batch-1 model's step, docs/performance.md)."""
    xp, be = ctx.xp, g.backend
    need_x, need_w, need_b = ctx.needs_input_grad
    ga = g._data
    shape = ga.shape
    rows = math.prod(shape[:-1])
    # One row: the weight's gradient is an outer product, which never runs beside another
    # (``matmul_pair`` pairs inner dimensions over 1): the two products one after the other,
    # as the pair would run them, without its tests (a batch-1 model's Linears).
    pair = getattr(xp, "matmul_pair", None) if need_x and need_w and rows != 1 else None
    gx = Tensor.from_backend_array(xp.matmul(ga, w._data), be) if need_x and not pair else None
    gw = gb = None
    if need_w or need_b:
        g2 = ga if len(shape) == 2 else xp.reshape(ga, (rows, shape[-1]))
        numpy = type(g2) is np.ndarray  # the calls np.transpose/np.sum make, unwrapped
        if need_w:
            xa = x._data
            x2 = xa if len(xa.shape) == 2 else xp.reshape(xa, (rows, xa.shape[-1]))
            g2t = g2.transpose((1, 0)) if numpy else xp.transpose(g2, (1, 0))
            if pair:  # the two products at once where two threads are free (NumPy's backend)
                pairs = _deferred_pair(ctx, xp, ga, w._data, g2t, x2)
                gxa, gwa = pairs if pairs is not None else pair(ga, w._data, g2t, x2)
                gx = Tensor.from_backend_array(gxa, be)
                gw = Tensor.from_backend_array(gwa, be)
            else:
                gw = Tensor.from_backend_array(xp.matmul(g2t, x2), be)
        if need_b:
            if not numpy:
                gb = xp.sum(g2, axis=(0,), keepdims=False)
            elif rows == 1 and g2.dtype in _ZERO:
                # a sum over one row: NumPy's reduction adds the row to its identity, 0 (-0.0
                # becomes 0.0): that one add without the reduction's setup, the same bits
                gb = np.add(g2[0], _ZERO[g2.dtype])
            else:
                gb = np.add.reduce(g2, axis=(0,))
            gb = Tensor.from_backend_array(gb, be)
    return gx, gw, gb


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` (``torch.nn.functional.linear``)."""
    if autocast_mode._state.active:  # (lower_precision_inputs' own test, without its call)
        input, weight, bias = lower_precision_inputs(input, weight, bias)
    # the arrays' shapes and dtypes, read once (the per-call cost of a model's many small
    # Linears, docs/performance.md, issue 30)
    xs, ws = input._data.shape, weight._data.shape
    if not xs or xs[-1] != ws[-1]:
        raise RuntimeError(
            f"linear: input with {input.shape[-1] if input.ndim else 0} features in the last "
            f"dim does not match weight of shape {tuple(weight.shape)} "
            f"(expected {weight.shape[-1]} features), got input of shape {tuple(input.shape)}"
        )
    if len(ws) == 1:
        out = input @ weight
        return out if bias is None else out + bias
    if input._data.dtype != weight._data.dtype and input.dtype is not weight.dtype:
        raise RuntimeError(
            f"linear: expected input and weight to have the same dtype, but got input "
            f"{input.dtype} and weight {weight.dtype}"
        )
    if not grad_mode._state.enabled and records_nothing():
        # no node to record: _Linear's array calls without a Function call
        return _linear_no_grad(input, weight, bias)
    return _Linear.apply(input, weight, bias)


def _linear_no_grad(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """``_Linear.forward``'s arrays (the same calls, the same bits, the same quiet FP state),
    wrapped without a ``Function`` call (generation's many small Linears, docs/performance.md).
    Anything unusual (devices, a bias that does not fit) goes through ``_Linear.apply``, which
    raises as the op does."""
    be = x._backend
    if w._backend is not be or (b is not None and b._backend is not be):
        return _Linear.apply(x, w, b)
    quiet = be.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        out = _product_no_grad(be.xp, x._data, w._data, None if b is None else b._data)
    except Exception:
        return _Linear.apply(x, w, b)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return Tensor.from_backend_array(out, be)


# Row counts for which ``(W @ x^T)^T`` copied to row-major is the faster product here
# (OpenBLAS: 0.6-0.8x the time of ``x @ W^T`` for 16-32 rows of 128-512 features with the copy;
# at 64 rows the copy ate the gain; the same BLAS sums, so the same bits: docs/performance.md,
# issue 30). The copy keeps the result's layout the recorded path's: a column-major result made
# later products over it round otherwise (MaxViT, Swin3D without grad ~1e-6, session 7).
_TRANSPOSED_ROWS = (16, 32)
_TRANSPOSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# A zero of each of those dtypes (a typed scalar: NumPy's add takes it without resolving a
# Python float's type each call)
_ZERO = {np.dtype(np.float32): np.float32(0), np.dtype(np.float64): np.float64(0)}


def _product_bias(xp: Any, x: Any, w: Any, b: Any, transposed: bool = False) -> Any:
    """``x @ w^T + b`` (``b`` None: no bias): the backend's fused ``linear`` where it has one
    and it applies (NumPy's: one compiled call, the same bits), else ``matmul`` and the add."""
    fused = getattr(xp, "linear", None)
    if fused is not None and type(x) is np.ndarray and x.size > x.shape[-1]:  # 2 rows or more
        out = fused(x, w, b, transposed)
        if out is not None:
            return out
    if transposed:
        rows = x.size // x.shape[-1]
        x2 = x.reshape(rows, x.shape[-1])
        out = np.ascontiguousarray(xp.matmul(w, x2.transpose((1, 0))).transpose((1, 0)))
        if len(x.shape) != 2:
            out = out.reshape(*x.shape[:-1], w.shape[0])
    else:
        out = xp.matmul(x, w.T)
    return out if b is None else _add_bias(xp, out, b)


def _product_no_grad(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """``x @ w^T + b``; for C-ordered NumPy ``x`` of 16-32 rows and ``w`` as ``(w @ x^T)^T``
    copied to row-major (a generated token's Linears, docs/performance.md)."""
    shape = x.shape
    if type(x) is np.ndarray and len(shape) >= 2 and x.dtype in _TRANSPOSED_DTYPES:
        rows = x.size // shape[-1] if shape[-1] else 0
        low, high = _TRANSPOSED_ROWS
        if (
            low <= rows <= high
            and x.flags.c_contiguous
            and w.flags.c_contiguous
            and w.dtype == x.dtype
        ):
            return _product_bias(xp, x, w, b, transposed=True)
    return _product_bias(xp, x, w, b)


def _deferred_pair(ctx: Any, xp: Any, a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any] | None:
    """``(a @ b, c @ d)`` with the weight's gradient ``c @ d`` left running on the pool
    (``matmul_defer``) while the backward pass goes on, where it flows only to a leaf the
    engine sums or accumulates (it waits before reading it: ``engine.defer``) and no node
    hook sees it; else None (``matmul_pair`` runs both and waits). The same GEMMs, the same
    bits (docs/performance.md, issue 30)."""
    defer = getattr(xp, "matmul_defer", None)
    if defer is None or not isinstance(ctx._edges[1], Tensor) or ctx._post_hooks:
        return None
    if not engine.deferring():
        return None
    r = defer(a, b, c, d)
    if r is None:
        return None
    first, second, wait = r
    engine.defer(wait)
    return first, second


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y_k = x1^T A_k x2 + b_k`` (``torch.nn.functional.bilinear``)."""
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(
            f"bilinear: expected inputs with {in1} and {in2} features, got "
            f"{tuple(input1.shape)} and {tuple(input2.shape)}"
        )
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    a = weight.permute(1, 0, 2).reshape(in1, out_f * in2)
    t = (x1 @ a).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    result: Tensor = out.reshape(*lead, out_f)
    return result
