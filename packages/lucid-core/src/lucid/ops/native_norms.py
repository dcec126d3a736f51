"""torch's ``native_*_norm`` ops: the normalized output with the statistics it used, as the
layers' kernels return them (``(out, mean, rstd)``; batch norm's ``(out, save_mean,
save_invstd)``). Composed of lucid ops, so every output is differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lucid._creation import zeros
from lucid._tensor import Tensor
from lucid.autograd.grad_mode import no_grad
from lucid.ops._registry import OpTable, op, sample

OPS = OpTable(
    op("native_layer_norm", sample((2, 3, 4), args=((3, 4), None, None, 1e-5)), method=False),
    op("native_group_norm", sample((2, 6, 3), (6,), (6,), args=(2, 6, 3, 3, 1e-5)),
       method=False),
    op("native_batch_norm", sample((4, 2, 3), (2,), (2,), args=(None, None, True, 0.1, 1e-5)),
       method=False),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _affine(
    out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: Sequence[int]
) -> Tensor:
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def native_layer_norm(
    input: Tensor,  # noqa: A002
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(out, mean, rstd)`` of layer norm over the trailing ``normalized_shape`` dims (mean and
    rstd keep those dims as size 1), as ``torch.native_layer_norm``."""
    shape = [int(s) for s in normalized_shape]
    k = len(shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            f"one element, but got normalized_shape = {shape}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {shape}"
            )
    if tuple(input.shape[input.ndim - k :]) != tuple(shape):
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    dims = tuple(range(input.ndim - k, input.ndim))
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, keepdim=True, correction=0) + eps).rsqrt()
    return _affine((input - mean) * rstd, weight, bias, shape), mean, rstd


def native_group_norm(
    input: Tensor,  # noqa: A002
    weight: Tensor | None,
    bias: Tensor | None,
    N: int,  # noqa: N803 - torch's names
    C: int,  # noqa: N803
    HxW: int,  # noqa: N803
    group: int,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(out, mean, rstd)`` of group norm, mean and rstd of shape ``(N, group)``, as
    ``torch.native_group_norm``."""
    if input.numel() != N * C * HxW or C % group != 0:
        raise RuntimeError(
            f"Expected input of {N} x {C} x {HxW} elements with C divisible by group={group}, "
            f"got input of size {list(input.shape)}"
        )
    grouped = input.reshape(N, group, (C // group) * HxW)
    mean = grouped.mean(-1)
    rstd = (grouped.var(-1, correction=0) + eps).rsqrt()
    out = ((grouped - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(input.shape)
    return _affine(out, weight, bias, [C] + [1] * (input.ndim - 2)), mean, rstd


def native_batch_norm(
    input: Tensor,  # noqa: A002
    weight: Tensor | None,
    bias: Tensor | None,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(out, save_mean, save_invstd)`` of batch norm over every dim but 1, as
    ``torch.native_batch_norm``: in training the batch's statistics (and the running ones
    updated in place with ``momentum``, the variance unbiased), else the running ones and
    empty ``save_*``."""
    c = input.shape[1] if input.ndim > 1 else 1
    shape = [c] + [1] * (input.ndim - 2)
    dims = tuple(d for d in range(input.ndim) if d != 1)
    if training:
        mean = input.mean(dims)
        invstd = (input.var(dims, correction=0) + eps).rsqrt()
        if running_mean is not None and running_var is not None:
            n = input.numel() // max(c, 1)
            with no_grad():
                unbiased = input.var(dims, correction=1) if n > 1 else input.var(dims, correction=0)
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
        out = (input - mean.reshape(shape)) * invstd.reshape(shape)
        return _affine(out, weight, bias, shape), mean, invstd
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    empty = zeros(0, dtype=input.dtype, device=input.device)
    return _affine(out, weight, bias, shape), empty, empty
