"""lucid.optim against torch.optim: same gradients in, same parameters and lrs out.

Each optimizer runs 50 steps, for each option combination below, on a small quadratic and on
a small MLP. PyTorch computes the gradients at its own parameters and the same gradients are
fed to lucid's parameters, so any difference comes from the update rules alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from optim_cases import TORCH_CASES

import lucid
import lucid.optim as optim
from lucid.optim import lr_scheduler as lrs

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.parity

STEPS = 50
# (rtol, atol) of the parameter comparison per dtype
TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6)}

# (lucid/torch class name, constructor options); every option PyTorch has is covered
OPTIMIZER_CASES = TORCH_CASES


@contextlib.contextmanager
def torch_default_dtype(dtype: str) -> Iterator[None]:
    """Torch keeps scalar state (ASGD's eta, NAdam's mu_product) in the default dtype."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def quadratic_problem(rng: np.random.Generator) -> tuple[list[np.ndarray], Callable[..., Any]]:
    shapes = [(5,), (3, 4)]
    coeffs = [rng.uniform(0.5, 3.0, s) for s in shapes]
    targets = [rng.normal(size=s) for s in shapes]
    init = [rng.normal(size=s) for s in shapes]

    def loss(params: list[Any]) -> Any:
        total = 0.0
        for p, c, t in zip(params, coeffs, targets):
            c_t = torch.as_tensor(c, dtype=p.dtype)
            t_t = torch.as_tensor(t, dtype=p.dtype)
            total = total + 0.5 * (c_t * (p - t_t) ** 2).sum()
        return total

    return init, loss


def mlp_problem(rng: np.random.Generator) -> tuple[list[np.ndarray], Callable[..., Any]]:
    x = rng.normal(size=(16, 4))
    y = rng.normal(size=(16, 3))
    init = [
        rng.normal(size=(8, 4)) * 0.5,
        rng.normal(size=8) * 0.1,
        rng.normal(size=(3, 8)) * 0.5,
        rng.normal(size=3) * 0.1,
    ]

    def loss(params: list[Any]) -> Any:
        w1, b1, w2, b2 = params
        xt = torch.as_tensor(x, dtype=w1.dtype)
        yt = torch.as_tensor(y, dtype=w1.dtype)
        h = torch.tanh(xt @ w1.T + b1)
        return ((h @ w2.T + b2 - yt) ** 2).mean()

    return init, loss


PROBLEMS = {"quadratic": quadratic_problem, "mlp": mlp_problem}


def run_both(
    name: str, options: dict[str, Any], dtype: str, problem: str
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """(initial parameters, torch's after STEPS steps, lucid's after STEPS steps)."""
    init, loss_fn = PROBLEMS[problem](np.random.default_rng(0))
    init = [a.astype(dtype) for a in init]
    with torch_default_dtype(dtype):
        t_params = [torch.tensor(a, requires_grad=True) for a in init]
        l_params = [lucid.tensor(a.copy(), requires_grad=True) for a in init]
        t_opt = getattr(torch.optim, name)(t_params, **options)
        l_opt = getattr(optim, name)(l_params, **options)
        for _ in range(STEPS):
            t_opt.zero_grad()
            loss_fn(t_params).backward()
            for lp, tp in zip(l_params, t_params):
                lp.grad = lucid.tensor(tp.grad.detach().numpy().copy())
            t_opt.step()
            l_opt.step()
    for lp in l_params:
        assert lp.dtype == getattr(lucid, dtype)
    expected = [p.detach().numpy() for p in t_params]
    return init, expected, [lp.detach().numpy() for lp in l_params]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("problem", ["quadratic", "mlp"])
@pytest.mark.parametrize(
    "name,options", OPTIMIZER_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZER_CASES)]
)
def test_optimizer_matches_torch(
    name: str, options: dict[str, Any], problem: str, dtype: str
) -> None:
    init, expected, got = run_both(name, options, dtype, problem)
    rtol, atol = TOL[dtype]
    for i, (e, g) in enumerate(zip(expected, got)):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"parameter {i}")
    # The comparison can only fail if the updates are far larger than its tolerance.
    moved = max(float(np.abs(e - a).max()) for e, a in zip(expected, init))
    assert moved > 1000 * (atol + rtol * max(float(np.abs(a).max()) for a in init)), moved


# -- LBFGS: a closure problem evaluated by each framework's own autograd ------------------------
def _lbfgs_losses(lib: Any, x: Any, c: np.ndarray, t: np.ndarray) -> Any:
    c_, t_ = lib.tensor(c), lib.tensor(t)
    d = x - t_
    return (c_ * d * d).sum() + 0.1 * (d * d * d * d).sum()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("history_size", [3, 100])
def test_lbfgs_matches_torch(line_search_fn: str | None, history_size: int) -> None:
    rng = np.random.default_rng(1)
    c, t, x0 = rng.uniform(0.5, 3.0, 6), rng.normal(size=6), rng.normal(size=6) * 2
    tx = torch.tensor(x0, requires_grad=True)
    lx = lucid.tensor(x0.copy(), requires_grad=True)
    options = dict(lr=0.5, max_iter=7, history_size=history_size, line_search_fn=line_search_fn)
    t_opt = torch.optim.LBFGS([tx], **options)
    l_opt = optim.LBFGS([lx], **options)

    def t_closure() -> Any:
        t_opt.zero_grad()
        loss = _lbfgs_losses(torch, tx, c, t)
        loss.backward()
        return loss

    def l_closure() -> Any:
        l_opt.zero_grad()
        loss = _lbfgs_losses(lucid, lx, c, t)
        loss.backward()
        return loss

    for _ in range(4):
        t_loss = float(t_opt.step(t_closure).detach())
        l_loss = float(l_opt.step(l_closure))
        assert l_loss == pytest.approx(t_loss, rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(lx.detach().numpy(), tx.detach().numpy(), rtol=1e-10, atol=1e-12)
    t_state, l_state = t_opt.state[tx], l_opt.state[lx]
    assert l_state["func_evals"] == t_state["func_evals"]
    assert l_state["n_iter"] == t_state["n_iter"]


# -- schedulers ----------------------------------------------------------------------------------
def _two_group_sgd(lib: Any, opt_mod: Any, kind: str = "SGD") -> Any:
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "Adam":
        return opt_mod.Adam(groups, lr=0.1)
    return opt_mod.SGD(groups, lr=0.1, momentum=0.9)


SchedFactory = Callable[[Any, Any], Any]

SCHEDULER_CASES: dict[str, tuple[str, SchedFactory]] = {
    "lambda": ("SGD", lambda m, o: m.LambdaLR(o, lambda e: 0.95**e)),
    "lambda-per-group": (
        "SGD",
        lambda m, o: m.LambdaLR(o, [lambda e: 0.9**e, lambda e: 1.0 / (1 + e)]),
    ),
    "multiplicative": ("SGD", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.97)),
    "step": ("SGD", lambda m, o: m.StepLR(o, step_size=7, gamma=0.5)),
    "multistep": ("SGD", lambda m, o: m.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.5)),
    "constant": ("SGD", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=10)),
    "linear": ("SGD", lambda m, o: m.LinearLR(o, start_factor=0.1, total_iters=20)),
    "linear-down": (
        "SGD",
        lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=40),
    ),
    "exponential": ("SGD", lambda m, o: m.ExponentialLR(o, gamma=0.97)),
    "polynomial": ("SGD", lambda m, o: m.PolynomialLR(o, total_iters=50, power=2.0)),
    "cosine": ("SGD", lambda m, o: m.CosineAnnealingLR(o, T_max=30, eta_min=1e-3)),
    "warm-restarts": (
        "SGD",
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=10, T_mult=2, eta_min=1e-4),
    ),
    "warm-restarts-1": ("SGD", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7)),
    "cyclic-triangular": (
        "SGD",
        lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=10),
    ),
    "cyclic-triangular2": (
        "SGD",
        lambda m, o: m.CyclicLR(
            o, [0.01, 0.02], [0.1, 0.3], step_size_up=5, step_size_down=15, mode="triangular2"
        ),
    ),
    "cyclic-exp-range": (
        "SGD",
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=8, mode="exp_range", gamma=0.98),
    ),
    "cyclic-adam-betas": (
        "Adam",
        lambda m, o: m.CyclicLR(o, 0.001, 0.01, step_size_up=6, base_momentum=0.85),
    ),
    "cyclic-no-momentum": (
        "Adam",
        lambda m, o: m.CyclicLR(o, 0.001, 0.01, step_size_up=6, cycle_momentum=False),
    ),
    "onecycle-cos": ("SGD", lambda m, o: m.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=101)),
    "onecycle-linear": (
        "Adam",
        lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=120, anneal_strategy="linear"),
    ),
    "onecycle-three-phase": (
        "SGD",
        lambda m, o: m.OneCycleLR(
            o, max_lr=0.1, epochs=10, steps_per_epoch=11, pct_start=0.25, three_phase=True
        ),
    ),
    "sequential": (
        "SGD",
        lambda m, o: m.SequentialLR(
            o,
            [m.LinearLR(o, start_factor=0.1, total_iters=10), m.ExponentialLR(o, gamma=0.9)],
            milestones=[10],
        ),
    ),
    "sequential-3": (
        "SGD",
        lambda m, o: m.SequentialLR(
            o,
            [
                m.ConstantLR(o, factor=0.5, total_iters=5),
                m.CosineAnnealingLR(o, T_max=40),
                m.StepLR(o, step_size=10, gamma=0.5),
            ],
            milestones=[8, 50],
        ),
    ),
    "chained": (
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [m.ConstantLR(o, factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.95)]
        ),
    ),
    "chained-3": (
        "SGD",
        lambda m, o: m.ChainedScheduler(
            [
                m.LinearLR(o, start_factor=0.2, total_iters=15),
                m.MultiStepLR(o, milestones=[20, 70], gamma=0.3),
                m.CosineAnnealingLR(o, T_max=25),
            ]
        ),
    ),
}


def _lr_sequence(lib: Any, opt_mod: Any, sched_mod: Any, case: str) -> list[list[float]]:
    kind, factory = SCHEDULER_CASES[case]
    opt = _two_group_sgd(lib, opt_mod, kind)
    sched = factory(sched_mod, opt)
    seq = []
    for _ in range(100):
        momenta = [g.get("momentum", g.get("betas", (0,))[0]) for g in opt.param_groups]
        seq.append(list(sched.get_last_lr()) + [float(m) for m in momenta])
        opt.step()
        sched.step()
    return seq


@pytest.mark.parametrize("case", sorted(SCHEDULER_CASES))
def test_scheduler_matches_torch(case: str) -> None:
    expected = _lr_sequence(torch, torch.optim, torch.optim.lr_scheduler, case)
    got = _lr_sequence(lucid, optim, lrs, case)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-12, atol=0)


def _assert_same_lrs(
    kind: str, lr: float, torch_sched: Any, lucid_sched: Any, epochs: int, rel: float
) -> None:
    """Step a torch and a lucid optimizer ``kind`` on one parameter, each with the scheduler its
    factory builds, together; the lrs agree each epoch."""
    t_opt = getattr(torch.optim, kind)([torch.zeros(1, requires_grad=True)], lr=lr)
    l_opt = getattr(optim, kind)([lucid.zeros(1, requires_grad=True)], lr=lr)
    t_sched, l_sched = torch_sched(t_opt), lucid_sched(l_opt)
    for _ in range(epochs):
        assert l_sched.get_last_lr()[0] == pytest.approx(
            t_sched.get_last_lr()[0], rel=rel, abs=1e-12
        )
        t_opt.step()
        t_sched.step()
        l_opt.step()
        l_sched.step()


def test_warmup_cosine_matches_torch_sequential() -> None:
    t_lrs = torch.optim.lr_scheduler

    def torch_sched(o: Any) -> Any:
        warmup = t_lrs.LinearLR(o, start_factor=0.1, total_iters=10)
        cosine = t_lrs.CosineAnnealingLR(o, T_max=70, eta_min=1e-4)
        return t_lrs.SequentialLR(o, [warmup, cosine], milestones=[10])

    def lucid_sched(o: Any) -> Any:
        return lrs.LinearWarmupCosineAnnealingLR(
            o, warmup_epochs=10, max_epochs=80, warmup_start_lr=0.01, eta_min=1e-4
        )

    _assert_same_lrs("SGD", 0.1, torch_sched, lucid_sched, epochs=80, rel=1e-10)


def test_noam_matches_torch_lambda() -> None:
    d_model, warmup, factor = 512, 20, 2.0

    def rate(e: int) -> float:
        s = e + 1
        return float(factor * d_model**-0.5 * min(s**-0.5, s * warmup**-1.5))

    _assert_same_lrs(
        "Adam",
        1.0,
        lambda o: torch.optim.lr_scheduler.LambdaLR(o, rate),
        lambda o: lrs.NoamLR(o, d_model=d_model, warmup_steps=warmup, factor=factor),
        epochs=100,
        rel=1e-12,
    )


PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.91, 0.9, 0.9, 0.89999, 0.85, 0.86, 0.87, 0.88, 0.89] * 3 + [
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.49,
    0.6,
    0.7,
    0.8,
    0.9,
]

PLATEAU_CASES: list[dict[str, Any]] = [
    dict(),
    dict(patience=2),
    dict(patience=1, cooldown=2, factor=0.5),
    dict(patience=0, min_lr=[0.01, 0.02], factor=0.3),
    dict(patience=1, threshold=0.05, threshold_mode="abs"),
    dict(mode="max", patience=2, factor=0.5),
    dict(mode="max", patience=1, threshold=0.01, threshold_mode="abs", cooldown=1),
    dict(patience=0, eps=0.02, factor=0.5),
]


@pytest.mark.parametrize("options", PLATEAU_CASES, ids=[str(i) for i in range(len(PLATEAU_CASES))])
def test_reduce_on_plateau_matches_torch(options: dict[str, Any]) -> None:
    t_opt = _two_group_sgd(torch, torch.optim)
    l_opt = _two_group_sgd(lucid, optim)
    t_sched = torch.optim.lr_scheduler.ReduceLROnPlateau(t_opt, **options)
    l_sched = lrs.ReduceLROnPlateau(l_opt, **options)
    for metric in PLATEAU_METRICS:
        t_sched.step(metric)
        l_sched.step(metric)
        assert l_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12, abs=1e-12)
        assert l_sched.num_bad_epochs == t_sched.num_bad_epochs
        assert l_sched.best == t_sched.best


EPOCH_CASES: dict[str, SchedFactory] = {
    "warm-restarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01),
    "warm-restarts-1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3),
    "step": lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[3, 9, 9], gamma=0.5),
    "linear": lambda m, o: m.LinearLR(o, start_factor=0.2, total_iters=12),
    "cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "polynomial": lambda m, o: m.PolynomialLR(o, total_iters=15, power=0.5),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", sorted(EPOCH_CASES))
def test_scheduler_step_with_epoch_matches_torch(case: str) -> None:
    """The deprecated ``step(epoch)`` (closed forms; fractional epochs for warm restarts)."""
    epochs = [0.5, 1.25, 3, 2, 7.5, 7.75, 12, 20.5, 40] if "restarts" in case else [1, 4, 2, 9, 30]
    results = []
    for lib, opt_mod, sched_mod in [
        (torch, torch.optim, torch.optim.lr_scheduler),
        (lucid, optim, lrs),
    ]:
        opt = _two_group_sgd(lib, opt_mod)
        sched = EPOCH_CASES[case](sched_mod, opt)
        seq = []
        for epoch in epochs:
            opt.step()
            sched.step(epoch)
            seq.append(list(sched.get_last_lr()))
        results.append(seq)
    np.testing.assert_allclose(np.array(results[1]), np.array(results[0]), rtol=1e-12, atol=1e-12)


def _to_lucid(value: Any) -> Any:
    """A torch state dict with its tensors as lucid tensors."""
    if isinstance(value, torch.Tensor):
        return lucid.tensor(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_lucid(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_lucid(v) for v in value)
    return value


RESUME_CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("ASGD", dict(lr=0.05, t0=3)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=1.0)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Rprop", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("Adamax", dict(lr=0.02)),
    ("NAdam", dict(lr=0.02)),
    ("RAdam", dict(lr=0.01)),
    ("Adafactor", dict(lr=0.01)),
]


@pytest.mark.parametrize("name,options", RESUME_CASES, ids=[n for n, _ in RESUME_CASES])
def test_resume_from_a_torch_state_dict(name: str, options: dict[str, Any]) -> None:
    """Torch trains 5 steps; lucid loads its state dict and both continue identically."""
    init, loss_fn = mlp_problem(np.random.default_rng(0))
    with torch_default_dtype("float64"):
        t_params = [torch.tensor(a, requires_grad=True) for a in init]
        t_opt = getattr(torch.optim, name)(t_params, **options)

        def torch_step() -> None:
            t_opt.zero_grad()
            loss_fn(t_params).backward()
            t_opt.step()

        for _ in range(5):
            torch_step()
        l_params = [lucid.tensor(p.detach().numpy().copy(), requires_grad=True) for p in t_params]
        l_opt = getattr(optim, name)(l_params, **options)
        l_opt.load_state_dict(_to_lucid(t_opt.state_dict()))
        for _ in range(5):
            t_opt.zero_grad()
            loss_fn(t_params).backward()
            grads = [p.grad.detach().numpy().copy() for p in t_params]
            t_opt.step()
            for lp, g in zip(l_params, grads):
                lp.grad = lucid.tensor(g)
            l_opt.step()
    for lp, tp in zip(l_params, t_params):
        np.testing.assert_allclose(lp.detach().numpy(), tp.detach().numpy(), rtol=1e-10, atol=1e-12)


TORCH_NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
               "RAdam", "ASGD", "Rprop", "LBFGS", "Adafactor"]  # fmt: skip


def _printed_groups(module: Any, name: str) -> str:
    """``optimizer.state_dict()['param_groups']`` as the what_is_state_dict recipe prints it."""
    p = [module.nn.Parameter(module.ones(2))]
    opt = (
        getattr(module.optim, name)(p, lr=0.1) if name == "SGD" else getattr(module.optim, name)(p)
    )
    return str(opt.state_dict()["param_groups"])


@pytest.mark.parametrize("name", TORCH_NAMES)
def test_printed_param_groups_match_torch(name: str) -> None:
    """The defaults print as torch's: its int zeros (``'weight_decay': 0``, not ``0.0``,
    LBFGS's ``'lr': 1``) and its ``defaults`` dict order (RMSprop's ``momentum`` second)."""
    assert _printed_groups(lucid, name) == _printed_groups(torch, name)
