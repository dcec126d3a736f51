"""A layer's result that lucid holds in another order than row-major (a convolution's NHWC
product, an interpolation) is reported contiguous, as torch's is, and its ``view``/
``reshape``/``flatten`` share its storage as torch's do: writes through them reach the result
(they were copies until 7 December 2026). Compared with torch's outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity

LAYERS: dict[str, Callable[[Any, Any], Any]] = {
    "conv2d": lambda F, x: F.conv2d(x, x.new_ones(4, 3, 3, 3) * 0.1, padding=1),
    "conv2d_relu": lambda F, x: F.relu(F.conv2d(x, x.new_ones(4, 3, 3, 3) * 0.1)),
    "conv_transpose2d": lambda F, x: F.conv_transpose2d(x, x.new_ones(3, 2, 3, 3) * 0.1, stride=2),
    "interpolate": lambda F, x: F.interpolate(x, size=(5, 7), mode="bilinear"),
    "max_pool2d": lambda F, x: F.max_pool2d(x, 2),
}


@pytest.mark.parametrize("how", ["view", "reshape", "flatten"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_a_view_of_a_layers_result_writes_through(name: str, how: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    got = []
    for fw in (torch, lucid):
        y = LAYERS[name](fw.nn.functional, fw.tensor(x))
        assert y.is_contiguous()
        v = {"view": lambda: y.view(y.shape[0], -1), "reshape": lambda: y.reshape(y.shape[0], -1),
             "flatten": lambda: y.flatten(1)}[how]()  # fmt: skip
        with fw.no_grad():
            v[0].fill_(7.0)
        got.append(y.numpy().copy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-5, atol=1e-5)
    assert (got[1][0] == 7.0).all()


def test_gradients_through_an_in_place_change_of_a_conv_results_view() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    grads = []
    for fw in (torch, lucid):
        xt = fw.tensor(x, requires_grad=True)
        y = fw.nn.functional.conv2d(xt, fw.tensor(w)) + 0.5
        y.view(2, -1).mul_(3.0)
        (y * y).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-10)
