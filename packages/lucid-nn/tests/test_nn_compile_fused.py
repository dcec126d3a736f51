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


def _train_twice(net: nn.Module, x: lucid.Tensor) -> list[np.ndarray]:
    """Output and parameter gradients of the third step (the capture, the traced backward,
    then the recorded one)."""
    got = []
    for _ in range(3):
        net.zero_grad()
        y = net(x)
        (y * y).sum().backward()
        got = [y.detach().numpy()] + [p.grad.numpy().copy() for p in net.parameters()]
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
    assert _arrays_of(net).rewrites == ["relu then max_pool2d ran as max_pool then relu"]


def test_a_relu_output_read_elsewhere_is_not_rewritten() -> None:
    class Both(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            r = self.conv(x).relu()
            return nn.functional.max_pool2d(r, 2).sum() + r.mean()

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
            out = [y.detach().numpy()] + [p.grad.numpy().copy() for p in net.parameters()]
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
    assert compiled.log[0].program.arrays.rewrites == []  # type: ignore[union-attr]
