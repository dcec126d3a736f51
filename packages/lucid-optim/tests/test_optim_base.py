"""The Optimizer base class: param groups, validation, zero_grad, hooks, in-place updates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.optim as optim


def leaf(*values: float, dtype: Any = None) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=dtype or lucid.float32, requires_grad=True)


# -- construction and validation ------------------------------------------------------------------
def test_params_become_one_group_with_defaults() -> None:
    a, b = leaf(1.0), leaf(2.0)
    opt = optim.SGD([a, b], lr=0.1, momentum=0.9)
    assert len(opt.param_groups) == 1
    group = opt.param_groups[0]
    assert group["params"][0] is a and group["params"][1] is b
    assert group["lr"] == 0.1 and group["momentum"] == 0.9 and group["nesterov"] is False


def test_group_options_override_defaults() -> None:
    a, b = leaf(1.0), leaf(2.0)
    opt = optim.Adam([{"params": [a]}, {"params": b, "lr": 0.5, "betas": (0.8, 0.9)}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["betas"] == (0.8, 0.9)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    assert len(opt.param_groups[1]["params"]) == 1 and opt.param_groups[1]["params"][0] is b


def test_named_params_keep_their_names() -> None:
    a, b = leaf(1.0), leaf(2.0)
    opt = optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("w", leaf(1.0)), leaf(2.0)], lr=0.1)


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda p: optim.SGD([p], lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda p: optim.SGD([p], momentum=-0.5), "Invalid momentum value: -0.5"),
        (lambda p: optim.SGD([p], weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda p: optim.SGD([p], nesterov=True), "Nesterov momentum requires a momentum"),
        (lambda p: optim.Adam([p], eps=-1e-8), "Invalid epsilon value: -1e-08"),
        (lambda p: optim.Adam([p], betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda p: optim.AdamW([p], betas=(0.9, -0.1)), "Invalid beta parameter at index 1"),
        (lambda p: optim.NAdam([p], momentum_decay=-1), "Invalid momentum_decay value: -1"),
        (lambda p: optim.Adadelta([p], rho=1.5), "Invalid rho value: 1.5"),
        (lambda p: optim.Adagrad([p], lr_decay=-1), "Invalid lr_decay value: -1"),
        (lambda p: optim.RMSprop([p], alpha=-1), "Invalid alpha value: -1"),
        (lambda p: optim.Rprop([p], etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
        (lambda p: optim.Lion([p], betas=(0.9, 1.0)), "Invalid beta parameter at index 1"),
        (lambda p: optim.Adafactor([p], d=0.5), "Clipping threshold d should be >= 1"),
        (lambda p: optim.Adafactor([p], beta2_decay=0.5), "beta2_decay should be <= 0"),
        (lambda p: optim.LBFGS([p], line_search_fn="armijo"), "only 'strong_wolfe'"),
        (lambda p: optim.Adam([{"params": [p], "lr": -0.1}]), "Invalid learning rate: -0.1"),
    ],
)
def test_bad_hyperparameters_raise(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        make(leaf(1.0))


def test_bad_params_raise() -> None:
    p = leaf(1.0)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections.*Please use a list"):
        optim.SGD({p}, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the"):
        optim.SGD([p, 3.0], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter"):
        optim.SGD([{"params": [p]}, {"params": [leaf(2.0), p]}], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([p], lr=0.1).add_param_group([p])  # type: ignore[arg-type]


def test_required_option_must_be_given() -> None:
    class Custom(optim.Optimizer):
        def __init__(self, params: Any, lr: Any = optim.required) -> None:
            super().__init__(params, {"lr": lr})

    with pytest.raises(ValueError, match="didn't specify a value of required optimization"):
        Custom([leaf(1.0)])
    assert Custom([{"params": [leaf(1.0)], "lr": 0.2}]).param_groups[0]["lr"] == 0.2


def test_add_param_group() -> None:
    a, b = leaf(1.0), leaf(2.0)
    opt = optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.5
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])


# -- stepping ---------------------------------------------------------------------------------
def test_step_updates_in_place_without_recording() -> None:
    p = leaf(1.0, 2.0)
    data_before = p.array
    opt = optim.Adam([p], lr=0.1)
    version = p._version
    (p * p).sum().backward()
    opt.step()
    assert p.array is data_before  # the same numpy buffer, written in place
    assert p._version > version
    assert p.grad_fn is None and p.is_leaf and p.requires_grad
    assert p.dtype == lucid.float32
    assert opt.state[p]["exp_avg"].dtype == lucid.float32
    assert opt.state[p]["exp_avg"].grad_fn is None
    np.testing.assert_allclose(p.detach().numpy(), [0.9, 1.9], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adafactor", "Lion", "Rprop", "NAdam", "ASGD"])
def test_float32_stays_float32(name: str) -> None:
    p = lucid.tensor(np.ones((3, 2), dtype=np.float32), requires_grad=True)
    opt = getattr(optim, name)([p], lr=0.01)
    for _ in range(2):
        p.grad = lucid.tensor(np.full((3, 2), 0.5, dtype=np.float32))
        opt.step()
    assert p.dtype == lucid.float32 and p.array.dtype == np.float32
    for value in opt.state[p].values():
        if isinstance(value, lucid.Tensor):
            assert value.dtype == lucid.float32


def test_params_without_grad_are_skipped() -> None:
    a, b = leaf(1.0), leaf(2.0)
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = lucid.tensor([1.0])
    opt.step()
    assert a.tolist() == [0.5] and b.tolist() == [2.0]
    assert b not in opt.state


def test_zero_grad() -> None:
    p = leaf(1.0, 2.0)
    opt = optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure_returns_loss_and_records_its_graph() -> None:
    p = leaf(3.0)
    opt = optim.SGD([p], lr=0.25)

    def closure() -> Any:
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with lucid.no_grad():  # the closure still gets gradients
        loss = opt.step(closure)
    assert float(loss) == 9.0
    assert p.tolist() == [1.5]


def test_lbfgs_needs_a_closure() -> None:
    opt = optim.LBFGS([leaf(1.0)])
    with pytest.raises(RuntimeError, match="closure"):
        opt.step()


def test_step_hooks() -> None:
    p = leaf(1.0)
    opt = optim.SGD([p], lr=1.0)
    calls: list[str] = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(f"post {p.tolist()}"))
    p.grad = lucid.tensor([0.5])
    opt.step()
    assert calls == ["pre", "post [0.5]"]
    pre.remove()
    opt.step()
    assert calls == ["pre", "post [0.5]", "post [0.0]"]


def test_state_dict_hooks() -> None:
    opt = optim.SGD([leaf(1.0)], lr=1.0)

    def add_marker(o: Any, sd: dict[str, Any]) -> dict[str, Any]:
        sd["marker"] = 1
        return sd

    opt.register_state_dict_post_hook(add_marker)
    assert opt.state_dict()["marker"] == 1
    seen: list[Any] = []
    opt.register_load_state_dict_post_hook(lambda o: seen.append(o))
    opt.load_state_dict(opt.state_dict())
    assert seen == [opt]


def test_repr_lists_groups() -> None:
    text = repr(optim.Adam([leaf(1.0)], lr=0.5))
    assert text.startswith("Adam (") and "Parameter Group 0" in text and "lr: 0.5" in text


# -- state dicts ------------------------------------------------------------------------------
def test_state_dict_layout_matches_pytorch() -> None:
    a, b, c = leaf(1.0), leaf(2.0), leaf(3.0)
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    for p in (a, c):
        p.grad = lucid.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 2]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"] == 1
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5
    params = opt.param_groups[0]["params"]  # the optimizer's own groups still hold tensors
    assert len(params) == 2 and params[0] is a and params[1] is b


def test_load_state_dict_rejects_mismatched_groups() -> None:
    opt = optim.SGD([leaf(1.0), leaf(2.0)], lr=0.1)
    other = optim.SGD([leaf(1.0)], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(opt.state_dict())
    two = optim.SGD([{"params": [leaf(1.0)]}, {"params": [leaf(1.0)]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        two.load_state_dict(other.state_dict())


def test_load_state_dict_copies_and_casts_state() -> None:
    p64 = leaf(1.0, dtype=lucid.float64)
    src = optim.SGD([p64], lr=0.1, momentum=0.9)
    p64.grad = lucid.tensor([1.0], dtype=lucid.float64)
    src.step()
    p32 = leaf(1.0)
    dst = optim.SGD([p32], lr=0.7, momentum=0.1)
    dst.load_state_dict(src.state_dict())
    buf = dst.state[p32]["momentum_buffer"]
    assert buf.dtype == lucid.float32
    assert buf is not src.state[p64]["momentum_buffer"]
    assert dst.param_groups[0]["lr"] == 0.1 and dst.param_groups[0]["momentum"] == 0.9
    assert dst.param_groups[0]["params"][0] is p32


def test_load_state_dict_accepts_json_shaped_dicts() -> None:
    """After a JSON trip, keys are strings and tuples are lists; both load."""
    p = leaf(1.0)
    opt = optim.Adam([p], lr=0.1)
    p.grad = lucid.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    sd = {
        "state": {str(k): v for k, v in sd["state"].items()},
        "param_groups": [dict(g, betas=list(g["betas"])) for g in sd["param_groups"]],
    }
    fresh = optim.Adam([p], lr=0.1)
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["betas"] == (0.9, 0.999)
    assert fresh.state[p]["step"] == 1


def test_complex_parameters() -> None:
    """SGD moves real and imaginary parts like two real tensors; non-linear rules refuse."""
    z = lucid.tensor([1 + 2j, -1 - 1j], requires_grad=True)
    opt = optim.SGD([z], lr=0.5, momentum=0.9)
    for _ in range(2):
        z.grad = lucid.tensor([1 - 1j, 2j])
        opt.step()
    re = lucid.tensor([1.0, -1.0], requires_grad=True)
    im = lucid.tensor([2.0, -1.0], requires_grad=True)
    ref = optim.SGD([re, im], lr=0.5, momentum=0.9)
    for _ in range(2):
        re.grad, im.grad = lucid.tensor([1.0, 0.0]), lucid.tensor([-1.0, 2.0])
        ref.step()
    np.testing.assert_allclose(z.detach().numpy().real, re.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(z.detach().numpy().imag, im.detach().numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="Adam does not support complex parameters.*complex64"):
        optim.Adam([lucid.tensor([1j], requires_grad=True)])


def test_pickle_round_trip_keeps_working() -> None:
    import pickle

    p = leaf(1.0, 2.0)
    opt = optim.Adam([p], lr=0.1)
    p.grad = lucid.tensor([1.0, 1.0])
    opt.step()
    clone = pickle.loads(pickle.dumps(opt))
    q = clone.param_groups[0]["params"][0]
    q.grad = lucid.tensor([1.0, 1.0])
    clone.step()
    opt.step()
    np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
    clone.register_step_post_hook(lambda *a: None)


def test_custom_step_override_still_runs_hooks_once() -> None:
    class Halve(optim.Optimizer):
        def __init__(self, params: Any) -> None:
            super().__init__(params, {"lr": 0.5})

        def step(self, closure: Any = None) -> Any:
            with lucid.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(group["lr"])
            return super().step(closure)  # the base step has nothing to update: no grads

    p = leaf(4.0)
    opt = Halve([p])
    calls: list[str] = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    opt.step()
    assert p.tolist() == [2.0] and calls == ["pre", "post"]
    sched = optim.lr_scheduler.StepLR(opt, step_size=1)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "scheduler before optimizer" warning
        sched.step()


def test_optimizers_take_foreach_at_torchs_position() -> None:
    p = [lucid.ones(2, requires_grad=True)]  # a leaf: lucid-optim is tested without lucid-nn
    assert optim.Adagrad(p, 0.1, 0.0, 0.0, 0.0, 1e-10, False).defaults["foreach"] is False
    assert optim.Adadelta(p, 1.0, 0.9, 1e-6, 0.0, True).defaults["foreach"] is True
    assert optim.Adamax(p, 2e-3, (0.9, 0.999), 1e-8, 0.0, False).defaults["foreach"] is False
    asgd = optim.ASGD(p, 0.01, 1e-4, 0.75, 1e6, 0.0, None, True)
    assert asgd.defaults["maximize"] is True and asgd.defaults["foreach"] is None


def test_global_step_hooks_run_around_every_optimizer_and_profile_hook_step() -> None:
    from lucid.optim.optimizer import (
        register_optimizer_step_post_hook,
        register_optimizer_step_pre_hook,
    )

    p = lucid.ones(2, requires_grad=True)
    p.grad = lucid.ones(2)
    opt = lucid.optim.SGD([p], lr=0.5)
    log: list[str] = []
    h1 = register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
    h2 = register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre" if a == (o,) else "?"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    try:
        opt.step()
    finally:
        h1.remove()
        h2.remove()
    assert log == ["global pre", "pre", "post", "global post"]  # torch's order
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 0.5], rtol=0, atol=1e-7)
    log.clear()
    opt.step()
    assert log == ["pre", "post"]

    class Custom(lucid.optim.Optimizer):
        def __init__(self, params: object) -> None:
            super().__init__(params, {})

        @lucid.optim.Optimizer.profile_hook_step
        def other_step(self, scale: float) -> float:
            log.append(f"step {scale}")
            return scale

    custom = Custom([p])
    custom.register_step_pre_hook(lambda o, a, k: ((o, 2.0), k))  # replaces the arguments
    log.clear()
    assert custom.other_step(1.0) == 2.0
    assert log == ["step 2.0"]


def test_torch_step_flags_fused_capturable_differentiable() -> None:
    def run(**kw: Any) -> np.ndarray:
        p = lucid.tensor([1.0, -2.0, 3.0], requires_grad=True)
        opt = optim.AdamW([p], lr=0.1, **kw)
        for _ in range(3):
            p.grad = p.detach() * 2
            opt.step()
        return p.detach().numpy()

    plain = run()
    np.testing.assert_array_equal(run(fused=True), plain)  # the multi-tensor update's bits
    np.testing.assert_array_equal(run(capturable=True), plain)
    assert optim.SGD([lucid.ones(1, requires_grad=True)], fused=True).defaults["fused"] is True
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        optim.Adam([lucid.ones(1, requires_grad=True)], fused=True, foreach=True)
    with pytest.raises(NotImplementedError, match=r"Adam\(differentiable=True\)"):
        optim.Adam([lucid.ones(1, requires_grad=True)], differentiable=True)
