"""Conv and max-pool backward on arrays (no ``Function.apply`` per gradient op where no graph is
built) give the same bits as the op path, which double backward and vmap still take."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
import lucid.nn.functional.conv as conv_mod
import lucid.nn.functional.pooling as pool_mod


def _grads(arrays: tuple[np.ndarray, ...], gy: np.ndarray, stride: int) -> list[np.ndarray]:
    x, w, b = (lucid.tensor(a, requires_grad=True) for a in arrays)
    y = F.max_pool2d(F.relu(F.conv2d(x, w, b, stride=stride, padding=1)), 2)
    y.backward(lucid.tensor(gy))
    return [t.grad.numpy() for t in (x, w, b)]  # type: ignore[union-attr]


@pytest.mark.parametrize(("cin", "stride"), [(1, 1), (3, 1), (2, 2)])
def test_conv_pool_backward_arrays_match_ops(
    monkeypatch: pytest.MonkeyPatch, cin: int, stride: int
) -> None:
    rng = np.random.default_rng(cin)
    arrays = (
        rng.standard_normal((3, cin, 12, 12)).astype(np.float32),
        rng.standard_normal((4, cin, 3, 3)).astype(np.float32),
        rng.standard_normal(4).astype(np.float32),
    )
    side = 12 // stride // 2
    gy = rng.standard_normal((3, 4, side, side)).astype(np.float32)
    direct = _grads(arrays, gy, stride)
    monkeypatch.setattr(conv_mod, "records_nothing", lambda: False)
    monkeypatch.setattr(pool_mod, "records_nothing", lambda: False)
    through_ops = _grads(arrays, gy, stride)
    for a, b in zip(direct, through_ops):
        np.testing.assert_array_equal(a, b)


def test_conv_double_backward_still_differentiable() -> None:
    rng = np.random.default_rng(7)
    x = lucid.tensor(rng.standard_normal((2, 2, 6, 6)), dtype=lucid.float64, requires_grad=True)
    w = lucid.tensor(rng.standard_normal((3, 2, 3, 3)), dtype=lucid.float64, requires_grad=True)
    assert lucid.autograd.gradgradcheck(lambda a, b: F.conv2d(a, b, padding=1), (x, w))
