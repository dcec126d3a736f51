"""torch.func.replace_all_batch_norm_modules_ on lucid-nn's batch norms: no running statistics
afterwards, batch statistics in train and eval mode, as torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid import func


def _net(lib: object) -> object:
    n = lib.nn  # type: ignore[attr-defined]
    return n.Sequential(n.Conv2d(2, 3, 3), n.BatchNorm2d(3), n.ReLU(), n.Flatten(),
                        n.Linear(12, 4), n.BatchNorm1d(4))  # fmt: skip


def test_batch_norms_stop_tracking_and_use_batch_statistics() -> None:
    lucid.manual_seed(0)
    net = _net(lucid)
    assert func.replace_all_batch_norm_modules_(net) is net
    for m in net.modules():  # type: ignore[attr-defined]
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            assert m.running_mean is None and m.running_var is None
            assert m.num_batches_tracked is None and not m.track_running_stats
            assert "running_mean" not in dict(m.named_buffers())
    x = lucid.randn(5, 2, 4, 4)
    train = net(x).detach().numpy()  # type: ignore[operator]
    net.eval()  # type: ignore[attr-defined]
    np.testing.assert_allclose(net(x).detach().numpy(), train, rtol=1e-6, atol=1e-6)  # type: ignore[operator]


@pytest.mark.parity
def test_the_same_outputs_as_torch() -> None:
    torch = pytest.importorskip("torch")
    lucid.manual_seed(0)
    ours = _net(lucid)
    theirs = _net(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())  # type: ignore[attr-defined]
                            for k, v in ours.state_dict().items()})  # type: ignore[attr-defined]  # fmt: skip
    func.replace_all_batch_norm_modules_(ours)
    torch.func.replace_all_batch_norm_modules_(theirs)
    assert sorted(dict(ours.named_buffers())) == sorted(dict(theirs.named_buffers()))  # type: ignore[attr-defined]
    x = np.random.default_rng(0).standard_normal((5, 2, 4, 4)).astype(np.float32)
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        np.testing.assert_allclose(ours(lucid.from_numpy(x)).detach().numpy(),  # type: ignore[operator]
                                   theirs(torch.from_numpy(x)).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)  # fmt: skip
