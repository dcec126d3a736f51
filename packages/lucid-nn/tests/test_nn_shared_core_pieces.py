"""What lucid-nn takes from lucid-core instead of keeping its own copy: the hook handle, the
parser of ``to(...)``, erfinv for ``trunc_normal_``, and Parameter/Buffer built from public API."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import init
from lucid.utils.hooks import RemovableHandle


def test_nn_module_hooks_return_the_core_handle_and_remove_as_a_context() -> None:
    m = nn.Linear(2, 2)
    calls: list[str] = []
    with m.register_forward_hook(lambda mod, args, out: calls.append("hook")) as handle:
        assert isinstance(handle, RemovableHandle)
        m(lucid.ones(1, 2))
    m(lucid.ones(1, 2))
    assert calls == ["hook"]
    assert isinstance(nn.register_module_forward_hook(lambda *a: None), RemovableHandle)


def test_nn_module_to_reads_arguments_like_tensor_to() -> None:
    m = nn.Linear(2, 2)
    m.to(lucid.zeros(1, dtype=lucid.float64))
    assert m.weight.dtype is lucid.float64
    m.to("cpu", dtype="float32")
    assert m.weight.dtype is lucid.float32
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['memory'\]"):
        m.to("cpu", memory=1)


def test_nn_trunc_normal_far_tail_matches_inverse_cdf_sampling() -> None:
    # a=4, b=5: the inverse-CDF path (rejection would almost never land), through lucid.erfinv
    v = init.trunc_normal_(lucid.empty(2000, dtype=lucid.float64), a=4.0, b=5.0).numpy()
    assert v.min() >= 4.0 and v.max() <= 5.0
    np.testing.assert_allclose(v.mean(), 4.2168, rtol=0.0, atol=0.02)  # E[X | 4 <= X <= 5]


@pytest.mark.parametrize("cls", [nn.Parameter, nn.Buffer])
def test_nn_parameter_shares_a_tensor_buffer_unless_converted(cls: type) -> None:
    t = lucid.ones(3)
    assert np.shares_memory(cls(t).detach().numpy(), t.numpy())
    assert np.shares_memory(cls(t, dtype=lucid.float32).detach().numpy(), t.numpy())
    converted = cls(t, dtype=lucid.float64).detach()
    assert converted.dtype is lucid.float64
    assert not np.shares_memory(converted.numpy(), t.numpy())
    assert cls([1.0, 2.0]).dtype is lucid.float32
    assert cls().shape == (0,)
