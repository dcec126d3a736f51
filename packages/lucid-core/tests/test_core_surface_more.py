"""torch names the surface gauge found missing: Tensor.set_ / is_set_to / as_strided_ / map2_ /
module_load / name, torch.as_strided_ and torch.embedding_bag (F.embedding_bag's aten form)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def test_set_and_is_set_to() -> None:
    a, b = lucid.zeros(2, 3), lucid.arange(6.0).reshape(3, 2)
    assert a.set_(b) is a and a.shape == (3, 2) and a.is_set_to(b)
    assert not a.is_set_to(lucid.arange(6.0).reshape(3, 2))
    assert a.set_().shape == (0,)
    c = lucid.zeros(2).set_(lucid.arange(6.0), 1, (2, 2), (2, 1))
    assert c.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="Could not set tensor of type"):
        lucid.zeros(2).set_(lucid.zeros(2, dtype=lucid.int64))


def test_as_strided_in_place_and_top_level() -> None:
    x = lucid.arange(6.0)
    assert lucid.as_strided_(x, (2, 2), (1, 2)) is x
    assert x.tolist() == [[0.0, 2.0], [1.0, 3.0]]


def test_map2_module_load_name() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    x.map2_(lucid.tensor([10.0, 20.0, 30.0]), lucid.tensor(1.0), lambda a, b, c: a + b * c)
    assert x.tolist() == [11.0, 22.0, 33.0]
    p = lucid.zeros(3)
    loaded = p.module_load(lucid.ones(3))
    assert p.tolist() == [1.0, 1.0, 1.0] and loaded.tolist() == [1.0, 1.0, 1.0]
    assert p.module_load(lucid.full((3,), 2.0), assign=True).tolist() == [2.0, 2.0, 2.0]
    assert p.name is None


def test_as_subclass_shares_data_and_graph() -> None:
    class Marked(lucid.Tensor):
        def tag(self) -> str:
            return "marked"

    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.as_subclass(Marked)
    assert isinstance(y, Marked) and y.tag() == "marked" and y.requires_grad
    (y * y).sum().backward()
    assert x.grad is not None and x.grad.tolist() == [2.0, 4.0, 6.0]
    plain = lucid.zeros(2)
    alias = plain.as_subclass(Marked)
    with lucid.no_grad():
        plain.add_(1.0)
    assert alias.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="Tensor subclass"):
        plain.as_subclass(int)


@pytest.mark.parity
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_parity(mode: int, padding_idx: int | None) -> None:
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(mode).standard_normal((10, 3)).astype(np.float32)
    idx, off = [1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 8]
    for include_last in (False, True):
        args = (False, mode, False, None, include_last, padding_idx)
        want = torch.embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(off), *args)
        got = lucid.embedding_bag(lucid.tensor(w), lucid.tensor(idx), lucid.tensor(off), *args)
        for t, lt in zip(want, got, strict=True):
            assert tuple(t.shape) == lt.shape
            np.testing.assert_allclose(lt.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
