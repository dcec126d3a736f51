"""Connectionist temporal classification loss (Graves et al., 2006): ``ctc_loss``.

One Function: the forward runs the alpha and beta recursions in log space over the whole
batch at once (one step per time frame), and keeps the gradient it implies. That gradient is
torch's: ``exp(log_probs) - exp(log(alpha * beta) + nll - log_probs)``, the gradient with
respect to the logits for ``log_probs = log_softmax(logits)``. Through a ``log_softmax`` it is
the exact gradient; on a free ``log_probs`` leaf it differs from it by ``exp(log_probs)``, as
torch's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import lucid
from lucid import Tensor
from lucid.autograd import Function
from lucid.autograd.function import once_differentiable
from lucid.nn.functional._util import check_reduction, wrap

__all__ = ["ctc_loss"]


class _CTC(Function):
    """Per-sample negative log-likelihoods ``(N,)`` of ``log_probs (T, N, C)``."""

    @staticmethod
    def forward(ctx: Any, lp: Any, ext: Any, valid: Any, skip: Any, in_len: Any, last: Any,
                zero_infinity: bool) -> Any:  # fmt: skip
        xp = ctx.xp
        t_max, n, _ = lp.shape
        s = ext.shape[1]
        ninf = xp.asarray(-np.inf, dtype=lp.dtype)
        lpe = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (t_max, n, s)), axis=2)
        lpe = xp.where(valid[None], lpe, ninf)
        pos = xp.arange(s)[None]
        col = xp.full((n, 1), -np.inf, dtype=lp.dtype)
        alive = in_len[:, None]  # frames t < input_length count
        a = xp.where(pos < 2, lpe[0], ninf)
        alphas = [a]
        for t in range(1, t_max):
            prev1 = xp.concatenate([col, a[:, :-1]], axis=1)
            prev2 = xp.where(skip, xp.concatenate([col, col, a[:, :-2]], axis=1)[:, :s], ninf)
            new = lpe[t] + xp.logaddexp(xp.logaddexp(a, prev1), prev2)
            a = xp.where(t < alive, new, a)
            alphas.append(a)
        ends = xp.take_along_axis(a, last, axis=1)  # (N, 2): the last blank and last label
        nll = -xp.logaddexp(ends[:, 0], ends[:, 1])
        skip_next = xp.concatenate([skip[:, 2:], xp.zeros((n, 2), dtype=skip.dtype)], axis=1)[:, :s]
        is_end = (pos == last[:, :1]) | (pos == last[:, 1:])
        b = xp.full((n, s), -np.inf, dtype=lp.dtype)
        betas: list[Any] = [None] * t_max
        for t in reversed(range(t_max)):
            nxt1 = xp.concatenate([b[:, 1:], col], axis=1)
            nxt2 = xp.where(skip_next, xp.concatenate([b[:, 2:], col, col], axis=1)[:, :s], ninf)
            rec = lpe[t] + xp.logaddexp(xp.logaddexp(b, nxt1), nxt2)
            start = xp.where(is_end, lpe[t], ninf)
            b = xp.where(t == alive - 1, start, xp.where(t < alive - 1, rec, ninf))
            betas[t] = b
        ab = xp.stack(alphas) + xp.stack(betas)  # (T, N, S)
        share = xp.exp(ab + nll[None, :, None] - lpe)  # each path position's share, / y
        share = xp.where(xp.isfinite(ab), share, 0)
        onehot = (ext[:, :, None] == xp.arange(lp.shape[2])[None, None]).astype(lp.dtype)
        grad = xp.exp(lp) - xp.einsum("tns,nsc->tnc", share, onehot)
        frames = (xp.arange(t_max)[:, None] < in_len[None]).astype(lp.dtype)[:, :, None]
        grad = grad * frames
        if zero_infinity:
            inf = xp.isinf(nll)
            grad = xp.where(inf[None, :, None], 0, grad)
            nll = xp.where(inf, 0, nll)
        ctx.grad = grad
        return nll

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, g: Tensor) -> tuple[Any, ...]:
        return (wrap(ctx, ctx.grad) * g.reshape(1, -1, 1), *([None] * 6))


def _lengths(value: Any, name: str, n: int) -> list[int]:
    if isinstance(value, Tensor):
        out = [int(v) for v in value.reshape(-1).tolist()]
    elif isinstance(value, Sequence):
        out = [int(v) for v in value]
    else:
        raise TypeError(
            f"ctc_loss(): argument '{name}' must be a Tensor or a tuple of ints, not "
            f"{type(value).__name__}"
        )
    if len(out) != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return out


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | Sequence[int],
    target_lengths: Tensor | Sequence[int],
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The CTC loss of ``log_probs`` (``(T, N, C)``, or ``(T, C)`` unbatched; log-softmax
    outputs) against ``targets`` (``(N, S)`` padded, or all targets concatenated in 1-D).

    ``reduction="mean"`` divides each sample's loss by its target length, then averages over
    the batch (torch's rule). ``zero_infinity`` turns impossible alignments' infinite losses
    (and their gradients) into 0.
    """
    reduction = check_reduction(reduction)
    if not isinstance(log_probs, Tensor) or not log_probs.dtype.is_floating_point:
        raise RuntimeError("ctc_loss: log_probs must be a floating point Tensor")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(
            f"ctc_loss: expected log_probs of shape (T, N, C) or (T, C), got "
            f"{tuple(log_probs.shape)}"
        )
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if isinstance(input_lengths, Tensor) and unbatched:
        input_lengths = input_lengths.reshape(1)
    if isinstance(target_lengths, Tensor) and unbatched:
        target_lengths = target_lengths.reshape(1)
    in_len = _lengths(input_lengths, "input_lengths", n)
    tg_len = _lengths(target_lengths, "target_lengths", n)
    tg = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets, dtype=np.int64)
    if unbatched:
        tg = tg.reshape(1, -1)
    for length in in_len:
        if length > t_max:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {t_max}, but got value {length} "
                "(while checking arguments for ctc_loss_allocate_outputs)"
            )
    rows: list[np.ndarray] = []
    if tg.ndim == 1:  # all targets concatenated
        if sum(tg_len) > tg.shape[0]:
            raise RuntimeError(
                f"Expected tensor to have size at least {sum(tg_len)} at dimension 0, but got "
                f"size {tg.shape[0]} for argument #2 'targets'"
            )
        offsets = np.cumsum([0, *tg_len])
        rows = [tg[offsets[i] : offsets[i + 1]] for i in range(n)]
    else:
        if max(tg_len, default=0) > tg.shape[1]:
            raise RuntimeError(
                f"Expected tensor to have size at least {max(tg_len)} at dimension 1, but got "
                f"size {tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                "ctc_loss_allocate_outputs)"
            )
        rows = [tg[i, : tg_len[i]] for i in range(n)]
    s = 2 * max(tg_len, default=0) + 2  # the last column is never on a path
    ext = np.full((n, s), blank, dtype=np.int64)
    valid = np.zeros((n, s), dtype=bool)
    skip = np.zeros((n, s), dtype=bool)  # s-2 -> s allowed: a label unlike the one before
    last = np.zeros((n, 2), dtype=np.int64)
    for i, row in enumerate(rows):
        ext[i, 1 : 2 * len(row) : 2] = row
        valid[i, : 2 * len(row) + 1] = True
        if len(row) > 1:
            skip[i, 3 : 2 * len(row) : 2] = row[1:] != row[:-1]
        last[i] = (2 * len(row), 2 * len(row) - 1 if len(row) else s - 1)
    xp = lp.backend.xp
    nll = _CTC.apply(
        lp, xp.asarray(ext), xp.asarray(valid), xp.asarray(skip),
        xp.asarray(np.asarray(in_len, dtype=np.int64)), xp.asarray(last), bool(zero_infinity),
    )  # fmt: skip
    if reduction == "none":
        return nll.reshape(()) if unbatched else nll
    if reduction == "sum":
        out: Tensor = nll.sum()
        return out
    div = lucid.tensor([max(v, 1) for v in tg_len], dtype=nll.dtype, device=nll.device)
    out = (nll / div).mean()
    return out
