"""The multi-tensor (foreach) updates: the same bits as the per-tensor updates for every
algorithm and option, the same bits as NumPy running today's formulas, which parameters they
take, and the autograd bookkeeping of their in-place writes."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from optim_cases import MULTI_TENSOR_CASES as CASES

import lucid
import lucid.optim as optim
from lucid.optim import _foreach
from lucid.optim.optimizer import Optimizer

# The multi-tensor update needs NumPy 2's promotion of Python numbers (NEP 50) to give the ops'
# bits; under NumPy 1 it stands aside and every update runs per tensor (still bit-identical).
takes_multi_tensor = pytest.mark.skipif(
    not lucid.backends.get_backend("cpu").weak_python_scalars,
    reason="NumPy < 2: no NEP 50 scalar promotion, so the per-tensor update runs",
)

STEPS = 12


def _params(rng: np.random.Generator, dtype: str) -> list[lucid.Tensor]:
    """A vector, a matrix, one parameter of several pieces (> CHUNK elements) and two whose
    arrays are transposed (non-contiguous) views, a small one and one above CHUNK."""
    shapes = [(5,), (3, 4), (_foreach.CHUNK + 7,)]
    params = [lucid.tensor(rng.normal(size=s).astype(dtype), requires_grad=True) for s in shapes]
    for shape in ((6, 9), (_foreach.CHUNK // 128 + 1, 128)):
        params.append(lucid.tensor(rng.normal(size=shape).astype(dtype)).T.detach())
        params[-1].requires_grad_(True)
    return params


def _run(name: str, options: dict[str, Any], dtype: str, foreach: bool) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    params = _params(rng, dtype)
    opt = getattr(optim, name)(params, foreach=foreach, **options)
    for step in range(STEPS):
        for i, p in enumerate(params):
            g = rng.normal(size=p.shape).astype(dtype)
            if i == 1 and step % 2:  # a non-contiguous gradient now and then
                g = np.ascontiguousarray(g.T).T
            p.grad = lucid.tensor(g)
        opt.step()
    out = [p.detach().numpy().copy() for p in params]
    for p in params:
        out += [v.numpy().copy() for v in opt.state[p].values() if isinstance(v, lucid.Tensor)]
        out += [np.asarray(v) for v in opt.state[p].values() if not isinstance(v, lucid.Tensor)]
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_foreach_is_bit_identical_to_per_tensor(
    name: str, options: dict[str, Any], dtype: str
) -> None:
    multi = _run(name, options, dtype, foreach=True)
    single = _run(name, options, dtype, foreach=False)
    assert len(multi) == len(single)
    for a, b in zip(multi, single):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


class _Spy:
    """Counts the parameters each step hands to the per-tensor update."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = Optimizer._single_tensor_update

        def spy(opt: Optimizer, params: list[lucid.Tensor], *args: Any) -> None:
            self.count += len(params)
            original(opt, params, *args)

        monkeypatch.setattr(Optimizer, "_single_tensor_update", spy)


def _grads(params: list[lucid.Tensor], seed: int) -> None:
    rng = np.random.default_rng(seed)
    for p in params:
        p.grad = lucid.tensor(rng.normal(size=p.shape).astype(p.dtype.name))


@takes_multi_tensor
@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_default_takes_the_multi_tensor_update(
    name: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    params = _params(np.random.default_rng(0), "float32")
    opt = getattr(optim, name)(params, **options)
    assert opt.param_groups[0]["foreach"] is None
    _grads(params, 1)
    opt.step()  # SGD's first momentum step makes the buffer per tensor
    spy = _Spy(monkeypatch)
    _grads(params, 2)
    opt.step()
    assert spy.count == 0


def test_what_the_multi_tensor_update_leaves_to_the_per_tensor_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spy = _Spy(monkeypatch)
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    opt: Optimizer = optim.Adam([w], lr=np.float64(0.1))  # a NumPy scalar promotes: the ops decide
    _grads([w], 0)
    opt.step()
    assert spy.count == 1
    z = lucid.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    opt = optim.ASGD([z], lr=0.1)  # complex parameters
    z.grad = lucid.tensor([0.5 + 0.5j, -1j])
    opt.step()
    assert spy.count == 2
    v = lucid.tensor([1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    opt = optim.SGD([v], lr=0.1)
    # a gradient of another dtype: the ``grad`` setter refuses it as torch's does, so it goes
    # into the slot directly (an engine path or a hook might still leave one)
    v._grad = lucid.tensor([1.0, 1.0], dtype=lucid.float32)
    opt.step()
    assert spy.count == 3
    np.testing.assert_allclose(v.detach().numpy(), [0.9, 1.9], rtol=1e-12, atol=0)
    opt = optim.SGD([v], lr=0.1, foreach=False)  # forced off
    _grads([v], 1)
    opt.step()
    assert spy.count == 4


def test_sgd_matches_numpy_running_todays_formula() -> None:
    """SGD with momentum, Nesterov and weight decay, bit for bit (float32)."""
    rng = np.random.default_rng(3)
    start = rng.normal(size=(4, 5)).astype(np.float32)
    grads = [rng.normal(size=(4, 5)).astype(np.float32) for _ in range(4)]
    lr, momentum, wd = 0.05, 0.9, 0.1
    p = lucid.tensor(start.copy(), requires_grad=True)
    opt = optim.SGD([p], lr=lr, momentum=momentum, nesterov=True, weight_decay=wd)
    ref, buf = start.copy(), None
    for g in grads:
        p.grad = lucid.tensor(g)
        opt.step()
        d = g + ref * np.float32(wd)
        buf = d.copy() if buf is None else buf * np.float32(momentum) + d
        d = d + buf * np.float32(momentum)
        ref = ref + d * np.float32(-lr)
    assert p.detach().numpy().tobytes() == ref.tobytes()


def test_adamw_matches_numpy_running_todays_formula() -> None:
    """AdamW with AMSGrad, bit for bit (float32)."""
    rng = np.random.default_rng(4)
    start = rng.normal(size=(3, 7)).astype(np.float32)
    grads = [rng.normal(size=(3, 7)).astype(np.float32) for _ in range(5)]
    lr, beta1, beta2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.01
    p = lucid.tensor(start.copy(), requires_grad=True)
    opt = optim.AdamW([p], lr=lr, weight_decay=wd, amsgrad=True)
    ref = start.copy()
    m, v, vmax = np.zeros_like(ref), np.zeros_like(ref), np.zeros_like(ref)
    f32 = np.float32
    for step, g in enumerate(grads, 1):
        p.grad = lucid.tensor(g)
        opt.step()
        ref = ref * f32(1 - lr * wd)
        m = m + (g - m) * f32(1 - beta1)
        v = v * f32(beta2) + (g * g) * f32(1 - beta2)
        vmax = np.maximum(vmax, v)
        denom = np.sqrt(vmax) / f32((1 - beta2**step) ** 0.5) + f32(eps)
        ref = ref + (m / denom) * f32(-lr / (1 - beta1**step))
    assert p.detach().numpy().tobytes() == ref.tobytes()


def test_writes_in_place_and_bumps_the_version() -> None:
    p = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    array = p.array
    opt = optim.AdamW([p], lr=0.1)
    loss = (p * p).sum()  # saves p for backward
    _grads([p], 0)
    version = p._version
    opt.step()
    assert p.array is array and p._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_no_floating_point_warnings() -> None:
    """As the ops, the array updates compute nan and inf silently."""
    p = lucid.tensor([1.0, 0.0], requires_grad=True)
    opt = optim.Adagrad([p], lr=0.1, eps=0.0)
    p.grad = lucid.tensor([0.0, 0.0])  # 0 / 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
    assert np.isnan(p.detach().numpy()).all()


def test_foreach_is_a_group_option_and_state_dicts_without_it_load() -> None:
    a = lucid.tensor([1.0], requires_grad=True)
    b = lucid.tensor([2.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "foreach": False}], lr=0.1, momentum=0.9)
    assert [g["foreach"] for g in opt.param_groups] == [None, False]
    sd = opt.state_dict()
    assert sd["param_groups"][1]["foreach"] is False
    for group in sd["param_groups"]:
        del group["foreach"]  # a state dict saved before foreach existed
    opt.load_state_dict(sd)
    _grads([a, b], 0)
    opt.step()
    _grads([a, b], 1)
    opt.step()
    assert opt.state[a]["momentum_buffer"].shape == (1,)


def test_a_subclass_that_changes_the_per_tensor_update_runs_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class HalfStepSGD(optim.SGD):
        def _update(self, p: Any, grad: Any, state: Any, group: Any) -> None:
            super()._update(p, grad * 0.5, state, group)

    spy = _Spy(monkeypatch)
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    opt = HalfStepSGD([w], lr=1.0)
    w.grad = lucid.tensor([1.0, 1.0])
    opt.step()
    assert spy.count == 1
    np.testing.assert_allclose(w.detach().numpy(), [0.5, 1.5], rtol=1e-6, atol=0)


@takes_multi_tensor
def test_a_step_count_loaded_as_a_float_keeps_the_multi_tensor_update(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PyTorch keeps ``step`` as a float tensor: loaded, it is a Python float."""
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    _grads([w], 0)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = lucid.tensor(1.0)
    opt.load_state_dict(sd)
    assert type(opt.state[w]["step"]) is float
    spy = _Spy(monkeypatch)
    _grads([w], 1)
    opt.step()
    assert spy.count == 0 and opt.state[w]["step"] == 2.0


@takes_multi_tensor
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("name", "options"),
    [("AdamW", {"weight_decay": 0.1, "betas": (0.9, 0.99)}), ("Adam", {"weight_decay": 0.3}),
     ("Adam", {"maximize": True, "weight_decay": 1.0}), ("AdamW", {"betas": (0.0, 0.0)})],
)  # fmt: skip
def test_adam_step_kernel_runs_and_gives_the_ufunc_bits(
    name: str, options: dict[str, Any], dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kernels.ADAM_STEP`` (one compiled pass a parameter, ``lucid-core[numba]``) takes the
    contiguous parameters and writes the bits of the ufunc update it replaces."""
    pytest.importorskip("numba")
    cpu = lucid.backends.cpu
    kernel = lucid.kernels.ADAM_STEP.find(lucid.backends.get_backend("cpu"))
    assert kernel is not None
    taken: list[bool] = []
    monkeypatch.setattr(kernel, "forward", (lambda f: lambda *a: taken.append(f(*a)) or taken[-1])(
        kernel.forward))  # fmt: skip
    monkeypatch.setattr(cpu, "numba_enabled", True)
    fused = _run(name, options, dtype, foreach=True)
    assert sum(taken) == 3 * STEPS  # the three contiguous parameters of _params
    monkeypatch.setattr(cpu, "numba_enabled", False)
    plain = _run(name, options, dtype, foreach=True)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(fused, plain))
