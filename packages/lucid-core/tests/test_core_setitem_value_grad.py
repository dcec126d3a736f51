"""``a[index] = value`` where ``value`` has more leading 1s than ``a[index]`` has dims (torch drops
them): ``value``'s gradient comes back in ``value``'s shape. vit-pytorch's MPP writes its
``(1, 1, d)`` mask token into ``patches[bool_mask]``, a ``(k, d)`` selection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

MASK = [[True, False, True], [False, False, True]]


def _write_mask(x: Any, t: Any, lib: Any) -> None:
    x[lib.tensor(MASK)] = t


def _write_basic(x: Any, t: Any, lib: Any) -> None:
    x[0] = t
    x[1, :2] = t


def _write_int_index(x: Any, t: Any, lib: Any) -> None:
    x[lib.tensor([0, 1]), 1] = t


WRITES = [_write_mask, _write_basic, _write_int_index]


def _run(lib: Any, write: Callable[[Any, Any, Any], None], token: np.ndarray) -> np.ndarray:
    t = lib.tensor(token, requires_grad=True)
    x = lib.zeros(2, 3, 4)
    write(x, t, lib)
    weights = lib.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32))
    (x * weights).sum().backward()
    assert tuple(t.grad.shape) == token.shape
    out: np.ndarray = t.grad.numpy()
    return out


def _expected(write: Callable[[Any, Any, Any], None], token: np.ndarray) -> np.ndarray:
    """The gradient worked out by hand: the weights summed over the written positions."""
    w = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    if write is _write_mask:
        picked = w[np.array(MASK)]
    elif write is _write_basic:
        picked = np.concatenate([w[0], w[1, :2]])
    else:
        picked = w[[0, 1], 1]
    return picked.sum(axis=0).reshape(token.shape)


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("shape", [(1, 1, 4), (1, 4), (4,), (1, 1, 1, 1)])
def test_value_grad_has_the_values_shape(write: Any, shape: tuple[int, ...]) -> None:
    token = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    grad = _run(lucid, write, token)
    expected = _expected(write, np.zeros((1, 4), np.float32))
    if shape[-1] == 1:
        expected = expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(grad, expected.reshape(shape), rtol=1e-5, atol=1e-6)


@pytest.mark.parity
@pytest.mark.parametrize("write", WRITES)
def test_value_grad_matches_torch(write: Any) -> None:
    torch = pytest.importorskip("torch")
    token = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
    np.testing.assert_allclose(
        _run(lucid, write, token), _run(torch, write, token), rtol=1e-5, atol=1e-6
    )
