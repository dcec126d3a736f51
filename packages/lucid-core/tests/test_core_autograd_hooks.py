"""lucid.autograd.graph hooks and the Node API, anomaly detection and post-accumulate-grad
hooks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd.graph import Node, save_on_cpu, saved_tensors_hooks

D = lucid.float64


def _x(*values: float) -> lucid.Tensor:
    return lucid.tensor(list(values), dtype=D, requires_grad=True)


# -- saved_tensors_hooks -------------------------------------------------------------------------
def test_pack_and_unpack_see_every_saved_tensor() -> None:
    packed: list[tuple[int, ...]] = []
    unpacked: list[Any] = []

    def pack(t: lucid.Tensor) -> np.ndarray:
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()

    def unpack(a: np.ndarray) -> lucid.Tensor:
        unpacked.append(a.shape)
        return lucid.from_numpy(a)

    x = _x(0.5, 1.0, 2.0)
    with saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()  # exp saves its output, mul saves both inputs
    y.backward()
    assert packed == [(3,), (3,), (3,)] and len(unpacked) == 3
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) * (xs + 1), rtol=1e-12, atol=0)


def test_hooks_nest_innermost_wins_and_outside_no_hook_runs() -> None:
    outer: list[int] = []
    inner: list[int] = []
    x = _x(1.0, 2.0)
    with saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        with saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t):
            y = x.sin()
        z = y.cos()
    w = z.exp()
    assert inner == [1] and outer == [1]
    w.sum().backward()
    assert x.grad is not None


def test_double_backward_through_hooked_saved_tensors() -> None:
    x = _x(0.3, -1.2, 2.0)
    with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lambda a: lucid.from_numpy(a)):
        y = (x * x * x).sum()
    (g,) = lucid.autograd.grad(y, x, create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy(), rtol=1e-12, atol=0)


def test_version_check_survives_hooks_and_bad_unpack_is_named() -> None:
    x = _x(1.0, 2.0)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        a = x * 1.0
        y = (a * a).sum()
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="must return a Tensor"):
        y.backward()
    with pytest.raises(TypeError, match="two callables"):
        saved_tensors_hooks(1, lambda t: t)  # type: ignore[arg-type]


def test_save_on_cpu_gives_the_same_gradients() -> None:
    x = _x(0.1, 0.2, 0.3)
    with save_on_cpu(pin_memory=False):
        y = (x.tanh() * x.exp()).sum()
    (g,) = lucid.autograd.grad(y, x)
    (g0,) = lucid.autograd.grad((x.tanh() * x.exp()).sum(), x)
    np.testing.assert_array_equal(g.numpy(), g0.numpy())


# -- the Node API --------------------------------------------------------------------------------
def test_node_name_next_functions_metadata() -> None:
    x = _x(1.0, 2.0)
    y = x.exp()
    z = y * 2.0
    node = z.grad_fn
    assert isinstance(node, Node)
    assert node.name() == "MulBackward0" and node.name == "MulBackward0"
    (first, _), (const, _) = node.next_functions
    assert first is y.grad_fn and const is None
    ((acc, nr),) = y.grad_fn.next_functions
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x and nr == 0
    node.metadata["tag"] = "scale"
    assert z.grad_fn.metadata == {"tag": "scale"}


def test_node_hooks_observe_and_replace_gradients() -> None:
    x = _x(1.0, 2.0)
    y = x * 3.0
    seen: list[Any] = []
    pre = y.grad_fn.register_prehook(lambda go: (go[0] * 10.0,))
    post = y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].numpy().copy(),
                                                               go[0].numpy().copy())))  # fmt: skip
    y.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [30.0, 30.0])
    np.testing.assert_array_equal(seen[0][1], [10.0, 10.0])  # grad_outputs after the prehook
    pre.remove()
    post.remove()
    x.grad = None
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1.0, gi[1]))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    z = x * 2.0
    z.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="incorrect number of values"):
        z.sum().backward()


# -- post-accumulate-grad hooks ------------------------------------------------------------------
def test_post_accumulate_grad_hook_sees_the_final_grad() -> None:
    x = _x(1.0, 2.0)
    seen: list[np.ndarray] = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * x + x * 3.0).sum().backward()  # two paths into x: one call, with the summed grad
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [5.0, 7.0])
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(seen[1], [6.0, 8.0])  # accumulated
    handle.remove()
    (x * 1.0).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 1.0).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        lucid.ones(2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hook_can_step_the_parameter() -> None:
    w = _x(1.0, -1.0)

    def sgd(p: lucid.Tensor) -> None:
        with lucid.no_grad():
            p.sub_(p.grad * 0.5)
        p.grad = None

    w.register_post_accumulate_grad_hook(sgd)
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])
    assert w.grad is None


# -- anomaly detection ---------------------------------------------------------------------------
def test_detect_anomaly_names_the_op_and_prints_the_forward_line() -> None:
    x = _x(0.0, 1.0)
    with lucid.autograd.detect_anomaly():
        y = (x.sqrt() * 0.0).sum()  # the line the error must point at
        with pytest.raises(RuntimeError) as info, pytest.warns(UserWarning) as warned:
            y.backward()
    msg = str(info.value)
    assert msg.startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert "Traceback of forward call that caused the error" in msg
    assert "the line the error must point at" in msg
    (w,) = warned
    assert str(w.message).startswith("Error detected in SqrtBackward0.")
    assert "the line the error must point at" in str(w.message)


def test_without_anomaly_mode_nan_passes_silently() -> None:
    x = _x(0.0)
    (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()
    with lucid.autograd.detect_anomaly(check_nan=False):
        y = (x.sqrt() * 0.0).sum()
        y.backward()  # check_nan off: no error


def test_set_detect_anomaly_toggles_and_restores() -> None:
    from lucid.autograd import anomaly_mode

    assert not anomaly_mode.is_anomaly_enabled()
    with lucid.autograd.set_detect_anomaly(True):
        assert anomaly_mode.is_anomaly_enabled()
    assert not anomaly_mode.is_anomaly_enabled()
    lucid.autograd.set_detect_anomaly(True)
    try:
        assert anomaly_mode.is_anomaly_enabled()
    finally:
        lucid.autograd.set_detect_anomaly(False)

    @lucid.autograd.detect_anomaly()
    def inside() -> bool:
        return anomaly_mode.is_anomaly_enabled()

    assert inside() and not anomaly_mode.is_anomaly_enabled()


def test_anomaly_mode_warns_and_keeps_the_error_of_a_failing_backward() -> None:
    class Boom(lucid.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> Any:
            raise ValueError("bad backward")

    x = _x(1.0)
    with lucid.autograd.detect_anomaly():
        y = Boom.apply(x)  # recorded here
        with (
            pytest.raises(ValueError, match="bad backward"),
            pytest.warns(UserWarning, match="Error detected in BoomBackward") as warned,
        ):
            y.sum().backward()
    assert "y = Boom.apply(x)  # recorded here" in str(warned[0].message)


def test_disable_saved_tensors_hooks_refuses_new_hooks() -> None:
    from lucid.autograd.graph import disable_saved_tensors_hooks

    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
        pass


def test_post_accumulate_hook_runs_for_backward_with_inputs() -> None:
    x = _x(1.0, 2.0)
    seen: list[np.ndarray] = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().copy()))
    (x * 3.0).sum().backward(inputs=[x])
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])
    assert lucid.is_anomaly_enabled() is False and lucid.is_anomaly_check_nan_enabled() is True


def test_an_in_place_op_packs_the_value_it_overwrites() -> None:
    x = _x(0.5, -1.5)
    packed: list[np.ndarray] = []

    def pack(t: lucid.Tensor) -> lucid.Tensor:
        packed.append(t.detach().numpy().copy())
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        a = x * 2.0
        a.pow_(3)
    (g,) = lucid.autograd.grad(a.sum(), x)
    np.testing.assert_allclose(g.numpy(), 24 * x.detach().numpy() ** 2, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(packed[-1], [1.0, -3.0])  # the value before pow_


def test_an_output_adopted_in_place_keeps_its_version_check_under_hooks() -> None:
    x = _x(0.5, 1.0)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        a = x * 1.0
        a.exp_()  # exp saved its output, which a adopts
        b = a.sum() * 1.0
    (g,) = lucid.autograd.grad(b, x, retain_graph=True)
    np.testing.assert_allclose(g.numpy(), np.exp([0.5, 1.0]), rtol=1e-12, atol=0)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        lucid.autograd.grad(b, x)


def test_hooks_are_per_thread() -> None:
    import threading

    packed: list[str] = []
    x = _x(1.0, 2.0)
    seen_in_thread: list[int] = []

    def other() -> None:
        before = len(packed)
        (x.exp() * x).sum()  # records (x requires grad), saves tensors
        seen_in_thread.append(len(packed) - before)

    with saved_tensors_hooks(lambda t: packed.append("main") or t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        x.exp()
    assert seen_in_thread == [0] and packed == ["main"]


def test_grad_fn_saved_accessors_use_torchs_names() -> None:
    # autograd_saved_tensors_hooks_tutorial.py reads y.grad_fn._saved_self / _other / _result
    a = lucid.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = lucid.tensor([1.0, 3.0, -2.0], requires_grad=True)
    y = a * b
    assert y.grad_fn._saved_self is a and y.grad_fn._saved_other is b
    q = a / b
    assert q.grad_fn._saved_self is a and q.grad_fn._saved_other is b
    e = lucid.exp(a)
    assert e.grad_fn._saved_result is not e and e.grad_fn._saved_result.equal(e)
    assert lucid.sin(a).grad_fn._saved_self is a
    p = a.pow(2)
    assert p.grad_fn._saved_self is a and p.grad_fn._saved_exponent == 2
    seen: list[int] = []
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: (seen.append(1), t * 4)[1],
                                                  lambda t: t / 4):  # fmt: skip
        z = a.pow(2)
    np.testing.assert_allclose(z.grad_fn._saved_self.detach().numpy(), a.detach().numpy(),
                               rtol=1e-6, atol=1e-7)  # fmt: skip
    assert seen == [1]  # packed once; read back through the unpack hook
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _ = y.grad_fn._saved_self


def _accumulator_run(L: Any) -> list[Any]:
    """DDP-style reducers' idiom: a parameter's AccumulateGrad reached through
    ``p.expand_as(p)``, kept, and hooked before and after accumulation."""
    p = L.ones(2, requires_grad=True)
    acc = p.expand_as(p).grad_fn.next_functions[0][0]
    seen: list[Any] = [acc is (p * 2).grad_fn.next_functions[0][0], acc.name(),
                       acc.variable is p, acc.next_functions]  # fmt: skip
    h_post = acc.register_hook(
        lambda gi, go: seen.append(("post", gi, [g.tolist() for g in go], p.grad.tolist()))
    )
    h_pre = acc.register_prehook(
        lambda go: seen.append(("pre", [g.tolist() for g in go], p.grad is None))
    )
    for _ in range(2):
        (p * 3).sum().backward()
    h_post.remove()
    h_pre.remove()
    (p * 3).sum().backward()  # no hook runs
    acc.register_prehook(lambda go: (go[0] * 10,))  # a returned tuple replaces the gradient
    p.grad = None
    (p * 1).sum().backward()
    seen.append(p.grad.tolist())
    seen.append(p.expand(2).grad_fn.name())
    q = L.ones(2, requires_grad=True)  # no one keeps its node: the graph does, while it lives
    y, z = q * 2, q * 4
    seen.append(y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0])
    return seen


def test_accumulate_grad_node_is_kept_and_hooked() -> None:
    got = _accumulator_run(lucid)
    assert got[:3] == [True, "torch::autograd::AccumulateGrad", True]
    assert got[4] == ("pre", [[3.0, 3.0]], True)
    assert got[5] == ("post", (), [[3.0, 3.0]], [3.0, 3.0])
    assert got[-3:] == [[10.0, 10.0], "ExpandBackward0", True]


def test_expand_to_the_same_shape_without_grad_is_the_tensor() -> None:
    x = lucid.ones(2, 3)
    assert x.expand(2, 3) is x  # nothing records: no view needed
    with lucid.no_grad():
        w = lucid.ones(2, requires_grad=True)
        assert w.expand_as(w) is w


@pytest.mark.parity
def test_accumulate_grad_node_parity() -> None:
    torch = pytest.importorskip("torch")
    assert _accumulator_run(lucid) == _accumulator_run(torch)
