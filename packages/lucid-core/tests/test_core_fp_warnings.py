"""NumPy's floating-point warnings never leak from lucid ops; users' NumPy code keeps its own."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid


@pytest.fixture
def strict() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.usefixtures("strict")
def test_log_of_zero_is_minus_inf_silently() -> None:
    assert lucid.log(lucid.tensor(0.0)).item() == -math.inf


@pytest.mark.usefixtures("strict")
def test_invalid_and_overflowing_ops_give_torchs_values_silently() -> None:
    assert math.isnan((lucid.tensor(0.0) / 0).item())
    assert math.isnan(lucid.sqrt(lucid.tensor(-1.0)).item())
    assert lucid.exp(lucid.tensor(1000.0)).item() == math.inf
    assert (lucid.tensor(1.0) / 0).item() == math.inf


@pytest.mark.usefixtures("strict")
def test_backward_through_a_pole_is_silent() -> None:
    x = lucid.tensor(0.0, requires_grad=True)
    lucid.log(x).backward()
    assert x.grad is not None and x.grad.item() == math.inf


def test_users_numpy_settings_are_untouched() -> None:
    before = np.geterr()
    lucid.log(lucid.tensor(0.0))
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.log(np.zeros(1))


def test_error_state_is_restored_when_an_op_raises() -> None:
    before = np.geterr()
    with pytest.raises(RuntimeError):
        lucid.ones(2, 3) @ lucid.ones(2, 3)
    assert np.geterr() == before
