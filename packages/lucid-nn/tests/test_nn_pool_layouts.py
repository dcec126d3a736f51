"""Max pooling gives the same values and gradients whatever the memory order of its input and
of the incoming gradient (convolution outputs are channels-last views), and a non-finite
incoming gradient reaches only the winning positions."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


def _channels_last(a: np.ndarray) -> np.ndarray:
    """The same values as ``a`` held in (N, H, W, C) memory order."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def _pool_grad(x: np.ndarray, g: np.ndarray, **kw: object) -> tuple[np.ndarray, np.ndarray]:
    t = lucid.from_numpy(x).requires_grad_()
    y = F.max_pool2d(t, **kw)  # type: ignore[arg-type]
    y.backward(lucid.from_numpy(g))
    assert t.grad is not None
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1}])
def test_layouts_agree(kw: dict[str, int]) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 8, 8)).astype(np.float32)
    x[:, :, ::3, ::2] = 0.0  # ties: the first tap in row-major order wins
    y_ref, _ = _pool_grad(x, np.ones((3, 5, 4, 4), np.float32), **kw)
    g = rng.standard_normal(y_ref.shape).astype(np.float32)
    y_ref, dx_ref = _pool_grad(x, g, **kw)
    for xs in (x, _channels_last(x)):
        for gs in (g, _channels_last(g), np.asfortranarray(g)):
            y, dx = _pool_grad(xs, gs, **kw)
            np.testing.assert_array_equal(y, y_ref)
            np.testing.assert_allclose(dx, dx_ref, rtol=0, atol=0)


def test_nonfinite_gradient_reaches_only_winners() -> None:
    x = np.array([[[[1.0, 3.0], [2.0, 0.0]]]], np.float32)
    for bad in (np.inf, np.nan):
        _, dx = _pool_grad(_channels_last(x), np.full((1, 1, 1, 1), bad, np.float32), kernel_size=2)
        expected = np.array([[[[0.0, bad], [0.0, 0.0]]]], np.float32)
        np.testing.assert_array_equal(dx, expected)
