"""Losses with PyTorch's reduction semantics ("none", "mean", "sum").

cross_entropy with class indices is one fused Function (log-softmax, pick, weight, smoothing
and reduction in one node, backward ``softmax - target`` in one pass): it dominates the time
of small models' training steps.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid import Tensor, arange, dtypes, kernels
from lucid.amp.autocast_mode import float32_op
from lucid.autograd import Function, grad_mode
from lucid.autograd.function import ops_watched
from lucid.nn.functional._util import (
    REDUCTIONS,
    apply_reduction,
    check_float,
    check_reduction,
    input_at,
    legacy_reduction,
    promote_float,
    wrap,
)
from lucid.nn.functional.activation import log_softmax, logsigmoid
from lucid.nn.functional.distance import pairwise_distance

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


def _check_same_size(name: str, input: Tensor, target: Tensor) -> None:
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=5,  # the caller of the loss (past _pointwise and float32_op's wrapper)
        )


def _pointwise(name: str, input: Tensor, target: Tensor) -> None:
    check_float(name, input)
    _check_same_size(name, input, target)


def _named(loss: Tensor, name: str) -> Tensor:
    """Give ``loss``'s last node torch's name for the whole loss (``MseLossBackward0``): lucid
    composes the loss of several ops where torch records one node, and a printed ``grad_fn``
    shows the name. ``loss`` must be a result this call made, never an argument."""
    node = loss.grad_fn
    if node is not None:
        node._node_name = name
    return loss


def _nll_named(loss: Tensor, ndim: int, reduction: str) -> Tensor:
    """torch's name of an nll_loss (or cross_entropy) node for an input of ``ndim`` dims: its
    2-D kernel's for (N, C, H, W), and for (N, C, L) but under "none" (whose result torch
    views back: ``ViewBackward0``, as lucid's reshape)."""
    if ndim == 3 and reduction == "none" or ndim > 4:
        return loss
    return _named(loss, "NllLoss2DBackward0" if ndim >= 3 else "NllLossBackward0")


# -- regression -----------------------------------------------------------------------------------
def _weighted(loss: Tensor, reduction: str, weight: Tensor | None) -> Tensor:
    """mse_loss's and l1_loss's reduction: with a ``weight`` of the input's size, torch's mean
    is the weighted one, ``sum(weight * loss) / sum(weight)``."""
    if weight is None:
        return apply_reduction(loss, reduction)
    if tuple(weight.shape) != tuple(loss.shape):
        raise ValueError(
            f"Weights and input must have the same size. Got weight {list(weight.shape)} and "
            f"input {list(loss.shape)}"
        )
    weighted = loss * weight
    if reduction == "mean":
        out: Tensor = weighted.sum() / weight.sum()
        return out
    return apply_reduction(weighted, reduction)


@float32_op
def mse_loss(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean", weight: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """Mean squared error ``(x - y)^2``."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    _pointwise("mse_loss", input, target)
    d = input - target
    loss = d * d
    if weight is None:  # torch's weighted form is composed too, and shows its last op
        return _named(apply_reduction(loss, reduction), "MseLossBackward0")
    return _weighted(loss, reduction, weight)


@float32_op
def l1_loss(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean", weight: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """Mean absolute error ``|x - y|`` (each term scaled by ``weight`` when given, as
    ``mse_loss``'s)."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    _pointwise("l1_loss", input, target)
    return _weighted((input - target).abs(), reduction, weight)


def _piecewise_quadratic(d: Tensor, delta: float) -> tuple[Tensor, Tensor]:
    """The float mask where ``|d| < delta``, and ``|d|``."""
    ad = d.abs()
    inside = (ad < delta).to(d.dtype)
    return inside, ad


@float32_op
def smooth_l1_loss(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean", beta: float = 1.0,
) -> Tensor:  # fmt: skip
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (Girshick, 2015)."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    _pointwise("smooth_l1_loss", input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - target
    if beta == 0.0:
        return apply_reduction(d.abs(), reduction)
    inside, ad = _piecewise_quadratic(d, beta)
    loss = inside * (d * d * (0.5 / beta)) + (1 - inside) * (ad - 0.5 * beta)
    return _named(apply_reduction(loss, reduction), "SmoothL1LossBackward0")


@float32_op
def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    reduction = check_reduction(reduction)
    if not delta > 0:
        raise RuntimeError(
            f"huber_loss does not support non-positive values for delta. Got delta={delta}"
        )
    _pointwise("huber_loss", input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - target
    inside, ad = _piecewise_quadratic(d, delta)
    loss = inside * (d * d * 0.5) + (1 - inside) * ((ad - 0.5 * delta) * delta)
    if weight is None:  # torch's weighted form is composed too, and shows its last op
        return _named(apply_reduction(loss, reduction), "HuberLossBackward0")
    return apply_reduction(loss, reduction, weight)


# -- binary classification ------------------------------------------------------------------------
class _BCE(Function):
    """``-(t log x + (1 - t) log(1 - x))`` with the logs clamped at -100, as PyTorch."""

    @staticmethod
    def forward(ctx: Any, x: Any, t: Any) -> Any:
        xp = ctx.xp  # log(0) = -inf is quiet: Function.apply runs forwards without fp warnings
        log_x = xp.maximum(xp.log(x), -100.0)
        log_1mx = xp.maximum(xp.log1p(-x), -100.0)
        ctx.save_for_backward(x, t, log_x, log_1mx)
        return -(t * log_x + (1 - t) * log_1mx)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        x, t, log_x, log_1mx = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = g * (x - t) / ((1 - x) * x).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:
            gt = g * (log_1mx - log_x)
        return gx, gt


@float32_op
def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
    reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Binary cross entropy between probabilities ``input`` and ``target`` (same shape)."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    check_float("binary_cross_entropy", input)
    if input.shape != target.shape:
        raise ValueError(
            f"Using a target size ({tuple(target.shape)}) that is different to the input size "
            f"({tuple(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    if input.numel() and input.backend.any_true(((input < 0) | (input > 1)).array):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = _BCE.apply(input, target.to(input.dtype))
    return _named(apply_reduction(loss, reduction, weight), "BinaryCrossEntropyBackward0")


@float32_op
def binary_cross_entropy_with_logits(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
    reduce: bool | None = None, reduction: str = "mean", pos_weight: Tensor | None = None,
) -> Tensor:  # fmt: skip
    """Sigmoid + binary cross entropy in one stable expression.

    ``loss = (1 - t) x - (1 + (pos_weight - 1) t) log(sigmoid(x))``.
    """
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    check_float("binary_cross_entropy_with_logits", input)
    if input.shape != target.shape:
        raise ValueError(
            f"Target size ({tuple(target.shape)}) must be the same as input size "
            f"({tuple(input.shape)})"
        )
    t = target.to(input.dtype)
    log_sig = logsigmoid(input)
    if pos_weight is None:
        loss = (1 - t) * input - log_sig
    else:
        loss = (1 - t) * input - (1 + (pos_weight - 1) * t) * log_sig
    return _named(apply_reduction(loss, reduction, weight), "BinaryCrossEntropyWithLogitsBackward0")


# -- multi-class classification -------------------------------------------------------------------
# cross_entropy without class weights or label smoothing takes the backend's log_softmax rows
# and nll_loss's one-hot gradient through them (``kernels.LOG_SOFTMAX``, ``ONE_HOT_ROWS``,
# ``LOG_SOFTMAX_GRAD``): the bits of ``nll_loss(log_softmax(x, 1))``, torch's own composition,
# in one node (a (700, 10,000) float32 step 18.8 -> ~9 ms at one thread; issue 30,
# docs/performance.md). False: the softmax probabilities computed here, as before.
FUSED_LOG_SOFTMAX = True
# From this many logits the gradient goes through the backend's one-hot kernels (their compiled
# rows); fewer: the same formula as a few array calls (a (64, 10) loss: 47 -> ~25 us).
_ONE_HOT_KERNEL_ELEMENTS = 1 << 18


class _CrossEntropy(Function):
    """Cross entropy of (M, C) logits with class indices; the loss and its backward fused.

    The per-row loss is ``(1 - eps) w_t (-logp_t) + eps / C * sum_c w_c (-logp_c)`` on rows
    whose target is not ``ignore_index``; "mean" divides by the summed ``w_t`` of those rows.
    """

    _node_name = "NllLossBackward0"  # torch's name of this node

    @staticmethod
    def forward(
        ctx: Any, x: Any, t: Any, w: Any, ignore_index: int, smoothing: float, reduction: str
    ) -> Any:
        xp = ctx.xp
        m, c = x.shape
        ctx.logp = None
        if w is None and smoothing == 0 and FUSED_LOG_SOFTMAX:
            kernel = kernels.LOG_SOFTMAX.find(ctx.backend)
            logp = None if kernel is None else kernel.forward(ctx.backend, x, 1)
            if logp is not None:
                return _CrossEntropy._from_log_softmax(ctx, logp, t, ignore_index, reduction)
        shifted = x - xp.max(x, axis=1, keepdims=True)
        e = xp.exp(shifted)
        sum_e = xp.sum(e, axis=1, keepdims=True)
        logp = shifted - xp.log(sum_e)
        valid = t != ignore_index
        tt = xp.where(valid, t, 0)
        ctx.backend.check_index_range(tt, 0, c, _target_error("cross_entropy", c))
        validf = valid.astype(x.dtype)
        w_t = validf if w is None else xp.take(w, tt) * validf
        rows = xp.arange(m)
        picked = logp[rows, tt]
        loss = -(w_t * picked)
        if smoothing > 0:
            wl = logp if w is None else logp * w
            smooth = -xp.sum(wl, axis=1) * validf
            loss = loss * (1 - smoothing) + smooth * (smoothing / c)
        ctx.probs, ctx.rows, ctx.tt, ctx.w_t, ctx.validf = e / sum_e, rows, tt, w_t, validf
        ctx.w, ctx.smoothing, ctx.reduction = w, smoothing, reduction
        return _reduce_loss(ctx, loss, w_t, reduction)

    @staticmethod
    def _from_log_softmax(ctx: Any, logp: Any, t: Any, ignore_index: int, reduction: str) -> Any:
        """The loss from the backend's log_softmax rows ``logp``: ``nll_loss(log_softmax(x))``'s
        arithmetic (``_nll_forward``: the same bits), one node."""
        ctx.logp, ctx.w, ctx.smoothing = logp, None, 0.0
        loss = _nll_forward(ctx, logp, t, None, ignore_index, reduction, "cross_entropy")
        ctx.validf = ctx.w_t
        return loss

    @staticmethod
    def _grad_from_log_softmax(ctx: Any, g: Tensor) -> Any:
        """``log_softmax``'s backward of ``nll_loss``'s one-hot gradient (``_NllLoss.backward``
        then ``LogSoftmax``'s: the same bits as the two ops), through the backend's kernels
        (``ONE_HOT_ROWS``, ``LOG_SOFTMAX_GRAD``) where it has them."""
        xp, be, logp = ctx.xp, ctx.backend, ctx.logp
        shape = logp.shape
        vals = _nll_values(ctx, g)
        rows, tt = ctx.rows, ctx.tt
        if logp.size < _ONE_HOT_KERNEL_ELEMENTS:
            # the one-hot formula's arithmetic on the arrays (``0 - e s`` off the targets,
            # ``v - e s`` at them, ``s = v + 0`` the row's sum): the bits the kernels give,
            # without their one-hot array
            e = xp.exp(logp)
            sums = vals + 0  # a weak scalar: the dtype stays
            grad = 0 - e * sums.reshape(shape[0], 1)
            grad = be.setitem(grad, (rows, tt), vals - e[rows, tt] * sums)
            return wrap(ctx, grad)
        one_hot = kernels.ONE_HOT_ROWS.find(be)
        g1 = None if one_hot is None else one_hot.forward(be, shape, tt, vals)
        if g1 is None:
            g1 = be.setitem(xp.zeros(shape, dtype=logp.dtype), (rows, tt), vals)
        kernel = kernels.LOG_SOFTMAX_GRAD.find(be)
        grad = None if kernel is None else kernel.forward(be, g1, logp, 1)
        if grad is None:
            grad = g1 - xp.exp(logp) * xp.sum(g1, axis=1, keepdims=True)
        return wrap(ctx, grad)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        if grad_mode.is_grad_enabled():  # create_graph: the same gradient, differentiable
            if ctx.logp is not None:
                ctx.probs = ctx.xp.exp(ctx.logp)
            return (_cross_entropy_grad(ctx, g), None, None, None, None, None)
        if ctx.logp is not None:
            return _CrossEntropy._grad_from_log_softmax(ctx, g), None, None, None, None, None
        xp = ctx.xp
        probs, tt, w_t, eps = ctx.probs, ctx.tt, ctx.w_t, ctx.smoothing
        m, c = probs.shape
        # d loss_i / d logp = -(1 - eps) w_t onehot - eps / C * valid * w; through log-softmax
        # that is a - p * sum(a).
        a_sum = w_t * (1 - eps)
        grad = probs * a_sum.reshape(m, 1)
        rows = ctx.rows
        if eps > 0:
            wv = xp.ones(c, dtype=probs.dtype) if ctx.w is None else ctx.w
            grad = grad + probs * (ctx.validf * (eps / c) * xp.sum(wv)).reshape(m, 1)
            grad = grad - (ctx.validf * (eps / c)).reshape(m, 1) * wv.reshape(1, c)
        grad = ctx.backend.setitem(grad, (rows, tt), grad[rows, tt] - a_sum)
        gd = g.array
        if ctx.reduction == "none":
            grad = grad * gd.reshape(m, 1)
        elif ctx.reduction == "sum":
            grad = grad * gd
        else:  # every target ignored: the loss is nan, its gradient 0 (torch's)
            nonzero = ctx.denom != 0
            grad = grad * (xp.where(nonzero, gd, 0) / xp.where(nonzero, ctx.denom, 1))
        return wrap(ctx, grad.astype(probs.dtype)), None, None, None, None, None


def _cross_entropy_grad(ctx: Any, g: Tensor) -> Tensor:
    """_CrossEntropy's input gradient ``(p * s - k) * g'`` in lucid ops (so a double backward,
    ``jvp`` or ``hessian`` goes through it): ``p = softmax(x)`` at the logits' graph position,
    ``s`` the per-row weight sum, ``k`` the constant targets-and-smoothing part."""
    xp = ctx.xp
    dt = ctx.probs.dtype
    # log p is the logits shifted per row: the same softmax, at the logits' graph position
    x = input_at(ctx, 0, xp.log(ctx.probs))
    p = wrap(ctx, ctx.probs) if x is None else x.softmax(1)
    m, c = ctx.probs.shape
    eps, validf = ctx.smoothing, ctx.validf
    a_sum = ctx.w_t * (1 - eps)
    s, k = a_sum, xp.zeros((m, c), dtype=dt)
    if eps > 0:
        wv = xp.ones(c, dtype=dt) if ctx.w is None else ctx.w
        s = s + validf * (eps / c) * xp.sum(wv)
        k = k + (validf * (eps / c)).reshape(m, 1) * wv.reshape(1, c)
    k = ctx.backend.setitem(k, (ctx.rows, ctx.tt), k[ctx.rows, ctx.tt] + a_sum)
    gx: Tensor = p * wrap(ctx, s.reshape(m, 1).astype(dt)) - wrap(ctx, k.astype(dt))
    if ctx.reduction == "none":
        return gx * g.reshape(m, 1)
    if ctx.reduction == "mean":  # every target ignored: the loss is nan, its gradient 0
        denom = ctx.denom if ctx.denom != 0 else xp.ones((), dtype=dt)
        g = g * float(ctx.denom != 0) / wrap(ctx, xp.asarray(denom, dtype=dt))
    out: Tensor = gx * g
    return out


def _class_last(input: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C)."""
    if input.ndim == 2:
        return input
    perm = (0, *range(2, input.ndim), 1)
    result: Tensor = input.permute(*perm).reshape(-1, input.shape[1])
    return result


def _check_class_target(name: str, input: Tensor, target: Tensor) -> None:
    expected = (input.shape[0], *input.shape[2:]) if input.ndim >= 2 else ()
    if target.shape != expected:
        raise ValueError(
            f"{name}: expected target of shape {expected} (input {tuple(input.shape)} is "
            f"(N, C, ...)), got target of shape {tuple(target.shape)}"
        )


@float32_op
def cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
    ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:  # fmt: skip
    """Cross entropy of logits ``input`` (N, C, ...) or (C,) against class indices (N, ...)
    or class probabilities (same shape as input).

    >>> F.cross_entropy(lucid.zeros(2, 4), lucid.tensor([0, 3]))
    tensor(1.3863)
    """
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    check_float("cross_entropy", input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 1:
        out = cross_entropy(input.unsqueeze(0), target.unsqueeze(0), weight, None,
                            ignore_index, None, reduction, label_smoothing)  # fmt: skip
        if reduction != "none":
            return out
        name = None if out.grad_fn is None else out.grad_fn.name()
        return out.squeeze(0) if name is None else _named(out.squeeze(0), name)
    c = input.shape[1]
    if weight is not None and weight.shape != (c,):
        raise RuntimeError(
            f"cross_entropy: weight should be a 1D tensor of {c} elements (one per class), got "
            f"shape {tuple(weight.shape)}"
        )
    if target.dtype.is_floating_point:
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    _check_class_target("cross_entropy", input, target)
    if target.dtype is dtypes.bool_ or target.dtype.is_complex:
        raise RuntimeError(
            f"cross_entropy: expected target of an integer dtype, got {target.dtype}"
        )
    x = _class_last(input)
    w = None if weight is None else weight.to(input.dtype).array
    flat = target if target.ndim == 1 else target.reshape(-1)
    loss = _CrossEntropy.apply(x, flat.array, w, int(ignore_index), float(label_smoothing),
                               reduction)  # fmt: skip
    if reduction == "none":
        loss = loss.reshape(*target.shape)
    if label_smoothing > 0:  # torch composes it: nll_loss's plus the smoothing term
        return _named(loss, "AddBackward0")
    return _nll_named(loss, input.ndim, reduction)


def _target_error(name: str, c: int) -> Callable[[int], IndexError]:
    def error(bad: int) -> IndexError:
        return IndexError(f"{name}: Target {bad} is out of bounds (expected classes in [0, {c}))")

    return error


def _check_targets(name: str, target: Tensor, c: int, ignore_index: int) -> None:
    """Class targets in ``[0, c)`` (``ignore_index`` aside). On a lazy backend (MLX) the check
    is a reduction whose result is read at the next sync point: it adds no sync per step."""
    if target.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}: expected target of an integer dtype (class indices), got Bool")
    valid = target != ignore_index
    masked = target * valid.to(target.dtype)
    target.backend.check_index_range(masked.array, 0, c, _target_error(name, c))


def _cross_entropy_probs(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: str, smoothing: float
) -> Tensor:
    if target.shape != input.shape:
        raise ValueError(
            f"cross_entropy: a probability target must have the input's shape "
            f"{tuple(input.shape)}, got {tuple(target.shape)}"
        )
    c = input.shape[1]
    t = target.to(input.dtype)
    if smoothing > 0:
        t = t * (1 - smoothing) + smoothing / c
    logp = log_softmax(input, 1)
    prod = logp * t
    if weight is not None:
        prod = prod * weight.to(input.dtype).reshape(1, c, *([1] * (input.ndim - 2)))
    loss = prod.sum(1)
    if reduction == "none":
        return -loss
    total = -loss.sum()  # torch's order (the sum negated), so its nodes: NegBackward0
    if reduction == "sum":
        return total
    return _named(total / (input.numel() // c), "DivBackward1")  # torch divides by a Scalar


# NumPy's dtypes of lucid's float16, float32 and float64 (``nll_loss``'s direct route)
_NLL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))


class _NllLoss(Function):
    """Negative log-likelihood of (M, C) log-probabilities at class indices as one node: the
    op-level form records ~13 ops (target check, mask, gather, weights, reduction) and its
    backward copies the (M, C) gradient twice (docs/performance.md, issue 30). Loss per row
    ``-w_t x[i, t_i]`` on rows whose target is not ``ignore_index``; "mean" divides by the
    summed ``w_t``. The backward writes ``-w_t g`` at the targets of a zero (M, C) array."""

    @staticmethod
    def forward(ctx: Any, x: Any, t: Any, w: Any, ignore_index: int, reduction: str) -> Any:
        return _nll_forward(ctx, x, t, w, ignore_index, reduction, "nll_loss")

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        xp = ctx.xp
        dt = ctx.w_t.dtype
        coef = -ctx.w_t  # d loss_i / d x[i, t_i], before the reduction's factor
        if grad_mode.is_grad_enabled():  # create_graph: the gradient is linear in g
            k = ctx.backend.setitem(xp.zeros(ctx.shape, dtype=dt), (ctx.rows, ctx.tt), coef)
            if ctx.reduction == "none":
                g = g.reshape(ctx.shape[0], 1)
            elif ctx.reduction == "mean":  # every target ignored: the gradient is 0 (torch's)
                g = g / wrap(ctx, ctx.denom) if ctx.denom != 0 else g * 0.0
            return wrap(ctx, k) * g, None, None, None, None
        vals = _nll_values(ctx, g)
        one_hot = kernels.ONE_HOT_ROWS.find(ctx.backend) if _unwatched_op_input(ctx) else None
        grad = None if one_hot is None else one_hot.forward(ctx.backend, ctx.shape, ctx.tt, vals)
        if grad is None:
            grad = ctx.backend.setitem(xp.zeros(ctx.shape, dtype=dt), (ctx.rows, ctx.tt), vals)
        return wrap(ctx, grad), None, None, None, None


def _nll_forward(
    ctx: Any, x: Any, t: Any, w: Any, ignore_index: int, reduction: str, name: str
) -> Any:
    """nll_loss's loss from the log-probabilities ``x`` (M, C) (``_NllLoss``, and
    ``_CrossEntropy`` on its log_softmax rows), its backward's values kept on ``ctx``."""
    xp = ctx.xp
    m, c = x.shape
    valid = t != ignore_index
    tt = xp.where(valid, t, 0)
    ctx.backend.check_index_range(tt, 0, c, _target_error(name, c))
    w_t = valid.astype(x.dtype)
    if w is not None:
        w_t = xp.take(w, tt) * w_t
    rows = xp.arange(m)
    loss = -(x[rows, tt] * w_t)  # the op-level form's arithmetic: the same bits
    ctx.rows, ctx.tt, ctx.w_t, ctx.shape, ctx.reduction = rows, tt, w_t, (m, c), reduction
    return _reduce_loss(ctx, loss, w_t, reduction)


def _reduce_loss(ctx: Any, loss: Any, w_t: Any, reduction: str) -> Any:
    """The per-row ``loss`` reduced: "mean" divides by the summed weights ``w_t`` (kept as
    ``ctx.denom`` for the backward)."""
    if reduction == "none":
        return loss
    # NumPy arrays: the reduction ``np.sum`` calls, without its Python wrapper (~2 us a
    # call; a batch-1 model's loss each step): the same bits
    total_of = np.add.reduce if type(loss) is np.ndarray else ctx.xp.sum
    total = total_of(loss)
    if reduction == "sum":
        return total
    ctx.denom = total_of(w_t)
    return total / ctx.denom


def _nll_values(ctx: Any, g: Tensor) -> Any:
    """The one value a row of nll_loss's gradient: ``-w_t`` times ``g`` (divided by the
    summed weights for "mean"; 0 where every target was ignored, as torch's)."""
    xp = ctx.xp
    gd = g.array
    if ctx.reduction == "mean":
        nonzero = ctx.denom != 0
        gd = xp.where(nonzero, gd, 0) / xp.where(nonzero, ctx.denom, 1)
    return (-ctx.w_t * gd).astype(ctx.w_t.dtype)


def _unwatched_op_input(ctx: Any) -> bool:
    """Whether the Function's input is an op's output (log_softmax's, in the
    word_language_model) whose gradient only that op's backward sees: no ``register_hook``,
    ``retain_grad`` or node pre-hook on it. Only then does nll_loss hand on the backend's
    read-only one-hot gradient (``kernels.ONE_HOT_ROWS``), which a user never holds."""
    edge = ctx._edges[0]
    if not isinstance(edge, tuple):
        return False
    node = edge[0]
    return not (node._pre_hooks or node._retained or node._node_pre_hooks)


@float32_op
def nll_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
    ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Negative log-likelihood of log-probabilities ``input`` (N, C, ...) at ``target``."""
    if (
        (reduction == "mean" or reduction == "sum") and weight is None and size_average is None
        and reduce is None and type(input) is Tensor and type(target) is Tensor
    ):  # fmt: skip
        # (N, C) float NumPy log-probabilities and (N,) integer targets: every check below
        # passes and the node is the same (a batch-1 classifier's loss per step, per-call
        # cost, docs/performance.md)
        xa, ta = input._data, target._data
        if (
            type(xa) is np.ndarray and type(ta) is np.ndarray and len(xa.shape) == 2
            and len(ta.shape) == 1 and ta.shape[0] == xa.shape[0] and xa.dtype in _NLL_FLOATS
            and ta.dtype.kind in "iu" and not ops_watched()
        ):  # fmt: skip
            plain: Tensor = _NllLoss.apply(input, ta, None, int(ignore_index), reduction)
            return _named(plain, "NllLossBackward0")
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    check_float("nll_loss", input)
    if input.ndim == 1:
        out = nll_loss(input.unsqueeze(0), target.unsqueeze(0), weight, None, ignore_index,
                       None, reduction)  # fmt: skip
        return _nll_named(out.squeeze(0), 2, reduction) if reduction == "none" else out
    c = input.shape[1]
    _check_class_target("nll_loss", input, target)
    if weight is not None and weight.shape != (c,):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got "
            f"weight tensor of shape: {list(weight.shape)}"
        )
    if ops_watched():  # an exporter or vmap sees the op-level form
        return _nll_reference(input, target, weight, ignore_index, reduction)
    if target.dtype is dtypes.bool_:
        raise RuntimeError(
            "nll_loss: expected target of an integer dtype (class indices), got Bool"
        )
    if target.dtype.is_complex or target.dtype.is_floating_point:
        raise RuntimeError(
            f"nll_loss: expected target of an integer dtype (class indices), got {target.dtype}"
        )
    x = _class_last(input)
    w = None if weight is None else weight.to(input.dtype).array
    flat = target if target.ndim == 1 else target.reshape(-1)
    loss: Tensor = _NllLoss.apply(x, flat.array, w, int(ignore_index), reduction)
    if reduction == "none":
        loss = loss.reshape(*target.shape)
    return _nll_named(loss, input.ndim, reduction)


def _nll_reference(
    input: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, reduction: str
) -> Tensor:
    """``nll_loss`` in lucid ops on (N, C, ...) input: ``_NllLoss``'s oracle, and what an op
    observer or ``vmap`` sees."""
    c = input.shape[1]
    _check_targets("nll_loss", target, c, ignore_index)
    x = _class_last(input)
    t = target.reshape(-1)
    valid = t != ignore_index
    tt = t * valid.to(t.dtype)
    w_t = valid.to(input.dtype)
    if weight is not None:
        w_t = w_t * weight.to(input.dtype)[tt]
    picked = x[arange(x.shape[0], device=x.device), tt]
    loss = -(picked * w_t)
    if reduction == "none":
        result: Tensor = loss.reshape(*target.shape)
        return result
    if reduction == "sum":
        result = loss.sum()
        return result
    result = loss.sum() / w_t.sum()
    return result


@float32_op
def kl_div(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean", log_target: bool = False,
) -> Tensor:  # fmt: skip
    """``target * (log(target) - input)`` pointwise (``input`` holds log-probabilities).

    ``reduction="batchmean"`` divides the sum by the batch size (the mathematically right KL).
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_float("kl_div", input)
    reduction = check_reduction(reduction, (*REDUCTIONS, "batchmean"))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # torch's xlogy(t, t) - t * input: 0 * log 0 := 0; a negative target gives nan
        zero = (target == 0).to(target.dtype)
        safe = target + zero
        loss = target * safe.log() - target * input
    if reduction == "batchmean":
        result: Tensor = loss.sum() / (input.shape[0] if input.ndim else 1)
        return result
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            stacklevel=3,  # the caller of kl_div (past float32_op's wrapper)
        )
    return apply_reduction(loss, reduction)


# -- embeddings and ranking -----------------------------------------------------------------------
@float32_op
def cosine_embedding_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
    size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where -1."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    if input1.shape != input2.shape:
        raise RuntimeError(
            f"cosine_embedding_loss: input1 {tuple(input1.shape)} and input2 "
            f"{tuple(input2.shape)} must have the same shape"
        )
    eps = 1e-12
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = prod / mag.sqrt()
    pos = (target == 1).to(cos.dtype)
    neg = (target == -1).to(cos.dtype)
    loss = pos * (1 - cos) + neg * (cos - margin).clamp(min=0.0)
    return apply_reduction(loss, reduction)


@float32_op
def margin_ranking_loss(
    input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
    size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``max(0, -target * (x1 - x2) + margin)``."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, "
            f"target: {tuple(target.shape)} "
        )
    loss = (-target * (input1 - input2) + margin).clamp(min=0.0)
    return apply_reduction(loss, reduction)


@float32_op
def hinge_embedding_loss(
    input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
    reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``x`` where target is 1, ``max(0, margin - x)`` where target is -1 (as torch, any other
    target value gets both terms)."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    pos = (target != -1).to(input.dtype)
    neg = (target != 1).to(input.dtype)
    loss = pos * input + neg * (margin - input).clamp(min=0.0)
    return apply_reduction(loss, reduction)


@float32_op
def soft_margin_loss(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``log(1 + exp(-y x))``."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    _pointwise("soft_margin_loss", input, target)
    loss = apply_reduction(-logsigmoid(input * target), reduction)
    return _named(loss, "SoftMarginLossBackward0")


@float32_op
def triplet_margin_loss(
    anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
    eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
    reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the pairwise p-distance."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        closer = (d_swap < d_neg).to(d_neg.dtype)
        d_neg = closer * d_swap + (1 - closer) * d_neg
    return apply_reduction((d_pos - d_neg + margin).clamp(min=0.0), reduction)


@float32_op
def poisson_nll_loss(
    input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
    size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Negative log-likelihood of ``target`` under Poisson(rate): ``rate - target log rate``.

    ``full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``.
    """
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction), legacy=False)
    input = promote_float("poisson_nll_loss", input)  # torch computes integer counts in float
    if isinstance(target, Tensor) and not target.dtype.is_floating_point:
        target = target.to(input.dtype)
    _pointwise("poisson_nll_loss", input, target)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = (target > 1).to(target.dtype)
        safe = target * big + (1 - big)
        stirling = safe * safe.log() - safe + 0.5 * (safe * (2 * 3.141592653589793)).log()
        loss = loss + stirling * big
    return apply_reduction(loss, reduction)


@float32_op
def gaussian_nll_loss(
    input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """``0.5 (log var + (input - target)^2 / var)``, var clamped at ``eps`` (gradient passes).

    ``var`` has the input's shape (heteroscedastic), or one dim fewer, or size 1 in exactly one
    dim where the input differs (homoscedastic, e.g. ``(4, 1, 32, 32)`` for ``(4, 3, 32, 32)``),
    or is a float, as in torch."""
    check_float("gaussian_nll_loss", input)
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = lucid.full_like(input, var)
    if var.shape != input.shape:
        mismatched = [v for i, v in zip(input.shape, var.shape) if i != v]
        if var.shape == input.shape[:-1]:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(mismatched) == 1):
            raise ValueError("var is of incorrect size")  # (one size-1 dim is allowed)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if reduction not in ("none", "mean", "sum"):  # torch checks it after var (its wording)
        raise ValueError(f"{reduction} is not valid")
    var = var + (var.clamp(min=eps) - var).detach()  # PyTorch clamps without blocking grads
    d = input - target
    loss = (var.log() + d * d / var) * 0.5
    if full:
        loss = loss + 0.9189385332046727  # 0.5 * log(2 pi)
    return apply_reduction(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
    reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Per-class binary logistic loss, averaged over classes (the last dim)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in REDUCTIONS:  # torch checks the name itself (its wording; no old name)
        raise ValueError(f"{reduction} is not valid")
    check_float("multilabel_soft_margin_loss", input)
    t = target.to(input.dtype)
    loss = -(t * logsigmoid(input) + (1 - t) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return apply_reduction(loss.mean(input.ndim - 1), reduction)


def _class_scores(name: str, input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, bool]:
    """(input as (N, C), target as (N,)-like, whether the input was one vector)."""
    check_float(name, input)
    if input.ndim > 2 or input.numel() == 0 and input.ndim and input.shape[-1] == 0:
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    vector = input.ndim <= 1
    x = input.reshape(1, -1) if vector else input
    return x, target.reshape(-1) if vector and name == "multi_margin_loss" else target, vector


_SCALAR_TYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half",
                      "bfloat16": "BFloat16", "bool": "Bool", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble"}  # fmt: skip


def _check_long_target(target: Tensor) -> None:
    """torch's dtype check of a class-index target, after its shape checks (lucid also takes
    the narrower integer dtypes, where torch wants int64)."""
    if target.dtype.is_floating_point or target.dtype.is_complex or target.dtype is lucid.bool:
        name = str(target.dtype).rsplit(".", 1)[-1]
        raise RuntimeError(
            f"expected scalar type Long but found {_SCALAR_TYPE_NAMES.get(name, name)}"
        )


def _reduce_samples(loss: Tensor, reduction: str, vector: bool) -> Tensor:
    if reduction == "none":
        return loss.reshape(()) if vector else loss
    return apply_reduction(loss, reduction)


@float32_op
def multi_margin_loss(
    input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
    size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Multi-class hinge loss: ``sum_{i != y} max(0, margin - x[y] + x[i])**p / C`` per
    sample, each term scaled by ``weight[y]`` when given."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x, y, vector = _class_scores("multi_margin_loss", input, target)
    n, c = x.shape
    if y.ndim > 1 or y.numel() != n:
        raise RuntimeError(
            f"multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _check_long_target(target)
    if n and bool(((y < 0) | (y >= c)).any()):
        raise RuntimeError("target out of range")
    y = y.reshape(n, 1)
    z = (x - x.gather(1, y) + margin).clamp(min=0.0)
    if p == 2:
        z = z * z
    others = (arange(c, device=x.device).reshape(1, c) != y).to(z.dtype)  # skip i == y
    if weight is not None:
        z = z * weight.to(z.dtype)[y.reshape(n)].reshape(n, 1)
    loss = (z * others).sum(1) / c
    # torch's reduction="none" of one vector: 0-d for a 0-d target, (1,) for a (1,) one
    return _reduce_samples(loss, reduction, vector and target.ndim == 0)


@float32_op
def multilabel_margin_loss(
    input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:  # fmt: skip
    """Multi-label hinge loss: ``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C`` over the target
    classes ``y_j`` (the row's entries before its first -1) and the non-target classes ``i``."""
    reduction = check_reduction(legacy_reduction(size_average, reduce, reduction))
    x, y, vector = _class_scores("multilabel_margin_loss", input, target)
    if (
        (target.ndim > 1 or not vector)
        and target.shape != input.shape
        or (vector and target.numel() != x.shape[1])
    ):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _check_long_target(target)
    n, c = x.shape
    y = y.reshape(n, c)
    if y.numel() and bool(((y < -1) | (y >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # a slot counts while no -1 came before it in its row
    valid = ((y == -1).to(lucid.int64).cumsum(1) == 0).to(x.dtype)  # (N, J)
    safe = y.clamp(min=0)
    is_target = lucid.zeros(n, c, dtype=x.dtype, device=x.device)
    if n and c:
        is_target = is_target.scatter_add(1, safe, valid).clamp(max=1.0)
    picked = x.gather(1, safe)  # (N, J)
    z = (1 - picked.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0.0)  # (N, J, C)
    z = z * valid.unsqueeze(2) * (1 - is_target).unsqueeze(1)
    loss = z.sum((1, 2)) / c
    return _reduce_samples(loss, reduction, vector)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance ``d`` (default: the pairwise
    2-norm distance); ``swap`` takes ``min(d(a, n), d(p, n))`` as the negative distance."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = lucid.minimum(d_neg, dist(positive, negative))
    return apply_reduction((margin + d_pos - d_neg).clamp(min=0.0), reduction)
