"""``lucid.functional``: ``torch.functional``'s path, for programs that import from it.

torch keeps a few tensor functions in ``torch/functional.py`` (``einsum``, ``meshgrid``,
``stft``, ``norm``, ``unique`` ...), all also at the top level, and that module imports
``torch.nn.functional`` as ``F``, so ``from torch.functional import F`` works in torch and is
seen in real programs. Here the same names are lucid's top-level functions and ``F`` is
``lucid.nn.functional``. It ships with lucid-nn because ``F`` is lucid-nn's.

Example:
    >>> from lucid.functional import F, einsum
    >>> import lucid
    >>> F.relu(lucid.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    >>> einsum("i,i->", lucid.ones(3), lucid.ones(3)).item()
    3.0
"""

from __future__ import annotations

import lucid.nn.functional as F  # noqa: F401, N812 - torch.functional imports it as F
from lucid import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "block_diag",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "norm",
    "meshgrid",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]
