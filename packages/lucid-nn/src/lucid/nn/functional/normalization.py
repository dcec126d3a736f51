"""Normalisation: batch_norm, layer_norm (fused, hand-written backward), group_norm,
instance_norm, local_response_norm, normalize, rms_norm.

batch_norm and layer_norm are single Functions that a backend's array kernel may compute
(``kernels.BATCH_NORM``, ``kernels.LAYER_NORM``: arrays in, arrays out, or None to let the
reference below run). Their backward is fused on arrays; under ``create_graph=True`` (double
backward, ``jvp``/``jacfwd``/``hessian``) it is computed instead from the same formulas in
differentiable lucid ops on the saved input (``_norm_grads``).
"""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor, kernels
from lucid.autograd import Function, grad_mode, no_grad
from lucid.autograd.function import records_nothing
from lucid.nn.functional._util import (
    check_float,
    fused_backward,
    fused_forward,
    input_at,
    promote_float,
    wrap,
)
from lucid.ops.shape import ints_of

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "normalize",
    "rms_norm",
]


def _norm_grads(
    x: Tensor,
    w: Tensor | None,
    g: Tensor,
    axes: tuple[int, ...],
    red: tuple[int, ...],
    w_shape: tuple[int, ...],
    eps: float,
    needs: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """(dx, dweight, dbias) of ``(x - mean) / sqrt(var + eps) * w + b``, normalised over
    ``axes``, in lucid ops (so differentiable again); ``w`` broadcasts as ``w_shape`` and its
    gradient sums over ``red``."""  # fmt: skip
    mean = x.mean(dim=axes, keepdim=True)
    xc = x - mean
    invstd = ((xc * xc).mean(dim=axes, keepdim=True) + eps).rsqrt()
    xhat = xc * invstd
    gx = gw = gb = None
    if needs[0]:
        gxhat = g if w is None else g * w.reshape(w_shape)
        m1 = gxhat.mean(dim=axes, keepdim=True)
        m2 = (gxhat * xhat).mean(dim=axes, keepdim=True)
        gx = invstd * (gxhat - m1 - xhat * m2)
    if needs[1]:
        gw = (g * xhat).sum(dim=red)
    if needs[2]:
        gb = g.sum(dim=red)
    return gx, gw, gb


def _input(ctx: Any, i: int, values: Any) -> Any:
    """Input ``i`` for a double backward: at its graph position where it needs a gradient,
    else a constant; None for an absent (None) weight."""
    if values is None:
        return None
    t = input_at(ctx, i, values)
    return wrap(ctx, values) if t is None else t


def _normalize(xp: Any, x: Any, axes: tuple[int, ...], eps: float) -> tuple[Any, Any, Any, Any]:
    """(x_hat, 1/std, mean, biased var) over ``axes`` (kept as size-1 dims)."""
    mean = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    var = xp.mean(xc * xc, axis=axes, keepdims=True)
    invstd = 1.0 / xp.sqrt(var + eps)
    return xc * invstd, invstd, mean, var


class _BatchNorm(Function):
    """Training-mode batch norm over all dims but 1; also returns the batch mean and var.

    Works on the (N, C, L) view; per-channel sums are GEMVs with a ones vector, which BLAS
    does several times faster than a strided multi-axis reduction.
    """

    @staticmethod
    def forward(ctx: Any, x: Any, weight: Any, bias: Any, eps: float) -> Any:
        ctx.eps = eps
        fused = kernels.BATCH_NORM.find(ctx.backend)
        done = None if fused is None else fused.forward(ctx.backend, x, weight, bias, eps)
        ctx.fused = None if done is None else fused
        if done is not None:
            y, batch_mean, batch_var, ctx.stats = done
            ctx.save_for_backward(x, weight)  # the kernel's backward reads x (in-place check)
            ctx.mark_non_differentiable(batch_mean, batch_var)
            return y, batch_mean, batch_var
        xp = ctx.xp
        n, c = x.shape[:2]
        x3 = x.reshape(n, c, -1)
        ones = xp.ones(x3.shape[2], dtype=x.dtype)
        count = n * x3.shape[2]
        mean = xp.sum(x3 @ ones, axis=0) / count
        xc = x3 - mean.reshape(c, 1)
        var = xp.sum((xc * xc) @ ones, axis=0) / count
        invstd = 1.0 / xp.sqrt(var + eps)
        xhat = xc * invstd.reshape(c, 1)
        y = xhat if weight is None else xhat * weight.reshape(c, 1)
        if bias is not None:
            y = y + bias.reshape(c, 1)
        ctx.ones, ctx.count, ctx.w = ones, count, weight
        ctx.xhat, ctx.invstd, ctx.mean, ctx.shape = xhat, invstd, mean, x.shape
        ctx.mark_non_differentiable(mean, var)
        return y.reshape(x.shape), mean, var

    @staticmethod
    def backward(ctx: Any, g: Tensor, _gm: Any, _gv: Any) -> Any:
        if grad_mode.is_grad_enabled():  # create_graph: the same gradients, differentiable
            if ctx.fused is not None:
                x, w = ctx.saved_tensors
            else:  # x rebuilt from what the forward kept: the graph does not hold x itself
                c = ctx.invstd.shape[0]
                xv = ctx.xhat / ctx.invstd.reshape(c, 1) + ctx.mean.reshape(c, 1)
                x, w = _input(ctx, 0, xv.reshape(ctx.shape)), _input(ctx, 1, ctx.w)
            axes = (0, *range(2, x.ndim))
            shape = (1, -1) + (1,) * (x.ndim - 2)
            grads = _norm_grads(x, w, g, axes, axes, shape, ctx.eps, ctx.needs_input_grad[:3])
            return (*grads, None)
        if ctx.fused is not None:
            x, _ = ctx.saved_tensors
            grads = ctx.fused.backward(ctx.backend, x.array, g.array, ctx.stats,
                                       ctx.needs_input_grad[:3])  # fmt: skip
            return (*[None if a is None else wrap(ctx, a) for a in grads], None)
        xp, xhat, ones, w = ctx.xp, ctx.xhat, ctx.ones, ctx.w
        n, c = xhat.shape[:2]
        g3 = g.array.reshape(xhat.shape)
        gb = xp.sum(g3 @ ones, axis=0)
        gw = xp.sum((g3 * xhat) @ ones, axis=0)
        gx = None
        if ctx.needs_input_grad[0]:
            scale = ctx.invstd if w is None else ctx.invstd * w
            m = ctx.count
            gx = scale.reshape(c, 1) * (g3 - (gb / m).reshape(c, 1) - xhat * (gw / m).reshape(c, 1))
            gx = wrap(ctx, gx.reshape(g.shape))
        gw_t = wrap(ctx, gw) if ctx.needs_input_grad[1] else None
        gb_t = wrap(ctx, gb) if ctx.needs_input_grad[2] else None
        return gx, gw_t, gb_t, None


class _LayerNorm(Function):
    """Normalise over the last ``nd`` dims, then an elementwise affine (optional)."""

    _node_name = "NativeLayerNormBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, x: Any, weight: Any, bias: Any, nd: int, eps: float) -> Any:
        ctx.nd, ctx.eps = nd, eps
        y = fused_forward(ctx, kernels.LAYER_NORM, x, weight, bias, nd, eps)
        if y is not None:
            ctx.save_for_backward(x, weight)  # a double backward recomputes from them
            return y
        axes = tuple(range(x.ndim - nd, x.ndim))
        xhat, invstd, mean, _ = _normalize(ctx.xp, x, axes, eps)
        y = xhat if weight is None else xhat * weight
        if bias is not None:
            y = y + bias
        ctx.axes, ctx.lead = axes, tuple(range(x.ndim - nd))
        ctx.xhat, ctx.invstd, ctx.w, ctx.mean = xhat, invstd, weight, mean
        return y

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if grad_mode.is_grad_enabled():  # create_graph: the same gradients, differentiable
            if ctx.fused is not None:
                x, w = ctx.saved_tensors
            else:  # x rebuilt from what the forward kept: the graph does not hold x itself
                xv = ctx.xhat / ctx.invstd + ctx.mean
                x, w = _input(ctx, 0, xv), _input(ctx, 1, ctx.w)
            lead = x.ndim - ctx.nd
            axes, red = tuple(range(lead, x.ndim)), tuple(range(lead))
            needs = ctx.needs_input_grad[:3]
            return (*_norm_grads(x, w, g, axes, red, x.shape[lead:], ctx.eps, needs), None, None)
        if ctx.fused is not None:
            ctx.saved_tensors  # noqa: B018 - the version check: the kernel kept x itself
            return fused_backward(ctx, g)
        xp, axes, w = ctx.xp, ctx.axes, ctx.w
        gy, xhat = g.array, ctx.xhat
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gxhat = gy if w is None else gy * w
            m1 = xp.mean(gxhat, axis=axes, keepdims=True)
            m2 = xp.mean(gxhat * xhat, axis=axes, keepdims=True)
            gx = wrap(ctx, ctx.invstd * (gxhat - m1 - xhat * m2))
        if ctx.needs_input_grad[1]:
            gw = wrap(ctx, xp.sum(gy * xhat, axis=ctx.lead))
        if ctx.needs_input_grad[2]:
            gb = wrap(ctx, xp.sum(gy, axis=ctx.lead))
        return gx, gw, gb, None, None


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    return (1, -1) + (1,) * (x.ndim - 2)


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    shape = _channel_shape(y)
    if weight is not None:
        y = y * weight.reshape(*shape)
    if bias is not None:
        y = y + bias.reshape(*shape)
    return y


def _update_running(stat: Tensor, batch: Tensor, momentum: float) -> None:
    with no_grad():
        stat.copy_(stat * (1.0 - momentum) + batch.to(stat.dtype) * momentum)


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation over dim 1 (channels) of (N, C) or (N, C, ...) inputs.

    In training the batch statistics normalise and the running ones (if given) are updated in
    place: ``running = (1 - momentum) * running + momentum * batch`` (unbiased var).
    Otherwise the running statistics normalise.
    """
    check_float("batch_norm", input)
    if input.ndim < 2:
        raise ValueError(f"batch_norm expected 2D or more input, got {tuple(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):  # fmt: skip
        if t is not None and t.numel() != c:
            raise RuntimeError(
                f"batch_norm: {name} should contain {c} elements not {t.numel()} "
                f"(input of shape {tuple(input.shape)})"
            )
    if training:
        n = input.numel() // c if c else 0
        if input.numel() == 0:  # torch: an empty batch passes through, the stats stay
            return _affine(input, weight, bias)
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{tuple(input.shape)}"
            )
        y, mean, var = _BatchNorm.apply(input, weight, bias, float(eps))
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * (n / (n - 1)), momentum)
        return y
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in eval mode")
    scale = (running_var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    shape = _channel_shape(input)
    result: Tensor = input * scale.reshape(*shape) + shift.reshape(*shape)
    return result


def layer_norm(
    input: Tensor,
    normalized_shape: int | tuple[int, ...] | list[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims (Ba et al., 2016)."""
    check_float("layer_norm", input)
    shape = ints_of(normalized_shape)
    nd = len(shape)
    size = tuple(input._data.shape)  # the shapes as the arrays' tuples (per-call cost)
    if size[len(size) - nd :] != shape or nd > len(size):
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(str(s) for s in shape)}], but got input of size {list(size)}"
        )
    if weight is not None and tuple(weight._data.shape) != shape:
        raise RuntimeError(f"layer_norm: weight of shape {weight.shape} does not match {shape}")
    if bias is not None and tuple(bias._data.shape) != shape:
        raise RuntimeError(f"layer_norm: bias of shape {bias.shape} does not match {shape}")
    return _layer_norm_checked(input, weight, bias, nd, eps)


def _layer_norm_checked(
    input: Tensor, weight: Tensor | None, bias: Tensor | None, nd: int, eps: float
) -> Tensor:
    """``layer_norm`` past its checks (``LayerNorm`` calls it where its own checks imply
    them: generation's 9 layer norms a token, issue 30)."""
    if records_nothing():  # no node to record: the backend's compiled rows, if it has them
        y = _layer_norm_no_grad(input, weight, bias, nd, float(eps))
        if y is not None:
            return y
    return _LayerNorm.apply(input, weight, bias, nd, float(eps))


def _layer_norm_no_grad(
    x: Tensor, weight: Tensor | None, bias: Tensor | None, nd: int, eps: float
) -> Tensor | None:
    """``_LayerNorm.forward``'s fused kernel call without a ``Function`` call (generation's
    small layer norms, docs/performance.md); None where the backend has no kernel, it
    declines, or the tensors are on different backends (the op then runs as usual)."""
    be = x._backend
    # (written out, no generator: generation's 9 layer norms a token, issue 30)
    if (weight is not None and weight._backend is not be) or (
        bias is not None and bias._backend is not be
    ):
        return None
    fused = kernels.LAYER_NORM.find(be)
    if fused is None:
        return None
    quiet = be.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        done = fused.forward(be, x._data, None if weight is None else weight._data,
                             None if bias is None else bias._data, nd, eps)  # fmt: skip
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    return None if done is None else Tensor.from_backend_array(done[0], be)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each group of ``C / num_groups`` channels per sample (Wu & He, 2018)."""
    check_float("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    if input.shape[1] % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {tuple(input.shape)} and num_groups={num_groups}"
        )
    n = input.shape[0]
    if input.numel() == 0:  # an empty batch passes through (torch's result)
        return _affine(input, weight, bias)
    y = _LayerNorm.apply(input.reshape(n, num_groups, -1), None, None, 1, float(eps))
    return _affine(y.reshape(*input.shape), weight, bias)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims (Ulyanov et al., 2016)."""
    check_float("instance_norm", input)
    if input.ndim < 3:
        raise ValueError(
            f"instance_norm expected input of shape (N, C, *) with spatial dims, got "
            f"{tuple(input.shape)}"
        )
    n, c = input.shape[:2]
    if input.numel() == 0:  # an empty batch passes through (torch's result)
        return _affine(input, weight, bias)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: running stats are needed when use_input_stats=False")
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    flat = input.reshape(n, c, -1)
    length = flat.shape[-1]
    if length <= 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size "
            f"{tuple(input.shape)}"
        )
    y = _LayerNorm.apply(flat, None, None, 1, float(eps)).reshape(*input.shape)
    if running_mean is not None or running_var is not None:
        with no_grad():
            xd = flat.detach()
            mean = xd.mean(-1)
            var = ((xd - mean.unsqueeze(-1)) ** 2).sum(-1) / (length - 1)
            if running_mean is not None:
                _update_running(running_mean, mean.mean(0), momentum)
            if running_var is not None:
                _update_running(running_var, var.mean(0), momentum)
    return _affine(y, weight, bias)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divide by ``(k + alpha/size * sum of squares over size neighbouring channels) ** beta``.

    As in AlexNet (Krizhevsky et al., 2012) and PyTorch: the window is zero-padded, and the
    sum is averaged over ``size`` (so ``alpha`` multiplies the mean).
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"local_response_norm(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if input.ndim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)"
        )
    if input.numel() == 0:
        return input  # torch too returns an empty input as it is, of any dtype
    if input.dtype is lucid.bool:
        input = promote_float("local_response_norm", input)
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    rest = input.shape[2:]
    parts = []
    if before:
        parts.append(
            lucid.zeros(input.shape[0], before, *rest, dtype=input.dtype, device=input.device)
        )
    parts.append(sq)
    if after:
        parts.append(
            lucid.zeros(input.shape[0], after, *rest, dtype=input.dtype, device=input.device)
        )
    padded = lucid.cat(parts, 1) if len(parts) > 1 else sq
    window = padded[:, 0:c]
    for i in range(1, size):
        window = window + padded[:, i : i + c]
    if input.dtype.is_floating_point or input.dtype.is_complex:
        scaled = window * (alpha / size)
    else:  # torch averages integer squares with avg_pool, whose integer mean truncates
        scaled = lucid.div(window, size, rounding_mode="floor") * alpha
    div = (scaled + k) ** beta
    return input / div


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None
) -> Tensor:
    """``x / max(||x||_p, eps)`` along ``dim``."""
    check_float("normalize", input)
    # lucid.norm's rules: p=0 counts the nonzeros, p=inf is the largest |x|, and the p=2
    # gradient is 0 (not nan) on an all-zero slice, as torch's
    norm = input.norm(p, dim, keepdim=True)
    result: Tensor = input / norm.clamp(min=eps)
    return result


_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def rms_norm(
    input: Tensor,
    normalized_shape: int | tuple[int, ...] | list[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims (Zhang &
    Sennrich, 2019): ``x / sqrt(mean(x**2) + eps) * weight``; ``eps=None`` is the machine
    epsilon of the input's dtype (torch's default)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rms_norm(): argument 'input' must be Tensor, not {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"rms_norm" not implemented for {input.dtype}')
    shape = ints_of(normalized_shape)
    nd = len(shape)
    if nd == 0:
        raise RuntimeError(
            f"Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            f"one element, but got normalized_shape = {list(shape)}"
        )
    if nd > input.ndim or input.shape[input.ndim - nd :] != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    if eps is None:
        eps = _EPS[str(input.dtype).rsplit(".", 1)[-1]]
    dims = tuple(range(input.ndim - nd, input.ndim))
    y: Tensor = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        y = y * weight
    return y
