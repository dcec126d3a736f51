"""nn.Module's methods the surface gauge found missing once it read ``torch.nn.Module``:
``set_submodule``, ``bfloat16`` and torch's class attributes."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _net() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 2), nn.Sequential(nn.ReLU(), nn.Linear(2, 2)))


def test_set_submodule_replaces_at_a_dotted_path() -> None:
    net = _net()
    net.set_submodule("1.0", nn.Tanh())
    assert isinstance(net.get_submodule("1.0"), nn.Tanh)
    net.set_submodule("1.extra", nn.Identity())  # a new name: fine without strict
    assert isinstance(net[1].extra, nn.Identity)
    lucid.manual_seed(0)
    x = lucid.randn(4, 3)
    expected = net[1][1](lucid.tanh(net[0](x)))
    np.testing.assert_allclose(
        net(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6, atol=1e-6
    )


def test_set_submodule_errors_are_torchs() -> None:
    net = _net()
    with pytest.raises(ValueError, match="Cannot set the submodule without a target name!"):
        net.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="`module` is not an nn.Module"):
        net.set_submodule("0", 3)  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        net.set_submodule("1.nope", nn.ReLU(), strict=True)
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.set_submodule("0.weight", nn.ReLU())


def test_bfloat16_casts_floating_tensors_only() -> None:
    m = nn.BatchNorm1d(3)
    m.bfloat16()
    assert m.weight.dtype == lucid.bfloat16 and m.running_var.dtype == lucid.bfloat16
    assert m.num_batches_tracked.dtype == lucid.int64


def test_class_attributes() -> None:
    assert nn.Module.dump_patches is False and nn.Module.call_super_init is False
    assert nn.Module.T_destination.__name__ == "T_destination"


@pytest.mark.parity
def test_set_submodule_and_bfloat16_as_torch() -> None:
    torch = pytest.importorskip("torch")
    t_net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Sequential(torch.nn.ReLU()))
    t_net.set_submodule("1.0", torch.nn.Tanh())
    net = nn.Sequential(nn.Linear(3, 2), nn.Sequential(nn.ReLU()))
    net.set_submodule("1.0", nn.Tanh())
    assert repr(net) == repr(t_net)
    for bad in ("1.nope", "0.weight"):
        with pytest.raises(AttributeError) as t_err:
            t_net.set_submodule(bad, torch.nn.ReLU(), strict=True)
        with pytest.raises(AttributeError) as l_err:
            net.set_submodule(bad, nn.ReLU(), strict=True)
        assert str(l_err.value) == str(t_err.value)
    t_bn, bn = torch.nn.BatchNorm1d(3).bfloat16(), nn.BatchNorm1d(3).bfloat16()
    assert str(bn.weight.dtype).split(".")[-1] == str(t_bn.weight.dtype).split(".")[-1]


def test_modules_remove_duplicate() -> None:
    shared = nn.ReLU()
    net = nn.Sequential(shared, shared, nn.Linear(2, 2))
    assert len(list(net.modules())) == 3
    assert len(list(net.modules(remove_duplicate=False))) == 4
    assert list(net.modules(remove_duplicate=False))[1:3] == [shared, shared]


@pytest.mark.parity
def test_modules_remove_duplicate_as_torch() -> None:
    torch = pytest.importorskip("torch")
    t_shared = torch.nn.ReLU()
    t_net = torch.nn.Sequential(t_shared, t_shared, torch.nn.Linear(2, 2))
    shared = nn.ReLU()
    net = nn.Sequential(shared, shared, nn.Linear(2, 2))
    for flag in (True, False):
        assert [type(m).__name__ for m in net.modules(remove_duplicate=flag)] == [
            type(m).__name__ for m in t_net.modules(remove_duplicate=flag)
        ]
