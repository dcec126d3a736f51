"""Module behaviour: registration, traversal, state_dict, to(), modes, hooks, repr."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x: Any) -> Any:
        return self.fc2(self.bn(self.fc1(x)).relu())


# -- Parameter / Buffer ---------------------------------------------------------------------------
def test_parameter_takes_data_and_cuts_the_graph() -> None:
    x = lucid.randn(3, requires_grad=True)
    y = x * 2
    p = nn.Parameter(y)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert isinstance(p, lucid.Tensor)
    (p * 3).sum().backward()
    assert x.grad is None  # the graph to x was cut
    np.testing.assert_allclose(p.grad.numpy(), 3.0, rtol=1e-7, atol=1e-7)
    assert not nn.Parameter(lucid.zeros(2), requires_grad=False).requires_grad
    assert repr(nn.Parameter(lucid.zeros(2))).startswith("Parameter containing:\ntensor(")


def test_buffer_never_requires_grad_and_tensor_subclasses_take_attributes() -> None:
    b = nn.Buffer(lucid.randn(3, requires_grad=True))
    assert not b.requires_grad and b.persistent
    b.note = "running mean"
    assert b.note == "running mean"
    assert not nn.Buffer(lucid.zeros(1), persistent=False).persistent


# -- registration ---------------------------------------------------------------------------------
def test_setattr_registers_by_kind() -> None:
    m = nn.Module()
    m.w = nn.Parameter(lucid.zeros(2))
    m.b = nn.Buffer(lucid.ones(2))
    m.child = nn.Linear(2, 2)
    m.plain = lucid.zeros(2)  # a plain tensor is an attribute, not state
    assert list(m._parameters) == ["w"]
    assert list(m._buffers) == ["b"]
    assert list(m._modules) == ["child"]
    assert "plain" not in m.state_dict()
    assert set(m.state_dict()) == {"w", "b", "child.weight", "child.bias"}


def test_reassigning_a_name_to_another_kind_leaves_the_old_registry() -> None:
    m = nn.Module()
    m.x = nn.Parameter(lucid.zeros(2))
    m.x = nn.Buffer(lucid.zeros(2))
    assert "x" not in m._parameters and "x" in m._buffers
    m.x = nn.Linear(2, 2)
    assert "x" not in m._buffers and "x" in m._modules
    m.x = nn.Parameter(lucid.zeros(1))
    assert "x" not in m._modules and "x" in m._parameters
    with pytest.raises(TypeError, match="cannot assign"):
        m.x = lucid.zeros(1)  # a plain tensor can't replace a parameter
    m.x = None
    assert m.x is None and "x" in m._parameters
    assert list(m.parameters()) == []


def test_register_apis() -> None:
    m = nn.Module()
    m.register_parameter("p", None)
    m.register_buffer("rb", None)
    m.register_buffer("tmp", lucid.zeros(2), persistent=False)
    m.add_module("sub", nn.ReLU())
    m.register_module("sub2", None)
    assert m.p is None and m.rb is None and isinstance(m.sub, nn.ReLU)
    assert list(m.state_dict()) == []  # None entries and non-persistent buffers are not saved
    assert [n for n, _ in m.named_buffers()] == ["tmp"]
    with pytest.raises(TypeError):
        m.register_parameter("q", lucid.zeros(2))  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", lucid.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("training", lucid.zeros(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):

        class Bad(nn.Module):
            def __init__(self) -> None:
                self.w = nn.Parameter(lucid.zeros(1))

        Bad()


def test_getattr_error_names_the_class() -> None:
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = nn.Linear(2, 2).nope


def test_delattr_removes_from_registry() -> None:
    m = nn.Linear(2, 2)
    del m.bias
    assert [n for n, _ in m.named_parameters()] == ["weight"]


# -- traversal ------------------------------------------------------------------------------------
def test_named_traversals_use_dotted_names() -> None:
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias",
    ]  # fmt: skip
    assert [n for n, _ in net.named_buffers()] == [
        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
    ]  # fmt: skip
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_children()] == ["fc1", "bn", "fc2"]
    assert len(list(net.modules())) == 4 and len(list(net.children())) == 3
    assert [n for n, _ in net.named_parameters(prefix="net", recurse=False)] == []
    assert net.get_submodule("bn") is net.bn
    assert net.get_parameter("fc2.bias") is net.fc2.bias


def test_shared_modules_and_parameters_are_counted_once() -> None:
    shared = nn.Linear(3, 3)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.named_modules(remove_duplicate=False))) == 4
    m = nn.Module()
    m.a = nn.Linear(2, 2)
    m.b = nn.Linear(2, 2)
    m.b.weight = m.a.weight  # tied weights
    assert len(list(m.parameters())) == 3
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4


# -- state_dict -----------------------------------------------------------------------------------
def test_state_dict_returns_copies_not_views() -> None:
    net = Net()
    sd = net.state_dict()
    assert list(sd)[:2] == ["fc1.weight", "fc1.bias"]
    before = net.fc1.weight.detach().numpy().copy()
    sd["fc1.weight"].fill_(7.0)  # editing the copy leaves the model alone
    np.testing.assert_array_equal(net.fc1.weight.detach().numpy(), before)
    with lucid.no_grad():
        net.fc1.weight.fill_(1.0)  # and editing the model leaves the copy alone
    np.testing.assert_array_equal(sd["fc1.weight"].numpy(), 7.0)
    assert not sd["fc1.weight"].requires_grad
    kv = net.state_dict(keep_vars=True)
    assert kv["fc1.weight"] is net.fc1.weight
    assert list(net.state_dict(prefix="model."))[0] == "model.fc1.weight"


def test_load_state_dict_round_trip_in_place() -> None:
    a, b = Net(), Net()
    w_obj = b.fc1.weight
    data_obj = b.fc1.weight.array
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc1.weight is w_obj and b.fc1.weight.array is data_obj  # restored in place
    for (n, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=n)


def test_load_state_dict_accepts_numpy_arrays() -> None:
    m = nn.Linear(2, 1)
    m.load_state_dict({"weight": np.array([[1.0, 2.0]]), "bias": np.array([0.5])})
    np.testing.assert_allclose(
        m(lucid.tensor([[1.0, 1.0]])).detach().numpy(), [[3.5]], rtol=1e-7, atol=1e-7
    )


def test_load_state_dict_strict_lists_every_problem_at_once() -> None:
    net = Net()
    sd = net.state_dict()
    del sd["fc1.bias"]
    del sd["bn.running_var"]
    sd["extra.weight"] = lucid.zeros(1)
    sd["fc2.weight"] = lucid.zeros(5, 5)
    before = net.fc1.weight.detach().numpy().copy()
    sd["fc1.weight"] = lucid.zeros(4, 3)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc1.bias", "bn.running_var".' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight".' in msg
    assert "size mismatch for fc2.weight: copying a param with shape" in msg
    assert "[5, 5]" in msg and "[2, 4]" in msg
    np.testing.assert_array_equal(net.fc1.weight.detach().numpy(), before)  # nothing written


def test_load_state_dict_non_strict_reports_keys() -> None:
    net = Net()
    sd = net.state_dict()
    del sd["fc2.bias"]
    sd["junk"] = lucid.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc2.bias"]
    assert result.unexpected_keys == ["junk"]


def test_state_dict_pass_attr_excludes_names() -> None:
    class Cached(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(lucid.zeros(2))
            self.cache = nn.Buffer(lucid.zeros(3))
            self.helper = nn.Linear(2, 2)
            self._state_dict_pass_attr.update({"cache", "helper"})

    m = Cached()
    assert list(m.state_dict()) == ["w"]
    assert m.load_state_dict({"w": lucid.ones(2)}).missing_keys == []
    assert Cached()._state_dict_pass_attr is not m._state_dict_pass_attr  # per instance


# -- to / dtype / modes ---------------------------------------------------------------------------
def test_to_dtype_converts_floating_tensors_in_place() -> None:
    net = Net()
    w = net.fc1.weight
    net.fc1.weight.grad = lucid.zeros(4, 3)
    assert net.double() is net
    assert net.fc1.weight is w and w.dtype == lucid.float64
    assert w.grad is not None and w.grad.dtype == lucid.float64
    assert net.bn.running_mean.dtype == lucid.float64
    assert net.bn.num_batches_tracked.dtype == lucid.int64  # integers are left alone
    y = net(lucid.randn(5, 3, dtype=lucid.float64))
    assert y.dtype == lucid.float64
    net.to(lucid.float32)
    assert w.dtype == lucid.float32
    net.to("cpu", dtype=lucid.float64)
    assert w.dtype == lucid.float64 and str(w.device) == "cpu"
    with pytest.raises(TypeError, match="floating point"):
        net.to(lucid.int32)


def test_to_visits_each_shared_child_once() -> None:
    calls: list[int] = []
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, shared)
    seq._apply(lambda t: calls.append(1) or t)  # type: ignore[func-returns-value]
    assert len(calls) == 2  # weight and bias, once each


def test_train_eval_propagate() -> None:
    net = Net()
    assert net.training and net.bn.training
    assert net.eval() is net
    assert not net.training and not net.bn.training and not net.fc1.training
    net.train()
    assert net.bn.training


def test_zero_grad_and_requires_grad() -> None:
    net = Net()
    net(lucid.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum().item()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_then_self() -> None:
    seen: list[str] = []
    Net().apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]


def test_deepcopy_gives_independent_parameters() -> None:
    net = Net()
    clone = copy.deepcopy(net)
    assert isinstance(clone.fc1.weight, nn.Parameter)
    with lucid.no_grad():
        clone.fc1.weight.fill_(0.0)
    assert float(net.fc1.weight.abs().sum().item()) > 0


# -- hooks ----------------------------------------------------------------------------------------
def test_forward_pre_and_forward_hooks_can_replace_values_and_be_removed() -> None:
    m = nn.Linear(2, 2)
    with lucid.no_grad():
        m.weight.copy_(lucid.eye(2))
        m.bias.zero_()
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    post = m.register_forward_hook(lambda mod, args, out: out + 1)
    x = lucid.tensor([[1.0, 2.0]])
    np.testing.assert_allclose(m(x).detach().numpy(), [[3.0, 5.0]], rtol=1e-7, atol=1e-7)
    pre.remove()
    np.testing.assert_allclose(m(x).detach().numpy(), [[2.0, 3.0]], rtol=1e-7, atol=1e-7)
    post.remove()
    np.testing.assert_allclose(m(x).detach().numpy(), [[1.0, 2.0]], rtol=1e-7, atol=1e-7)


def test_full_backward_hook_sees_and_can_replace_grad_input() -> None:
    m = nn.Linear(3, 2)
    seen: dict[str, Any] = {}

    def hook(mod: nn.Module, grad_input: Any, grad_output: Any) -> Any:
        seen["gi"], seen["go"] = grad_input, grad_output
        return (grad_input[0] * 0,)

    handle = m.register_full_backward_hook(hook)
    x = lucid.randn(4, 3, requires_grad=True)
    m(x).sum().backward()
    assert seen["go"][0].shape == (4, 2)
    np.testing.assert_allclose(seen["go"][0].numpy(), 1.0, rtol=1e-7, atol=1e-7)
    assert seen["gi"][0].shape == (4, 3)
    np.testing.assert_allclose(
        x.grad.numpy(), 0.0, rtol=1e-7, atol=1e-7
    )  # the hook's replacement was used
    assert m.weight.grad is not None  # parameter grads still flow
    handle.remove()
    x.grad = None
    m(x).sum().backward()
    assert float(x.grad.abs().sum().item()) > 0


def test_backward_hook_without_grad_inputs_fires_with_grad_output() -> None:
    m = nn.Linear(3, 2)
    seen: list[Any] = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go)))
    m(lucid.randn(2, 3)).sum().backward()
    assert len(seen) == 1 and seen[0][0] == () and seen[0][1][0].shape == (2, 2)


def test_global_forward_hook() -> None:
    names: list[str] = []
    h = nn.register_module_forward_hook(lambda mod, a, o: names.append(type(mod).__name__))
    try:
        Net()(lucid.randn(2, 3))
    finally:
        h.remove()
    assert names == ["Linear", "BatchNorm1d", "Linear", "Net"]
    Net()(lucid.randn(2, 3))
    assert len(names) == 4


# -- repr / errors --------------------------------------------------------------------------------
def test_repr_matches_pytorch_layout() -> None:
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Tanh()))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Tanh()\n"
        "  )\n"
        ")"
    )
    assert repr(nn.Linear(2, 1, bias=False)) == "Linear(in_features=2, out_features=1, bias=False)"


def test_forward_missing_is_a_clear_error() -> None:
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_hooks_with_kwargs_and_prepend() -> None:
    class Scale(nn.Module):
        def forward(self, x: Any, factor: float = 1.0) -> Any:
            return x * factor

    m = Scale()
    order: list[str] = []
    m.register_forward_pre_hook(lambda mod, args: order.append("second") or None)
    m.register_forward_pre_hook(lambda mod, args: order.append("first") or None, prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}), with_kwargs=True)
    seen: list[Any] = []
    m.register_forward_hook(
        lambda mod, args, kwargs, out: seen.append(kwargs) or out + 1, with_kwargs=True
    )
    out = m(lucid.tensor([2.0]), factor=10.0)
    np.testing.assert_allclose(
        out.numpy(), [7.0], rtol=1e-7, atol=1e-7
    )  # factor replaced by the pre-hook, then +1
    assert order == ["first", "second"] and seen == [{"factor": 3.0}]
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="new_args, new_kwargs"):
        m(lucid.tensor([1.0]))
