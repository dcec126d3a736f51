"""embedding, embedding_bag and one_hot."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
from lucid import Tensor, dtypes
from lucid.autograd import no_grad
from lucid.autograd.function import records_nothing
from lucid.compiler import value_check

__all__ = ["embedding", "embedding_bag", "one_hot"]


_GATHER_INDEX = (np.dtype(np.int64), np.dtype(np.int32))  # embedding's no-grad gather


@value_check
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

    def error(bad: int) -> IndexError:  # (negative indices are out of range, as in torch)
        return IndexError(
            f"{name}: index out of range in self (indices must be in [0, {n}), got {bad})"
        )

    input.backend.check_index_range(input.array, 0, n, error)  # one sync


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
    if weight.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D, got a {weight.ndim}-D weight")
    v = weight.shape[0]
    _check_indices("embedding", input, v)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += v
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    wa, ia = weight._data, input._data
    if (
        records_nothing()
        and type(wa) is np.ndarray
        and type(ia) is np.ndarray
        and ia.dtype in _GATHER_INDEX
    ):
        # nothing records: the rows as NumPy's gather (``weight[input]``'s array call, the
        # same values) without the indexing op's Function call (docs/performance.md)
        return Tensor.from_backend_array(wa[ia], weight._backend)
    out = weight[input]
    if padding_idx is not None and out.requires_grad:
        keep = (input != padding_idx).unsqueeze(-1)
        out = lucid.where(keep, out, out.detach())
    if out.grad_fn is not None:  # a node this call made: torch's name of the lookup
        out.grad_fn._node_name = "EmbeddingBackward0"
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
    if tensor.numel() and tensor.backend.any_true((tensor < 0).array):  # all batch elements
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:  # the size depends on the values: vmap refuses it, as torch's does
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif tensor.numel() and tensor.backend.any_true((tensor >= num_classes).array):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = lucid.arange(num_classes, device=tensor.device)
    result: Tensor = (tensor.unsqueeze(-1) == classes).to(dtypes.int64)
    return result


def _bags(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple[Tensor, Any]:
    """The flat indices and, per bag, its ``[start, end)`` positions in them."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                f"mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets).__name__}"
            )
        b, n = input.shape
        starts = np.arange(b) * n
        return input.reshape(-1), np.stack([starts, starts + n], 1)
    if input.ndim != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    off = np.asarray(offsets.numpy(), dtype=np.int64)
    m = input.shape[0]
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {int(off[0])}"
        )
    if off.size and off[-1] > m:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length ({m}), but got offsets[-1] of "
            f"{int(off[-1])}"
        )
    ends = off[1:] if include_last_offset else np.append(off[1:], m)
    starts = off[:-1] if include_last_offset else off
    return input, np.stack([starts, ends], 1).reshape(-1, 2)


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima of bags of embeddings (``torch.nn.functional.embedding_bag``).

    ``input`` is ``(B, N)`` (B bags of N indices), or 1-D with ``offsets`` giving where each
    bag starts (``include_last_offset``: the last offset ends the last bag). Entries equal to
    ``padding_idx`` are left out of their bag; an empty bag gives zeros. ``per_sample_weights``
    (``mode="sum"`` only) scales each embedding before the sum.
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if per_sample_weights.shape != input.shape:
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not "
                f"None, then it must have the same shape as the input ({list(input.shape)})"
            )
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse are not supported")
    v, d = weight.shape
    try:
        _check_indices("embedding_bag", input, v)
    except IndexError as e:  # torch raises a RuntimeError here (an IndexError for embedding)
        raise RuntimeError(str(e)) from None
    if padding_idx is not None and padding_idx < 0:
        padding_idx += v
    flat, bounds = _bags(input, offsets, include_last_offset)
    if max_norm is not None:
        _renorm_rows(weight, flat, max_norm, norm_type)
    b = bounds.shape[0]
    lengths = bounds[:, 1] - bounds[:, 0]
    width = max(int(lengths.max(initial=0)), 1)
    # (B, width) positions into the flat indices; the slots past a bag's end are masked out
    pos = bounds[:, :1] + np.arange(width)[None]
    inside = np.arange(width)[None] < lengths[:, None]
    pos = np.where(inside, pos, 0)
    dev = weight.device
    if flat.shape[0] == 0:
        return lucid.zeros(b, d, dtype=weight.dtype, device=dev)
    pos_t = lucid.tensor(pos, device=dev)
    idx = flat[pos_t]  # (B, width)
    keep = lucid.tensor(inside, device=dev)
    if padding_idx is not None:
        keep = keep & (idx != padding_idx)
    rows = weight[idx]  # (B, width, D)
    mask = keep.to(weight.dtype)
    if mode == "max":
        low = lucid.full((), float("-inf"), dtype=weight.dtype, device=dev)
        best = lucid.where(keep.unsqueeze(-1), rows, low).max(1).values
        out: Tensor = lucid.where(keep.any(1, keepdim=True), best, lucid.zeros_like(best))
        return out
    if per_sample_weights is not None:
        mask = mask * per_sample_weights.reshape(-1)[pos_t].to(weight.dtype)
    out = (rows * mask.unsqueeze(-1)).sum(1)
    if mode == "mean":
        out = out / keep.sum(1, keepdim=True).clamp(min=1).to(weight.dtype)
    return out
