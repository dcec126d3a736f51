"""A boolean mask index must match the dims it covers (torch's IndexError): its nonzero()
positions would otherwise silently index a tensor of another shape."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid


def _mask(*values: Any) -> lucid.Tensor:
    return lucid.tensor(np.array(values, dtype=bool))


@pytest.mark.parametrize(
    ("shape", "index", "message"),
    [
        ((4,), lambda: _mask(True, False, True),
         "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
         "[4] at index 0"),
        ((3, 4), lambda: (slice(None), _mask(True, False, True)),
         "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
         "[3, 4] at index 1"),
        ((2, 3, 4), lambda: (Ellipsis, _mask(True, False)),
         "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor "
         "[2, 3, 4] at index 2"),
        ((3, 4), lambda: lucid.ones(3, 3, dtype=lucid.bool),
         "The shape of the mask [3, 3] at index 1 does not match the shape of the indexed "
         "tensor [3, 4] at index 1"),
    ],
)  # fmt: skip
def test_a_mask_of_the_wrong_shape_raises_torchs_error(shape: Any, index: Any,
                                                       message: str) -> None:  # fmt: skip
    t = lucid.arange(float(np.prod(shape))).reshape(*shape)
    before = t.numpy().copy()
    with pytest.raises(IndexError) as got:
        t[index()]
    assert str(got.value) == message
    with pytest.raises(IndexError) as got:
        t[index()] = 0.0
    assert str(got.value) == message
    np.testing.assert_array_equal(t.numpy(), before)  # nothing written


def test_masks_that_fit_still_index() -> None:
    t = lucid.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(t[_mask(True, False, True), 1:].numpy(),
                                  [[1.0, 2.0, 3.0], [9.0, 10.0, 11.0]])  # fmt: skip
    assert t[None, _mask(True, False, True)].shape == (1, 2, 4)
    assert t[..., _mask(True, True, False, False)].shape == (3, 2)
    assert t[lucid.ones(3, 4, dtype=lucid.bool)].shape == (12,)
    x = lucid.zeros(3, 4, requires_grad=True)
    x[_mask(False, True, True)].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy().sum(1), [0.0, 4.0, 4.0])
