"""A whole module saved with lucid.save loads back as pytorch/examples' word_language_model
does it: lucid.load with weights_only=True (the default) and its classes in safe_globals;
Parameters and Buffers keep their types; the same outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.serialization import UnpicklingError, safe_globals


class RNNModel(nn.Module):
    """An encoder, an LSTM and a decoder, as the example's model.py."""

    def __init__(self, ntoken: int, ninp: int, nhid: int) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, 1)
        self.decoder = nn.Linear(nhid, ntoken)
        self.norm = nn.BatchNorm1d(nhid)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        out, _ = self.rnn(self.drop(self.encoder(x)))
        return self.decoder(out)


CLASSES = [RNNModel, nn.Dropout, nn.Embedding, nn.LSTM, nn.Linear, nn.BatchNorm1d]


def test_a_whole_model_round_trips_under_safe_globals(tmp_path: Path) -> None:
    lucid.manual_seed(0)
    model = RNNModel(20, 8, 12).eval()
    with open(tmp_path / "model.pt", "wb") as f:
        lucid.save(model, f)
    with open(tmp_path / "model.pt", "rb") as f:
        with pytest.raises(UnpicklingError, match="RNNModel was not an allowed global"):
            lucid.load(f)
    with open(tmp_path / "model.pt", "rb") as f, safe_globals(CLASSES):
        back = lucid.load(f)
    assert type(back) is RNNModel and type(back.rnn) is nn.LSTM
    assert all(type(p) is nn.Parameter for p in back.parameters())
    assert type(back.norm.running_mean) is nn.Buffer and back.norm.running_mean.persistent
    x = lucid.tensor(np.random.default_rng(0).integers(0, 20, (5, 3)))
    with lucid.no_grad():
        np.testing.assert_array_equal(back(x).numpy(), model(x).numpy())
