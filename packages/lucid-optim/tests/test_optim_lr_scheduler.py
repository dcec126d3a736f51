"""Learning-rate schedulers without torch: known values, chaining, state dicts, errors."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import pytest

import lucid
import lucid.optim as optim
from lucid.optim import lr_scheduler as lrs


def sgd(lr: float = 1.0, groups: int = 1, **kw: Any) -> optim.SGD:
    params = [{"params": [lucid.zeros(1, requires_grad=True)]} for _ in range(groups)]
    return optim.SGD(params, lr=lr, **kw)


def lrs_of(opt: optim.Optimizer, sched: Any, steps: int) -> list[float]:
    out = []
    for _ in range(steps):
        out.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    return out


def test_steplr_values_and_closed_form() -> None:
    opt = sgd(1.0)
    sched = lrs.StepLR(opt, step_size=3, gamma=0.5)
    assert lrs_of(opt, sched, 7) == [1, 1, 1, 0.5, 0.5, 0.5, 0.25]
    assert sched.last_epoch == 7
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(10)  # closed form: 0.5 ** (10 // 3)
    assert sched.get_last_lr() == [0.125]


def test_multistep_and_exponential_values() -> None:
    opt = sgd(1.0)
    sched = lrs.MultiStepLR(opt, milestones=[2, 4, 4], gamma=0.1)
    got = lrs_of(opt, sched, 6)
    assert got == pytest.approx([1, 1, 0.1, 0.1, 0.001, 0.001], rel=1e-6, abs=1e-12)
    opt = sgd(2.0)
    assert lrs_of(opt, lrs.ExponentialLR(opt, gamma=0.5), 4) == [2.0, 1.0, 0.5, 0.25]


def test_linear_and_constant_warmups() -> None:
    opt = sgd(1.0)
    got = lrs_of(opt, lrs.LinearLR(opt, start_factor=0.25, total_iters=3), 6)
    assert got == pytest.approx([0.25, 0.5, 0.75, 1.0, 1.0, 1.0], rel=1e-6, abs=1e-12)
    opt = sgd(1.0)
    got = lrs_of(opt, lrs.ConstantLR(opt, factor=0.5, total_iters=2), 4)
    assert got == pytest.approx([0.5, 0.5, 1.0, 1.0], rel=1e-6, abs=1e-12)


def test_cosine_annealing_reaches_eta_min_at_t_max() -> None:
    opt = sgd(1.0)
    got = lrs_of(opt, lrs.CosineAnnealingLR(opt, T_max=4, eta_min=0.2), 5)
    expected = [0.2 + 0.8 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)]
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_lambda_and_multiplicative() -> None:
    opt = sgd(2.0, groups=2)
    sched = lrs.LambdaLR(opt, [lambda e: 1.0 / (e + 1), lambda e: 0.5])
    opt.step()
    sched.step()
    assert sched.get_last_lr() == [1.0, 1.0]
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        lrs.LambdaLR(opt, [lambda e: 1.0])
    opt = sgd(1.0)
    assert lrs_of(opt, lrs.MultiplicativeLR(opt, lambda e: 0.5), 3) == [1.0, 0.5, 0.25]


def test_warmup_cosine_and_noam_formulas() -> None:
    opt = sgd(1.0)
    sched = lrs.LinearWarmupCosineAnnealingLR(
        opt, warmup_epochs=4, max_epochs=12, warmup_start_lr=0.2, eta_min=0.1
    )
    got = lrs_of(opt, sched, 14)
    assert got[:5] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0], rel=1e-6, abs=1e-12)
    assert got[8] == pytest.approx(
        0.1 + 0.9 * 0.5, rel=1e-6, abs=1e-12
    )  # half-way through the cosine
    assert got[12:] == pytest.approx([0.1, 0.1], rel=1e-6, abs=1e-12)
    opt = optim.Adam([lucid.zeros(1, requires_grad=True)], lr=1.0)
    noam = lrs.NoamLR(opt, d_model=64, warmup_steps=4)
    got = lrs_of(opt, noam, 8)
    peak = 64**-0.5 * 4**-0.5
    assert got[3] == pytest.approx(peak, rel=1e-6, abs=1e-12)  # step 4 = warmup: the peak
    assert max(got) == got[3]
    assert got[7] == pytest.approx(64**-0.5 * 8**-0.5, rel=1e-6, abs=1e-12)
    with pytest.raises(ValueError, match="warmup_epochs < max_epochs"):
        lrs.LinearWarmupCosineAnnealingLR(opt, warmup_epochs=5, max_epochs=5)


def test_chained_schedulers_multiply() -> None:
    opt = sgd(1.0)
    sched = lrs.ChainedScheduler(
        [lrs.ConstantLR(opt, factor=0.5, total_iters=2), lrs.ExponentialLR(opt, gamma=0.9)]
    )
    got = lrs_of(opt, sched, 4)
    assert got == pytest.approx([0.5, 0.45, 0.81, 0.729], rel=1e-6, abs=1e-12)


def test_sequential_switches_at_milestones() -> None:
    opt = sgd(1.0)
    sched = lrs.SequentialLR(
        opt,
        [lrs.ConstantLR(opt, factor=0.1, total_iters=10), lrs.ExponentialLR(opt, gamma=0.5)],
        milestones=[2],
    )
    assert lrs_of(opt, sched, 5) == pytest.approx([0.1, 0.1, 1.0, 0.5, 0.25], rel=1e-6, abs=1e-12)


def test_composite_errors() -> None:
    opt, other = sgd(), sgd()
    with pytest.raises(ValueError, match="number of milestones"):
        lrs.SequentialLR(opt, [lrs.StepLR(opt, 2), lrs.StepLR(opt, 3)], milestones=[])
    with pytest.raises(ValueError, match="to belong to the same optimizer"):
        lrs.SequentialLR(opt, [lrs.StepLR(opt, 2), lrs.StepLR(other, 3)], milestones=[3])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        lrs.ChainedScheduler([lrs.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        lrs.ChainedScheduler([])


def test_scheduler_errors() -> None:
    opt = sgd()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lrs.StepLR([], step_size=1)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="initial_lr"):
        lrs.StepLR(opt, step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        lrs.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode maximum is unknown"):
        lrs.ReduceLROnPlateau(opt, mode="maximum")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        lrs.ReduceLROnPlateau(opt, min_lr=[0.1, 0.2])
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        lrs.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=10)
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        lrs.CyclicLR(optim.Adagrad([lucid.zeros(1, requires_grad=True)]), 0.1, 1.0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        lrs.CosineAnnealingWarmRestarts(opt, T_0=0)


def test_onecycle_refuses_to_step_past_total_steps() -> None:
    opt = sgd(momentum=0.9)
    sched = lrs.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        opt.step()
        sched.step()


def test_group_added_after_scheduler_is_a_clear_error() -> None:
    opt = sgd()
    sched = lrs.LambdaLR(opt, lambda e: 0.5)
    opt.add_param_group({"params": [lucid.zeros(1, requires_grad=True)]})
    with pytest.raises(ValueError, match="computed 1 learning rates for an optimizer with 2"):
        opt.step()
        sched.step()
    plateau = lrs.ReduceLROnPlateau(sgd(), patience=0, min_lr=[0.0])
    plateau.optimizer.add_param_group({"params": [lucid.zeros(1, requires_grad=True)]})
    plateau.step(1.0)
    with pytest.raises(RuntimeError, match="number of param groups"):
        plateau.step(2.0)


def test_stepping_scheduler_before_optimizer_warns() -> None:
    opt = sgd()
    sched = lrs.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = sgd()
    sched2 = lrs.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_initial_lr_is_recorded_and_respected() -> None:
    opt = sgd(0.5)
    lrs.ExponentialLR(opt, gamma=0.5)
    assert opt.param_groups[0]["initial_lr"] == 0.5
    opt.param_groups[0]["lr"] = 0.1
    resumed = lrs.StepLR(opt, step_size=2, last_epoch=4)
    assert resumed.base_lrs == [0.5]


@pytest.mark.parametrize("through_disk", [False, True], ids=["memory", "lucid.save"])
@pytest.mark.parametrize(
    "make",
    [
        lambda o: lrs.StepLR(o, step_size=3, gamma=0.5),
        lambda o: lrs.MultiStepLR(o, milestones=[4, 12, 12], gamma=0.5),
        lambda o: lrs.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2),
        lambda o: lrs.CyclicLR(o, 0.1, 1.0, step_size_up=3),
        lambda o: lrs.OneCycleLR(o, max_lr=1.0, total_steps=30),
        lambda o: lrs.SequentialLR(
            o, [lrs.LinearLR(o, total_iters=3), lrs.CosineAnnealingLR(o, T_max=9)], [3]
        ),
        lambda o: lrs.ChainedScheduler([lrs.StepLR(o, 2), lrs.ExponentialLR(o, 0.9)]),
        lambda o: lrs.LinearWarmupCosineAnnealingLR(o, warmup_epochs=5, max_epochs=25),
    ],
    ids=["step", "multistep", "restarts", "cyclic", "onecycle", "sequential", "chained", "warmup"],
)
def test_scheduler_state_dict_resumes_exactly(
    make: Any, through_disk: bool, tmp_path: Path
) -> None:
    opt = sgd(1.0, momentum=0.9)
    sched = make(opt)
    straight = lrs_of(opt, sched, 20)

    opt = sgd(1.0, momentum=0.9)
    sched = make(opt)
    first = lrs_of(opt, sched, 10)
    saved = {"optim": opt.state_dict(), "sched": sched.state_dict()}
    assert "optimizer" not in saved["sched"]
    if through_disk:
        lucid.save(saved, tmp_path / "ckpt.safetensors")
        saved = lucid.load(tmp_path / "ckpt.safetensors")
    opt2 = sgd(1.0, momentum=0.9)
    sched2 = make(opt2)
    opt2.load_state_dict(saved["optim"])
    sched2.load_state_dict(saved["sched"])
    assert first + lrs_of(opt2, sched2, 10) == pytest.approx(straight, rel=1e-12, abs=1e-12)


def test_plateau_state_dict_and_cooldown() -> None:
    opt = sgd(1.0)
    sched = lrs.ReduceLROnPlateau(opt, patience=1, cooldown=1, factor=0.5, min_lr=0.2)
    for metric in [1.0, 1.0, 1.0]:
        sched.step(metric)
    assert sched.get_last_lr() == [0.5] and sched.in_cooldown
    state = sched.state_dict()
    clone = lrs.ReduceLROnPlateau(sgd(0.5))
    clone.load_state_dict(state)
    assert clone.best == 1.0 and clone.cooldown_counter == 1 and clone.patience == 1
    for metric in [1.0] * 6:
        sched.step(metric)
    assert sched.get_last_lr() == [0.2]  # floored at min_lr
