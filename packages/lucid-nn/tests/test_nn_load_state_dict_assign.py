"""``Module.load_state_dict(assign=True)``: the state_dict's tensors go into the module (the
module_load_state_dict_tips recipe: a ``meta``-built module gets real storage)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn


def _model(device: str | None = None) -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4, device=device), nn.BatchNorm1d(4, device=device))


def test_assign_gives_a_meta_module_the_checkpoint_values() -> None:
    lucid.manual_seed(0)
    src = _model()
    src[1].running_mean.fill_(0.5)
    state = src.state_dict()
    meta = _model("meta")
    result = meta.load_state_dict(state, assign=True)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for key, value in meta.state_dict().items():
        assert value.device == "cpu", key
        np.testing.assert_allclose(value.numpy(), state[key].numpy(), rtol=1e-6, atol=1e-7)
    assert isinstance(meta[0].weight, nn.Parameter) and meta[0].weight.requires_grad
    assert meta[1]._buffers["running_mean"] is state["1.running_mean"]
    x = lucid.randn(5, 3)
    meta.eval(), src.eval()
    np.testing.assert_allclose(
        meta(x).detach().numpy(), src(x).detach().numpy(), rtol=1e-6, atol=1e-6
    )
    assert [n for n, _ in meta.named_parameters()] == [n for n, _ in src.named_parameters()]


def test_assign_keeps_the_modules_requires_grad_and_the_checkpoint_dtype() -> None:
    m = nn.Linear(2, 2)
    m.weight.requires_grad_(False)
    state = {"weight": lucid.ones(2, 2, dtype=lucid.float64), "bias": nn.Parameter(lucid.zeros(2))}
    m.load_state_dict(state, assign=True)
    assert isinstance(m.weight, nn.Parameter) and not m.weight.requires_grad
    assert m.weight.dtype == lucid.float64
    assert m.bias is state["bias"] and m.bias.requires_grad


def test_assign_checks_shapes_and_keys_as_copying_does() -> None:
    m = nn.Linear(2, 3)
    before = m.weight
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict({"weight": lucid.zeros(2, 2), "bias": lucid.zeros(3)}, assign=True)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        m.load_state_dict({"weight": lucid.zeros(3, 2)}, assign=True)
    assert m.weight is before  # nothing written when it raises
    result = m.load_state_dict({"weight": lucid.zeros(3, 2)}, strict=False, assign=True)
    assert result.missing_keys == ["bias"] and m.weight is not before


def test_without_assign_the_parameters_are_kept_and_copied_into() -> None:
    m = nn.Linear(2, 3)
    before = m.weight
    m.load_state_dict({"weight": lucid.ones(3, 2), "bias": lucid.zeros(3)})
    assert m.weight is before
    np.testing.assert_allclose(m.weight.detach().numpy(), np.ones((3, 2)), rtol=0, atol=0)


@pytest.mark.parity
def test_assign_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    lucid.manual_seed(1)
    src = _model()
    state = src.state_dict()
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    with torch.device("meta"):
        t_meta = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    t_state = {k: torch.tensor(v.numpy()) for k, v in state.items()}
    t_model.load_state_dict(t_state)
    t_meta.load_state_dict(t_state, assign=True)
    meta = _model("meta")
    meta.load_state_dict(state, assign=True)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    meta.train(), t_meta.train()
    np.testing.assert_allclose(
        meta(lucid.tensor(x)).detach().numpy(),
        t_meta(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    for (name, p), (t_name, t_p) in zip(meta.named_parameters(), t_meta.named_parameters()):
        assert name == t_name and p.requires_grad == t_p.requires_grad
