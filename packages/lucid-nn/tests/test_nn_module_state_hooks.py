"""torch.nn.Module's state hooks, extra state, backward pre-hooks and device stubs, as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn


class _Counter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.steps = 0

    def get_extra_state(self) -> dict[str, int]:
        return {"steps": self.steps}

    def set_extra_state(self, state: dict[str, int]) -> None:
        self.steps = state["steps"]


def test_extra_state_round_trips_through_state_dict() -> None:
    lucid.manual_seed(0)
    outer = nn.Sequential(_Counter(), nn.ReLU())
    outer[0].steps = 7
    sd = outer.state_dict()
    assert sd["0._extra_state"] == {"steps": 7}
    assert list(sd) == ["0._extra_state", "0.lin.weight", "0.lin.bias"]  # torch: own, then children
    other = nn.Sequential(_Counter(), nn.ReLU())
    other.load_state_dict(sd)
    assert other[0].steps == 7
    np.testing.assert_array_equal(other[0].lin.weight.detach().numpy(), sd["0.lin.weight"].numpy())
    del sd["0._extra_state"]
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "0._extra_state"'):
        other.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="get_extra_state"):
        nn.Linear(1, 1).get_extra_state()


def test_state_dict_pre_and_post_hooks() -> None:
    m = nn.Linear(2, 3)
    seen: list[tuple[str, bool]] = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append((prefix, keep_vars)))

    def post(mod: nn.Module, sd: dict[str, lucid.Tensor], prefix: str, meta: dict) -> None:
        sd[prefix + "note"] = lucid.tensor(1.0)

    handle = m.register_state_dict_post_hook(post)
    sd = nn.Sequential(m).state_dict(keep_vars=True)
    assert seen == [("0.", True)] and "0.note" in sd
    handle.remove()
    assert "note" not in m.state_dict()


def test_load_state_dict_post_hook_sees_and_may_edit_the_keys() -> None:
    m = nn.Linear(2, 2)
    got = []

    def hook(mod: nn.Module, keys: object) -> None:
        got.append((list(keys.missing_keys), list(keys.unexpected_keys)))  # type: ignore[attr-defined]
        keys.missing_keys.clear()  # type: ignore[attr-defined]

    m.register_load_state_dict_post_hook(hook)
    result = m.load_state_dict({"weight": lucid.zeros(2, 2)}, strict=False)
    assert got == [(["bias"], [])] and result.missing_keys == []
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.zeros((2, 2), np.float32))


def test_full_backward_pre_hook_can_scale_grad_output() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(3, 2)
    x = lucid.randn(4, 3, requires_grad=True)
    m(x).sum().backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    calls = []

    def pre(mod: nn.Module, grad_output: tuple[lucid.Tensor, ...]) -> tuple[lucid.Tensor, ...]:
        calls.append(tuple(g.shape for g in grad_output))
        return (grad_output[0] * 3.0,)

    m.register_full_backward_pre_hook(pre)
    m(x).sum().backward()
    assert calls == [((4, 2),)]
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * plain, rtol=1e-6, atol=1e-6)
    with pytest.warns(FutureWarning, match="register_full_backward_hook"):
        m.register_backward_hook(lambda *a: None)


def test_other_accelerators_raise() -> None:
    for move in ("xpu", "ipu", "mtia"):
        with pytest.raises(AssertionError, match="no"):
            getattr(nn.Linear(1, 1), move)()
