"""The per-op fast paths of issue 30 give the bits of the op path they skip, and step aside
where the ops must be seen (``observe_ops``) or recorded (``create_graph``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import observe_ops


def _weights_used_per_step(create_graph: bool) -> tuple[Any, Any]:
    """A weight and an input used at each of 7 steps (their gradients are summed 7 times),
    through ``cat`` and a product as a char-RNN's cell."""
    rng = np.random.default_rng(0)
    w = lucid.tensor(rng.standard_normal((5, 8)).astype(np.float32), requires_grad=True)
    x0 = lucid.tensor(rng.standard_normal((1, 3)).astype(np.float32), requires_grad=True)
    h = lucid.zeros(1, 5)
    for _ in range(7):
        h = (lucid.cat((x0, h), 1) @ w.mT).tanh()
    gw, gx = lucid.autograd.grad(h.sum(), (w, x0), create_graph=create_graph)
    return gw.detach().numpy(), gx.detach().numpy()


def test_array_sums_and_cat_backward_match_the_op_path_bit_for_bit() -> None:
    fast = _weights_used_per_step(False)
    ops = _weights_used_per_step(True)  # create_graph: every sum and split is an op
    for a, b in zip(fast, ops):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(fast[0]).all() and np.abs(fast[0]).sum() > 0


def test_cat_gradients_look_as_the_split_op_made_them() -> None:
    a = lucid.ones(2, 3, requires_grad=True)
    b = lucid.ones(2, 2, requires_grad=True) * 1
    b.retain_grad()
    y = lucid.cat((a, b), 1)
    (y * lucid.arange(10.0).reshape(2, 5)).sum().backward()
    assert a.grad is not None and a.grad.is_contiguous()  # a leaf's grad is its own copy
    np.testing.assert_array_equal(a.grad.numpy(), [[0, 1, 2], [5, 6, 7]])
    assert b.grad is not None and b.grad.is_contiguous()  # as the Split op's path gives
    np.testing.assert_array_equal(b.grad.numpy(), [[3, 4], [8, 9]])


def test_backward_sums_and_splits_are_ops_while_observed() -> None:
    w = lucid.ones(2, 3, requires_grad=True)
    x = lucid.ones(1, 1, requires_grad=True)
    seen: list[str] = []
    y = lucid.cat((x, x), 1) @ w.mT[:2]
    loss = (y * w.sum()).sum() + (w * 2).sum()
    with observe_ops(lambda cls, *_: seen.append(cls.__name__)):
        loss.backward()
    assert "Split" in seen and "Add" in seen


@pytest.mark.parametrize("largest", [True, False])
def test_topk_and_sort_values_without_grad_are_gathers(largest: bool) -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((3, 9)).astype(np.float32)
    data[0, 2] = data[0, 5]  # a tie keeps its order
    data[1, 4] = np.nan  # NaN sorts as the largest
    x = lucid.tensor(data)
    v, i = lucid.topk(x, 4, dim=1, largest=largest)
    np.testing.assert_array_equal(v.numpy(), np.take_along_axis(data, i.numpy(), axis=1))
    s = lucid.sort(x, dim=0, descending=largest)
    np.testing.assert_array_equal(s.values.numpy(), np.take_along_axis(data, s.indices.numpy(), 0))
    seen: list[str] = []
    with observe_ops(lambda cls, *_: seen.append(cls.__name__)):
        lucid.topk(x, 2)
    assert "Gather" in seen
    g = lucid.tensor(data, requires_grad=True)
    assert lucid.topk(g, 2).values.grad_fn is not None


def test_multinomial_still_refuses_bad_weights() -> None:
    for bad, match in (([[1.0, float("nan")]], "inf"), ([[1.0, -1.0]], "element < 0"),
                       ([[1.0, float("inf")]], "inf"), ([[0.0, 0.0]], "sum of probabilities"),
                       ([[1.0, 0.0, 0.0]], "not enough")):  # fmt: skip
        with pytest.raises(RuntimeError, match=match):
            lucid.multinomial(lucid.tensor(bad), 2 if "enough" in match else 1)
    # a row whose sum overflows float32 is still valid (the full checks decide)
    big = lucid.tensor([[3e38, 3e38, 0.0]])
    assert lucid.multinomial(big, 2).tolist()[0] in ([0, 1], [1, 0])


def test_index_range_errors_name_the_bad_index() -> None:
    nn = pytest.importorskip("lucid.nn")  # lucid-core's tests also run without lucid-nn
    w = lucid.randn(5, 3)
    for bad in (7, -1):
        with pytest.raises(IndexError, match=f"got {bad}"):
            nn.functional.embedding(lucid.tensor([[1, bad]]), w)


def test_is_contiguous_of_views() -> None:
    x = lucid.randn(2, 3, 4)
    assert x.is_contiguous() and x[:, :2].contiguous().is_contiguous()
    t = x.transpose(1, 2)
    assert not t.is_contiguous() and t.contiguous().is_contiguous()
    assert t.contiguous().view(2, 12).shape == (2, 12)
    assert x[:, :, :2].stride() == (12, 4, 1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x[:, :, :2].view(12)


def test_one_row_softmax_has_the_bits_of_the_rows_path() -> None:
    rng = np.random.default_rng(2)
    data = rng.standard_normal((3, 65)).astype(np.float32) * 4
    data[0, :40] = -np.inf  # a generated token's masked logits
    many = lucid.softmax(lucid.tensor(data), dim=-1).numpy()  # the axis-and-keepdims passes
    for r in range(3):
        one = lucid.softmax(lucid.tensor(data[r : r + 1]), dim=-1).numpy()  # the 1-row path
        np.testing.assert_array_equal(one, many[r : r + 1])
        np.testing.assert_array_equal(lucid.softmax(lucid.tensor(data[r]), dim=0).numpy(), many[r])
    log = lucid.log_softmax(lucid.tensor(data[1:2]), dim=-1).numpy()
    np.testing.assert_array_equal(log, lucid.log_softmax(lucid.tensor(data), dim=-1).numpy()[1:2])


def test_one_draw_multinomial_is_the_first_of_the_sorted_draws() -> None:
    rng = np.random.default_rng(3)
    w = rng.random((4, 65)).astype(np.float32)
    w[1, ::2] = 0.0  # zero weights: infinite keys, never drawn
    w[2, :] = 0.0
    w[2, 7:12] = 1.0  # five equal weights left
    p = lucid.tensor(w)
    for seed in range(20):
        lucid.manual_seed(seed)
        one = lucid.multinomial(p, 1).numpy()  # argmin of the keys
        lucid.manual_seed(seed)
        many = lucid.multinomial(p, 5).numpy()  # the same uniforms, sorted keys
        np.testing.assert_array_equal(one, many[:, :1])
        assert one.dtype == np.int64 and one.shape == (4, 1)
        assert (w[np.arange(4), one[:, 0]] > 0).all()
    lucid.manual_seed(0)
    flat = lucid.multinomial(lucid.tensor(w[0]), 1)
    assert flat.shape == (1,) and flat.dtype == lucid.int64
    only = np.zeros((1, 65), np.float32)
    only[0, 9] = 0.5
    assert lucid.multinomial(lucid.tensor(only), 1).tolist() == [[9]]
