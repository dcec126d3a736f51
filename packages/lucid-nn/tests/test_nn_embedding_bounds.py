"""nn.Embedding refuses out-of-range indices, negative ones included (torch: IndexError)."""

from __future__ import annotations

import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


@pytest.mark.parametrize("indices", [[0, -1], [5], [-6, 2]])
def test_out_of_range_indices_raise_index_error(indices: list[int]) -> None:
    emb = nn.Embedding(5, 3)
    with pytest.raises(IndexError, match="index out of range in self"):
        emb(lucid.tensor(indices))


def test_in_range_indices_pick_rows() -> None:
    weight = lucid.arange(15.0).reshape(5, 3)
    out = F.embedding(lucid.tensor([[0, 4], [2, 2]]), weight)
    assert out.shape == (2, 2, 3)
    assert out[0, 1].tolist() == [12.0, 13.0, 14.0]
    assert F.embedding(lucid.zeros(0, dtype=lucid.int64), weight).shape == (0, 3)
