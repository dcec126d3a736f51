"""lucid.utils: the hook handle every register_*_hook returns, and the parser of to(...)."""

from __future__ import annotations

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
