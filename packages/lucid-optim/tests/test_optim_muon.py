"""lucid.optim.Muon against torch.optim.Muon."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import optim


def _weights(lib: object, seed: int) -> list[object]:
    rng = np.random.default_rng(seed)
    return [
        lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)  # type: ignore[attr-defined]
        for s in ((6, 4), (3, 8))
    ]


def _grads(seed: int, step: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1000 * seed + step)
    return [rng.standard_normal(s).astype(np.float32) for s in ((6, 4), (3, 8))]


@pytest.mark.parity
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"nesterov": False, "weight_decay": 0.0}, {"adjust_lr_fn": "match_rms_adamw", "lr": 0.01}],
)
def test_muon_matches_torch(kwargs: dict[str, object]) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _weights(lucid, 0), _weights(torch, 0)
    kw = {"lr": 0.02, **kwargs}
    o_opt, t_opt = optim.Muon(ours, **kw), torch.optim.Muon(theirs, **kw)
    assert o_opt.defaults == t_opt.defaults
    for step in range(4):
        for p, q, g in zip(ours, theirs, _grads(0, step), strict=True):
            p.grad, q.grad = lucid.tensor(g), torch.tensor(g)
        o_opt.step()
        t_opt.step()
    for p, q in zip(ours, theirs, strict=True):
        # the Newton-Schulz iteration runs in bfloat16 in both: agreement to bfloat16's precision
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-3, atol=2e-3)
    buf_o = o_opt.state[ours[0]]["momentum_buffer"].numpy()
    buf_t = t_opt.state[theirs[0]]["momentum_buffer"].numpy()
    np.testing.assert_allclose(buf_o, buf_t, rtol=1e-5, atol=1e-6)


def test_muon_orthogonalises_and_checks_arguments() -> None:
    from lucid.optim.muon import _zeropower_via_newtonschulz

    lucid.manual_seed(0)
    g = lucid.randn(16, 8, dtype=lucid.float64)
    o = _zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7).double().numpy()
    singular = np.linalg.svd(o, compute_uv=False)
    assert singular.min() > 0.3 and singular.max() < 1.3  # S' near 1, as the method promises
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optim.Muon([lucid.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        optim.Muon([lucid.zeros(3, 3, requires_grad=True)], adjust_lr_fn="x")
    with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
        optim.Muon([lucid.zeros(3, 3, requires_grad=True)], lr=-1)


@pytest.mark.parity
def test_swap_in_params_and_state_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    results = []
    for lib, opt_mod in ((lucid, optim), (torch, torch.optim)):
        live = _weights(lib, 0)
        opt = opt_mod.Adam(live, lr=0.1)
        for p, g in zip(live, _grads(0, 0), strict=True):
            p.grad = lib.tensor(g)
        opt.step()
        other = _weights(lib, 1)
        for p, g in zip(other, _grads(1, 0), strict=True):
            p.grad = lib.tensor(g)
        saved = opt.state_dict()
        before = [p.detach().clone() for p in live]
        with opt_mod.swap_in_optimizer_params_and_state(opt, dict(enumerate(other)), saved):
            opt.step()
        assert all(bool((a == b).all()) for a, b in zip(before, live, strict=True))
        results.append([p.detach().numpy().copy() for p in other])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with optim.swap_in_optimizer_params_and_state(optim.SGD(_weights(lucid, 2)), {}, {}):
            pass
