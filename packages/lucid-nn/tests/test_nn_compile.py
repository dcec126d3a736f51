"""lucid.compile(module) and Module.compile(): torch's wrapper conventions."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _net() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def test_optimized_module_wraps_the_original() -> None:
    lucid.manual_seed(0)
    net = _net()
    compiled = lucid.compile(net)
    assert isinstance(compiled, nn.OptimizedModule) and compiled._orig_mod is net
    assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in net.state_dict()]
    assert getattr(compiled, "0") is net[0]  # other attributes are the original's
    assert lucid.compile(nn.Linear(3, 4)).in_features == 3
    x = lucid.randn(2, 3)
    np.testing.assert_array_equal(compiled(x).detach().numpy(), net(x).detach().numpy())
    compiled.eval()
    assert not net.training


def test_module_compile_is_in_place_and_keeps_keys() -> None:
    lucid.manual_seed(0)
    net = _net()
    keys = list(net.state_dict())
    x = lucid.randn(2, 3)
    want = net(x).detach().numpy()
    assert net.compile() is None
    assert list(net.state_dict()) == keys
    for _ in range(2):
        np.testing.assert_array_equal(net(x).detach().numpy(), want)
    assert net._compiled_call_impl.log[0].program is not None  # type: ignore[union-attr]


@pytest.mark.parity
def test_state_dict_keys_are_torchs() -> None:
    torch = pytest.importorskip("torch")
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    want = list(torch.compile(tnet).state_dict())
    assert list(lucid.compile(_net()).state_dict()) == want
    tnet.compile()
    lnet = _net()
    lnet.compile()
    assert list(lnet.state_dict()) == list(tnet.state_dict())


def test_a_deep_copy_compiles_the_copy_afresh() -> None:
    lucid.manual_seed(0)
    net = _net()
    x = lucid.randn(2, 3)
    for compiled in (lucid.compile(net), net):
        if compiled is net:
            net.compile()
        compiled(x)
        twin = copy.deepcopy(compiled)
        with lucid.no_grad():
            for p in twin.parameters():
                p.add_(1.0)
        mod = getattr(twin, "_orig_mod", twin)
        np.testing.assert_array_equal(twin(x).detach().numpy(), mod._call_impl(x).detach().numpy())
        np.testing.assert_array_equal(
            compiled(x).detach().numpy(), net._call_impl(x).detach().numpy()
        )
