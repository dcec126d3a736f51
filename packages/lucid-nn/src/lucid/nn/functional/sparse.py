"""embedding and one_hot."""

from __future__ import annotations

import lucid
from lucid import Tensor, dtypes
from lucid.autograd import no_grad

__all__ = ["embedding", "one_hot"]


def _check_indices(name: str, input: Tensor, n: int) -> None:
    if (
        not isinstance(input, Tensor)
        or input.dtype.is_floating_point
        or input.dtype is dtypes.bool_
    ):
        got = input.dtype if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"{name}: expected indices of an integer dtype (Long, Int), got {got}")
    if not input.numel():
        return
    low, high = (int(v) for v in lucid.stack([input.min(), input.max()]).tolist())  # one sync
    if low < 0 or high >= n:  # (negative indices are out of range, as in torch)
        raise IndexError(
            f"{name}: index out of range in self (indices must be in [0, {n}), got values in "
            f"[{low}, {high}])"
        )


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (any shape).

    Rows at ``padding_idx`` get no gradient. With ``max_norm`` the picked rows whose norm
    exceeds it are renormalised in place first, as in PyTorch.
    """
    v = weight.shape[0]
    _check_indices("embedding", input, v)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += v
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    out = weight[input]
    if padding_idx is not None and out.requires_grad:
        keep = (input != padding_idx).unsqueeze(-1)
        out = lucid.where(keep, out, out.detach())
    return out


def _renorm_rows(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    with no_grad():
        used = lucid.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)
        used[input.reshape(-1)] = 1.0
        norms = (weight.abs() ** norm_type).sum(1) ** (1.0 / norm_type)
        scale = lucid.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        scale = used * scale + (1 - used)
        weight.mul_(scale.unsqueeze(1))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim (``num_classes=-1``: max + 1)."""
    if tensor.dtype.is_floating_point or tensor.dtype is dtypes.bool_:
        raise RuntimeError(
            f"one_hot is only applicable to index tensor of an integer dtype, got {tensor.dtype}"
        )
    if tensor.numel() and int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = lucid.arange(num_classes, device=tensor.device)
    result: Tensor = (tensor.unsqueeze(-1) == classes).to(dtypes.int64)
    return result
