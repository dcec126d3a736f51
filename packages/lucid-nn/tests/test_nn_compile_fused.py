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
