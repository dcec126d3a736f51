"""``autograd.graph.register_multi_grad_hook`` (modes 'all' and 'any'), ``GradientEdge`` /
``get_gradient_edge`` as ``autograd.grad`` inputs, ``autograd.grad(is_grads_batched=True)``
and the engine's ``queue_callback``; against PyTorch where it is importable."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import engine
from lucid.autograd.graph import GradientEdge, get_gradient_edge, register_multi_grad_hook

D = lucid.float64


def _leaves(n: int) -> list[lucid.Tensor]:
    rng = np.random.default_rng(0)
    return [lucid.tensor(rng.standard_normal(3), dtype=D, requires_grad=True) for _ in range(n)]


def _values(gs: Any) -> list[Any]:
    return [None if g is None else g.numpy().round(12).tolist() for g in gs]


def test_multi_grad_hook_all_fires_once_per_pass_with_none_for_unused() -> None:
    a, b, c = _leaves(3)
    seen: list[Any] = []
    handle = register_multi_grad_hook((a, b, c), lambda gs: seen.append(_values(gs)))
    (a * 3 + b * b).sum().backward()
    assert seen == [[[3.0] * 3, (2 * b).detach().numpy().round(12).tolist(), None]]
    (c * 2).sum().backward()
    assert len(seen) == 2 and seen[1][:2] == [None, None]
    lucid.autograd.grad((a * 5).sum(), [a])  # autograd.grad passes count too
    assert seen[2] == [[5.0] * 3, None, None]
    (a.detach() * 2).sum  # a pass that touches none of them: no call
    handle.remove()
    (a * 3).sum().backward()
    assert len(seen) == 3


def test_multi_grad_hook_any_fires_with_the_first_gradient() -> None:
    a, b = _leaves(2)
    y = a * b
    seen: list[Any] = []
    register_multi_grad_hook((y, a), lambda g: seen.append(g.numpy().tolist()), mode="any")
    (y * 4).sum().backward()
    assert seen == [[4.0] * 3]  # y's gradient comes first; a's in the same pass is ignored
    (a * 2).sum().backward()
    assert seen[1] == [2.0] * 3
    with pytest.raises(ValueError, match="one of \\('all', 'any'\\)"):
        register_multi_grad_hook((a,), lambda g: None, mode="some")


def test_queue_callback_runs_after_the_leaves_are_final() -> None:
    (a,) = _leaves(1)
    order: list[str] = []

    def hook(g: lucid.Tensor) -> None:
        order.append("hook")
        engine.queue_callback(lambda: order.append(f"done grad={a.grad is not None}"))

    a.register_hook(hook)
    (a * 2).sum().backward()
    assert order == ["hook", "done grad=True"]
    with pytest.raises(RuntimeError, match="during a backward pass"):
        engine.queue_callback(lambda: None)


def test_gradient_edges_are_grad_inputs() -> None:
    (x,) = _leaves(1)
    y = x.exp()
    edge = get_gradient_edge(y)
    assert isinstance(edge, GradientEdge) and edge.node is y.grad_fn and edge.output_nr == 0
    (gy,) = lucid.autograd.grad((y * y).sum(), edge, retain_graph=True)
    np.testing.assert_allclose(gy.numpy(), 2 * y.detach().numpy(), rtol=1e-12, atol=1e-12)
    gx, gy2 = lucid.autograd.grad((y * y).sum(), [get_gradient_edge(x), edge])
    np.testing.assert_allclose(
        gx.numpy(), 2 * np.exp(2 * x.detach().numpy()), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(gy2.numpy(), gy.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="does not require gradients"):
        get_gradient_edge(lucid.ones(2))


def test_is_grads_batched_gives_one_vjp_per_row() -> None:
    (x,) = _leaves(1)
    w = lucid.tensor(np.arange(12.0).reshape(4, 3), dtype=D)
    out = (w @ x).tanh()
    eye = lucid.eye(4, dtype=D)
    (jac,) = lucid.autograd.grad(out, x, eye, retain_graph=True, is_grads_batched=True)
    want = np.stack(
        [lucid.autograd.grad(out[i], x, retain_graph=True)[0].numpy() for i in range(4)]
    )
    np.testing.assert_allclose(jac.numpy(), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="leading batch dim"):
        lucid.autograd.grad(out, x, grad_outputs=lucid.tensor(1.0, dtype=D), is_grads_batched=True)


@pytest.mark.parity
def test_multi_grad_hook_and_batched_grads_match_torch() -> None:
    torch = pytest.importorskip("torch")
    seen: dict[str, list[Any]] = {"lucid": [], "torch": []}
    for name, lib in (("lucid", lucid), ("torch", torch)):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0], requires_grad=True)
        graph = lucid.autograd.graph if name == "lucid" else torch.autograd.graph
        handle = graph.register_multi_grad_hook(
            (a, b, c), lambda gs, n=name: seen[n].append(_values([g.detach() if g is not None
                                                                 else None for g in gs]))
        )  # fmt: skip
        (a * b).sum().backward()
        handle.remove()
        out = a * lib.tensor([2.0, 3.0])
        (jac,) = lib.autograd.grad(out, a, grad_outputs=lib.eye(2), is_grads_batched=True)
        seen[name].append(jac.detach().numpy().tolist())
    assert seen["lucid"] == seen["torch"]
