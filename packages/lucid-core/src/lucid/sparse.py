"""Sparse tensors as PyTorch programs build them, stored dense (``torch.sparse``).

Lucid has only strided tensors. So that programs written for torch's COO tensors (graph nets
such as GCN and GAT build their adjacency matrices with ``sparse_coo_tensor`` and
``to_sparse``) run unchanged, the sparse constructors and conversions here give dense tensors
with the same values: ``sparse_coo_tensor`` sums duplicate entries (as ``coalesce`` would),
``Tensor.to_sparse()``/``to_dense()``/``coalesce()`` return the tensor itself, ``spmm`` and
``sparse.mm`` are matrix products. Results and gradients equal torch's; memory is that of the
dense matrix, and ``is_sparse`` stays False (see docs/differences.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._creation import tensor, zeros
from lucid._tensor import Tensor
from lucid.ops import index_put, matmul

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sparse_coo_tensor", "spmm", "sum"]


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Any = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> Tensor:
    """The tensor with ``values[k]`` at ``indices[:, k]`` and zeros elsewhere (stored dense).

    ``indices`` is ``(sparse_dims, nnz)``; ``values`` is ``(nnz, *dense_dims)``; ``size``
    defaults to one past the largest index in each sparse dim, then the dense dims. Duplicate
    indices add up. Gradients flow to ``values``.
    """
    idx = indices if isinstance(indices, Tensor) else tensor(np.asarray(indices))
    if idx.dtype.category != dtypes.INT:
        raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    if idx.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    vals = values if isinstance(values, Tensor) else tensor(values)
    if dtype is not None:
        vals = vals.to(dtype)
    if device is not None:
        vals, idx = vals.to(device), idx.to(device)
    sparse_dims, nnz = idx.shape
    if vals.dim() < 1 or vals.shape[0] != nnz:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
            f"values: {vals.shape[0] if vals.dim() else 0}"
        )
    dense_dims = tuple(vals.shape[1:])
    if size is None:
        top = idx.amax(1).tolist() if nnz else [-1] * sparse_dims
        shape = tuple(int(m) + 1 for m in top) + dense_dims
    else:
        shape = tuple(int(s) for s in size)
        if len(shape) != sparse_dims + len(dense_dims):
            raise RuntimeError(
                f"number of dimensions must be sparse_dim ({sparse_dims}) + dense_dim "
                f"({len(dense_dims)}), but got {len(shape)}"
            )
        if nnz:
            top = idx.amax(1).tolist()
            for d, (m, s) in enumerate(zip(top, shape, strict=False)):
                if m >= s:
                    raise RuntimeError(
                        f"size is inconsistent with indices: for dim {d}, size is {s} but "
                        f"found index {m}"
                    )
    idx = idx.long()
    out = zeros(*shape, dtype=vals.dtype, device=vals.device)
    out = index_put(out, tuple(idx[d] for d in range(sparse_dims)), vals, accumulate=True)
    if requires_grad:
        out = out.detach().requires_grad_(True)
    return out


def mm(mat1: Tensor, mat2: Tensor, reduce: str = "sum") -> Tensor:
    """``torch.sparse.mm``: the matrix product (``reduce="sum"``, the only one lucid offers)."""
    if reduce != "sum":
        raise NotImplementedError(
            f"sparse.mm(reduce={reduce!r}): lucid stores sparse tensors dense and offers only "
            "reduce='sum'"
        )
    out: Tensor = matmul(mat1, mat2)
    return out


def spmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """``torch.spmm``: the matrix product of a (dense-stored) sparse matrix and a matrix."""
    out: Tensor = matmul(input, mat2)
    return out


def addmm(
    mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0
) -> Tensor:
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)``."""
    out: Tensor = beta * mat + alpha * matmul(mat1, mat2)
    return out


def sum(input: Tensor, dim: Any = None, dtype: Any = None) -> Tensor:  # noqa: A001, A002
    """``torch.sparse.sum``: the sum over ``dim`` (all dims by default)."""
    t = input if dtype is None else input.to(dtype)
    out: Tensor = t.sum() if dim is None else t.sum(dim)
    return out


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.sparse.softmax``: softmax over ``dim`` where the unspecified entries count as
    absent (-inf), which the dense storage cannot tell from stored zeros: refused."""
    raise NotImplementedError(
        "sparse.softmax: lucid stores sparse tensors dense, so unspecified entries (which torch "
        "treats as -inf) cannot be told from stored zeros; mask the dense tensor and use "
        "lucid.softmax"
    )


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.sparse.log_softmax``: refused for the reason :func:`softmax` gives."""
    raise NotImplementedError(
        "sparse.log_softmax: lucid stores sparse tensors dense, so unspecified entries (which "
        "torch treats as -inf) cannot be told from stored zeros; mask the dense tensor and use "
        "lucid.log_softmax"
    )
