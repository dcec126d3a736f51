"""The fused GRU and Elman RNN layers (``kernels.GRU``, ``kernels.RNN``: one op per layer and
direction) against the reference in lucid ops (``_cell_reference``, what ran before): outputs,
final states and every gradient, float64 to 1e-12 and float32 to 2e-6 (atol and rtol), for one
and two layers, both directions, batch_first, no bias, given or zero initial states, and
outputs of which only some are used; double backward through them differentiates the
reference; finite differences in float64; torch's GRU/RNN from the same weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn.modules import rnn

_TOL = {lucid.float64: 1e-12, lucid.float32: 2e-6}
_KINDS = {
    "gru": lambda *a, **k: nn.GRU(*a, **k),
    "tanh": lambda *a, **k: nn.RNN(*a, **k),
    "relu": lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k),
}


def _run(m: nn.Module, x: lucid.Tensor, hx: Any, fused: bool,
         loss: Callable[..., lucid.Tensor]) -> list[np.ndarray]:  # fmt: skip
    """Outputs and gradients (input, state, parameters) with or without the fused op."""
    saved = rnn._fusable
    if not fused:
        rnn._fusable = lambda *a: False  # type: ignore[assignment]
    try:
        leaves = [x, *([] if hx is None else [hx]), *m.parameters()]
        for p in leaves:
            p.grad = None
        y, hn = m(x, hx)
        loss(y, hn).backward()
        outs = [t.detach().numpy().copy() for t in (y, hn)]
        return outs + [np.zeros(1) if p.grad is None else p.grad.numpy().copy() for p in leaves]
    finally:
        rnn._fusable = saved


def _full(y: lucid.Tensor, hn: lucid.Tensor) -> lucid.Tensor:
    return y.sin().sum() + (hn * hn).sum()


def _y_only(y: lucid.Tensor, hn: lucid.Tensor) -> lucid.Tensor:
    return (y * y).sum()


def _hn_only(y: lucid.Tensor, hn: lucid.Tensor) -> lucid.Tensor:
    return hn.cos().sum()


@pytest.mark.parametrize("kind", list(_KINDS))
@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32])
@pytest.mark.parametrize(
    ("layers", "bidirectional", "batch_first", "bias", "state"),
    [(2, False, False, True, True), (1, True, True, True, False), (2, True, False, False, True)],
)  # fmt: skip
@pytest.mark.parametrize("loss", [_full, _y_only, _hn_only])
def test_fused_layer_equals_the_reference(
    kind: str, dtype: Any, layers: int, bidirectional: bool, batch_first: bool, bias: bool,
    state: bool, loss: Callable[..., lucid.Tensor],
) -> None:  # fmt: skip
    lucid.manual_seed(0)
    m = _KINDS[kind](6, 5, layers, bias=bias, bidirectional=bidirectional,
                     batch_first=batch_first).to(dtype)  # fmt: skip
    n, length = 3, 7
    x = lucid.randn(*((n, length) if batch_first else (length, n)), 6, dtype=dtype)
    x.requires_grad_()
    hx = None
    if state:
        hx = lucid.randn(layers * (2 if bidirectional else 1), n, 5, dtype=dtype)
        hx.requires_grad_()
    got, want = _run(m, x, hx, True, loss), _run(m, x, hx, False, loss)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=_TOL[dtype], atol=_TOL[dtype], err_msg=f"item {k}")


@pytest.mark.parametrize("kind", list(_KINDS))
def test_the_fused_op_is_what_runs_and_the_packed_path_is_not(kind: str) -> None:
    m = _KINDS[kind](4, 3)
    y, _ = m(lucid.randn(5, 2, 4))
    name = "_FusedGRU" if kind == "gru" else "_FusedRNN"
    assert type(y.grad_fn).__name__ == name
    packed = nn.utils.rnn.pack_padded_sequence(lucid.randn(5, 2, 4), lucid.tensor([5, 3]))
    out, _ = m(packed)
    assert not type(out.data.grad_fn).__name__.startswith("_Fused")
    padded = lucid.randn(5, 2, 4)
    lengths = lucid.tensor([5, 3])
    ref, _ = m(nn.utils.rnn.pack_padded_sequence(padded, lengths))
    full, _ = m(padded[:, :1])  # the longer sequence alone, padded path (fused)
    np.testing.assert_allclose(
        nn.utils.rnn.pad_packed_sequence(ref)[0][:, 0].detach().numpy(),
        full[:, 0].detach().numpy(), rtol=1e-6, atol=1e-6,
    )  # fmt: skip


@pytest.mark.parametrize("kind", list(_KINDS))
def test_double_backward_matches_the_reference(kind: str) -> None:
    lucid.manual_seed(1)
    m = _KINDS[kind](3, 4).double()
    x = lucid.randn(5, 2, 3, dtype=lucid.float64)

    def second(fused: bool) -> list[np.ndarray]:
        saved = rnn._fusable
        if not fused:
            rnn._fusable = lambda *a: False  # type: ignore[assignment]
        try:
            xx = x.detach().requires_grad_()
            y, _ = m(xx)
            (gx,) = lucid.autograd.grad((y * y).sum(), xx, create_graph=True)
            grads = lucid.autograd.grad((gx * gx).sum(), [xx, *m.parameters()])
            return [g.numpy() for g in grads]
        finally:
            rnn._fusable = saved

    for a, b in zip(second(True), second(False)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", list(_KINDS))
def test_gradients_by_finite_differences_in_float64(kind: str) -> None:
    lucid.manual_seed(2)
    m = _KINDS[kind](2, 3, bidirectional=True).double()
    x = lucid.randn(4, 2, 2, dtype=lucid.float64, requires_grad=True)
    h0 = lucid.randn(2, 2, 3, dtype=lucid.float64, requires_grad=True)

    def f(inp: lucid.Tensor, h: lucid.Tensor) -> lucid.Tensor:
        y, hn = m(inp, h)
        return y.sum() + (hn * hn).sum()

    assert lucid.autograd.gradcheck(f, (x, h0))


@pytest.mark.parity
@pytest.mark.parametrize("kind", list(_KINDS))
def test_matches_torch_from_the_same_weights(kind: str) -> None:
    torch = pytest.importorskip("torch")
    lucid.manual_seed(3)
    m = _KINDS[kind](6, 5, 2, bidirectional=True, batch_first=True)
    tm = (torch.nn.GRU if kind == "gru" else torch.nn.RNN)(
        6, 5, 2, bidirectional=True, batch_first=True,
        **({} if kind == "gru" else {"nonlinearity": kind}),
    )  # fmt: skip
    tm.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                        for k, v in m.state_dict().items()})  # fmt: skip
    xs = np.random.default_rng(3).standard_normal((3, 7, 6)).astype(np.float32)
    x, tx = lucid.tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    y, hn = m(x)
    ty, thn = tm(tx)
    (y.sin().sum() + hn.sum()).backward()
    (ty.sin().sum() + thn.sum()).backward()
    tol = {"rtol": 1e-5, "atol": 1e-5}
    np.testing.assert_allclose(
        y.detach().numpy(), ty.detach().numpy(), rtol=tol["rtol"], atol=tol["atol"]
    )
    np.testing.assert_allclose(
        hn.detach().numpy(), thn.detach().numpy(), rtol=tol["rtol"], atol=tol["atol"]
    )
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol["rtol"], atol=tol["atol"])
    grads = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(), rtol=tol["rtol"],
                                   atol=tol["atol"], err_msg=name)  # fmt: skip
