"""A Python number written into a tensor that autograd records (``a.requires_grad`` or a
``grad_fn``): the number is the value, as on an unrecorded tensor (``Tensor(2)`` would have made
it a size: zeros written, or a shape error)."""

import numpy as np
import pytest

import lucid

INDICES = [
    (lambda x: x > 0, 2),
    ([0], 2),
    ((slice(None), 0), 2),
    ((0, 1), 7),
    ((Ellipsis, 0), -3),
    ((1,), 2.5),
    ((slice(None), 1), True),
]


@pytest.mark.parametrize("index, value", INDICES)
@pytest.mark.parametrize("leaf", [True, False])
def test_number_written_into_recorded_tensor(index, value, leaf):
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 4)).astype(np.float32)
    w = lucid.tensor(base, requires_grad=True)
    x = w * 1.0 if not leaf else lucid.tensor(base.copy(), requires_grad=True)
    expect = base.copy()
    idx = index(base) if callable(index) else index
    expect[idx] = value
    if leaf:  # torch: an in-place write into a leaf that requires grad raises
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            x[index(x) if callable(index) else index] = value
        return
    x[index(x) if callable(index) else index] = value
    np.testing.assert_allclose(x.detach().numpy(), expect, rtol=0, atol=0)
    x.sum().backward()
    grad = np.ones_like(base)
    grad[idx] = 0.0  # the written elements do not depend on w
    np.testing.assert_allclose(w.grad.numpy(), grad, rtol=0, atol=0)
