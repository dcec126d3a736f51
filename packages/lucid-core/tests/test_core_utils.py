"""lucid.utils: the hook handle every register_*_hook returns, the parser of to(...), and
swap_tensors."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.utils.hooks import RemovableHandle
from lucid.utils.to_args import ToArgs, parse_to


def test_core_utils_handle_ids_are_unique_and_remove_only_their_hook() -> None:
    hooks: dict[int, object] = {}
    first, second = RemovableHandle(hooks), RemovableHandle(hooks)
    hooks[first.id], hooks[second.id] = "a", "b"
    assert first.id != second.id
    first.remove()
    first.remove()
    assert list(hooks.values()) == ["b"]


def test_core_utils_handle_is_a_context_manager() -> None:
    hooks: dict[int, object] = {}
    with RemovableHandle(hooks) as handle:
        hooks[handle.id] = "hook"
        assert len(hooks) == 1
    assert hooks == {}


@pytest.mark.parametrize("leaf", [True, False])
def test_core_utils_tensor_hook_handle_removes_the_hook(leaf: bool) -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x if leaf else x * 1.0
    with y.register_hook(lambda g: g * 10.0) as handle:
        assert isinstance(handle, RemovableHandle)
        (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 40.0], rtol=1e-6, atol=1e-6)
    x.grad = None
    y = x if leaf else x * 1.0
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0], rtol=1e-6, atol=1e-6)


def test_core_utils_parse_to_reads_every_form() -> None:
    other = lucid.zeros(1, dtype=lucid.float64)
    assert parse_to("cpu") == ToArgs("cpu", None, False, False)
    assert parse_to(lucid.float16) == ToArgs(None, lucid.float16, False, False)
    assert parse_to("cpu", lucid.int32) == ToArgs("cpu", lucid.int32, False, False)
    assert parse_to(other) == ToArgs(other.device, lucid.float64, False, False)
    assert parse_to(dtype="float64", copy=True, non_blocking=True) == ToArgs(
        None, lucid.float64, True, True
    )


def test_core_utils_parse_to_names_unexpected_keywords() -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['memory'\]"):
        parse_to("cpu", memory=1)


# -- swap_tensors: two objects exchange contents, each keeping its identity ----------------------
def _swap_case(L: Any) -> tuple[Any, Any, Any]:
    """A recorded non-leaf float tensor and an int64 leaf changed in place twice, on ``L``
    (torch or lucid); the leaf ``x`` the first was computed from."""
    rng = np.random.default_rng(0)
    x = L.tensor(rng.standard_normal(3), dtype=L.float64, requires_grad=True)
    t1 = (x * 2.0).exp()
    t2 = L.tensor([5, 6, 7])
    t2.add_(1)
    t2.add_(1)
    return x, t1, t2


def _state(t: Any) -> tuple[Any, ...]:
    return (type(t).__name__, t.detach().numpy().tolist(), str(t.dtype).split(".")[-1],
            str(t.device), t.requires_grad, t.is_leaf, t._version)  # fmt: skip


def test_core_utils_swap_tensors_exchanges_contents_and_keeps_identities() -> None:
    x, t1, t2 = _swap_case(lucid)
    registry = {t1: "first", t2: "second"}  # keyed by identity, as an optimizer's state is
    before1, before2 = _state(t1), _state(t2)
    lucid.utils.swap_tensors(t1, t2)
    assert (_state(t1), _state(t2)) == (before2, before1)
    assert registry[t1] == "first" and registry[t2] == "second"
    assert t1.grad_fn is None and t2.grad_fn is not None
    t2.sum().backward()  # the graph moved with the contents
    want = 2.0 * np.exp(2.0 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)


def test_core_utils_swap_tensors_moves_grads_and_hooks() -> None:
    a = lucid.tensor([1.0, 2.0], requires_grad=True)
    b = lucid.tensor([3.0, 4.0, 5.0], dtype=lucid.float64)
    a.grad = lucid.tensor([0.5, 0.5])
    a.register_hook(lambda g: g * 10.0)
    lucid.utils.swap_tensors(a, b)
    assert a.grad is None and not a.requires_grad
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 0.5], rtol=0, atol=0)
    b.grad = None
    (b * b).sum().backward()  # b carries a's hook: 10 * 2b
    np.testing.assert_allclose(b.grad.numpy(), [20.0, 40.0], rtol=1e-6, atol=1e-6)


def test_core_utils_swap_tensors_refuses_with_torchs_errors_and_changes_nothing() -> None:
    a, b = lucid.tensor([1.0]), lucid.tensor([2.0, 3.0])
    ref = weakref.ref(a)
    with pytest.raises(RuntimeError, match="^Cannot swap t1 because it has weakref associated"):
        lucid.utils.swap_tensors(a, b)
    with pytest.raises(RuntimeError, match="^Cannot swap t2 because it has weakref associated"):
        lucid.utils.swap_tensors(b, a)
    del ref

    class Slotted(lucid.Tensor):
        __slots__ = ("extra",)

    class WithDict(lucid.Tensor):  # a subclass without __slots__ has a __dict__ (Parameter's)
        pass

    with pytest.raises(RuntimeError, match="^Cannot swap t1 and t2 if they have different slots"):
        lucid.utils.swap_tensors(Slotted([1.0]), b)
    d = WithDict([7.0])
    d.note = "kept"
    with pytest.raises(RuntimeError, match="a WithDict cannot become a Tensor"):
        lucid.utils.swap_tensors(d, b)
    assert type(d) is WithDict and d.note == "kept" and d.tolist() == [7.0]
    assert type(b) is lucid.Tensor and b.tolist() == [2.0, 3.0]


def test_core_utils_swap_tensors_of_subclasses_swaps_classes_and_attributes() -> None:
    class Tagged(lucid.Tensor):
        pass

    class Other(lucid.Tensor):
        pass

    a, b = Tagged([1.0]), Other([2.0, 3.0])
    a.tag, b.tag = "a", "b"
    lucid.utils.swap_tensors(a, b)
    assert (type(a), a.tag, a.tolist()) == (Other, "b", [2.0, 3.0])
    assert (type(b), b.tag, b.tolist()) == (Tagged, "a", [1.0])


@pytest.mark.parity
def test_core_utils_swap_tensors_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for L in (torch, lucid):
        x, t1, t2 = _swap_case(L)
        L.utils.swap_tensors(t1, t2)
        t2.sum().backward()
        results.append((_state(t1), _state(t2), x.grad.numpy()))
    (t_1, t_2, t_grad), (l_1, l_2, l_grad) = results
    assert (l_1, l_2) == (t_1, t_2)
    np.testing.assert_allclose(l_grad, t_grad, rtol=1e-12, atol=1e-12)
