"""RNN/LSTM/GRU and cells vs PyTorch: same weights -> same outputs and gradients (float32)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.nn.modules import rnn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5


def _copy(mine, theirs):
    mine.load_state_dict(
        {k: lucid.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()}
    )


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"num_layers": 2, "bidirectional": True}, {"batch_first": True, "bias": False}],
)
def test_recurrent_parity(cls, kwargs):
    rng = np.random.default_rng(0)
    theirs = getattr(torch.nn, cls)(3, 5, **kwargs)
    mine = getattr(rnn, cls)(3, 5, **kwargs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    _copy(mine, theirs)
    x = rng.standard_normal((2, 6, 3) if kwargs.get("batch_first") else (6, 2, 3))
    x = x.astype(np.float32)
    lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lo, lh = mine(lx)
    to, th = theirs(tx)
    if cls == "LSTM":
        lh, th = lh[1], th[1]
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(lh.detach().numpy(), th.detach().numpy(), rtol=RTOL, atol=ATOL)
    (lo.sum() + (lh * lh).sum()).backward()
    (to.sum() + (th * th).sum()).backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(getattr(mine, name).grad.numpy(), p.grad.numpy(), rtol=RTOL,
                                   atol=ATOL)  # fmt: skip


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_parity(cls):
    rng = np.random.default_rng(1)
    theirs, mine = getattr(torch.nn, cls)(3, 4), getattr(rnn, cls)(3, 4)
    _copy(mine, theirs)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    lo, to = mine(lucid.tensor(x)), theirs(torch.tensor(x))
    if cls == "LSTMCell":
        lo, to = lo[1], to[1]
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=RTOL, atol=ATOL)
