"""RNN/LSTM/GRU and cells vs PyTorch: same weights -> same outputs and gradients (float32)."""

from __future__ import annotations

import warnings

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


def _pair(a):
    return lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_parity_initial_state_batch_first_two_layers(cls):
    rng = np.random.default_rng(2)
    kw = dict(num_layers=2, bidirectional=True, batch_first=True, dropout=0.5)
    if cls == "RNN":
        kw["nonlinearity"] = "relu"
    theirs = getattr(torch.nn, cls)(3, 4, **kw).eval()  # eval: no dropout between layers
    mine = getattr(rnn, cls)(3, 4, **kw).eval()
    _copy(mine, theirs)
    (lx, tx) = _pair(rng.standard_normal((2, 5, 3)).astype(np.float32))
    (lh, th) = _pair(rng.standard_normal((4, 2, 4)).astype(np.float32))
    (lc, tc) = _pair(rng.standard_normal((4, 2, 4)).astype(np.float32))
    lo, ls = mine(lx, (lh, lc) if cls == "LSTM" else lh)
    to, ts = theirs(tx, (th, tc) if cls == "LSTM" else th)
    _close(lo, to)
    ls, ts = (ls if cls == "LSTM" else (ls,)), (ts if cls == "LSTM" else (ts,))
    for a, b in zip(ls, ts):
        _close(a, b)
    (lo.sum() + sum((s * s).sum() for s in ls)).backward()
    (to.sum() + sum((s * s).sum() for s in ts)).backward()
    _close(lx.grad, tx.grad)
    _close(lh.grad, th.grad)
    if cls == "LSTM":
        _close(lc.grad, tc.grad)
    for name, p in theirs.named_parameters():
        _close(getattr(mine, name).grad, p.grad)


def test_lstm_proj_size_and_unbatched_parity():
    rng = np.random.default_rng(3)
    theirs = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    mine = rnn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    _copy(mine, theirs)
    (lx, tx) = _pair(rng.standard_normal((4, 3)).astype(np.float32))  # unbatched (L, H_in)
    lo, (lh, lc) = mine(lx)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # torch: "LSTM with projections is not supported with oneDNN"
        to, (th, tc) = theirs(tx)
    for a, b in ((lo, to), (lh, th), (lc, tc)):
        _close(a, b)
    (lo.sum() + lc.sum()).backward()
    (to.sum() + tc.sum()).backward()
    _close(lx.grad, tx.grad)
    for name, p in theirs.named_parameters():
        _close(getattr(mine, name).grad, p.grad)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_parity_with_state_and_gradients(cls):
    rng = np.random.default_rng(4)
    theirs, mine = getattr(torch.nn, cls)(3, 4), getattr(rnn, cls)(3, 4)
    _copy(mine, theirs)
    (lx, tx) = _pair(rng.standard_normal((2, 3)).astype(np.float32))
    (lh, th) = _pair(rng.standard_normal((2, 4)).astype(np.float32))
    (lc, tc) = _pair(rng.standard_normal((2, 4)).astype(np.float32))
    lo = mine(lx, (lh, lc) if cls == "LSTMCell" else lh)
    to = theirs(tx, (th, tc) if cls == "LSTMCell" else th)
    lo, to = (lo if cls == "LSTMCell" else (lo,)), (to if cls == "LSTMCell" else (to,))
    for a, b in zip(lo, to):
        _close(a, b)
    sum((o * o).sum() for o in lo).backward()
    sum((o * o).sum() for o in to).backward()
    for a, b in ((lx, tx), (lh, th)):
        _close(a.grad, b.grad)
    for name, p in theirs.named_parameters():
        _close(getattr(mine, name).grad, p.grad)


def test_reprs_match_pytorch():
    for args, kw in (((3, 4), {}), ((3, 4, 2), {"batch_first": True, "bidirectional": True}),
                     ((3, 5), {"proj_size": 2, "bias": False, "dropout": 0.0})):  # fmt: skip
        assert repr(rnn.LSTM(*args, **kw)) == repr(torch.nn.LSTM(*args, **kw))
    assert repr(rnn.GRUCell(3, 4, bias=False)) == repr(torch.nn.GRUCell(3, 4, bias=False))


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNNCell"])
def test_default_init_statistics_match_pytorch(cls):
    lucid.manual_seed(0)
    torch.manual_seed(0)
    for _ in range(8):
        mine, theirs = getattr(rnn, cls)(32, 64), getattr(torch.nn, cls)(32, 64)
        for name, p in theirs.named_parameters():
            a, b = getattr(mine, name).detach().numpy(), p.detach().numpy()
            assert a.shape == b.shape
            assert np.abs(a).max() <= 1 / 8 and np.abs(a).max() > 0.9 / 8  # U(-1/sqrt(64), ..)
    big_a = np.concatenate([p.detach().numpy().ravel() for p in getattr(rnn, cls)(32, 64)
                            .parameters()])  # fmt: skip
    big_b = np.concatenate([p.detach().numpy().ravel() for p in getattr(torch.nn, cls)(32, 64)
                            .parameters()])  # fmt: skip
    np.testing.assert_allclose(big_a.std(), big_b.std(), rtol=0.05, atol=1e-6)
