"""nn.utils.rnn and RNNs on PackedSequence vs PyTorch, from the same weights (float32)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.utils import rnn as lrnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

trnn = torch.nn.utils.rnn
RTOL, ATOL = 1e-4, 1e-5


def _close(mine, theirs):
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=RTOL,
                               atol=ATOL)  # fmt: skip


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_parity(batch_first):
    x = np.random.default_rng(0).standard_normal((4, 5, 3)).astype(np.float32)
    lengths = [2, 5, 3, 1] if batch_first else [4, 1, 3, 2, 4]
    lp = lrnn.pack_padded_sequence(lucid.tensor(x), lengths, batch_first, enforce_sorted=False)
    tp = trnn.pack_padded_sequence(torch.tensor(x), lengths, batch_first, enforce_sorted=False)
    _close(lp.data, tp.data)
    assert lp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert lp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    lpad, llen = lrnn.pad_packed_sequence(lp, batch_first, 0.5, total_length=6)
    tpad, tlen = trnn.pad_packed_sequence(tp, batch_first, 0.5, total_length=6)
    _close(lpad, tpad)
    assert llen.tolist() == tlen.tolist()


@pytest.mark.parametrize("side", ["left", "right"])
def test_pad_sequence_parity(side):
    rng = np.random.default_rng(1)
    seqs = [rng.standard_normal((n, 2)).astype(np.float32) for n in (3, 1, 4)]
    mine = lrnn.pad_sequence([lucid.tensor(s) for s in seqs], True, -2.0, side)
    theirs = trnn.pad_sequence([torch.tensor(s) for s in seqs], True, -2.0, side)
    _close(mine, theirs)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "kw", [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True, "bias": False}]
)
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_recurrent_parity(cls, kw, with_hx):
    rng = np.random.default_rng(2)
    theirs = getattr(torch.nn, cls)(3, 5, **kw)
    mine = getattr(nn, cls)(3, 5, **kw)
    mine.load_state_dict({k: lucid.tensor(v.numpy().copy()) for k, v in
                          theirs.state_dict().items()})  # fmt: skip
    bf = kw.get("batch_first", False)
    lengths = [3, 6, 1, 4]
    x = rng.standard_normal((4, 6, 3) if bf else (6, 4, 3)).astype(np.float32)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lin = lrnn.pack_padded_sequence(lx, lengths, bf, enforce_sorted=False)
    tin = trnn.pack_padded_sequence(tx, lengths, bf, enforce_sorted=False)
    lhx = thx = None
    if with_hx:
        layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
        h0 = rng.standard_normal((layers, 4, 5)).astype(np.float32)
        lhx, thx = lucid.tensor(h0), torch.tensor(h0)
        if cls == "LSTM":
            lhx, thx = (lhx, lhx * 0.5), (thx, thx * 0.5)
    lo, lh = mine(lin, lhx)
    to, th = theirs(tin, thx)
    assert isinstance(lo, lrnn.PackedSequence)
    _close(lo.data, to.data)
    for a, b in zip(lh, th) if cls == "LSTM" else [(lh, th)]:
        _close(a, b)
    lpad, tpad = lrnn.pad_packed_sequence(lo, bf)[0], trnn.pad_packed_sequence(to, bf)[0]
    _close(lpad, tpad)
    lfinal, tfinal = (lh[1], th[1]) if cls == "LSTM" else (lh, th)
    ((lpad * lpad).sum() + lfinal.sum()).backward()
    ((tpad * tpad).sum() + tfinal.sum()).backward()
    _close(lx.grad, tx.grad)
    for name, p in theirs.named_parameters():
        _close(getattr(mine, name).grad, p.grad)
