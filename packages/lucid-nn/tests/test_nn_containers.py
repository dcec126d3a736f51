"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def test_sequential_calls_in_order_and_indexes() -> None:
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    assert len(seq) == 3
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    x = lucid.randn(5, 3)
    np.testing.assert_allclose(
        seq(x).detach().numpy(), seq[2](seq[1](seq[0](x))).detach().numpy(), rtol=1e-7, atol=1e-7
    )
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear"]
    with pytest.raises(IndexError, match="out of range"):
        seq[3]


def test_sequential_append_insert_delete_and_names() -> None:
    seq = nn.Sequential(nn.ReLU())
    seq.append(nn.Tanh())
    seq.insert(0, nn.Sigmoid())
    assert [type(m).__name__ for m in seq] == ["Sigmoid", "ReLU", "Tanh"]
    del seq[1]
    assert list(seq._modules) == ["0", "1"]
    seq[0] = nn.ReLU()
    assert isinstance(seq[0], nn.ReLU)
    named = nn.Sequential(OrderedDict([("conv", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_parameters()] == ["conv.weight", "conv.bias"]
    assert isinstance(named[1], nn.ReLU)


def test_module_list_registers_its_items() -> None:
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers += [nn.Sigmoid()]
    assert len(layers) == 6
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    del layers[0]
    assert len(layers) == 5 and list(layers._modules)[0] == "0"
    with pytest.raises(TypeError, match="iterable"):
        layers.extend(nn.ReLU())  # type: ignore[arg-type]


def test_module_dict() -> None:
    d = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()})
    d["c"] = nn.Tanh()
    assert list(d) == ["a", "b", "c"] and "a" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias"]
    popped = d.pop("b")
    assert isinstance(popped, nn.ReLU) and list(d.keys()) == ["a", "c"]


def test_parameter_list_and_dict_wrap_tensors_as_parameters() -> None:
    pl = nn.ParameterList([lucid.zeros(2), nn.Parameter(lucid.ones(3))])
    pl.append(lucid.zeros(1))
    assert len(pl) == 3 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    pd = nn.ParameterDict({"w": lucid.zeros(2)})
    pd["b"] = lucid.ones(1)
    assert isinstance(pd["w"], nn.Parameter) and list(pd) == ["w", "b"]
    assert set(pd.state_dict()) == {"w", "b"}
    m = nn.Module()
    m.params = pl
    assert [n for n, _ in m.named_parameters()] == ["params.0", "params.1", "params.2"]
    assert "Parameter containing: [float32 of size 3]" in repr(pl) or "size 3" in repr(pl)


def test_parameter_list_holds_modules_and_objects_as_torch() -> None:
    # vit-pytorch's nViT appends nn.ParameterLists to an nn.ParameterList.
    inner = nn.ParameterList([lucid.ones(2), lucid.zeros(2)])
    pl = nn.ParameterList([lucid.zeros(2, 3), inner, nn.Linear(2, 2), None, 7])
    assert isinstance(pl[0], nn.Parameter) and pl[1] is inner and pl[3] is None and pl[4] == 7
    assert [n for n, _ in pl.named_parameters()] == ["0", "1.0", "1.1", "2.weight", "2.bias"]
    assert set(pl.state_dict()) == {"0", "1.0", "1.1", "2.weight", "2.bias"}
    assert [n for n, _ in pl.named_modules()] == ["", "1", "2"]
    assert isinstance(pl[1:3], nn.ParameterList) and list(pl[1:3]) == [inner, pl[2]]
    pl[1] = lucid.ones(4)  # a module's slot takes a parameter
    assert isinstance(pl[1], nn.Parameter) and [n for n, _ in pl.named_modules()] == ["", "2"]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    with pytest.raises(TypeError, match="iterable, but got Tensor"):
        pl.extend(lucid.ones(2))


def test_parameter_dict_holds_modules_and_sorts_a_plain_dict_as_torch() -> None:
    pd = nn.ParameterDict({"b": lucid.zeros(2), "a": nn.Parameter(lucid.ones(1, 2))})
    assert list(pd) == ["a", "b"]  # a plain dict's keys in sorted order, as torch's update
    pd["m"] = nn.Linear(1, 1)
    pd["n"] = None
    assert list(pd) == ["a", "b", "m", "n"] and pd["n"] is None
    assert list(pd.state_dict()) == ["a", "b", "m.weight", "m.bias"]
    assert pd.popitem()[0] == "n" and list(pd) == ["a", "b", "m"]
    assert pd.get("zz", 3) == 3 and pd.setdefault("c", lucid.ones(1)) is pd["c"]
    assert list(pd | nn.ParameterDict(OrderedDict(z=lucid.ones(1), y=lucid.ones(1)))) == [
        "a", "b", "m", "c", "z", "y"
    ]  # fmt: skip
    with pytest.raises(TypeError, match="not a string"):
        pd[1]  # type: ignore[index]
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(1)


@pytest.mark.parity
def test_parameter_containers_repr_as_torch() -> None:
    torch = pytest.importorskip("torch")

    def build(T, mod):  # the same containers in either library
        pl = mod.ParameterList([T.zeros(2, 3), mod.Parameter(T.ones(3)), mod.Linear(2, 2), None])
        pd = mod.ParameterDict({"b": T.zeros(2), "a": mod.Parameter(T.ones(1, 2))})
        pd["m"] = mod.Linear(1, 1)
        pd["n"] = 5
        return repr(pl), repr(pd)

    mine, theirs = build(lucid, nn), build(torch, torch.nn)
    for a, b in zip(mine, theirs, strict=True):
        assert a == b.replace("torch.", "lucid.")
