"""Each optimizer against its update rule written out in NumPy, step by step (no torch).

The same gradients are fed to lucid's optimizer and to the NumPy formula; after every step
the parameters (float64) must agree to rounding. Sign flips are built into the gradient
sequence so that the sign-based rules (Rprop, Lion) take every branch.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.optim as optim

Array = np.ndarray
Formula = Callable[[Array, Array, dict[str, Any], int], Array]


# -- the update rules, as in the papers / PyTorch docs ------------------------------------------
def _weight_decay(p: Array, g: Array, lr: float, wd: float, decoupled: bool) -> tuple[Array, Array]:
    """Decoupled decay shrinks the parameter; L2 decay adds ``wd * p`` to the gradient."""
    return (p * (1 - lr * wd), g) if decoupled else (p, g + wd * p)


def _zeros(s: dict[str, Any], p: Array, *names: str) -> None:
    """Start each named per-parameter state at zeros shaped like ``p`` (on the first step)."""
    for name in names:
        s.setdefault(name, np.zeros_like(p))


def _moments(s: dict[str, Any], g: Array, b1: float, b2: float) -> None:
    """Adam's running averages of the gradient (``m``) and of its square (``v``)."""
    s["m"] = b1 * s["m"] + (1 - b1) * g
    s["v"] = b2 * s["v"] + (1 - b2) * g * g


def sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            s["b"] = g.copy() if t == 1 else momentum * s["b"] + (1 - dampening) * g
            g = g + momentum * s["b"] if nesterov else s["b"]
        return p - lr * g

    return step


def asgd(lr, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        if t == 1:
            s.update(eta=lr, mu=1.0, ax=np.zeros_like(p))
        g = (-g if maximize else g) + weight_decay * p
        p = p * (1 - lambd * s["eta"]) - s["eta"] * g
        s["ax"] = p.copy() if s["mu"] == 1 else s["ax"] + s["mu"] * (p - s["ax"])
        s["eta"] = lr / (1 + lambd * lr * t) ** alpha
        s["mu"] = 1 / max(1, t - t0)
        return p

    return step


def adagrad(lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        s.setdefault("sum", np.full_like(p, initial_accumulator_value))
        g = g + weight_decay * p
        s["sum"] = s["sum"] + g * g
        return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)

    return step


def adadelta(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "v", "u")
        g = (-g if maximize else g) + weight_decay * p
        s["v"] = rho * s["v"] + (1 - rho) * g * g
        delta = np.sqrt(s["u"] + eps) / np.sqrt(s["v"] + eps) * g
        s["u"] = rho * s["u"] + (1 - rho) * delta * delta
        return p - lr * delta

    return step


def rmsprop(lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "v", "gbar", "b")
        g = g + weight_decay * p
        s["v"] = alpha * s["v"] + (1 - alpha) * g * g
        v = s["v"]
        if centered:
            s["gbar"] = alpha * s["gbar"] + (1 - alpha) * g
            v = v - s["gbar"] ** 2
        avg = np.sqrt(v) + eps
        if momentum:
            s["b"] = momentum * s["b"] + g / avg
            return p - lr * s["b"]
        return p - lr * g / avg

    return step


def rprop(lr, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0), maximize=False):
    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "prev")
        s.setdefault("size", np.full_like(p, lr))
        g = -g if maximize else g
        sign = np.sign(g * s["prev"])
        factor = np.where(sign > 0, etas[1], np.where(sign < 0, etas[0], 1.0))
        s["size"] = np.clip(s["size"] * factor, *step_sizes)
        g = np.where(sign < 0, 0.0, g)
        s["prev"] = g
        return p - np.sign(g) * s["size"]

    return step


def adam(
    lr,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    amsgrad=False,
    maximize=False,
    decoupled_weight_decay=False,
):
    b1, b2 = betas

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "m", "v", "vmax")
        g = -g if maximize else g
        p, g = _weight_decay(p, g, lr, weight_decay, decoupled_weight_decay)
        _moments(s, g, b1, b2)
        s["vmax"] = np.maximum(s["vmax"], s["v"])
        v = s["vmax"] if amsgrad else s["v"]
        m_hat = s["m"] / (1 - b1**t)
        v_hat = v / (1 - b2**t)
        return p - lr * m_hat / (np.sqrt(v_hat) + eps)

    return step


def adamax(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
    b1, b2 = betas

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "m", "u")
        g = (-g if maximize else g) + weight_decay * p
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["u"] = np.maximum(b2 * s["u"], np.abs(g) + eps)
        return p - lr / (1 - b1**t) * s["m"] / s["u"]

    return step


def nadam(
    lr,
    betas=(0.9, 0.999),
    eps=1e-8,
    weight_decay=0.0,
    momentum_decay=4e-3,
    decoupled_weight_decay=False,
):
    b1, b2 = betas

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "m", "v")
        s.setdefault("prod", 1.0)
        p, g = _weight_decay(p, g, lr, weight_decay, decoupled_weight_decay)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        s["prod"] *= mu
        _moments(s, g, b1, b2)
        denom = np.sqrt(s["v"] / (1 - b2**t)) + eps
        p = p - lr * (1 - mu) / (1 - s["prod"]) * g / denom
        return p - lr * mu_next / (1 - s["prod"] * mu_next) * s["m"] / denom

    return step


def radam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False):
    b1, b2 = betas
    rho_inf = 2 / (1 - b2) - 1

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "m", "v")
        p, g = _weight_decay(p, g, lr, weight_decay, decoupled_weight_decay)
        _moments(s, g, b1, b2)
        m_hat = s["m"] / (1 - b1**t)
        rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho_t <= 5:
            return p - lr * m_hat
        r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - lr * m_hat * r * np.sqrt(1 - b2**t) / (np.sqrt(s["v"]) + eps)

    return step


def adafactor(lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0):
    eps1 = np.finfo(np.float64).eps if eps[0] is None else eps[0]

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        beta2_hat = 1 - t**beta2_decay
        rms = lambda a: np.sqrt(np.mean(a * a))  # noqa: E731
        alpha = max(eps[1], rms(p)) * min(lr, 1 / np.sqrt(t))
        p = p * (1 - lr * weight_decay)
        if p.ndim > 1:
            s.setdefault("r", np.zeros(p.shape[:-1] + (1,)))
            s.setdefault("c", np.zeros(p.shape[:-2] + (1, p.shape[-1])))
            s["r"] = beta2_hat * s["r"] + (1 - beta2_hat) * np.mean(g * g, -1, keepdims=True)
            s["c"] = beta2_hat * s["c"] + (1 - beta2_hat) * np.mean(g * g, -2, keepdims=True)
            v = s["r"] @ s["c"] / np.maximum(np.mean(s["r"], -2, keepdims=True), eps1)
        else:
            s["v"] = beta2_hat * s.get("v", 0.0) + (1 - beta2_hat) * g * g
            v = s["v"]
        update = g / np.sqrt(np.maximum(v, eps1 * eps1))
        return p - alpha / max(1.0, rms(update) / d) * update

    return step


def lion(lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False):
    b1, b2 = betas

    def step(p: Array, g: Array, s: dict[str, Any], t: int) -> Array:
        _zeros(s, p, "m")
        g = -g if maximize else g
        c = b1 * s["m"] + (1 - b1) * g
        s["m"] = b2 * s["m"] + (1 - b2) * g
        return p * (1 - lr * weight_decay) - lr * np.sign(c)

    return step


# (class name, options, formula factory, steps); RAdam needs 6+ steps to rectify
CASES: list[tuple[str, dict[str, Any], Callable[..., Formula], int]] = [
    ("SGD", dict(lr=0.1), sgd, 3),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05), sgd, 3),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True), sgd, 3),
    ("ASGD", dict(lr=0.1, lambd=0.1, t0=1, weight_decay=0.05), asgd, 3),
    ("ASGD", dict(lr=0.1, maximize=True), asgd, 3),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5), adagrad, 3),
    ("Adagrad", dict(lr=0.1, weight_decay=0.05), adagrad, 3),
    ("Adadelta", dict(lr=1.0), adadelta, 3),
    ("Adadelta", dict(lr=0.5, rho=0.7, weight_decay=0.1, maximize=True), adadelta, 3),
    ("RMSprop", dict(lr=0.01), rmsprop, 3),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1), rmsprop, 3),
    ("Rprop", dict(lr=0.01), rprop, 4),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.05, 0.12), maximize=True), rprop, 4),
    ("Adam", dict(lr=0.01), adam, 3),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True), adam, 3),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), adam, 3),
    ("AdamW", dict(lr=0.01, weight_decay=0.1), adam, 3),
    ("Adamax", dict(lr=0.01, weight_decay=0.1), adamax, 3),
    ("Adamax", dict(lr=0.01, maximize=True), adamax, 3),
    ("NAdam", dict(lr=0.01), nadam, 3),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), nadam, 3),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.05), nadam, 3),
    ("RAdam", dict(lr=0.01), radam, 8),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True), radam, 8),
    ("Adafactor", dict(lr=0.01), adafactor, 3),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, d=1.5, weight_decay=0.1), adafactor, 3),
    ("Lion", dict(lr=0.01), lion, 4),
    ("Lion", dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.1, maximize=True), lion, 4),
]


def _gradients(shape: tuple[int, ...], steps: int, rng: np.random.Generator) -> list[Array]:
    """Random gradients whose signs flip between steps on about half of the coordinates."""
    grads = [rng.normal(size=shape)]
    for _ in range(steps - 1):
        flip = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        grads.append(flip * np.abs(rng.normal(size=shape)) * np.sign(grads[-1]))
    return grads


def _formula_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    opts = dict(options)
    if name == "AdamW":
        opts["decoupled_weight_decay"] = True
    return opts


@pytest.mark.parametrize("shape", [(5,), (3, 4)], ids=["vector", "matrix"])
@pytest.mark.parametrize(
    "name,options,formula,steps", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_steps_follow_the_formula(
    name: str,
    options: dict[str, Any],
    formula: Callable[..., Formula],
    steps: int,
    shape: tuple[int, ...],
) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{name}{shape}{options}".encode()))
    p_ref = rng.normal(size=shape)
    p = lucid.tensor(p_ref.copy(), requires_grad=True)
    opt = getattr(optim, name)([p], **options)
    rule = formula(**_formula_options(name, options))
    state: dict[str, Any] = {}
    for t, g in enumerate(_gradients(shape, steps, rng), start=1):
        p.grad = lucid.tensor(g.copy())
        opt.step()
        p_ref = rule(p_ref, g, state, t)
        np.testing.assert_allclose(
            p.detach().numpy(), p_ref, rtol=1e-12, atol=1e-14, err_msg=f"step {t}"
        )
    assert p.dtype == lucid.float64
    if name == "ASGD":
        np.testing.assert_allclose(opt.state[p]["ax"].numpy(), state["ax"], rtol=1e-12, atol=1e-12)


def test_lbfgs_steps_follow_the_two_loop_recursion() -> None:
    """LBFGS (max_iter=1, no line search): each step is one quasi-Newton step."""
    rng = np.random.default_rng(3)
    c, target, x = rng.uniform(1.0, 3.0, 4), rng.normal(size=4), rng.normal(size=4)
    lx = lucid.tensor(x.copy(), requires_grad=True)
    lr = 0.8
    opt = optim.LBFGS([lx], lr=lr, max_iter=1)

    def closure() -> Any:
        opt.zero_grad()
        loss = (lucid.tensor(c) * (lx - lucid.tensor(target)) ** 2).sum() * 0.5
        loss.backward()
        return loss

    def grad(v: Array) -> Array:
        return c * (v - target)

    pairs: list[tuple[Array, Array]] = []
    prev_g, d, t = None, None, None
    for step in range(1, 4):
        opt.step(closure)
        g = grad(x)
        if step == 1:
            d = -g
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr
        else:
            assert prev_g is not None and d is not None and t is not None
            y, s = g - prev_g, d * t
            if y @ s > 1e-10:
                pairs.append((y, s))
            h = pairs[-1][0] @ pairs[-1][1] / (pairs[-1][0] @ pairs[-1][0])
            q, alphas = -g, []
            for y_i, s_i in reversed(pairs):
                alphas.append((s_i @ q) / (y_i @ s_i))
                q = q - alphas[-1] * y_i
            r = q * h
            for (y_i, s_i), a in zip(pairs, reversed(alphas)):
                r = r + s_i * (a - (y_i @ r) / (y_i @ s_i))
            d, t = r, lr
        prev_g = g
        x = x + t * d
        np.testing.assert_allclose(
            lx.detach().numpy(), x, rtol=1e-12, err_msg=f"step {step}", atol=1e-12
        )
