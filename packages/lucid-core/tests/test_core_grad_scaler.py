"""lucid.amp.GradScaler: exact pass-through when disabled; scaling, unscaling, skipped steps,
the scale's back-off and growth, the misuse errors and the state dict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.amp import GradScaler
from lucid.cuda import amp as cuda_amp


class PlainSGD:
    """The optimizer surface GradScaler uses (lucid-core's tests run without lucid-optim)."""

    def __init__(self, params: list[lucid.Tensor], lr: float = 0.1) -> None:
        self.param_groups = [{"params": params, "lr": lr}]
        self.steps = 0

    def step(self, closure: Any = None) -> str:
        self.steps += 1
        with lucid.no_grad():
            for p in self.param_groups[0]["params"]:
                p.sub_(p.grad * self.param_groups[0]["lr"])
        return "stepped"


def _setup(grad: list[float]) -> tuple[lucid.Tensor, PlainSGD]:
    w = lucid.ones(len(grad), requires_grad=True)
    w.grad = lucid.tensor(grad)
    return w, PlainSGD([w])


def test_disabled_scaler_passes_everything_through() -> None:
    scaler = GradScaler(enabled=False)
    loss = lucid.tensor(3.0)
    w, opt = _setup([float("inf"), 1.0])
    assert scaler.scale(loss) is loss
    assert scaler.step(opt) == "stepped" and opt.steps == 1
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_scale_multiplies_and_step_unscales() -> None:
    scaler = GradScaler(init_scale=8.0)
    scaled = scaler.scale(lucid.tensor(1.5))
    assert scaled.shape == (1,) and scaled.item() == 12.0
    assert [t.item() for t in scaler.scale([lucid.tensor(1.0), lucid.tensor(2.0)])] == [8.0, 16.0]
    w, opt = _setup([8.0, -16.0])
    scaler.step(opt)
    np.testing.assert_allclose(w.detach().numpy(), [0.9, 1.2], rtol=1e-6, atol=1e-7)
    scaler.update()
    assert scaler.get_scale() == 8.0


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_a_non_finite_gradient_skips_the_step_and_backs_off(bad: float) -> None:
    scaler = GradScaler(init_scale=1024.0, backoff_factor=0.25)
    w, opt = _setup([1.0, bad])
    assert scaler.step(opt) is None and opt.steps == 0
    assert np.array_equal(w.detach().numpy(), [1.0, 1.0])
    scaler.update()
    assert scaler.get_scale() == 256.0


def test_the_scale_grows_after_growth_interval_clean_steps() -> None:
    scaler = GradScaler(init_scale=4.0, growth_factor=3.0, growth_interval=2)
    scales = []
    for _ in range(4):
        _, opt = _setup([1.0])
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [4.0, 12.0, 12.0, 36.0]


def test_unscale_then_step_unscales_once() -> None:
    scaler = GradScaler(init_scale=4.0)
    w, opt = _setup([4.0])
    scaler.unscale_(opt)
    assert w.grad.item() == 1.0
    scaler.step(opt)
    assert w.grad.item() == 1.0 and opt.steps == 1


def test_misuse_is_refused_with_torchs_messages() -> None:
    scaler = GradScaler()
    _, opt = _setup([1.0])
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(AssertionError, match="No inf checks"):
        GradScaler().update()
    half = lucid.ones(1, dtype=lucid.float16, requires_grad=True)
    half.grad = lucid.ones(1, dtype=lucid.float16)
    with pytest.raises(ValueError, match="FP16 gradients"):
        GradScaler().unscale_(PlainSGD([half]))


def test_state_dict_round_trip() -> None:
    scaler = GradScaler(init_scale=64.0, growth_interval=3)
    _, opt = _setup([1.0])
    scaler.step(opt)
    scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 3, "_growth_tracker": 1}  # fmt: skip
    other = GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        GradScaler().load_state_dict({})


def test_update_with_a_new_scale() -> None:
    scaler = GradScaler()
    scaler.update(128.0)
    assert scaler.get_scale() == 128.0
    scaler.update(lucid.tensor([32.0]))
    assert scaler.get_scale() == 32.0


def test_cuda_amp_grad_scaler_as_nanogpt_uses_it() -> None:
    with pytest.warns(FutureWarning, match=r"Please use `lucid.amp.GradScaler\('cuda'"):
        off = cuda_amp.GradScaler(enabled=False)  # deprecated, as torch.cuda.amp's
    loss = lucid.tensor(2.0)
    assert not off.is_enabled() and off.scale(loss) is loss
    with pytest.warns(UserWarning, match="'cuda'.*Disabling"):
        on = cuda_amp.GradScaler(enabled=True)  # (and the FutureWarning)
    assert not on.is_enabled()
    with pytest.warns(UserWarning, match="Disabling autocast"):
        region = cuda_amp.autocast()
    with region:
        assert not lucid.is_autocast_enabled("cuda")
