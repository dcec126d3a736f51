"""lucid.optim.swa_utils: AveragedModel (SWA, EMA, use_buffers), SWALR, update_bn, errors.
torch parity is in test_optim_swa_parity.py."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

nn = pytest.importorskip("lucid.nn")  # swa_utils needs the [nn] extra
import lucid.optim as optim  # noqa: E402
from lucid.optim import swa_utils  # noqa: E402


def _set(model: nn.Module, value: float) -> None:
    with lucid.no_grad():
        for p in model.parameters():
            p.fill_(value)


def test_swa_is_the_running_mean_and_buffers_follow_the_model() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    swa = swa_utils.AveragedModel(model)
    for value in (1.0, 2.0, 6.0):
        _set(model, value)
        with lucid.no_grad():
            model[1].running_mean.fill_(value)
        swa.update_parameters(model)
    for p in swa.parameters():
        np.testing.assert_allclose(p.detach().numpy(), 3.0, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        swa.module[1].running_mean.numpy(), 6.0, rtol=0, atol=0
    )  # copied, not averaged
    assert int(swa.n_averaged.item()) == 3
    assert list(swa.state_dict())[:2] == ["n_averaged", "module.0.weight"]


def test_ema_with_buffers() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    ema = swa_utils.AveragedModel(
        model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5), use_buffers=True
    )
    for value in (4.0, 0.0, 2.0):
        _set(model, value)
        with lucid.no_grad():
            model[1].running_mean.fill_(value)
        ema.update_parameters(model)
    # 4 -> 0.5*4 + 0.5*0 = 2 -> 0.5*2 + 0.5*2 = 2
    for p in ema.parameters():
        np.testing.assert_allclose(p.detach().numpy(), 2.0, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ema.module[1].running_mean.numpy(), 2.0, rtol=1e-6, atol=1e-6)


def test_avg_fn_per_tensor() -> None:
    model = nn.Linear(1, 1, bias=False)
    avg = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.9))
    _set(model, 10.0)
    avg.update_parameters(model)
    _set(model, 0.0)
    avg.update_parameters(model)
    np.testing.assert_allclose(avg.module.weight.detach().numpy(), 9.0, rtol=1e-6, atol=1e-6)


def test_errors() -> None:
    model = nn.Linear(1, 1)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(
            model, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn()
        )
    with pytest.raises(ValueError, match="Invalid decay value 1.5"):
        swa_utils.get_ema_multi_avg_fn(1.5)
    opt = optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        swa_utils.SWALR(opt, swa_lr=0.01, anneal_strategy="step")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=-1)


def test_swalr_reaches_swa_lr_and_state_dict_round_trips() -> None:
    opt = optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    lrs = []
    for _ in range(4):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    np.testing.assert_allclose(
        lrs, [0.55, 0.1, 0.1, 0.1], rtol=1e-12, atol=0
    )  # halfway, then there
    state = sched.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    other = swa_utils.SWALR(opt, swa_lr=0.5)
    other.load_state_dict(state)
    assert other.anneal_func(0.25) == 0.25  # linear again


def test_update_bn_recomputes_statistics_and_keeps_mode() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).eval()
    data = [lucid.randn(8, 3) for _ in range(3)]
    swa_utils.update_bn([(x, 0) for x in data], model)
    assert not model.training
    with lucid.no_grad():
        feats = lucid.cat([model[0](x) for x in data])
    np.testing.assert_allclose(
        model[1].running_mean.numpy(), feats.mean(0).numpy(), rtol=1e-5, atol=1e-6
    )


def test_swa_utils_is_an_attribute_of_lucid_optim() -> None:
    assert optim.swa_utils is swa_utils
