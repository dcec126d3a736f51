"""The fast paths of a generated token's sampling (issue 30): ``topk`` over the rows of a 2-D
tensor, a same-shape boolean mask's index and ``multinomial``'s weight checks give what the
general paths give, and raise as they do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("dim", [-1, 1])
def test_topk_rows_match_general_path(rows: int, dim: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, (rows, 17)).astype(np.float32)  # ties: the stable order
    a[0, 3] = np.nan
    x = lucid.from_numpy(a)
    for k in (0, 1, 5, 17):
        v, i = lucid.topk(x, k, dim=dim)
        gv, gi = lucid.topk(x.unsqueeze(0), k, dim=2)  # 3-D: the general path
        np.testing.assert_allclose(v.numpy(), gv.numpy()[0], rtol=0, atol=0, equal_nan=True)
        np.testing.assert_array_equal(i.numpy(), gi.numpy()[0])
        assert i.dtype is lucid.int64 and v.shape == (rows, k)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        lucid.topk(x, 18)


def test_topk_rows_grad_flows() -> None:
    x = lucid.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
    v, _ = lucid.topk(x, 2)
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 1.0, 1.0]], rtol=0, atol=0)


@pytest.mark.parametrize("shape", [(1, 9), (9,), (2, 3, 4)])
def test_mask_setitem_and_getitem(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    x = lucid.from_numpy(a.copy())
    mask = x < 0.2
    np.testing.assert_allclose(x[mask].numpy(), a[a < 0.2], rtol=0, atol=0)
    x[mask] = -float("inf")
    want = a.copy()
    want[a < 0.2] = -np.inf
    np.testing.assert_allclose(x.numpy(), want, rtol=0, atol=0)


def test_mask_of_another_shape_still_raises() -> None:
    x = lucid.zeros(2, 3)
    with pytest.raises(IndexError, match="shape of the mask"):
        x[lucid.ones(2, 2, dtype=lucid.bool)] = 1.0
    x[lucid.tensor([True, False])] = 1.0  # a mask over the first dim only: the general path
    np.testing.assert_allclose(x.numpy(), [[1, 1, 1], [0, 0, 0]], rtol=0, atol=0)


def test_multinomial_weight_checks() -> None:
    lucid.manual_seed(0)
    p = lucid.softmax(lucid.randn(2, 65), dim=-1)
    idx = lucid.multinomial(p, 1)
    assert idx.shape == (2, 1) and idx.dtype is lucid.int64
    big = lucid.tensor([[60000.0, 60000.0, 0.0]], dtype=lucid.float16)  # the sum overflows
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = lucid.multinomial(big, 1)
    assert int(got.item()) in (0, 1)
    with pytest.raises(RuntimeError, match="inf"):
        lucid.multinomial(lucid.tensor([[1.0, float("inf")]]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        lucid.multinomial(lucid.tensor([[0.0, 0.0]]), 1)
    with pytest.raises(RuntimeError, match="inf"):
        lucid.multinomial(lucid.tensor([[1.0, float("nan")]]), 1)


def test_attention_heads_skip_the_blas_setting_only_when_small() -> None:
    from lucid.backends._numpy import _compiled
    from lucid.backends._numpy.kernels import attention as ka

    if not _compiled.available("_sdpa_jit"):
        pytest.skip("numba kernels not available")

    def arrays(b: int, h: int, length: int, e: int) -> tuple[np.ndarray, ...]:
        q = np.zeros((b, h, length, e), np.float32)
        return q, q, q, np.zeros((b, h, length, length), np.float32)

    assert ka._one_thread_anyway(*arrays(1, 4, 64, 32))  # a generated token's heads
    assert not ka._one_thread_anyway(*arrays(1, 4, 128, 32))  # products OpenBLAS may thread
    assert not ka._one_thread_anyway(*arrays(4, 4, 64, 32))  # heads split over threads
    assert ka._one_thread_anyway(*arrays(1, 1, 64, 32))  # one head: never split
