"""PyTorch parity of the functions added to match torch.nn.functional: values and gradients
with the same inputs (the modules run torch's own samples in test_nn_module_db_parity)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.parity

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_matches_torch_on_a_free_leaf(reduction: str, dtype: str) -> None:
    """torch's gradient (``exp(lp) - ...``) on log_probs that are not log_softmax outputs."""
    x = RNG.standard_normal((12, 4, 6)).astype(dtype)
    tg = RNG.integers(1, 6, (4, 5))
    tg[1, :3] = 2  # repeated labels need a blank between them
    il, tl = [12, 10, 8, 12], [5, 3, 3, 0]
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    ty = TF.ctc_loss(tx, torch.tensor(tg), torch.tensor(il), torch.tensor(tl), reduction=reduction)
    ly = F.ctc_loss(lx, lucid.tensor(tg), lucid.tensor(il), lucid.tensor(tl), reduction=reduction)
    tol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=tol, atol=tol)
    assert str(ly.dtype).endswith(dtype)
    g = RNG.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ly.backward(lucid.tensor(g))
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=10 * tol, atol=10 * tol)


def test_ctc_loss_concatenated_targets_and_zero_infinity() -> None:
    x = np.log(RNG.dirichlet(np.ones(5), (8, 2))).astype(np.float32)
    args = ([1, 2, 2, 3], (8, 1), (3, 1))
    ty = TF.ctc_loss(torch.tensor(x), torch.tensor(args[0]), *args[1:], reduction="none",
                     zero_infinity=True)  # fmt: skip
    ly = F.ctc_loss(lucid.tensor(x), lucid.tensor(args[0]), *args[1:], reduction="none",
                    zero_infinity=True)  # fmt: skip
    np.testing.assert_allclose(ly.numpy(), ty.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss_matches_torch(swap: bool) -> None:
    a, p, n = (RNG.standard_normal((5, 3)).astype(np.float32) for _ in range(3))
    ts = [torch.tensor(v, requires_grad=True) for v in (a, p, n)]
    ls = [lucid.tensor(v, requires_grad=True) for v in (a, p, n)]
    ty = TF.triplet_margin_with_distance_loss(*ts, margin=0.5, swap=swap)
    ly = F.triplet_margin_with_distance_loss(*ls, margin=0.5, swap=swap)
    np.testing.assert_allclose(ly.item(), ty.item(), rtol=1e-5, atol=1e-6)
    ty.backward()
    ly.backward()
    for lt, tt in zip(ls, ts):
        np.testing.assert_allclose(lt.grad.numpy(), tt.grad.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", ["LazyLinear", "LazyBatchNorm2d", "LazyInstanceNorm1d"])
def test_lazy_layers_match_torch_once_built(name: str) -> None:
    """Built from the same first input, with torch's weights loaded: torch's outputs, gradients
    and running statistics, and the same state_dict keys before and after."""
    shape = {"LazyLinear": (4, 5), "LazyBatchNorm2d": (3, 2, 4, 4), "LazyInstanceNorm1d": (2, 3, 6)}
    args = (3,) if name == "LazyLinear" else ()
    kwargs = {"affine": True} if name == "LazyInstanceNorm1d" else {}
    tm, lm = getattr(torch.nn, name)(*args, **kwargs), getattr(lucid.nn, name)(*args, **kwargs)
    assert list(tm.state_dict()) == list(lm.state_dict())
    x = RNG.standard_normal(shape[name]).astype(np.float32)
    with torch.no_grad():
        tm(torch.tensor(x))
    with lucid.no_grad():
        lm(lucid.tensor(x))
    assert type(lm).__name__ == type(tm).__name__
    lm.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    ty, ly = tm(tx), lm(lx)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    ty.sum().backward()
    ly.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(lm.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last_offset"])
def test_embedding_bag_matches_torch(mode: str, layout: str) -> None:
    w = RNG.standard_normal((10, 3)).astype(np.float32)
    inp = RNG.integers(0, 10, (4, 5) if layout == "2d" else 12)
    inp.flat[1], inp.flat[2] = 2, inp.flat[0]  # a padding entry and a repeated index
    off = {"2d": None, "offsets": [0, 3, 3, 7], "last_offset": [0, 3, 3, 7, 12]}[layout]
    psw = RNG.standard_normal(inp.shape).astype(np.float32) if mode == "sum" else None
    kw = {"mode": mode, "padding_idx": 2, "include_last_offset": layout == "last_offset"}
    tw, lw = torch.tensor(w, requires_grad=True), lucid.tensor(w, requires_grad=True)
    ty = TF.embedding_bag(
        torch.tensor(inp),
        tw,
        None if off is None else torch.tensor(off),
        per_sample_weights=None if psw is None else torch.tensor(psw),
        **kw,
    )
    ly = F.embedding_bag(
        lucid.tensor(inp),
        lw,
        None if off is None else lucid.tensor(off),
        per_sample_weights=None if psw is None else lucid.tensor(psw),
        **kw,
    )
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(torch.tensor(g))
    ly.backward(lucid.tensor(g))
    np.testing.assert_allclose(lw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_pdist_conv_tbc_crossmaplrn_match_torch() -> None:
    x = RNG.standard_normal((6, 4)).astype(np.float32)
    for p in (1.0, 2.0, 3.0):
        tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
        ty, ly = TF.pdist(tx, p), F.pdist(lx, p)
        np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
        ty.sum().backward()
        ly.sum().backward()
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    inp, w, b = (RNG.standard_normal(s).astype(np.float32) for s in ((7, 2, 3), (3, 3, 4), (4,)))
    ty = TF.conv_tbc(torch.tensor(inp), torch.tensor(w), torch.tensor(b), 1)
    ly = F.conv_tbc(lucid.tensor(inp), lucid.tensor(w), lucid.tensor(b), 1)
    np.testing.assert_allclose(ly.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)
    img = RNG.random((2, 6, 3, 3)).astype(np.float32)
    for size in (3, 4):
        ty = torch.nn.CrossMapLRN2d(size, 1e-2)(torch.tensor(img))
        ly = lucid.nn.CrossMapLRN2d(size, 1e-2)(lucid.tensor(img))
        np.testing.assert_allclose(ly.numpy(), ty.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(lucid.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    assert repr(lucid.nn.RReLU()) == repr(torch.nn.RReLU())


def test_adaptive_log_softmax_matches_torch() -> None:
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0, head_bias=True)
    lm = lucid.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10], div_value=2.0, head_bias=True)
    assert list(tm.state_dict()) == list(lm.state_dict()) and repr(lm) == repr(tm)
    lm.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x, t = RNG.standard_normal((6, 8)).astype(np.float32), np.array([0, 3, 5, 9, 15, 19])
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    to, lo = tm(tx, torch.tensor(t)), lm(lx, lucid.tensor(t))
    np.testing.assert_allclose(lo.output.detach().numpy(), to.output.detach().numpy(), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    to.loss.backward()
    lo.loss.backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    lparams = dict(lm.named_parameters())
    for k, p in tm.named_parameters():
        np.testing.assert_allclose(lparams[k].grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(lm.log_prob(lx).detach().numpy(), tm.log_prob(tx).detach().numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    assert lm.predict(lx).tolist() == tm.predict(tx).tolist()


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_conv_gradients_match_torch(nd: int) -> None:
    x = RNG.standard_normal((2, 4, *([5] * nd))).astype(np.float32)
    w = RNG.standard_normal((6, 2, *([3] * nd))).astype(np.float32)
    args = (2, 1, 1, 2)  # stride, padding, dilation, groups
    conv = getattr(TF, f"conv{nd}d")
    go = RNG.standard_normal(tuple(conv(torch.tensor(x), torch.tensor(w), None, *args).shape))
    go = go.astype(np.float32)
    tgi = getattr(torch.nn.grad, f"conv{nd}d_input")(x.shape, torch.tensor(w), torch.tensor(go),
                                                     *args)  # fmt: skip
    lgi = getattr(lucid.nn.grad, f"conv{nd}d_input")(x.shape, lucid.tensor(w), lucid.tensor(go),
                                                     *args)  # fmt: skip
    np.testing.assert_allclose(lgi.numpy(), tgi.numpy(), rtol=1e-4, atol=1e-5)
    tgw = getattr(torch.nn.grad, f"conv{nd}d_weight")(torch.tensor(x), w.shape, torch.tensor(go),
                                                      *args)  # fmt: skip
    lgw = getattr(lucid.nn.grad, f"conv{nd}d_weight")(lucid.tensor(x), w.shape, lucid.tensor(go),
                                                      *args)  # fmt: skip
    np.testing.assert_allclose(lgw.numpy(), tgw.numpy(), rtol=1e-4, atol=1e-4)


def test_factory_kwargs_matches_torch() -> None:
    kw = {"device": "cpu", "factory_kwargs": {"dtype": "float32"}}
    assert lucid.nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    assert lucid.nn.factory_kwargs(None) == {}
    with pytest.raises(TypeError, match="unexpected kwargs"):
        lucid.nn.factory_kwargs({"bogus": 1})


def _raised(fn: Callable[[], object]) -> tuple[str, str]:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the class and message are what is compared
        return type(exc).__name__, str(exc)
    return "", ""


@pytest.mark.parametrize(
    ("x_shape", "t_shape", "t_dtype", "w_shape"),
    [
        ((5, 4), (5,), "float32", None),  # the dtype check, after the shape checks
        ((5, 4), (5, 4), "float32", None),  # the target's size first
        ((5, 4), (5,), "float32", (5,)),  # then the weight's size
        ((5, 4), (5,), "float32", ()),  # the weight's dims: a ValueError before all
        ((5, 4), (5,), "bool", None),
        ((4,), (1,), "float32", None),
    ],
)
def test_multi_margin_loss_errors_match_torch(
    x_shape: tuple[int, ...], t_shape: tuple[int, ...], t_dtype: str, w_shape: Any
) -> None:
    def call(m: Any, f: Any) -> Callable[[], object]:
        x, t = m.ones(x_shape), m.zeros(t_shape, dtype=getattr(m, t_dtype))
        w = None if w_shape is None else m.ones(w_shape)
        return lambda: f.multi_margin_loss(x, t, weight=w)

    want = _raised(call(torch, TF))
    assert want[0]  # torch rejects each of these
    assert _raised(call(lucid, F)) == want


@pytest.mark.parametrize("target", [[2], 2])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_multi_margin_loss_of_one_vector_matches_torch(target: Any, reduction: str) -> None:
    x = RNG.standard_normal(4)
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    ty = TF.multi_margin_loss(tx, torch.tensor(target), reduction=reduction)
    ly = F.multi_margin_loss(lx, lucid.tensor(target), reduction=reduction)
    assert tuple(ly.shape) == tuple(ty.shape)
    np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    ty.sum().backward()
    ly.sum().backward()
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)
