"""Activation functions.

Piecewise-linear ones (leaky_relu, hardtanh, hardsigmoid, threshold, prelu) are Functions
whose backward multiplies by a mask computed in forward; smooth ones have a backward written
with lucid ops on the saved input, so they can be differentiated again.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, kernels
from lucid.amp.autocast_mode import lower_precision_inputs
from lucid.autograd import Function, grad_mode
from lucid.autograd.function import quiet_array_call, unrecorded
from lucid.nn.functional._util import check_float, maybe_inplace
from lucid.ops.softmax import LogSoftmax as _LogSoftmax
from lucid.ops.softmax import apply_direct as _softmax_direct

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "log_softmax",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class _MaskedLinear(Function):
    """``y = x * slope(x)`` for a piecewise-constant slope; forward computes the slope array.

    ``x``'s pieces: slope ``inside`` where ``lo < x < hi`` and ``outside`` elsewhere, plus an
    additive constant ``const`` where outside (hardtanh's clamp values).
    """

    @staticmethod
    def forward(ctx: Any, x: Any, kind: str, a: float, b: float) -> Any:
        xp = ctx.xp
        if kind == "leaky":
            slope = xp.where(x > 0, 1.0, a).astype(x.dtype)
            out = x * slope
        elif kind == "hardtanh":
            slope = ((x > a) & (x < b)).astype(x.dtype)
            out = xp.clip(x, a, b)
        elif kind == "threshold":
            keep = x > a
            slope = keep.astype(x.dtype)
            out = xp.where(keep, x, xp.asarray(b, dtype=x.dtype))
        else:  # hardsigmoid
            slope = (((x > -3.0) & (x < 3.0)) / 6.0).astype(x.dtype)
            out = xp.clip(x / 6.0 + 0.5, 0.0, 1.0).astype(x.dtype)
        ctx.save_for_backward(slope)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (slope,) = ctx.saved_tensors
        return g * slope, None, None, None


class _ELU(Function):
    """``scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))`` (elu, selu, celu)."""

    _node_name = "EluBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, alpha: float, scale: float, input_scale: float) -> Any:
        xp = ctx.xp
        pos = x > 0
        neg_x = xp.where(pos, 0.0, x).astype(x.dtype)
        out = xp.where(pos, x, alpha * xp.expm1(neg_x * input_scale)).astype(x.dtype)
        if scale != 1.0:
            out = out * scale
        ctx.params = (alpha, scale, input_scale)
        ctx.save_for_backward(x, xp.logical_not(pos).astype(x.dtype))
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        x, neg = ctx.saved_tensors
        alpha, scale, input_scale = ctx.params
        # exp of the negative part only: the positive part never overflows into inf * 0.
        d_neg = (x * neg * input_scale).exp() * (alpha * input_scale)
        d = (1 - neg) + neg * d_neg
        return g * (d * scale), None, None, None


class _Softplus(Function):
    """torch's softplus: ``log1p(exp(beta x)) / beta``, ``x`` itself where ``beta x >
    threshold``; the gradient ``z / (z + 1)`` with ``z = exp(beta x)`` (1 there). NumPy's
    SIMD ``exp``/``log1p`` passes, where ``logaddexp`` was a scalar libm loop (17x torch's time,
    issue 30)."""

    _node_name = "SoftplusBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, beta: float, threshold: float) -> Any:
        xp = ctx.xp
        bx = x * beta if beta != 1.0 else x
        soft = xp.log1p(xp.exp(bx))
        if beta != 1.0:
            soft = soft / beta
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(x)
        return xp.where(bx > threshold, x, soft).astype(x.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        beta, threshold = ctx.beta, ctx.threshold
        if grad_mode.is_grad_enabled():  # create_graph: the same formula in lucid ops
            z = (x * beta).exp()
            return lucid.where(x * beta > threshold, g, g * z / (z + 1)), None, None
        return quiet_array_call(ctx.backend, _softplus_grad, ctx.xp, g.array, x.array, beta,
                                threshold), None, None  # fmt: skip


class _LogSigmoid(Function):
    """torch's log_sigmoid: ``min(x, 0) - log1p(exp(-|x|))``; the gradient ``sigmoid(-x)``,
    as ``g / (1 + exp(x))``."""

    _node_name = "LogSigmoidBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        y = _fused(ctx, "logsigmoid", x)
        if y is not None:
            return y
        z = xp.exp(xp.negative(xp.abs(x)))
        return xp.subtract(xp.minimum(x, 0), xp.log1p(z)).astype(x.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        if grad_mode.is_grad_enabled():  # create_graph: differentiable again
            return g * (-x).sigmoid()
        return _grad(ctx, "logsigmoid", _logsigmoid_grad, g, x)


class _SiLU(Function):
    """torch's silu: ``x / (1 + exp(-x))``; the gradient ``s (1 + x (1 - s))`` with ``s =
    sigmoid(x)``. One op where ``x * sigmoid(x)`` made two and ten passes (issue 30)."""

    _node_name = "SiluBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        y = _fused(ctx, "silu", x)
        return y if y is not None else xp.true_divide(x, xp.add(xp.exp(xp.negative(x)), 1))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        if grad_mode.is_grad_enabled():  # create_graph: differentiable again
            s = x.sigmoid()
            return g * s * (1 + x * (1 - s))
        return _grad(ctx, "silu", _silu_grad, g, x)


class _Mish(Function):
    """torch's mish: ``x tanh(log1p(exp(x)))``; the gradient ``t + x s (1 - t^2)`` with ``t``
    that tanh and ``s = sigmoid(x)``."""

    _node_name = "MishBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        return xp.multiply(x, xp.tanh(xp.log1p(xp.exp(x))))

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        if grad_mode.is_grad_enabled():  # create_graph: differentiable again
            t = x.exp().log1p().tanh()
            return g * (t + x * x.sigmoid() * (1 - t * t))
        return quiet_array_call(ctx.backend, _mish_grad, ctx.xp, g.array, x.array)


class _Hardswish(Function):
    """torch's hardswish: ``x * min(max(x + 3, 0), 6) / 6``; the gradient 0 up to -3, ``x / 3
    + 1/2`` between, 1 from 3 (torch's at the kinks)."""

    _node_name = "HardswishBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        y = _fused(ctx, "hardswish", x)
        return y if y is not None else (x * xp.clip(x + 3, 0, 6) / 6).astype(x.dtype)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (x,) = ctx.saved_tensors
        if grad_mode.is_grad_enabled():  # create_graph: g times a piecewise-linear slope
            return g * lucid.where(x <= -3, 0.0, lucid.where(x < 3, x / 3 + 0.5, 1.0))
        return _grad(ctx, "hardswish", _hardswish_grad, g, x)


def _fused(ctx: Any, name: str, x: Any) -> Any:
    """The backend's one-pass activation (``kernels.ACTIVATION``), or None."""
    kernel = kernels.ACTIVATION.find(ctx.backend)
    return None if kernel is None else kernel.forward(ctx.backend, name, x)


def _grad(ctx: Any, name: str, formula: Any, g: Tensor, x: Tensor) -> Tensor:
    """A first-order gradient: the backend's one pass (``kernels.ACTIVATION_GRAD``), else
    ``formula`` on the arrays; either quiet as a forward is (logsigmoid's ``exp(x)`` overflows
    to inf for large x, which is its limit, not an error)."""
    kernel = kernels.ACTIVATION_GRAD.find(ctx.backend)

    def run(xp: Any, ga: Any, xa: Any) -> Any:
        d = None if kernel is None else kernel.forward(ctx.backend, name, ga, xa)
        return formula(xp, ga, xa) if d is None else d

    return quiet_array_call(ctx.backend, run, ctx.xp, g.array, x.array)


# The first-order gradients on arrays (torch's formulas and order), for ``quiet_array_call``.
def _softplus_grad(xp: Any, g: Any, x: Any, beta: float, threshold: float) -> Any:
    bx = x * beta if beta != 1.0 else x
    z = xp.exp(bx)
    return xp.where(bx > threshold, g, g * z / (z + 1)).astype(x.dtype)


def _logsigmoid_grad(xp: Any, g: Any, x: Any) -> Any:
    # sigmoid(-x), torch's max_deriv - sign * z / (1 + z) in one expression: a where() over a
    # random sign mispredicts a branch per element (1.5 ms at 393K elements, 4x the rest)
    return xp.true_divide(g, xp.add(xp.exp(x), 1))


def _silu_grad(xp: Any, g: Any, x: Any) -> Any:
    s = xp.reciprocal(xp.add(xp.exp(xp.negative(x)), 1))
    return g * s * (1 + x * (1 - s))


def _mish_grad(xp: Any, g: Any, x: Any) -> Any:
    t = xp.tanh(xp.log1p(xp.exp(x)))
    s = xp.reciprocal(xp.add(xp.exp(xp.negative(x)), 1))
    return g * (t + x * s * (1 - t * t))


def _hardswish_grad(xp: Any, g: Any, x: Any) -> Any:
    return g * xp.where(x <= -3, 0, xp.where(x < 3, x / 3 + 0.5, 1)).astype(x.dtype)


class _PReLU(Function):
    _node_name = "PreluKernelBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, w: Any) -> Any:
        pos = (x > 0).astype(x.dtype)
        ctx.save_for_backward(x, w, pos)
        return x * (pos + (1 - pos) * w)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        x, w, pos = ctx.saved_tensors
        neg = 1 - pos
        gx = g * (pos + neg * w) if ctx.needs_input_grad[0] else None
        gw = g * neg * x if ctx.needs_input_grad[1] else None
        return gx, gw


def _masked(x: Tensor, kind: str, a: float, b: float) -> Tensor:
    return _MaskedLinear.apply(x, kind, float(a), float(b))


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}  # fmt: skip


def _refuse_integers(kernel: str, input: Tensor, bool_only: bool = False) -> None:
    """torch's CPU kernels that have no integer (or no bool) version raise this."""
    if not isinstance(input, Tensor) or input.dtype.is_floating_point or input.dtype.is_complex:
        return
    name = str(input.dtype).rsplit(".", 1)[-1]
    if bool_only and name != "bool":
        return
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_TORCH_NAMES.get(name, name)}'")


def _integer_piecewise(name: str, input: Tensor, kind: str, a: float, b: float) -> Tensor:
    """hardtanh/threshold on an integer tensor (torch computes them in its dtype; no grad)."""
    if input.dtype is lucid.bool:
        if kind == "threshold":
            raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
        raise RuntimeError(f"Bool inputs not supported for {name}")
    if kind == "hardtanh":  # the bounds in the input's dtype (truncated), as torch's
        if input.dtype is lucid.uint8 and (a < 0 or b < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        result: Tensor = input.clamp(int(a), int(b))
        return result
    keep = input > a
    value = lucid.full((), int(b), dtype=input.dtype, device=input.device)
    result = lucid.where(keep, input, value)
    return result


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``. NOTE: the gradient at 0 is 0, as in PyTorch."""
    if isinstance(input, Tensor) and input.dtype is lucid.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return maybe_inplace(input, lucid.relu(input), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x if x > 0 else negative_slope * x``."""
    out = _masked(check_float("leaky_relu", input), "leaky", negative_slope, 0.0)
    return maybe_inplace(input, out, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient is 1 strictly inside, 0 elsewhere."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:
        return maybe_inplace(
            input, _integer_piecewise("hardtanh", input, "hardtanh", min_val, max_val), inplace
        )
    out = _masked(check_float("hardtanh", input), "hardtanh", min_val, max_val)
    return maybe_inplace(input, out, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x if x > threshold else value``."""
    if isinstance(input, Tensor) and not input.dtype.is_floating_point:
        out = _integer_piecewise("threshold", input, "threshold", threshold, value)
        return maybe_inplace(input, out, inplace)
    out = _masked(check_float("threshold", input), "threshold", threshold, value)
    return maybe_inplace(input, out, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``."""
    out = _masked(check_float("hardsigmoid", input), "hardsigmoid", 0.0, 0.0)
    return maybe_inplace(input, out, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)`` (Howard et al., 2019)."""
    return maybe_inplace(input, _Hardswish.apply(check_float("hardswish", input)), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x if x > 0 else alpha * (exp(x) - 1)``."""
    out = _ELU.apply(check_float("elu", input), float(alpha), 1.0, 1.0)
    return maybe_inplace(input, out, inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants (Klambauer et al., 2017)."""
    out = _ELU.apply(check_float("selu", input), _SELU_ALPHA, _SELU_SCALE, 1.0)
    return maybe_inplace(input, out, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    out = _ELU.apply(check_float("celu", input), float(alpha), 1.0, 1.0 / alpha)
    return maybe_inplace(input, out, inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``: exact (erf) or ``approximate="tanh"`` (Hendrycks & Gimpel, 2016).

    One fused op (``lucid.special.gelu``): a backend may replace it with a native kernel, and
    its backward is written in lucid ops, so double backward works.
    """
    if type(input) is Tensor and approximate in _GELU_FORMS and unrecorded(input):
        y = _gelu_unrecorded(input, approximate)
        if y is not None:
            return y
    return lucid.special.gelu(check_float("gelu", input), approximate)


_GELU_FORMS = ("none", "tanh")


def _gelu_unrecorded(x: Tensor, approximate: str) -> Tensor | None:
    """``Gelu.apply``'s forward where it would record nothing (``unrecorded``): the backend's
    ``kernels.GELU`` called as that forward calls it, without the ``Function`` call (a
    generated token's 4 GELUs, issue 30); None where there is no kernel or it declines (a
    dtype it does not take: the op then runs, and checks, as before)."""
    be = x._backend
    fused = kernels.GELU.find(be)
    if fused is None:
        return None
    quiet = be.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        out = fused.forward(be, x._data, approximate)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return None if out is None else Tensor.from_backend_array(out, be)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (a.k.a. swish)."""
    _refuse_integers("silu_cpu", input)
    if input.dtype.is_complex:  # torch's silu takes complex numbers: the composite formula
        return maybe_inplace(input, input * input.sigmoid(), inplace)
    return maybe_inplace(input, _SiLU.apply(check_float("silu", input)), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    return maybe_inplace(input, _Mish.apply(check_float("mish", input)), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``."""
    return _Softplus.apply(check_float("softplus", input), float(beta), float(threshold))


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``."""
    _refuse_integers("abs_cpu", input, bool_only=True)
    result: Tensor = input / (input.abs() + 1)
    return result


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably as ``-softplus(-x)``."""
    return _LogSigmoid.apply(check_float("logsigmoid", input))


def sigmoid(input: Tensor) -> Tensor:
    """Applies ``1 / (1 + exp(-x))`` elementwise."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Applies the hyperbolic tangent elementwise."""
    return input.tanh()


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    if isinstance(input, Tensor) and input.dtype is lucid.bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    result: Tensor = input - input.tanh()
    return result


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x if |x| > lambd else 0``."""
    _refuse_integers("hardshrink_cpu", input)
    keep = (input.abs() > lambd).to(input.dtype)
    result: Tensor = input * keep
    return result


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd if x > lambd, x + lambd if x < -lambd, else 0``."""
    _refuse_integers("softshrink_check", input)
    if not lambd >= 0:
        raise RuntimeError(
            f"lambda must be in range [0, {lucid.finfo(input.dtype).max:.6g}] for input dtype "
            f"{input.dtype}, but found {lambd}."
        )
    up = (input > lambd).to(input.dtype)
    down = (input < -lambd).to(input.dtype)
    return (input - lambd) * up + (input + lambd) * down


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``exp(x) / sum(exp(x), dim)`` (stable: the max is subtracted first)."""
    if dim is None:
        _implicit_dim("softmax", _stacklevel)
    return lucid.softmax(input, dim, dtype=dtype)


def _implicit_dim(name: str, stacklevel: int) -> None:
    """torch's warning for ``dim=None`` (the legacy choice: 0 for 0-, 1- and 3-d, else 1)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )


def softmin(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``softmax(-x, dim)``."""
    if dim is None:
        _implicit_dim("softmin", _stacklevel)
    return lucid.softmax(-input, dim, dtype=dtype)


# NumPy's dtypes of lucid's float16, float32 and float64 (``log_softmax``'s direct route)
_FLOAT_NATIVE = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``log(softmax(x, dim))`` without forming the softmax."""
    if dim is None:
        _implicit_dim("log_softmax", _stacklevel)
    elif dtype is None and type(dim) is int and type(input) is Tensor:
        # a floating NumPy tensor and a dim in range: the op's checks pass and name this dim
        # (``lucid.log_softmax``'s Function, without them: a batch-1 classifier's per-step op)
        arr = input._data
        if type(arr) is np.ndarray and arr.dtype in _FLOAT_NATIVE:
            n = arr.ndim
            if n and -n <= dim < n:  # (its Function.apply too, where nothing watches)
                return _softmax_direct(_LogSoftmax, input, dim % n)
    return lucid.log_softmax(input, dim, dtype=dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a, b`` are the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.ndim
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {n} "
            f"(input of shape {tuple(input.shape)})"
        )
    lead = (slice(None),) * d
    a = input[lead + (slice(0, n // 2),)]
    b = input[lead + (slice(n // 2, n),)]
    result: Tensor = a * b.sigmoid()
    return result


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x if x > 0 else weight * x``; ``weight`` has 1 or C (= input.shape[1]) entries."""
    input, weight = lower_precision_inputs(input, weight)
    check_float("prelu", input)
    if input.ndim == 0 and weight.numel() != 1:  # torch checks this first
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else input.shape[0] if input.ndim else 1
        if n != channels:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels} (input of shape {tuple(input.shape)})."
            )
        shape = [1] * input.ndim
        shape[1 if input.ndim >= 2 else 0] = n
        weight = weight.reshape(*shape)
    elif input.ndim > 0:
        weight = weight.reshape(*([1] * input.ndim))
    else:
        weight = weight.reshape(())
    return _PReLU.apply(input, weight)
