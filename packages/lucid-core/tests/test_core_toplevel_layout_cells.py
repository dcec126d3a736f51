"""torch's last top-level names (issue 29): layouts, the default device, poisson/binomial,
the RNN cell functions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid


def test_layout_objects_and_factories() -> None:
    assert isinstance(lucid.strided, lucid.layout)
    t = lucid.zeros(2, 3, layout=lucid.strided)
    assert t.layout is lucid.strided and t.shape == (2, 3)
    assert lucid.ones(2).output_nr == 0
    with pytest.raises(RuntimeError, match="only strided tensors"):
        lucid.zeros(2, layout=lucid.sparse_coo)
    with pytest.raises(TypeError, match="must be torch.layout, not int"):
        lucid.ones(2, layout=3)


def test_default_device() -> None:
    assert lucid.get_default_device() == lucid.device("cpu")
    lucid.set_default_device("meta")
    try:
        assert lucid.get_default_device() == lucid.device("meta")
        assert lucid.ones(2).device == "meta" and lucid.randn(2, 2).device == "meta"
    finally:
        lucid.set_default_device(None)
    assert lucid.ones(2).device == "cpu"
    lucid.set_default_device("cpu")
    assert lucid.get_default_device() == lucid.device("cpu")
    with pytest.raises(lucid.backends.DeviceError, match="unknown device 'cuda'"):
        lucid.set_default_device("cuda")
    assert lucid.get_default_device() == lucid.device("cpu")


def test_set_anomaly_enabled_round_trip() -> None:
    lucid.set_anomaly_enabled(True)
    assert lucid.autograd.anomaly_mode.is_anomaly_enabled()
    lucid.set_anomaly_enabled(False)
    assert not lucid.autograd.anomaly_mode.is_anomaly_enabled()


def test_poisson_and_binomial_sample_their_laws() -> None:
    lucid.manual_seed(0)
    rates = lucid.full((20000,), 4.0)
    draws = lucid.poisson(rates)
    assert draws.dtype == lucid.float32 and draws.shape == (20000,)
    np.testing.assert_allclose(draws.numpy().mean(), 4.0, rtol=0.05, atol=0)
    b = lucid.binomial(lucid.full((20000,), 10.0), lucid.full((20000,), 0.3))
    assert b.dtype == lucid.float32
    assert b.numpy().min() >= 0 and b.numpy().max() <= 10
    np.testing.assert_allclose(b.numpy().mean(), 3.0, rtol=0.05, atol=0)
    g = lucid.Generator().manual_seed(3)
    first = lucid.poisson(lucid.full((5,), 2.0), generator=g)
    g.manual_seed(3)
    assert lucid.poisson(lucid.full((5,), 2.0), generator=g).tolist() == first.tolist()
    with pytest.raises(NotImplementedError, match="poisson_cpu"):
        lucid.poisson(lucid.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="non-negative"):
        lucid.poisson(lucid.tensor([-1.0]))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        lucid.binomial(lucid.tensor([1.0]), lucid.tensor([0.5], dtype=lucid.float64))


_CELLS = [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3), ("lstm_cell", 4)]


@pytest.mark.parity
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("name", "gates"), _CELLS)
def test_rnn_cells_match_torch(name: str, gates: int, bias: bool) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    rows = 4 * gates
    shapes = [(3, 5), (3, 4), (3, 4), (rows, 5), (rows, 4), (rows,), (rows,)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    lt = [lucid.tensor(a, requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]

    def call(m: Any, t: list[Any]) -> tuple[Any, ...]:
        hx = (t[1], t[2]) if name == "lstm_cell" else t[1]
        extra = t[5:] if bias else []
        out = getattr(m, name)(t[0], hx, t[3], t[4], *extra)
        return out if isinstance(out, tuple) else (out,)

    lo, to = call(lucid, lt), call(torch, tt)
    for a, b in zip(lo, to, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    sum(o.sum() for o in lo).backward()
    sum(o.sum() for o in to).backward()
    used = [0, 1, 3, 4] + ([2] if name == "lstm_cell" else []) + ([5, 6] if bias else [])
    for i in used:
        grad = lt[i].grad
        assert grad is not None
        np.testing.assert_allclose(grad.numpy(), tt[i].grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parity
def test_cells_refuse_unbatched_input_as_torch() -> None:
    torch = pytest.importorskip("torch")
    args = [(5,), (4,), (4, 5), (4, 4)]
    with pytest.raises(IndexError):
        torch.rnn_tanh_cell(*[torch.zeros(s) for s in args])
    with pytest.raises(IndexError, match="Expected input to be 2D"):
        lucid.rnn_tanh_cell(*[lucid.zeros(s) for s in args])


@pytest.mark.parity
def test_layout_and_default_device_match_torch() -> None:
    torch = pytest.importorskip("torch")
    assert repr(lucid.strided).split(".")[-1] == repr(torch.strided).split(".")[-1]
    assert str(lucid.get_default_device()) == str(torch.get_default_device())
    assert lucid.is_signed(lucid.zeros(1)) == torch.is_signed(torch.zeros(1))


def test_feature_dropout_drops_whole_channels() -> None:
    lucid.manual_seed(0)
    x = lucid.ones(4, 6, 3, 3)
    y = lucid.feature_dropout(x, 0.5, True).numpy().reshape(24, 9)
    assert set(np.unique(y).tolist()) <= {0.0, 2.0}
    np.testing.assert_allclose(y.std(axis=1), 0.0, rtol=0, atol=0)
    assert lucid.feature_dropout(x, 0.5, False) is x
    assert lucid.feature_dropout(x, 1.0, True).sum().item() == 0.0
    z = lucid.ones(3, 4)
    assert lucid.feature_dropout_(z, 0.5, True) is z
    assert set(np.unique(z.numpy()).tolist()) <= {0.0, 2.0}
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        lucid.feature_dropout(lucid.ones(3), 0.5, True)


@pytest.mark.parity
def test_tensor_hardshrink_and_prelu_match_torch() -> None:
    torch = pytest.importorskip("torch")
    a = np.linspace(-1, 1, 7, dtype=np.float32).reshape(1, 7)
    w = np.array([0.25], np.float32)
    np.testing.assert_allclose(
        lucid.tensor(a).hardshrink(0.3).numpy(),
        torch.tensor(a).hardshrink(0.3).numpy(),
        rtol=0,
        atol=0,
    )
    np.testing.assert_allclose(
        lucid.tensor(a).prelu(lucid.tensor(w)).numpy(),
        torch.tensor(a).prelu(torch.tensor(w)).numpy(),
        rtol=1e-6,
        atol=1e-7,
    )


@pytest.mark.parity
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize(
    ("module", "name"), [("LSTM", "lstm"), ("GRU", "gru"), ("RNN", "rnn_tanh")]
)
def test_multi_layer_rnn_functions_match_torch(
    module: str, name: str, bidirectional: bool, batch_first: bool
) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layer = getattr(torch.nn, module)(5, 4, num_layers=2, bidirectional=bidirectional)
    rng = np.random.default_rng(1)
    directions = 2 if bidirectional else 1
    x = rng.standard_normal((3, 6, 5)).astype(np.float32)
    batch = 3 if batch_first else 6
    h = rng.standard_normal((2 * directions, batch, 4)).astype(np.float32)
    c = rng.standard_normal((2 * directions, batch, 4)).astype(np.float32)
    weights = [p.detach().numpy() for p in layer._flat_weights]

    def run(m: Any) -> tuple[Any, ...]:
        hx = [m.tensor(h), m.tensor(c)] if name == "lstm" else m.tensor(h)
        params = [m.tensor(w) for w in weights]
        out: tuple[Any, ...] = getattr(m, name)(
            m.tensor(x), hx, params, True, 2, 0.0, False, bidirectional, batch_first
        )
        return out

    got, want = run(lucid), run(torch)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parity
def test_embedding_renorm_and_conj_physical_in_place_match_torch() -> None:
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32) * 2
    idx = np.array([[0, 2], [2, 5]])
    tw = torch.tensor(w)
    torch.embedding_renorm_(tw, torch.tensor(idx), 1.5, 2.0)
    lw = lucid.tensor(w)
    assert lucid.embedding_renorm_(lw, lucid.tensor(idx), 1.5, 2.0) is lw
    np.testing.assert_allclose(lw.numpy(), tw.numpy(), rtol=1e-6, atol=1e-6)
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    a = lucid.tensor(z)
    assert vars(lucid)["conj_physical_"](a) is a  # set dynamically with the in-place names
    np.testing.assert_allclose(a.numpy(), np.conj(z), rtol=0, atol=0)
    assert lucid.ones(2).conj_physical_().tolist() == [1.0, 1.0]


@pytest.mark.parity
def test_dim_order_and_deprecated_resize_match_torch() -> None:
    torch = pytest.importorskip("torch")
    lt = lucid.zeros(2, 3, 4, 5).to(memory_format=lucid.channels_last)
    tt = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    assert lt.dim_order() == tt.dim_order()
    assert lucid.zeros(2, 3).t().dim_order() == torch.zeros(2, 3).t().dim_order()
    x = lucid.zeros(2, 3, requires_grad=True)
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        r = x.resize(3, 2)
    assert r.shape == (3, 2) and r.grad_fn is not None
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        assert x.resize_as(lucid.zeros(6)).shape == (6,)
    with pytest.raises(RuntimeError, match="can only change the shape"):
        x.resize(4)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="can only change the shape"):
        torch.zeros(2, 3).resize(4)  # torch warns before it checks
    assert x.const_data_ptr() == x.data_ptr()


def test_thread_safe_generator_is_none_outside_thread_workers() -> None:
    assert lucid.thread_safe_generator() is None
