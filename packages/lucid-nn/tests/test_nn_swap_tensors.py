"""``lucid.utils.swap_tensors`` on a Module's Parameters and Buffers: the objects the module
(and anything keyed by them) holds stay the same, their contents and classes move."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _linear(L: Any) -> Any:
    """A seeded float32 Linear(3, 2) of ``L`` (torch or lucid) with the same weights."""
    rng = np.random.default_rng(0)
    layer = L.nn.Linear(3, 2)
    with L.no_grad():
        layer.weight.copy_(L.tensor(rng.standard_normal((2, 3)), dtype=L.float32))
        layer.bias.copy_(L.tensor(rng.standard_normal(2), dtype=L.float32))
    return layer


def _swap_weight_for_float64(L: Any) -> tuple[Any, Any, Any]:
    """Swap a Linear's weight with a float64 Parameter (how torch's module conversion keeps
    parameter identity); returns the layer, the weight object it held, and the new one."""
    layer = _linear(L)
    weight = layer.weight
    new = L.nn.Parameter(weight.detach().to(L.float64) * 2.0, requires_grad=False)
    L.utils.swap_tensors(weight, new)
    return layer, weight, new


def test_swap_tensors_keeps_a_modules_parameter_objects() -> None:
    layer, weight, new = _swap_weight_for_float64(lucid)
    assert layer.weight is weight and dict(layer.named_parameters())["weight"] is weight
    assert weight.dtype == lucid.float64 and not weight.requires_grad
    assert new.dtype == lucid.float32 and new.requires_grad
    np.testing.assert_allclose(weight.numpy(), 2.0 * new.detach().numpy(), rtol=1e-7, atol=1e-7)


def test_swap_tensors_of_a_parameter_and_a_buffer_swaps_classes_and_attributes() -> None:
    p = nn.Parameter(lucid.ones(2))
    b = nn.Buffer(lucid.zeros(3), persistent=False)
    lucid.utils.swap_tensors(p, b)
    assert type(p) is nn.Buffer and p.persistent is False and not p.requires_grad
    assert type(b) is nn.Parameter and b.requires_grad and b.tolist() == [1.0, 1.0]


def test_swap_tensors_refuses_a_parameter_and_a_plain_tensor_and_changes_nothing() -> None:
    p, t = nn.Parameter(lucid.ones(2)), lucid.zeros(3)
    with pytest.raises(RuntimeError, match="a Parameter cannot become a Tensor"):
        lucid.utils.swap_tensors(p, t)
    assert type(p) is nn.Parameter and p.tolist() == [1.0, 1.0] and p.requires_grad
    assert type(t) is lucid.Tensor and t.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parity
def test_swap_tensors_on_a_module_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((4, 3))
    results = []
    for L in (torch, lucid):
        layer, weight, new = _swap_weight_for_float64(L)
        layer.bias.data = layer.bias.data.to(L.float64)
        out = layer(L.tensor(x, dtype=L.float64))
        results.append([out.detach().numpy(), weight.detach().numpy(), new.detach().numpy(),
                        str(weight.dtype), weight.requires_grad, type(new).__name__])  # fmt: skip
    (t_out, t_w, t_new, *t_meta), (l_out, l_w, l_new, *l_meta) = results
    assert [m.split(".")[-1] if isinstance(m, str) else m for m in l_meta] == [
        m.split(".")[-1] if isinstance(m, str) else m for m in t_meta
    ]
    for got, want in ((l_out, t_out), (l_w, t_w), (l_new, t_new)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
