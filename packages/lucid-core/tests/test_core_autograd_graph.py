"""lucid.autograd.graph.increment_version: a write into ``Tensor.array`` that autograd cannot
see, made visible to the saved-tensor version check."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd.graph import increment_version


def test_bumps_one_tensor_or_each_of_an_iterable() -> None:
    a, b = lucid.zeros(2), lucid.ones(3)
    va, vb = a._version, b._version
    increment_version(a)
    assert (a._version, b._version) == (va + 1, vb)
    increment_version([a, b])
    increment_version(t for t in (b,))
    assert (a._version, b._version) == (va + 2, vb + 2)


def test_a_view_and_its_base_share_the_count() -> None:
    base = lucid.zeros(4)
    view = base[1:3]
    before = base._version
    increment_version(view)
    assert base._version == before + 1 and view._version == base._version


def test_rejects_what_is_not_a_tensor() -> None:
    with pytest.raises(TypeError, match="expects Tensors"):
        increment_version([lucid.zeros(1), np.zeros(1)])  # type: ignore[list-item]


def test_a_saved_tensor_written_through_its_array_is_caught_at_backward() -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    w = lucid.tensor([3.0, 4.0])
    y = (x * w).sum()  # saves w
    w.array[0] = 5.0  # autograd cannot see this write...
    increment_version(w)  # ...until told
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_without_the_bump_the_write_goes_unseen() -> None:
    """The reason the function exists: the same write, untold, gives a stale gradient."""
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    w = lucid.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.array[0] = 5.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 4.0], rtol=1e-12, atol=0)


def test_reflected_add_and_mul_list_the_tensor_first() -> None:
    # introyt/autogradyt_tutorial.py walks `(2 * torch.sin(a) + 1).grad_fn` through
    # next_functions[0][0]: torch's `2 * t` is `t.mul(2)`, its graph lists t first
    a = lucid.tensor([0.5, 1.5], requires_grad=True)
    b = lucid.sin(a)
    for y in (2 * b, 2.5 + b, b * 2):
        (first, _), (second, _) = y.grad_fn.next_functions
        assert first is b.grad_fn and second is None
    d = 2 * b + 1
    d.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.cos([0.5, 1.5]), rtol=1e-6, atol=1e-7)
