"""Recurrent layers: step equations vs NumPy, gradchecks, shapes, state names, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck
from lucid.nn.modules import rnn as rnn_mod
from lucid.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell

RNG = np.random.default_rng(4)


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _p(m, name):
    return getattr(m, name).detach().numpy()


def ref_lstm(m, x, h, c):
    """PyTorch's LSTM equations, one layer, one direction, gate order i, f, g, o."""
    outs = []
    for t in range(x.shape[0]):
        gates = x[t] @ _p(m, "weight_ih_l0").T + _p(m, "bias_ih_l0")
        gates = gates + h @ _p(m, "weight_hh_l0").T + _p(m, "bias_hh_l0")
        i, f, g, o = np.split(gates, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def ref_gru(m, x, h):
    """PyTorch's GRU equations: n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""
    outs = []
    for t in range(x.shape[0]):
        xr, xz, xn = np.split(x[t] @ _p(m, "weight_ih_l0").T + _p(m, "bias_ih_l0"), 3, -1)
        hr, hz, hn = np.split(h @ _p(m, "weight_hh_l0").T + _p(m, "bias_hh_l0"), 3, -1)
        r, z = _sig(xr + hr), _sig(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs), h


def test_lstm_matches_equations():
    m = LSTM(3, 4).double()
    x, h0, c0 = (
        RNG.standard_normal((5, 2, 3)),
        RNG.standard_normal((2, 4)),
        RNG.standard_normal((2, 4)),
    )
    out, (h, c) = m(lucid.tensor(x), (lucid.tensor(h0[None]), lucid.tensor(c0[None])))
    ro, rh, rc = ref_lstm(m, x, h0, c0)
    np.testing.assert_allclose(out.detach().numpy(), ro, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h.detach().numpy()[0], rh, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.detach().numpy()[0], rc, rtol=1e-12, atol=1e-12)


def test_gru_matches_equations_and_rnn_relu():
    m = GRU(3, 4).double()
    x = RNG.standard_normal((5, 2, 3))
    out, h = m(lucid.tensor(x))
    ro, rh = ref_gru(m, x, np.zeros((2, 4)))
    np.testing.assert_allclose(out.detach().numpy(), ro, rtol=1e-12, atol=1e-12)
    r = RNN(3, 4, nonlinearity="relu").double()
    y, _ = r(lucid.tensor(x))
    hh = np.zeros((2, 4))
    for t in range(5):
        hh = np.maximum(x[t] @ _p(r, "weight_ih_l0").T + _p(r, "bias_ih_l0")
                        + hh @ _p(r, "weight_hh_l0").T + _p(r, "bias_hh_l0"), 0)  # fmt: skip
    np.testing.assert_allclose(y.detach().numpy()[-1], hh, rtol=1e-12, atol=1e-12)


def test_bidirectional_multilayer_shapes_and_reverse_direction():
    m = LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    out, (h, c) = m(lucid.randn(2, 6, 3))
    assert out.shape == (2, 6, 8) and h.shape == c.shape == (4, 2, 4)
    # the reverse direction's final state is its output at t = 0
    np.testing.assert_allclose(
        out.detach().numpy()[:, 0, 4:], h.detach().numpy()[3], rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        out.detach().numpy()[:, -1, :4], h.detach().numpy()[2], rtol=1e-6, atol=1e-6
    )
    names = [n for n, _ in GRU(3, 4, 2, bidirectional=True).named_parameters()]
    assert names[:8] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                         "bias_hh_l0_reverse"]  # fmt: skip
    assert GRU(3, 4, 2, bidirectional=True).weight_ih_l1.shape == (12, 8)


def test_unbatched_input_and_initial_state_checks():
    m = GRU(3, 4)
    out, h = m(lucid.randn(5, 3))
    assert out.shape == (5, 4) and h.shape == (1, 4)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\)"):
        m(lucid.randn(5, 2, 3), lucid.randn(2, 2, 4))
    with pytest.raises(ValueError, match=r"GRU expected input of shape \(L, N, 3\)"):
        m(lucid.randn(5, 2, 7))


def test_init_bounds():
    m = LSTM(3, 16)
    bound = 1 / 4
    for p in m.parameters():
        assert np.abs(p.detach().numpy()).max() <= bound


@pytest.mark.parametrize("cls", [RNN, LSTM, GRU])
def test_recurrent_gradcheck(cls):
    m = cls(2, 3, num_layers=2, bidirectional=True).double()
    x = lucid.tensor(RNG.standard_normal((3, 1, 2)), requires_grad=True)

    def run(x):
        out = m(x)
        return out[0]

    assert gradcheck(run, (x,))
    w = m.weight_hh_l1_reverse
    assert gradcheck(lambda _: m(x)[0], (w,))


def test_dropout_between_layers_only_in_training():
    m = GRU(3, 4, num_layers=2, dropout=0.5)
    x = lucid.randn(4, 2, 3)
    m.eval()
    a, b = m(x)[0].detach().numpy(), m(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, b)
    m.train()
    lucid.manual_seed(0)
    assert not np.allclose(m(x)[0].detach().numpy(), a, rtol=1e-5, atol=1e-8)


def test_cells():
    x = lucid.randn(2, 3)
    assert RNNCell(3, 4)(x).shape == (2, 4)
    h, c = LSTMCell(3, 4)(x)
    assert h.shape == c.shape == (2, 4)
    assert GRUCell(3, 4)(x[0]).shape == (4,)
    cell = GRUCell(2, 3).double()
    h0 = lucid.tensor(RNG.standard_normal((1, 3)), requires_grad=True)
    xx = lucid.tensor(RNG.standard_normal((1, 2)), requires_grad=True)
    assert gradcheck(lambda a, b: cell(a, b), (xx, h0))
    lstm = LSTMCell(2, 3).double()
    assert gradcheck(lambda a, b: lstm(a, (b, b))[1], (xx, h0))
    with pytest.raises(RuntimeError, match="expected hidden of shape"):
        GRUCell(3, 4)(x, lucid.randn(2, 5))


def test_lstm_proj_size_equations_names_and_shapes():
    m = LSTM(3, 5, proj_size=2).double()
    assert [n for n, _ in m.named_parameters()] == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
    ]  # fmt: skip
    assert m.weight_hh_l0.shape == (20, 2) and m.weight_hr_l0.shape == (2, 5)
    x, h0, c0 = (RNG.standard_normal(s) for s in ((4, 2, 3), (1, 2, 2), (1, 2, 5)))
    out, (h, c) = m(lucid.tensor(x), (lucid.tensor(h0), lucid.tensor(c0)))
    hh, cc, outs = h0[0], c0[0], []
    for t in range(4):
        gates = x[t] @ _p(m, "weight_ih_l0").T + _p(m, "bias_ih_l0")
        gates = gates + hh @ _p(m, "weight_hh_l0").T + _p(m, "bias_hh_l0")
        i, f, g, o = np.split(gates, 4, axis=-1)
        cc = _sig(f) * cc + _sig(i) * np.tanh(g)
        hh = (_sig(o) * np.tanh(cc)) @ _p(m, "weight_hr_l0").T
        outs.append(hh)
    np.testing.assert_allclose(out.detach().numpy(), np.stack(outs), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.detach().numpy()[0], cc, rtol=1e-12, atol=1e-12)
    deep = LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, batch_first=True)
    out, (h, c) = deep(lucid.randn(2, 4, 3))
    assert out.shape == (2, 4, 4) and h.shape == (4, 2, 2) and c.shape == (4, 2, 5)
    assert deep.weight_ih_l1.shape == (20, 4) and deep.weight_hr_l1_reverse.shape == (2, 5)
    assert len(deep.all_weights) == 4 and len(deep.all_weights[0]) == 5
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        LSTM(3, 5, proj_size=5)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        rnn_mod.RNNBase("GRU", 3, 5, proj_size=2)


def test_gradcheck_through_initial_states():
    m = LSTM(2, 3, proj_size=2).double()
    x = lucid.tensor(RNG.standard_normal((3, 1, 2)))
    h0 = lucid.tensor(RNG.standard_normal((1, 1, 2)), requires_grad=True)
    c0 = lucid.tensor(RNG.standard_normal((1, 1, 3)), requires_grad=True)
    assert gradcheck(lambda h, c: m(x, (h, c))[1][1], (h0, c0))
    assert gradcheck(lambda _: m(x, (h0.detach(), c0.detach()))[0], (m.weight_hr_l0,))
    g = GRU(2, 3, batch_first=True).double()
    h = lucid.tensor(RNG.standard_normal((1, 1, 3)), requires_grad=True)
    xb = lucid.tensor(RNG.standard_normal((1, 3, 2)), requires_grad=True)
    assert gradcheck(lambda x, h: g(x, h)[0], (xb, h))


def test_batch_first_and_unbatched_agree_with_sequence_first():
    seq = LSTM(3, 4, num_layers=2, bidirectional=True)
    bf = LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    bf.load_state_dict(seq.state_dict())
    x = lucid.randn(5, 2, 3)
    h0, c0 = lucid.randn(4, 2, 4), lucid.randn(4, 2, 4)
    a, (ha, ca) = seq(x, (h0, c0))
    b, (hb, cb) = bf(x.transpose(0, 1), (h0, c0))  # h_n stays (layers * dirs, N, H)
    np.testing.assert_allclose(
        b.transpose(0, 1).detach().numpy(), a.detach().numpy(), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(hb.detach().numpy(), ha.detach().numpy(), rtol=1e-6, atol=1e-6)
    u, (hu, cu) = seq(x[:, 1], (h0[:, 1], c0[:, 1]))
    assert u.shape == (5, 8) and hu.shape == cu.shape == (4, 4)
    np.testing.assert_allclose(u.detach().numpy(), a.detach().numpy()[:, 1], rtol=1e-5,
                               atol=1e-6)  # fmt: skip


def test_hidden_state_errors_are_pytorchs():
    g = GRU(3, 4)
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but "
                                           "got 3-D tensor"):  # fmt: skip
        g(lucid.randn(5, 3), lucid.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D"):
        g(lucid.randn(5, 2, 3), lucid.zeros(2, 4))
    lstm = LSTM(3, 4)
    with pytest.raises(RuntimeError, match=r"hx and cx should also be 3-D but got \(2-D, 2-D\)"):
        lstm(lucid.randn(5, 2, 3), (lucid.zeros(2, 4), lucid.zeros(2, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got"):
        lstm(lucid.randn(5, 2, 3), (lucid.zeros(1, 2, 4), lucid.zeros(1, 2, 5)))
    with pytest.raises(RuntimeError, match="LSTM expected input of dtype"):
        lstm(lucid.randn(5, 2, 3, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="GRUCell: Expected hidden to be 2D for 2D input"):
        GRUCell(3, 4)(lucid.randn(2, 3), lucid.randn(4))
    with pytest.raises(ValueError, match=r"LSTMCell expected input of shape \(N, 3\)"):
        LSTMCell(3, 4)(lucid.randn(2, 2, 3))
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        GRU(3, 4, num_layers=2, dropout=1.5)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        GRU(3, 4, dropout=0.2)
    assert repr(LSTM(3, 4, 2, batch_first=True)) == "LSTM(3, 4, num_layers=2, batch_first=True)"
    LSTM(3, 4).flatten_parameters()  # PyTorch-ported code calls it; a no-op here


def test_double_backward_through_steps():
    cell = LSTMCell(2, 3).double()
    x = lucid.tensor(RNG.standard_normal((1, 2)), requires_grad=True)
    h = lucid.tensor(RNG.standard_normal((1, 3)), requires_grad=True)
    assert gradgradcheck(lambda a, b: cell(a, (b, b))[0], (x, h))
    gru = GRU(2, 3).double()
    xs = lucid.tensor(RNG.standard_normal((2, 1, 2)), requires_grad=True)
    assert gradgradcheck(lambda a: gru(a)[0], (xs,))
