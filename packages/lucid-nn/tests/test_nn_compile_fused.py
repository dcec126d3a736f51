"""lucid.compile's rewrites of op chains: the values and gradients they give against eager."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.compiler import _arrays


def _arrays_of(net: nn.Module) -> Any:
    return net._compiled_call_impl.log[0].program.arrays  # type: ignore[union-attr]


def _grad(p: lucid.Tensor) -> np.ndarray:
    assert p.grad is not None
    return np.array(p.grad.numpy())


def _train_twice(net: nn.Module, x: lucid.Tensor) -> list[np.ndarray]:
    """Output and parameter gradients of the third step (the capture, the traced backward,
    then the recorded one)."""
    got = []
    for _ in range(3):
        net.zero_grad()
        y = net(x)
        (y * y).sum().backward()
        got = [y.detach().numpy()] + [_grad(p) for p in net.parameters()]
    return got


@pytest.mark.parametrize("pad", [0, 1])
def test_relu_then_max_pool_runs_pooled_first_with_the_eager_values(pad: int) -> None:
    lucid.manual_seed(0)
    k, s = (2, 2) if pad == 0 else (3, 2)  # (3, 2, 1): ResNet's stem, overlapping windows
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(k, s, pad),
                        nn.Flatten(), nn.Linear(4 * 4 * 4, 3))  # fmt: skip
    x = lucid.randn(3, 2, 8, 8)
    want = _train_twice(net, x)
    net.compile()
    got = _train_twice(net, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # same values (a zero's sign aside)
    # a padded pool is not swapped: its backward's strided view would meet a batch norm's
    # reductions (ShuffleNet's stem) in another layout than eager's
    swapped = ["relu then max_pool2d ran as max_pool then relu"]
    fused = [r for r in _arrays_of(net).rewrites if r != _arrays.PAIRED]  # (the Linear's pair)
    assert fused == (swapped if pad == 0 else [])
    assert _arrays_of(net).rewrites.count(_arrays.PAIRED) == 1  # its input and weight grads


def test_a_relu_output_read_elsewhere_is_not_rewritten() -> None:
    class Both(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            r = self.conv(x).relu()
            out: lucid.Tensor = nn.functional.max_pool2d(r, 2).sum() + r.mean()
            return out

    lucid.manual_seed(0)
    net = Both()
    x = lucid.randn(2, 1, 6, 6)
    want = _train_twice(net, x)
    net.compile()
    for g, w in zip(_train_twice(net, x), want):
        np.testing.assert_array_equal(g, w)
    assert _arrays_of(net).rewrites == []


def test_rewrites_can_be_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_arrays, "FUSE", False)
    lucid.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
    net.compile()
    _train_twice(net, lucid.randn(2, 1, 6, 6))
    assert _arrays_of(net).rewrites == []


class _Attention(nn.Module):
    """nanoGPT's attention scores: scale, causal mask (or a (B, 1, 1, T) padding mask), softmax."""

    def __init__(self, mask: str, flip: bool) -> None:
        super().__init__()
        self.mask, self.flip = mask, flip
        self.proj = nn.Linear(8, 8)

    def forward(self, q: lucid.Tensor, k: lucid.Tensor, keep: lucid.Tensor) -> lucid.Tensor:
        q = self.proj(q)
        att = (q @ k.transpose(-2, -1)) * 0.35
        t = q.shape[-2]
        if self.mask == "causal":
            keep = lucid.tril(lucid.ones(t, t)).view(1, 1, t, t)
        if self.flip:  # torch.where(keep, att, -inf): the scores where the mask is true
            att = lucid.where(keep != 0, att, lucid.tensor(float("-inf")))
        else:
            att = att.masked_fill(keep == 0, float("-inf"))
        return nn.functional.softmax(att, dim=-1)


@pytest.mark.parametrize("numba", [True, False])
@pytest.mark.parametrize(("mask", "flip"), [("causal", False), ("causal", True),
                                            ("padding", False)])  # fmt: skip
def test_scaled_masked_softmax_is_the_eager_ops_bit_for_bit(
    numba: bool, mask: str, flip: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not numba:
        monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    lucid.manual_seed(0)
    net = _Attention(mask, flip)
    q, k = lucid.randn(2, 3, 5, 8), lucid.randn(2, 3, 5, 8)
    keep = (lucid.rand(2, 1, 1, 5) > 0.3).float()
    keep[:, :, :, 0] = 1.0  # no row all masked (those are NaN, in both)
    g = lucid.randn(2, 3, 5, 5)

    def run() -> list[np.ndarray]:
        out = []
        for _ in range(3):
            net.zero_grad()
            y = net(q, k, keep)
            (y * g).sum().backward()
            out = [y.detach().numpy()] + [_grad(p) for p in net.parameters()]
        return out

    want = run()
    net.compile()
    for got, w in zip(run(), want):
        np.testing.assert_array_equal(got, w)
    assert _arrays_of(net).rewrites == ["mul, where and softmax ran as one scaled masked softmax"]
    assert "ScaledMaskedSoftmax" in _arrays_of(net).opaque


def test_scores_read_twice_are_not_fused() -> None:
    def scores(x: lucid.Tensor, keep: lucid.Tensor) -> lucid.Tensor:
        s = x * 0.5
        return nn.functional.softmax(s.masked_fill(keep, -1e9), dim=-1) + s

    compiled = lucid.compile(scores)
    x, keep = lucid.randn(3, 4, requires_grad=True), lucid.rand(3, 4) > 0.5
    for _ in range(3):
        got = compiled(x, keep)
        np.testing.assert_array_equal(got.detach().numpy(), scores(x, keep).detach().numpy())
        got.sum().backward()
    assert compiled.log[0].program.arrays.rewrites == []


def test_heads_gradients_go_back_into_the_qkv_projection_in_one_copy_each() -> None:
    lucid.manual_seed(0)
    proj = nn.Linear(8, 24)

    def heads(x: lucid.Tensor) -> lucid.Tensor:  # nanoGPT's q, k, v split into 2 heads
        q, k, v = proj(x).split(8, dim=2)
        q, k, v = (t.view(3, 5, 2, 4).transpose(1, 2) for t in (q, k, v))
        out: lucid.Tensor = ((q @ k.transpose(-2, -1)) @ v).square().sum()
        return out

    compiled = lucid.compile(heads)
    x = lucid.randn(3, 5, 8, requires_grad=True)
    for _ in range(3):
        got = lucid.autograd.grad(compiled(x), [x, proj.weight, proj.bias])
        want = lucid.autograd.grad(heads(x), [x, proj.weight, proj.bias])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    rewrites = compiled.log[0].program.arrays.rewrites
    assert "cat of 3 permuted reshapes ran as one strided copy each" in rewrites


def test_cat_parts_equals_cat_of_the_moved_pieces() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((2, 4, 15)).astype(np.float32)  # a piece as it is
    want = np.concatenate([np.reshape(np.transpose(a, (0, 2, 1, 3)), (2, 4, 15)), b], axis=-1)
    got = _arrays._cat_parts(-1, [(a, (0, 2, 1, 3), (2, 4, 15)), (b, None, None)])
    np.testing.assert_array_equal(got, want)
    c = rng.standard_normal((4, 2, 3)).astype(np.float32)  # a region that is not a view
    want = np.concatenate([np.reshape(np.transpose(c, (1, 0, 2)), (2, 12)),
                           np.zeros((1, 12), np.float32)], axis=0)  # fmt: skip
    got = _arrays._cat_parts(0, [(c, (1, 0, 2), (2, 12)), (np.zeros((1, 12), np.float32),
                                                           None, None)])  # fmt: skip
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [lucid.float16, lucid.float64])
def test_scaled_masked_softmax_in_other_dtypes(dtype: Any) -> None:
    def scores(x: lucid.Tensor, mask: lucid.Tensor) -> lucid.Tensor:
        return nn.functional.softmax((x * 0.25).masked_fill(mask, float("-inf")), dim=-1)

    lucid.manual_seed(0)
    compiled = lucid.compile(scores)
    x = lucid.randn(2, 6, 6).to(dtype).requires_grad_()
    mask = lucid.ones(6, 6).triu(1) > 0
    g = lucid.randn(2, 6, 6).to(dtype)
    for _ in range(3):
        (got,) = lucid.autograd.grad((compiled(x, mask) * g).sum(), [x])
        (want,) = lucid.autograd.grad((scores(x, mask) * g).sum(), [x])
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    rewrites = compiled.log[0].program.arrays.rewrites
    assert rewrites == ["mul, where and softmax ran as one scaled masked softmax"]


@pytest.mark.parametrize("numba", [True, False])
def test_scaled_masked_softmax_rows_with_nan_inf_or_all_masked(
    numba: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not numba:
        monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 6)).astype(np.float32)
    x[0, 1, 2], x[1, 2, 0], x[1, 3, 4] = np.nan, np.inf, -np.inf
    cond = np.zeros((4, 6), dtype=bool)
    cond[0] = True  # an all-masked row: NaN, as eager
    cond[2, 3:] = True

    class Ctx:
        pass

    with np.errstate(invalid="ignore"):  # (-inf - -inf: NaN, in both)
        s = np.where(cond, np.float32(-np.inf), np.multiply(x, 0.5))
        e = np.exp(np.subtract(s, np.maximum.reduce(s, axis=-1, keepdims=True)))
        want = np.divide(e, np.add.reduce(e, axis=-1, keepdims=True))
        got = _arrays.ScaledMaskedSoftmax.forward(Ctx(), x, cond, -np.inf, 0.5, False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("defer", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_linears_input_and_weight_gradients_run_as_one_pair(
    threads: int, defer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorded backward runs each Linear's ``g @ w`` and ``g.mT @ x`` as one
    ``matmul_defer`` call (the weight gradient left running, waited for before it is read) or
    ``matmul_pair`` call (both at once), as the eager Linear does; a product that reads another's
    result is never paired with it. The values are eager's, bit for bit, at one thread and at
    two, and the same as with the pairing off."""
    from lucid.backends import get_backend
    from lucid.backends._numpy import _parallel

    monkeypatch.setattr(_parallel.blas_threads, "budget", lambda: threads)
    monkeypatch.setattr(_arrays, "DEFER_PRODUCTS", defer)
    pairs: list[tuple[tuple[int, ...], ...]] = []
    xp = get_backend("cpu").xp
    for name in ("matmul_pair", "matmul_defer"):
        real = getattr(xp, name)

        def counted(a: Any, b: Any, c: Any, d: Any, real: Any = real) -> Any:
            pairs.append((a.shape, b.shape, c.shape, d.shape))
            return real(a, b, c, d)

        monkeypatch.setattr(xp, name, counted)

    def run(pair: bool) -> tuple[list[np.ndarray], list[str]]:
        monkeypatch.setattr(_arrays, "PAIR_PRODUCTS", pair)
        lucid.manual_seed(0)
        net = nn.Sequential(nn.Linear(96, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(),
                            nn.Linear(256, 10))  # fmt: skip
        x = lucid.randn(64, 96)
        want = _train_twice(net, x)
        net.compile()
        got = _train_twice(net, x)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        pairs.clear()  # (the capture ran the eager Linear's backward, which asks for them too)
        y = net(x)
        (y * y).sum().backward()  # a replay of the recorded backward
        return got, list(_arrays_of(net).rewrites)

    paired, rewrites = run(True)
    assert rewrites.count(_arrays.PAIRED) >= 2  # the two bigger Linears' (not the first's:
    # its input needs no gradient, so it has one product)
    assert ((64, 256), (256, 256), (256, 64), (64, 256)) in pairs  # g @ w, g.mT @ x
    assert _parallel.blas_threads.in_flight == []  # every deferred product waited for
    plain, rewrites = run(False)
    assert _arrays.PAIRED not in rewrites
    assert ((64, 256), (256, 256), (256, 64), (64, 256)) not in pairs
    for a, b in zip(paired, plain):
        np.testing.assert_array_equal(a, b)


def test_an_error_in_a_deferred_product_leaves_the_backward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A product left running that fails raises from the backward (its error, not a later
    one), and the recorded backward waited for every product it left running."""
    from lucid.backends import get_backend

    lucid.manual_seed(0)
    net = nn.Sequential(nn.Linear(96, 256), nn.Tanh(), nn.Linear(256, 256))
    x = lucid.randn(64, 96)
    net.compile()
    _train_twice(net, x)  # captured, traced and replayed once
    waited: list[int] = []

    def failing(a: Any, b: Any, c: Any, d: Any) -> Any:
        def wait() -> None:
            waited.append(1)
            raise RuntimeError("the deferred product failed")

        return a @ b, c @ d, wait

    monkeypatch.setattr(get_backend("cpu").xp, "matmul_defer", failing)
    with pytest.raises(RuntimeError, match="the deferred product failed"):
        net(x).sum().backward()
    assert waited  # (the settling after the error calls it again: never a second raise)
