"""``clip_grad_norm_``'s one-pass array path (``foreach=None``/``True``) against the per-gradient
lucid ops (``foreach=False``), a float64 NumPy oracle and PyTorch."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import nn


def _params(seed: int, empty: bool = True) -> list[lucid.Tensor]:
    rng = np.random.default_rng(seed)
    shapes = [(30, 20), (20,), (5, 4, 3), (1,)] + ([(0,)] if empty else [])
    out = []
    for s in shapes:
        p = lucid.from_numpy(rng.standard_normal(s).astype(np.float32)).requires_grad_()
        p.grad = lucid.from_numpy(rng.standard_normal(s).astype(np.float32))
        out.append(p)
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_foreach_paths_agree_with_a_float64_oracle(norm_type: float, max_norm: float) -> None:
    results = {}
    for foreach in (None, True, False):
        params = _params(0, empty=norm_type != math.inf)
        g64 = [p.grad.numpy().astype(np.float64).ravel() for p in params]  # type: ignore[union-attr]
        total = nn.utils.clip_grad_norm_(params, max_norm, norm_type, foreach=foreach)
        flat = np.concatenate(g64)
        want = (
            np.abs(flat).max()
            if norm_type == math.inf
            else np.sum(np.abs(flat) ** norm_type) ** (1 / norm_type)
        )
        assert total.dtype == lucid.float32 and total.ndim == 0
        np.testing.assert_allclose(total.item(), want, rtol=2e-6, atol=0)
        coef = min(max_norm / (want + 1e-6), 1.0)
        for p, g in zip(params, g64):
            np.testing.assert_allclose(p.grad.numpy().ravel(), g * coef, rtol=2e-6, atol=1e-7)  # type: ignore[union-attr]
        results[foreach] = [p.grad.numpy().copy() for p in params]  # type: ignore[union-attr]
    for a, b in zip(results[None], results[False]):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def test_nonfinite_norms_and_errors() -> None:
    params = _params(1)
    params[0].grad.numpy()[0, 0] = np.nan  # type: ignore[union-attr]
    assert math.isnan(nn.utils.clip_grad_norm_(params, 1.0).item())
    params = _params(1)
    params[1].grad.numpy()[0] = np.inf  # type: ignore[union-attr]
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.raises(RuntimeError, match="infinity norm on an empty tensor"):  # as torch
        nn.utils.clip_grad_norm_(_params(1), 1.0, math.inf)


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_matches_torch(norm_type: float) -> None:
    torch = pytest.importorskip("torch")
    params = _params(2, empty=norm_type != math.inf)
    tparams = []
    for p in params:
        t = torch.from_numpy(p.detach().numpy().copy()).requires_grad_()
        t.grad = torch.from_numpy(p.grad.numpy().copy())  # type: ignore[union-attr]
        tparams.append(t)
    got = nn.utils.clip_grad_norm_(params, 0.7, norm_type)
    want = torch.nn.utils.clip_grad_norm_(tparams, 0.7, norm_type, foreach=True)
    np.testing.assert_allclose(got.item(), want.item(), rtol=2e-6, atol=0)
    for p, t in zip(params, tparams):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=2e-6, atol=1e-7)  # type: ignore[union-attr]


def _params_with_grads(lib: Any, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    out = []
    for shape in ((3, 4), (5,), (2, 2, 2)):
        p = lib.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32) * 3)
        out.append(p)
    return out


@pytest.mark.parity
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_total_norm_and_clip_with_norm_match_torch(norm_type: float) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = _params_with_grads(lucid, 0), _params_with_grads(torch, 0)
    t_ours = lucid.nn.utils.get_total_norm([p.grad for p in ours], norm_type)
    t_theirs = torch.nn.utils.get_total_norm([p.grad for p in theirs], norm_type)
    np.testing.assert_allclose(t_ours.item(), t_theirs.item(), rtol=1e-5, atol=1e-6)
    lucid.nn.utils.clip_grads_with_norm_(ours, 1.5, t_ours)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.5, t_theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        n_ours = lucid.nn.utils.clip_grad_norm(ours, 0.5, norm_type)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        n_theirs = torch.nn.utils.clip_grad_norm(theirs, 0.5, norm_type)
    np.testing.assert_allclose(n_ours.item(), n_theirs.item(), rtol=1e-5, atol=1e-6)
    lucid.nn.utils.clip_grad_value_(ours, 0.01, foreach=True)
    torch.nn.utils.clip_grad_value_(theirs, 0.01, foreach=True)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_total_norm_nonfinite_and_empty() -> None:
    assert lucid.nn.utils.get_total_norm([]).item() == 0.0
    bad = lucid.tensor([1.0, math.inf])
    with pytest.raises(RuntimeError, match="non-finite"):
        lucid.nn.utils.get_total_norm([bad], error_if_nonfinite=True)
    p = lucid.ones(2, requires_grad=True)
    p.grad = lucid.tensor([3.0, 4.0])
    lucid.nn.utils.clip_grads_with_norm_(p, 10.0, lucid.tensor(5.0))
    assert p.grad.tolist() == [3.0, 4.0]  # the norm is under max_norm: left alone
