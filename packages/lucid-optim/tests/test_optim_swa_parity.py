"""lucid.optim.swa_utils against torch.optim.swa_utils: the same weight trajectory gives the
same averages, buffers, n_averaged and state_dict; SWALR the same lrs; update_bn the same
statistics."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
nn = pytest.importorskip("lucid.nn")
import lucid.optim as optim  # noqa: E402
from lucid.optim import swa_utils  # noqa: E402

RTOL, ATOL = 1e-5, 1e-5  # float32 SGD steps through batch norm drift by ulps


def _models() -> tuple[Any, Any]:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ours.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _same_state(ours: Any, theirs: Any) -> None:
    mine, want = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(want)
    for k in want:
        np.testing.assert_allclose(
            mine[k].numpy(), want[k].numpy(), err_msg=k, rtol=RTOL, atol=ATOL
        )


@pytest.mark.parametrize(
    "kind", ["swa", "ema_multi", "ema_multi_buffers", "ema_fn", "swa_multi", "swa_fn_buffers"]
)
def test_averaged_model_matches_torch(kind: str) -> None:
    ours, theirs = _models()

    def kwargs(lib: Any) -> dict[str, Any]:
        return {
            "swa": {},
            "ema_multi": {"multi_avg_fn": lib.get_ema_multi_avg_fn(0.9)},
            "ema_multi_buffers": {
                "multi_avg_fn": lib.get_ema_multi_avg_fn(0.8),
                "use_buffers": True,
            },
            "ema_fn": {"avg_fn": lib.get_ema_avg_fn(0.7)},
            "swa_multi": {"multi_avg_fn": lib.get_swa_multi_avg_fn()},
            "swa_fn_buffers": {"avg_fn": lib.get_swa_avg_fn(), "use_buffers": True},
        }[kind]

    avg_l = swa_utils.AveragedModel(ours, **kwargs(swa_utils))
    avg_t = torch.optim.swa_utils.AveragedModel(theirs, **kwargs(torch.optim.swa_utils))
    opt_l = optim.SGD(ours.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.standard_normal((6, 3)).astype(np.float32)
        for model, opt, lib in ((ours, opt_l, lucid), (theirs, opt_t, torch)):
            opt.zero_grad()
            model(lib.tensor(x)).square().sum().backward()
            opt.step()
        avg_l.update_parameters(ours)
        avg_t.update_parameters(theirs)
        _same_state(avg_l, avg_t)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    avg_l.eval()
    avg_t.eval()
    np.testing.assert_allclose(
        avg_l(lucid.tensor(x)).detach().numpy(),
        avg_t(torch.tensor(x)).detach().numpy(),
        rtol=RTOL,
        atol=ATOL,
    )
    fresh = swa_utils.AveragedModel(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    fresh.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in avg_t.state_dict().items()})
    _same_state(fresh, avg_t)


@pytest.mark.parametrize(
    ("strategy", "anneal_epochs", "swa_lr"),
    [("cos", 5, 0.05), ("linear", 3, 0.05), ("cos", 0, 0.05), ("linear", 4, [0.05, 0.2])],
)
def test_swalr_matches_torch(strategy: str, anneal_epochs: int, swa_lr: Any) -> None:
    def lrs(opt_cls: Any, sched_cls: Any, w: Any) -> list[list[float]]:
        opt = opt_cls([{"params": [w[0]]}, {"params": [w[1]], "lr": 0.5}], lr=1.0)
        sched = sched_cls(opt, swa_lr=swa_lr, anneal_epochs=anneal_epochs,
                          anneal_strategy=strategy)  # fmt: skip
        out = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return out

    ours = lrs(optim.SGD, swa_utils.SWALR, [lucid.zeros(1, requires_grad=True) for _ in range(2)])
    theirs = lrs(torch.optim.SGD, torch.optim.swa_utils.SWALR,
                 [torch.zeros(1, requires_grad=True) for _ in range(2)])  # fmt: skip
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)


def test_update_bn_matches_torch() -> None:
    ours, theirs = _models()
    rng = np.random.default_rng(0)
    data = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(3)]
    swa_utils.update_bn([(lucid.tensor(x), 0) for x in data], ours)
    torch.optim.swa_utils.update_bn([(torch.tensor(x), 0) for x in data], theirs)
    _same_state(ours, theirs)
    assert ours[1].momentum == theirs[1].momentum == 0.1
