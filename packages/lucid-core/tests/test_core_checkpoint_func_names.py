"""torch.utils.checkpoint's helpers (detach_variable, check_backward_validity, the device-state
and setting helpers) and torch.func's functionalize/replace_all_batch_norm_modules_."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import func
from lucid.utils import checkpoint as C


def test_detach_variable_keeps_requires_grad_and_other_items() -> None:
    x = lucid.ones(2, requires_grad=True)
    y = (x * 2).detach()
    out = C.detach_variable((x * 3, y, 5))
    assert out[0].requires_grad and out[0].grad_fn is None and not out[1].requires_grad
    assert out[2] == 5
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got "
                       "Unsupported input type: list"):  # fmt: skip
        C.detach_variable([x])  # type: ignore[arg-type]


def test_check_backward_validity_warns_without_a_grad_input() -> None:
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        C.check_backward_validity([lucid.ones(2), 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C.check_backward_validity([lucid.ones(2, requires_grad=True)])


def test_settings_and_device_states() -> None:
    assert C.get_device_states(lucid.ones(2)) == ([], [])
    C.set_device_states([], [])
    with pytest.raises(ValueError, match="one state a device"):
        C.set_device_states([0], [])
    with C.set_checkpoint_early_stop(False):
        assert C._settings.early_stop is False
    assert C._settings.early_stop is True
    with C.set_checkpoint_debug_enabled(True):
        assert C._settings.debug is True
        w = lucid.randn(3, 3, requires_grad=True)
        C.checkpoint(
            lambda a: (a @ w).tanh(), lucid.ones(2, 3), use_reentrant=False
        ).sum().backward()
        assert w.grad is not None
    assert C._settings.debug is None
    assert C.DefaultDeviceType.get_device_type() == "cpu"
    C.DefaultDeviceType.set_device_type("mlx")
    try:
        assert C.DefaultDeviceType.get_device_type() == "mlx"
    finally:
        C.DefaultDeviceType.set_device_type("cpu")


class _FakeBN:
    """Laid out as lucid-nn's batch norm (lucid-core's tests do not import lucid.nn)."""

    def __init__(self) -> None:
        self.track_running_stats = True
        self.running_mean: Any = lucid.zeros(3)
        self.running_var: Any = lucid.ones(3)
        self.num_batches_tracked: Any = lucid.tensor(0)

    def modules(self) -> list[Any]:
        return [self]


_BatchNorm = type("_BatchNorm", (_FakeBN,), {})
BatchNorm2d = type("BatchNorm2d", (_BatchNorm,), {})


class _Net:
    def __init__(self) -> None:
        self.bn, self.other = BatchNorm2d(), _FakeBN()

    def modules(self) -> list[Any]:
        return [self, self.bn, self.other]


def test_replace_all_batch_norm_modules_stops_tracking_in_place() -> None:
    net = _Net()
    assert func.replace_all_batch_norm_modules_(net) is net
    assert net.bn.running_mean is None and net.bn.running_var is None
    assert net.bn.num_batches_tracked is None and net.bn.track_running_stats is False
    assert net.other.running_mean is not None  # not a batch norm by its classes' names


def test_functionalize_computes_the_same_values() -> None:
    def f(x: lucid.Tensor) -> lucid.Tensor:
        y = x.clone()
        y.add_(1)
        return y * 2

    x = lucid.arange(3.0)
    np.testing.assert_array_equal(func.functionalize(f)(x).numpy(), f(x).numpy())
    assert func.functionalize(f, remove="mutations_and_views") is f
    with pytest.raises(RuntimeError, match="received invalid argument for remove=bad"):
        func.functionalize(f, remove="bad")


@pytest.mark.parity
def test_torch_words_for_the_same_mistakes() -> None:
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as TC  # noqa: PLC0415

    with pytest.raises(RuntimeError) as theirs:
        TC.detach_variable([torch.ones(1)])
    with pytest.raises(RuntimeError) as ours:
        C.detach_variable([lucid.ones(1)])  # type: ignore[arg-type]
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(lambda x: x, remove="bad")
    with pytest.raises(RuntimeError) as ours:
        func.functionalize(lambda x: x, remove="bad")
    assert str(ours.value) == str(theirs.value)
    assert C.DefaultDeviceType.get_device_type() == TC.DefaultDeviceType.get_device_type()
    assert C.get_device_states(lucid.ones(1)) == TC.get_device_states(torch.ones(1))
