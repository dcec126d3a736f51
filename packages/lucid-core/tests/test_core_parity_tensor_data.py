"""The same ``.data`` script in lucid and torch gives the same values, gradients and versions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

P0 = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]


def _saved_changed_through_data(lib: Any) -> list[Any]:
    p = lib.tensor(P0, requires_grad=True)
    loss = (p * p.exp()).sum()
    p.data.mul_(0.5)
    loss.backward()
    return [p, p.grad, p._version]


def _view_data_and_update(lib: Any) -> list[Any]:
    p = lib.tensor(P0, requires_grad=True)
    p[0].data.fill_(2.0)
    p.data[1, 1:] = lib.tensor([7.0, 8.0])
    (p.sum(1) ** 2).sum().backward()
    p.data.add_(p.grad, alpha=-0.1)
    clone = p.data.clone()
    clone.zero_()
    return [p, p.grad, p.data.numpy().copy(), p._version]


def _swap_storage(lib: Any) -> list[Any]:
    p = lib.tensor(P0, requires_grad=True)
    old = p.data
    p.data = lib.arange(4, dtype=lib.float64).reshape(4, 1)
    old.fill_(-1.0)
    (p * p).sum().backward()
    return [p, p.grad, list(p.shape), p.requires_grad, p.is_leaf]


def _as_list(value: Any) -> Any:
    if isinstance(value, (torch.Tensor, lucid.Tensor)):
        return value.detach().numpy().tolist()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


@pytest.mark.parametrize(
    "script", [_saved_changed_through_data, _view_data_and_update, _swap_storage]
)
def test_script_matches_torch(script: Callable[[Any], list[Any]]) -> None:
    for mine, theirs in zip(script(lucid), script(torch), strict=True):
        a, b = _as_list(mine), _as_list(theirs)
        if isinstance(b, list):
            np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6, atol=1e-6)
        else:
            assert a == b
