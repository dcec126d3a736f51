"""PyTorch-style ``.data`` code on Modules: ``weight.data.normal_``, ``p.data.copy_``,
``p.data = t`` and ``nn.init`` on ``.data`` change the Parameter in place, outside autograd."""

from __future__ import annotations

import numpy as np

import lucid
import lucid.nn as nn


def test_parameter_data_is_a_plain_detached_tensor() -> None:
    layer = nn.Linear(3, 2)
    d = layer.weight.data
    assert type(d) is lucid.Tensor and not d.requires_grad and d.array is layer.weight.array


def test_init_through_data_changes_the_parameter_in_place() -> None:
    lucid.manual_seed(0)
    layer = nn.Linear(400, 300)
    weight, version = layer.weight, layer.weight._version
    layer.weight.data.normal_(0.0, 0.02)
    layer.bias.data.fill_(0.1)
    assert layer.weight is weight and layer.weight._version == version
    assert 0.018 < float(layer.weight.detach().std()) < 0.022
    np.testing.assert_allclose(layer.bias.detach().numpy(), np.full(300, 0.1), rtol=1e-6, atol=1e-6)
    nn.init.zeros_(layer.weight.data)
    assert float(layer.weight.detach().abs().sum()) == 0.0
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad


def test_copy_and_swap_through_data_keep_the_parameter() -> None:
    src, dst = nn.Linear(3, 2), nn.Linear(3, 2)
    for p, q in zip(dst.parameters(), src.parameters(), strict=True):
        p.data.copy_(q.data)
    for p, q in zip(dst.parameters(), src.parameters(), strict=True):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-6)
    weight = dst.weight
    dst.weight.data = lucid.ones(4, 3)
    dst.bias.data = lucid.zeros(4)
    assert dst.weight is weight and dst.weight.shape == (4, 3)
    assert dict(dst.named_parameters())["weight"] is weight
    dst(lucid.ones(1, 3)).sum().backward()
    assert weight.grad is not None and weight.grad.shape == (4, 3)
