"""Each optimizer minimises a convex problem to its known minimum, and resumes exactly from a
saved state (no torch)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.optim as optim

RNG = np.random.default_rng(7)
COEFF = RNG.uniform(1.0, 3.0, (3, 4))
TARGET = RNG.normal(size=(3, 4))
START = TARGET + RNG.uniform(-0.5, 0.5, (3, 4))


def quadratic(p: lucid.Tensor) -> lucid.Tensor:
    """0.5 * sum(c * (p - target)^2): convex, minimum at ``target``."""
    d = p - lucid.tensor(TARGET)
    return (lucid.tensor(COEFF) * d * d).sum() * 0.5


# name -> (options, steps, ExponentialLR gamma or None, tolerance on max |p - target|).
# Sign-like and relative-step rules (Lion, Adafactor) and NAdam's slowly rising momentum
# hover around the minimum at a fixed lr (in PyTorch too); a decaying lr settles them.
CONVERGENCE: dict[str, tuple[dict[str, Any], int, float | None, float]] = {
    "SGD": (dict(lr=0.2, momentum=0.5), 200, None, 1e-8),
    "ASGD": (dict(lr=0.3, lambd=0.0), 300, None, 1e-8),
    "Adagrad": (dict(lr=0.5), 300, None, 1e-8),
    "Adadelta": (dict(lr=0.5, eps=1e-2), 600, None, 1e-8),
    "RMSprop": (dict(lr=0.01, centered=True, momentum=0.5), 400, None, 1e-4),
    "Rprop": (dict(lr=0.01), 200, None, 1e-5),
    "Adam": (dict(lr=0.05), 400, None, 1e-8),
    "AdamW": (dict(lr=0.05, weight_decay=0.0), 400, None, 1e-8),
    "Adamax": (dict(lr=0.05), 400, None, 1e-8),
    "NAdam": (dict(lr=0.05), 400, 0.99, 1e-8),
    "RAdam": (dict(lr=0.05), 400, None, 1e-8),
    "Adafactor": (dict(lr=0.05), 400, 0.99, 1e-8),
    "Lion": (dict(lr=0.025), 400, 0.985, 1e-3),
}


@pytest.mark.parametrize("name", sorted(CONVERGENCE))
def test_reaches_the_minimum(name: str) -> None:
    options, steps, gamma, tol = CONVERGENCE[name]
    p = lucid.tensor(START.copy(), requires_grad=True)
    opt = getattr(optim, name)([p], **options)
    sched = optim.lr_scheduler.ExponentialLR(opt, gamma) if gamma else None
    start_error = float(np.abs(START - TARGET).max())
    for _ in range(steps):
        opt.zero_grad()
        quadratic(p).backward()
        opt.step()
        if sched is not None:
            sched.step()
    assert float(np.abs(p.detach().numpy() - TARGET).max()) < min(tol, start_error)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_reaches_the_minimum(line_search_fn: str | None) -> None:
    p = lucid.tensor(START.copy(), requires_grad=True)
    opt = optim.LBFGS(
        [p],
        lr=1.0 if line_search_fn else 0.3,
        line_search_fn=line_search_fn,
        tolerance_grad=1e-12,
        tolerance_change=1e-15,
    )

    def closure() -> Any:
        opt.zero_grad()
        loss = quadratic(p)
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(p.detach().numpy(), TARGET, atol=1e-6, rtol=1e-7)


def test_lbfgs_minimises_rosenbrock_with_line_search() -> None:
    xy = lucid.tensor([-1.5, 2.0], dtype=lucid.float64, requires_grad=True)
    opt = optim.LBFGS([xy], line_search_fn="strong_wolfe", max_iter=100)

    def closure() -> Any:
        opt.zero_grad()
        x, y = xy[0], xy[1]
        loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(xy.detach().numpy(), [1.0, 1.0], atol=1e-5, rtol=1e-7)


# -- resuming --------------------------------------------------------------------------------
RESUME = {name: opts for name, (opts, *_) in CONVERGENCE.items()} | {
    "SGD": dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    "ASGD": dict(lr=0.05, t0=3),
    "Adam": dict(lr=0.05, amsgrad=True),
    "RMSprop": dict(lr=0.01, centered=True, momentum=0.5),
    "LBFGS": dict(lr=0.5, max_iter=3, history_size=4),
    "LBFGS-wolfe": dict(lr=0.5, max_iter=3, history_size=4, line_search_fn="strong_wolfe"),
}


def _train(p: lucid.Tensor, opt: optim.Optimizer, steps: int) -> None:
    def closure() -> Any:
        opt.zero_grad()
        loss = quadratic(p)
        loss.backward()
        return loss

    for _ in range(steps):
        if isinstance(opt, optim.LBFGS):
            opt.step(closure)
        else:
            closure()
            opt.step()


def _make(name: str, p: lucid.Tensor) -> optim.Optimizer:
    cls = getattr(optim, name.split("-")[0])
    return cls([p], **RESUME[name])  # type: ignore[no-any-return]


def _resume_check(name: str, save_load: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    straight = lucid.tensor(START.copy(), requires_grad=True)
    _train(straight, _make(name, straight), 8)

    first = lucid.tensor(START.copy(), requires_grad=True)
    opt = _make(name, first)
    _train(first, opt, 4)
    checkpoint = save_load({"param": first.detach(), "optim": opt.state_dict()})
    resumed = lucid.tensor(checkpoint["param"].numpy().copy(), requires_grad=True)
    opt2 = _make(name, resumed)
    opt2.load_state_dict(checkpoint["optim"])
    _train(resumed, opt2, 4)
    np.testing.assert_array_equal(resumed.detach().numpy(), straight.detach().numpy())


@pytest.mark.parametrize("name", sorted(RESUME))
def test_resume_in_memory_matches_uninterrupted_run(name: str) -> None:
    _resume_check(name, lambda ckpt: ckpt)


@pytest.mark.parametrize("name", sorted(RESUME))
def test_resume_through_lucid_save_matches_uninterrupted_run(name: str, tmp_path: Path) -> None:
    def through_disk(ckpt: dict[str, Any]) -> dict[str, Any]:
        path = tmp_path / "ckpt.safetensors"
        lucid.save(ckpt, path)
        loaded: dict[str, Any] = lucid.load(path)
        return loaded

    _resume_check(name, through_disk)
