"""The direct routes of tiny ops (``autograd.function.applies_directly``: ``cat``,
``softmax``/``log_softmax``, ``zeros``; a char-RNN step's per-call cost) give the bits, nodes
and errors of ``Function.apply``'s path, and step aside where the ops must be seen."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import observe_ops
from lucid.autograd.function import applies_directly


def _seen(fn: Any) -> tuple[Any, list[str]]:
    """``fn()`` inside an ``observe_ops`` block (the full path) and the ops it saw."""
    names: list[str] = []
    with observe_ops(lambda cls, *_: names.append(cls.__name__)):
        out = fn()
    return out, names


def _grads(fn: Any, *inputs: Any) -> list[np.ndarray]:
    out = fn(*inputs)
    weights = lucid.tensor(np.random.default_rng(5).standard_normal(tuple(out.shape)),
                           dtype=out.dtype)  # fmt: skip
    (out * weights).sum().backward()
    return [t.grad.numpy() for t in inputs]


def _leaves(*shapes: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [lucid.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
            for s in shapes]  # fmt: skip


def test_nothing_watches_by_default() -> None:
    assert applies_directly()
    with observe_ops(lambda *_: None):
        assert not applies_directly()
    with lucid.autograd.detect_anomaly():
        assert not applies_directly()


@pytest.mark.parametrize("dim", [1, -1, 0])
def test_cat_direct_matches_the_observed_path(dim: int) -> None:
    shapes = [(2, 3), (2, 4)] if dim != 0 else [(3, 4), (1, 4)]
    direct = _leaves(*shapes)
    watched = [t.detach().clone().requires_grad_() for t in direct]
    y = lucid.cat(direct, dim)
    z, names = _seen(lambda: lucid.cat(watched, dim))
    assert names == ["Cat"]
    np.testing.assert_array_equal(y.detach().numpy(), z.detach().numpy())
    assert type(y.grad_fn).__name__ == "Cat" and y.grad_fn.name() == "CatBackward0"
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["NoneType"] + [
        "AccumulateGrad"
    ] * 2
    for a, b in zip(_grads(lambda *t: lucid.cat(t, dim), *direct),
                    _grads(lambda *t: lucid.cat(t, dim), *watched)):  # fmt: skip
        np.testing.assert_array_equal(a, b)


def test_cat_direct_without_grad_and_of_three_and_of_a_list() -> None:
    a, b, c = (lucid.ones(1, 2) * k for k in (1, 2, 3))
    y = lucid.cat([a, b, c], 1)
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_array_equal(y.numpy(), [[1, 1, 2, 2, 3, 3]])
    with lucid.no_grad():
        g = lucid.cat((a, lucid.ones(1, 1, requires_grad=True)), 1)
    assert g.grad_fn is None and not g.requires_grad
    y2 = lucid.cat((a, b.requires_grad_(), c), 0)
    assert y2.grad_fn.needs_input_grad == (False, False, True, False)


def test_cat_mixed_dtypes_errors_and_empty_take_the_full_path() -> None:
    a = lucid.ones(2, 2)
    assert lucid.cat((a, lucid.ones(2, 1, dtype=lucid.float64)), 1).dtype is lucid.float64
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 1"):
        lucid.cat((a, lucid.ones(3, 1)), 1)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        lucid.cat((a, lucid.ones(2)), 0)
    with pytest.raises(IndexError):
        lucid.cat((a, a), 2)
    assert lucid.cat((lucid.ones(0), lucid.ones(3)), 0).shape == (3,)
    out = lucid.empty(4, 2)
    assert lucid.cat((a, a), 0, out=out) is out


def test_cat_direct_under_anomaly_mode_keeps_the_trace() -> None:
    a, b = _leaves((1, 2), (1, 3))
    with lucid.autograd.detect_anomaly():
        y = lucid.cat((a, b), 1)
    assert y.grad_fn._trace


@pytest.mark.parity
def test_cat_and_log_softmax_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x, h = _leaves((1, 57), (1, 128), seed=3)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    th = torch.tensor(h.detach().numpy(), requires_grad=True)
    w = np.random.default_rng(4).standard_normal((1, 185)).astype(np.float32)
    (lucid.log_softmax(lucid.cat((x, h), 1), dim=1) * lucid.tensor(w)).sum().backward()
    (torch.log_softmax(torch.cat((tx, th), 1), dim=1) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.grad.numpy(), th.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_cat_and_softmax_finite_differences_in_float64() -> None:
    x, h = _leaves((2, 3), (2, 4), dtype=np.float64, seed=6)
    assert lucid.autograd.gradcheck(lambda a, b: lucid.cat((a, b), 1), (x, h))
    assert lucid.autograd.gradcheck(lambda a: lucid.log_softmax(a, dim=1), (x,))
    assert lucid.autograd.gradcheck(lambda a: lucid.softmax(a, dim=0), (h,))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((1, 18), 1), ((3, 5), 0), ((2, 3, 4), -1), ((7,), 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_softmax_direct_matches_the_observed_path(
    name: str, shape: tuple[int, ...], dim: int, dtype: Any
) -> None:
    op = getattr(lucid, name)
    (x,) = _leaves(shape, dtype=dtype, seed=len(shape))
    xw = x.detach().clone().requires_grad_()
    y = op(x, dim=dim)
    z, names = _seen(lambda: op(xw, dim=dim))
    assert names == ["Softmax" if name == "softmax" else "LogSoftmax"]
    np.testing.assert_array_equal(y.detach().numpy(), z.detach().numpy())
    assert y.grad_fn.name() == z.grad_fn.name()
    np.testing.assert_array_equal(_grads(lambda t: op(t, dim=dim), x)[0],
                                  _grads(lambda t: op(t, dim=dim), xw)[0])  # fmt: skip


def test_log_softmax_direct_saves_its_output_as_the_op_does() -> None:
    (x,) = _leaves((1, 6))
    y = lucid.log_softmax(x, dim=1)
    y2 = lucid.log_softmax(x, dim=1)
    y2.mul_(2.0)  # changes the saved output: backward must refuse, as on the op path
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.sum().backward()
    packed: list[Any] = []
    with lucid.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y3 = lucid.log_softmax(x, dim=1)
    assert len(packed) == 1 and np.array_equal(packed[0].numpy(), y3.detach().numpy())
    y3.sum().backward()
    assert x.grad is not None
    assert y.grad_fn is not None and y.requires_grad


def test_softmax_direct_without_grad() -> None:
    x = lucid.tensor([[1.0, 2.0, 3.0]])
    y = lucid.softmax(x, dim=1)
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_allclose(y.sum().item(), 1.0, rtol=1e-6, atol=1e-6)
    with lucid.no_grad():
        assert lucid.log_softmax(x.requires_grad_(), dim=1).grad_fn is None


def test_zeros_direct_matches_the_factory() -> None:
    for args in ((1, 128), ((2, 3),), (0, 4), (5,)):
        z = lucid.zeros(*args)
        ref = lucid.zeros(*args, dtype=lucid.get_default_dtype())
        assert z.dtype is ref.dtype and z.shape == ref.shape and not z.requires_grad
        np.testing.assert_array_equal(z.numpy(), ref.numpy())
        assert not np.signbit(z.numpy()).any()
    old = lucid.get_default_dtype()
    lucid.set_default_dtype(lucid.float64)
    try:
        assert lucid.zeros(2, 2).dtype is lucid.float64
    finally:
        lucid.set_default_dtype(old)
    assert lucid.zeros(()).shape == ()
    assert lucid.zeros(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="negative dimension"):
        lucid.zeros(2, -1)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        lucid.zeros(2.0, 3)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        lucid.zeros(True, 3)


@pytest.mark.parametrize("count", [1, 2, 3])
def test_saved_tensors_of_one_two_and_three_items(count: int) -> None:
    from lucid.autograd import Function

    class Keep(Function):
        forward_on_arrays = True

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(*([x] * count))
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            saved = ctx.saved_tensors
            assert len(saved) == count and all(s is saved[0] for s in saved)
            return g * 2

    x = lucid.ones(3, requires_grad=True)
    Keep.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])
