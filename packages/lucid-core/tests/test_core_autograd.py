"""The autograd engine: correctness traps, hooks, retain_grad, grad modes, autograd.grad,
higher-order gradients, version counters and in-place ops."""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import Function


def _leaf(values: list[float] | np.ndarray) -> lucid.Tensor:
    return lucid.tensor(values, dtype=lucid.float64, requires_grad=True)


# -- correctness traps -----------------------------------------------------------------------------
def test_tensor_used_twice_in_one_op() -> None:
    x = _leaf([1.0, -2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0], rtol=1e-10, atol=1e-12)


def test_intermediate_used_twice() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 3
    (y + y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0], rtol=1e-10, atol=1e-12)


def _counted_double(calls: list[int]) -> type[Function]:
    """A Function ``y = 2 * a`` whose backward appends to ``calls`` each time it runs."""

    class CountedDouble(Function):
        forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            return ctx.xp.multiply(a, 2.0)

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            calls.append(1)
            return g * 2

    return CountedDouble


def test_diamond_graph_runs_each_node_once() -> None:
    calls: list[int] = []
    x = _leaf([1.0, 2.0])
    y = _counted_double(calls).apply(x)
    (y.sin() + y.cos() + y * y).sum().backward()
    assert len(calls) == 1
    yv = 2 * np.array([1.0, 2.0])
    np.testing.assert_allclose(
        x.grad.numpy(), 2 * (np.cos(yv) - np.sin(yv) + 2 * yv), rtol=1e-10, atol=1e-12
    )


def test_duplicate_advanced_indices_accumulate() -> None:
    a = _leaf(np.arange(5.0))
    a[[0, 0, 1]].sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 1.0, 0.0, 0.0, 0.0], rtol=1e-10, atol=1e-12)


def test_broadcast_gradients_are_reduced_to_operand_shapes() -> None:
    a = _leaf(np.ones((3, 1)))
    b = _leaf(np.ones(4))
    c = _leaf(2.0)
    (a * b * c).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,) and c.grad.shape == ()
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 8.0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 6.0), rtol=1e-10, atol=1e-12)
    assert c.grad.item() == 12.0


def test_inplace_change_of_saved_tensor_raises() -> None:
    x = _leaf([1.0, 2.0])
    y = x.exp()
    z = y * y  # saves y
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_change_of_saved_output_raises() -> None:
    x = _leaf([1.0, 2.0])
    y = x.exp()  # exp saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


def test_inplace_on_intermediate_keeps_gradient_right() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 1
    y.mul_(3)
    y.add_(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0], rtol=1e-10, atol=1e-12)
    z = (x * 1).exp_()
    x.grad = None
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-10, atol=1e-12)


def test_inplace_on_adopted_output_is_caught() -> None:
    x = _leaf([1.0, 2.0])
    y = (x * 1).sigmoid_()  # y now is sigmoid's saved output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_second_backward_through_freed_graph_raises() -> None:
    x = _leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward_and_accumulates() -> None:
    x = _leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0], rtol=1e-10, atol=1e-12)


def test_grad_to_an_intermediate_keeps_the_graph_below_it() -> None:
    # autograd.grad(z, y) runs only the nodes between z and y (as torch's engine): y's own
    # node is not freed, so a later backward through it works
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    (gy,) = lucid.autograd.grad((y * 3).sum(), y)
    np.testing.assert_allclose(gy.numpy(), [3.0, 3.0], rtol=0, atol=0)
    (gx,) = lucid.autograd.grad((y * 2).sum(), x, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [4.0, 8.0], rtol=0, atol=0)
    (y**2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 32.0], rtol=0, atol=0)
    z = (y * 3).sum()
    lucid.autograd.grad(z, y)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()  # the nodes that ran were freed


def test_non_scalar_backward_needs_gradient() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        y.backward()
    y.backward(lucid.tensor([1.0, 10.0], dtype=lucid.float64))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0], rtol=1e-10, atol=1e-12)


def test_backward_gradient_shape_mismatch_raises() -> None:
    y = _leaf([1.0, 2.0]) * 2
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        y.backward(lucid.ones(3, dtype=lucid.float64))


def test_backward_on_tensor_without_grad_raises() -> None:
    with pytest.raises(RuntimeError, match="does not require grad"):
        lucid.ones(1).sum().backward()


def test_ten_thousand_op_chain() -> None:
    x = _leaf([1.0])
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    assert x.grad.item() == pytest.approx(1.0001**10_000, rel=1e-9, abs=1e-12)


def test_deep_chain_double_backward() -> None:
    def first_derivative(x0: float, create_graph: bool) -> tuple[lucid.Tensor, lucid.Tensor]:
        x = _leaf([x0])
        y = x
        for _ in range(500):
            y = y - 0.001 * y * y
        (g,) = lucid.autograd.grad(y.sum(), x, create_graph=create_graph)
        return x, g

    x, g = first_derivative(0.5, True)
    (gg,) = lucid.autograd.grad(g.sum(), x)
    h = 1e-5
    numeric = (first_derivative(0.5 + h, False)[1] - first_derivative(0.5 - h, False)[1]) / (2 * h)
    assert gg.item() == pytest.approx(numeric.item(), rel=1e-5, abs=1e-12)


# -- leaves, requires_grad, grad_fn ----------------------------------------------------------------
def test_leaf_flags_and_grad_fn() -> None:
    x = lucid.tensor([1.0, 2.0])
    assert x.is_leaf and not x.requires_grad and x.grad_fn is None
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    assert not y.is_leaf and y.grad_fn is not None and y.grad_fn.name == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name == "torch::autograd::AccumulateGrad"
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    d = y.detach()
    assert d.is_leaf and not d.requires_grad


def test_integer_tensors_cannot_require_grad() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.tensor([1, 2]).requires_grad_()


def test_ops_without_grad_inputs_do_not_record() -> None:
    x = lucid.tensor([1.0, 2.0])
    y = (x * 2).exp()
    assert y.grad_fn is None and not y.requires_grad


def test_comparisons_and_argmax_are_not_differentiable() -> None:
    x = _leaf([1.0, 3.0, 2.0])
    assert not (x > 1).requires_grad
    assert not x.argmax().requires_grad
    values, indices = x.max(dim=0)
    assert values.requires_grad and not indices.requires_grad
    assert not x.long().requires_grad


# -- hooks and retain_grad -------------------------------------------------------------------------
def test_hook_can_replace_the_gradient() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 10)
    seen = []
    x.register_hook(lambda g: seen.append(g.numpy().copy()))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(seen[0], [20.0, 20.0], rtol=1e-10, atol=1e-12)


def test_leaf_hook_replaces_accumulated_value_and_can_be_removed() -> None:
    x = _leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 0 + 7)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0, 7.0], rtol=1e-10, atol=1e-12)
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0], rtol=1e-10, atol=1e-12)


def test_retain_grad() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 3
    z = x * 4
    y.retain_grad()
    (y * y + z).sum().backward()
    assert y.retains_grad and not z.retains_grad
    np.testing.assert_allclose(y.grad.numpy(), [6.0, 12.0], rtol=1e-10, atol=1e-12)
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert z.grad is None


def _grad_reads(L: ModuleType) -> list[tuple[str, int]]:
    """Which ``.grad`` reads warn, and at which line (relative to this function's first)."""
    x = L.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    y.retain_grad()
    z.grad = L.ones(2)  # set by hand: no warning when read
    with L.no_grad():
        q = x * 2
    first = _grad_reads.__code__.co_firstlineno
    got = []
    for t in (x, y, z, q, x.detach(), x * 4):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t.grad  # noqa: B018
        got += [(str(r.message)[:50], r.lineno - first) for r in w]
    return got


def test_grad_of_a_non_leaf_warns() -> None:
    """Reading ``.grad`` of a non-leaf that does not retain it warns (torch's warning, at the
    reading line); leaves, retaining and hand-set non-leaves, and no-grad results do not."""
    got = _grad_reads(lucid)
    assert [m for m, _ in got] == ["The .grad attribute of a Tensor that is not a leaf"]
    assert got[0][1] == 13


def test_grad_setter_checks_what_it_is_given() -> None:
    """``t.grad = value`` refuses what torch refuses (a float set there used to fail only at
    the next backward's accumulation: the polynomial_autograd example sets ``a.grad = 0.``)."""
    x = lucid.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="^assigned grad expected to be a Tensor or None but "
                       "got grad of type float$"):  # fmt: skip
        x.grad = 0.0  # type: ignore[assignment]
    with pytest.raises(RuntimeError, match=r"^attempting to assign a gradient of size '\[3\]' to"
                       r" a tensor of size '\[2\]'\. Please ensure"):  # fmt: skip
        x.grad = lucid.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = lucid.ones(2, dtype=lucid.float64)
    with pytest.raises(RuntimeError, match="^can't assign Variable as its own grad$"):
        x.grad = x
    assert x.grad is None  # nothing was set
    x.grad = lucid.full((2,), 3.0)
    (x * 2).sum().backward()  # accumulates into the assigned gradient
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0], rtol=0, atol=0)
    x.grad = None
    assert x.grad is None


@pytest.mark.parity
def test_grad_setter_and_reads_parity() -> None:
    torch = pytest.importorskip("torch")
    assert _grad_reads(lucid) == _grad_reads(torch)

    def errors(L: ModuleType) -> list[str]:
        x = L.ones(2, requires_grad=True)
        got = []
        for g in (0.0, "a", 1, L.ones(3), L.ones(1), L.ones(2, 1), x):
            try:
                x.grad = g
                got.append("ok")
            except (TypeError, RuntimeError) as e:
                got.append(f"{type(e).__name__}: {e}")
        return got

    assert errors(lucid) == errors(torch)


# -- grad modes ------------------------------------------------------------------------------------
def test_no_grad_and_enable_grad_as_context_managers() -> None:
    x = _leaf([1.0])
    with lucid.no_grad():
        assert not lucid.is_grad_enabled()
        assert not (x * 2).requires_grad
        with lucid.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert lucid.is_grad_enabled()


def test_grad_modes_as_decorators() -> None:
    x = _leaf([1.0])

    @lucid.no_grad()
    def off() -> lucid.Tensor:
        return x * 2

    @lucid.enable_grad()
    def on() -> lucid.Tensor:
        return x * 2

    @lucid.set_grad_enabled(False)
    def off2() -> lucid.Tensor:
        return x * 2

    assert not off().requires_grad and not off2().requires_grad
    with lucid.no_grad():
        assert on().requires_grad
    assert lucid.is_grad_enabled()


def test_set_grad_enabled_function_and_context() -> None:
    x = _leaf([1.0])
    with lucid.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lucid.is_grad_enabled()
    lucid.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        lucid.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_grad_mode_restored_after_exception() -> None:
    with pytest.raises(ValueError):
        with lucid.no_grad():
            raise ValueError
    assert lucid.is_grad_enabled()


# -- autograd.grad and higher order ----------------------------------------------------------------
def test_autograd_grad_returns_without_accumulating() -> None:
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0, 4.0])
    (gx,) = lucid.autograd.grad((x * w).sum(), x)
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0], rtol=1e-10, atol=1e-12)
    assert x.grad is None and w.grad is None


def test_autograd_grad_unused_input() -> None:
    x, u = _leaf([1.0]), _leaf([2.0])
    with pytest.raises(RuntimeError, match="not have been used"):
        lucid.autograd.grad((x * 2).sum(), [x, u])
    gx, gu = lucid.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None and gx.item() == 2.0


def test_autograd_grad_with_respect_to_intermediate() -> None:
    x = _leaf([1.0, 2.0])
    y = x * x
    (gy,) = lucid.autograd.grad((y * 3).sum(), y)
    np.testing.assert_allclose(gy.numpy(), [3.0, 3.0], rtol=1e-10, atol=1e-12)


def test_hessian_vector_product_hand_derived() -> None:
    # f(x) = sum(x^3) + x0*x1  ->  H = diag(6x) + [[0,1],[1,0]]
    x = _leaf([1.0, 2.0])
    v = lucid.tensor([0.5, -1.0], dtype=lucid.float64)
    f = (x**3).sum() + x[0] * x[1]
    (g,) = lucid.autograd.grad(f, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [3 * 1 + 2, 3 * 4 + 1], rtol=1e-10, atol=1e-12)
    (hv,) = lucid.autograd.grad((g * v).sum(), x)
    hess = np.array([[6.0, 1.0], [1.0, 12.0]])
    np.testing.assert_allclose(hv.numpy(), hess @ np.array([0.5, -1.0]), rtol=1e-10, atol=1e-12)


def test_gradient_penalty_hand_derived() -> None:
    # critic(x) = sum(x @ w): d/dx = w per row, penalty = (||w|| - 1)^2,
    # d penalty / dw = 2 (||w|| - 1) w / ||w||.
    w_np = np.array([0.6, -1.2, 2.0])
    w = _leaf(w_np)
    x = lucid.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    (gx,) = lucid.autograd.grad((x @ w).sum(), x, create_graph=True)
    penalty = ((gx.norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    nw = np.linalg.norm(w_np)
    assert penalty.item() == pytest.approx((nw - 1) ** 2, rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), 2 * (nw - 1) * w_np / nw, rtol=1e-10, atol=1e-12)


def test_backward_create_graph_gives_differentiable_grad() -> None:
    x = _leaf([2.0])
    (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g is not None and g.requires_grad
    (gg,) = lucid.autograd.grad(g.sum(), x)
    assert gg.item() == pytest.approx(12.0, rel=1e-6, abs=1e-12)


# -- custom Function -------------------------------------------------------------------------------
def test_custom_function_needs_input_grad_and_saved_tensors() -> None:
    class ScaledMul(Function):
        forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

        @staticmethod
        def forward(ctx, a, b, scale):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            return ctx.xp.multiply(a, b) * scale

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            a, b = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False, False)
            return g * b * ctx.scale, None, None

    a = _leaf([1.0, 2.0])
    b = lucid.tensor([3.0, 4.0], dtype=lucid.float64)
    ScaledMul.apply(a, b, 2.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6.0, 8.0], rtol=1e-10, atol=1e-12)


def test_once_differentiable_refuses_double_backward() -> None:
    from lucid.autograd import DoubleBackwardError, once_differentiable

    class Fused(Function):
        forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            ctx.save_for_backward(a)
            return ctx.xp.multiply(a, a)

        @staticmethod
        @once_differentiable
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            (a,) = ctx.saved_tensors
            return g * 2 * a

    x = _leaf([1.0])
    Fused.apply(x).sum().backward()
    assert x.grad.item() == 2.0
    with pytest.raises(DoubleBackwardError):
        lucid.autograd.grad(Fused.apply(x).sum(), x, create_graph=True)


# -- in-place ops and version counters -------------------------------------------------------------
def test_inplace_on_leaf_requiring_grad_raises_outside_no_grad() -> None:
    w = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with lucid.no_grad():
        w.add_(1)
    np.testing.assert_allclose(w.detach().numpy(), [2.0, 3.0], rtol=1e-10, atol=1e-12)


def test_inplace_ops_values_and_version_bumps() -> None:
    t = lucid.tensor([1.0, 2.0, 3.0])
    ident = id(t)
    ops = [
        (lambda t: t.add_(1, alpha=2), [3.0, 4.0, 5.0]),
        (lambda t: t.sub_(1), [2.0, 3.0, 4.0]),
        (lambda t: t.mul_(2), [4.0, 6.0, 8.0]),
        (lambda t: t.div_(2), [2.0, 3.0, 4.0]),
        (lambda t: t.addcmul_(lucid.ones(3), lucid.full((3,), 2.0), value=0.5), [3.0, 4.0, 5.0]),
        (lambda t: t.addcdiv_(lucid.ones(3), lucid.full((3,), 2.0), value=2), [4.0, 5.0, 6.0]),
        (lambda t: t.lerp_(lucid.zeros(3), 0.5), [2.0, 2.5, 3.0]),
        (lambda t: t.clamp_(2.2, 2.8), [2.2, 2.5, 2.8]),
        (lambda t: t.clamp_(min=lucid.tensor([2.3, 2.0, 3.0])), [2.3, 2.5, 3.0]),
        (lambda t: t.copy_(lucid.tensor([7.0])), [7.0, 7.0, 7.0]),
        (lambda t: t.fill_(5), [5.0, 5.0, 5.0]),
        (lambda t: t.pow_(2), [25.0, 25.0, 25.0]),
        (lambda t: t.sqrt_(), [5.0, 5.0, 5.0]),
        (lambda t: t.zero_(), [0.0, 0.0, 0.0]),
    ]
    for i, (op, expected) in enumerate(ops):
        before = t._version
        assert op(t) is t
        assert t._version == before + 1, f"op {i} did not bump the version"
        np.testing.assert_allclose(t.numpy(), expected, rtol=1e-6, err_msg=f"op {i}", atol=1e-6)
    assert id(t) == ident and t.dtype is lucid.float32


def test_augmented_assignment_is_inplace() -> None:
    t = lucid.tensor([1.0, 2.0])
    data = t.array
    v = t._version
    t += 1
    t *= 3
    t -= 1
    t /= 2
    assert t.array is data and t._version == v + 4
    np.testing.assert_allclose(t.numpy(), [2.5, 4.0], rtol=1e-7, atol=1e-7)


def test_inplace_keeps_dtype_and_refuses_unsafe_cast() -> None:
    t = lucid.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast"):
        t.mul_(1.5)
    f = lucid.tensor([1.0, 2.0])
    f.add_(lucid.tensor([1, 1]))
    assert f.dtype is lucid.float32


def test_inplace_broadcast_shape_mismatch_raises() -> None:
    t = lucid.zeros(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        t.add_(lucid.zeros(2, 3))


def test_inplace_writes_through_shared_buffer() -> None:
    t = lucid.zeros(3)
    d = t.detach()
    t.add_(1)
    np.testing.assert_allclose(d.numpy(), [1.0, 1.0, 1.0], rtol=1e-7, atol=1e-7)
    assert d._version == t._version


def test_setitem_on_plain_tensor_and_on_graph() -> None:
    t = lucid.zeros(4)
    t[1:3] = 5.0
    t[lucid.tensor([0])] = lucid.tensor([2.0])
    np.testing.assert_allclose(t.numpy(), [2.0, 5.0, 5.0, 0.0], rtol=1e-7, atol=1e-7)
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 1
    y[0] = x[2] * 10
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.0, 11.0], rtol=1e-10, atol=1e-12)


def test_device_mismatch_error_is_clear() -> None:
    from lucid.backends import DeviceError

    with pytest.raises(DeviceError, match="unknown device"):
        lucid.zeros(2, device="nonexistent")


def test_views_share_the_version_counter() -> None:
    x = _leaf([1.0, 2.0, 3.0, 4.0])
    y = x.exp()  # exp saves its output
    v = y.reshape(2, 2)[0]
    assert v._version == y._version
    v.mul_(2)  # changes y's data through a view
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_a_view_of_a_leaf_requiring_grad_raises() -> None:
    w = _leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        w[0].add_(1)
    with lucid.no_grad():
        w[0].add_(1)
        w.view(2, 1).mul_(2)
    np.testing.assert_allclose(w.detach().numpy(), [4.0, 4.0], rtol=1e-10, atol=1e-12)
    assert w._version == 2


def test_advanced_index_result_is_a_copy() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0])
    y = x[[0, 1]]
    y.add_(10)
    assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0


def test_autograd_grad_runs_only_the_nodes_it_needs() -> None:
    calls: list[int] = []
    x = _leaf([1.0, 2.0])
    y = _counted_double(calls).apply(x)
    z = y.exp()
    (gy,) = lucid.autograd.grad(z.sum(), y, retain_graph=True)
    np.testing.assert_allclose(gy.numpy(), np.exp([2.0, 4.0]), rtol=1e-10, atol=1e-12)
    assert calls == []  # nothing upstream of y ran
    (gx,) = lucid.autograd.grad(z.sum(), x)
    assert calls == [1]
    np.testing.assert_allclose(gx.numpy(), 2 * np.exp([2.0, 4.0]), rtol=1e-10, atol=1e-12)


# -- gradients at ties and kinks (PyTorch's conventions) -------
def test_max_without_dim_splits_ties_evenly() -> None:
    x = _leaf([1.0, 3.0, 3.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5], rtol=1e-10, atol=1e-12)
    y = _leaf([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    lucid.amax(y, dim=1).sum().backward()
    np.testing.assert_allclose(
        y.grad.numpy(), [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]], rtol=1e-10, atol=1e-12
    )


def test_max_with_dim_sends_the_gradient_to_the_returned_index() -> None:
    x = _leaf([[1.0, 3.0, 3.0]])
    values, indices = lucid.max(x, dim=1)
    values.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 1.0, 0.0]], rtol=1e-10, atol=1e-12)
    assert indices.tolist() == [1]


def test_gradients_at_kinks() -> None:
    x = _leaf([0.0, 0.0, 0.0])
    (lucid.relu(x).sum() + lucid.abs(x).sum() + x.norm()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 0.0], rtol=1e-10, atol=1e-12)
    m = _leaf([1.0, 2.0])
    lucid.maximum(m, lucid.tensor([1.0, 0.0], dtype=lucid.float64)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), [0.5, 1.0], rtol=1e-10, atol=1e-12)
    c = _leaf([0.0, 1.0, 2.0])
    c.clamp(0.0, 1.0).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), [1.0, 1.0, 0.0], rtol=1e-10, atol=1e-12)


def test_autograd_backward_with_several_roots_and_inputs() -> None:
    x = _leaf([1.0, 2.0])
    w = _leaf([3.0])
    a, b = (x * w).sum(), (x * x).sum()
    lucid.autograd.backward([a, b], [lucid.tensor(1.0, dtype=lucid.float64), None])
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2.0, 3.0 + 4.0], rtol=1e-10, atol=1e-12)
    assert w.grad.item() == 3.0
    x.grad = w.grad = None
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.item() == 3.0


def test_grad_outputs_weight_the_vector_jacobian_product() -> None:
    x = _leaf([1.0, 2.0, 3.0])
    y = x * x
    v = lucid.tensor([1.0, 0.0, -1.0], dtype=lucid.float64)
    (g,) = lucid.autograd.grad(y, x, grad_outputs=v)
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, -6.0], rtol=1e-10, atol=1e-12)


def test_grad_mode_is_per_thread() -> None:
    import threading

    seen = []
    with lucid.no_grad():
        t = threading.Thread(target=lambda: seen.append(lucid.is_grad_enabled()))
        t.start()
        t.join()
        assert not lucid.is_grad_enabled()
    assert seen == [True]


def test_constant_written_in_place_cuts_the_gradient() -> None:
    x = _leaf([1.0, 2.0])
    y = x * 2
    y.fill_(3.0)
    z = x * 3
    z.copy_(lucid.tensor([5.0, 6.0]))
    (y.sum() + z.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0], rtol=1e-10, atol=1e-12)
    assert y.requires_grad and y.tolist() == [3.0, 3.0]


def test_inplace_on_an_indexed_view_updates_the_base_graph() -> None:
    x = _leaf([[1.0, -2.0], [3.0, -4.0]])
    h = x * 1
    h[:, 1].abs_()  # base h's graph now includes the abs of column 1
    h[0].zero_()
    (h * h).sum().backward()
    np.testing.assert_allclose(h.detach().numpy(), [[0.0, 0.0], [3.0, 4.0]], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0], [6.0, -8.0]], rtol=1e-10, atol=1e-12)


def test_observe_ops_sees_every_apply_with_or_without_grad() -> None:
    seen: list[tuple[str, object]] = []
    x = _leaf([1.0, -2.0])

    def note(cls: type, args: tuple[object, ...], kwargs: dict[str, object], out: object) -> None:
        seen.append((cls.__name__, out))

    with lucid.autograd.observe_ops(note):
        y = (x * 2).relu()
        with lucid.no_grad():
            z = x.exp()
    assert [name for name, _ in seen] == ["Mul", "Relu", "Exp"]
    assert seen[1][1] is y and seen[2][1] is z
    x.exp()  # outside the block nothing is reported
    assert len(seen) == 3 and not lucid.autograd.function._observers


def _autograd_signature_run(L: ModuleType) -> list[Any]:
    """torch.autograd.backward's ``grad_variables`` and grad's ``only_inputs`` (deprecated)
    and ``allow_unused=None`` (follows ``materialize_grads``), with torch's messages."""
    x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
    got: list[Any] = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        L.autograd.backward((x * 2).sum(), None, None, False, L.tensor(3.0))  # 5th: grad_variables
        got.append(x.grad.tolist())
        got.append(L.autograd.grad((x * 2).sum(), x, None, None, False, False)[0].tolist())
    got += [(r.category.__name__, str(r.message)) for r in w]
    got.append([g.tolist() for g in L.autograd.grad((x * 2).sum(), [x, y], materialize_grads=True)])
    for call in (
        lambda: L.autograd.grad((x * 2).sum(), [x, y]),
        lambda: L.autograd.grad((x * 2).sum(), [x, y], allow_unused=False, materialize_grads=True),
        lambda: L.autograd.backward((x * 2).sum(), L.tensor(1.0), grad_variables=L.tensor(1.0)),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # grad_variables' (checked above)
                call()
        except (RuntimeError, ValueError) as e:
            got.append((type(e).__name__, str(e)))
    return got


def test_autograd_backward_and_grad_take_torchs_deprecated_arguments() -> None:
    got = _autograd_signature_run(lucid)
    assert got[:2] == [[6.0, 6.0], [2.0, 2.0]]
    assert got[2][0] == got[3][0] == "FutureWarning"
    assert got[4] == [[2.0, 2.0], [0.0, 0.0]]
    assert got[5] == ("RuntimeError", "The differentiated Tensor at index 1 appears to not have "
                      "been used in the graph. Set allow_unused=True if this is the desired "
                      "behavior.")  # fmt: skip


@pytest.mark.parity
def test_autograd_backward_and_grad_arguments_parity() -> None:
    torch = pytest.importorskip("torch")
    assert _autograd_signature_run(lucid) == _autograd_signature_run(torch)
