"""The NumPy backend's short routes for tiny products and small softmax gradients give the
general routes' bits (a batch-1 model's per-step products, issue 30)."""

from __future__ import annotations

import numpy as np
import pytest

from lucid.backends._numpy import _gemm
from lucid.backends._numpy.kernels import softmax as K


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 2), (18, 185), (128, 185), (300, 400)])
def test_outer_products_take_the_outer_route(dtype: type, m: int, n: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, 1)).astype(dtype)
    b = rng.standard_normal((1, n)).astype(dtype)
    a[0, 0] = -0.0
    got = _gemm.matmul(a, b)
    assert got.dtype == dtype and got.shape == (m, n)
    assert got.tobytes() == _gemm._outer(a, b).tobytes()
    assert got.tobytes() == np.multiply(a, b).tobytes()  # one product per element


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("m", "k", "n"), [(1, 185, 128), (1, 128, 185), (4, 7, 3), (2, 1, 1)])
def test_tiny_products_are_numpys(dtype: type, m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype).T  # a weight's transpose, as a Linear's
    assert _gemm.matmul(a, b).tobytes() == np.matmul(a, b).tobytes()


def test_mixed_and_half_dtypes_keep_their_routes() -> None:
    a = np.ones((2, 1), np.float16)
    b = np.ones((1, 3), np.float16)
    assert _gemm.matmul(a, b).dtype == np.float16
    c = np.ones((2, 1), np.float32)
    d = np.ones((1, 3), np.float64)
    assert _gemm.matmul(c, d).dtype == np.float64
    with pytest.raises(ValueError):
        _gemm.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_small_products_never_pair() -> None:
    a = np.ones((1, 128), np.float32)
    w = np.ones((128, 185), np.float32)
    c = np.ones((128, 1), np.float32)
    d = np.ones((1, 185), np.float32)
    assert not _gemm._pairs(a, w) and not _gemm._pairs(c, d)
    assert _gemm._pair_budget(a, w, c, d) == 0
    assert _gemm.matmul_defer(a, w, c, d) is None
    first, second = _gemm.matmul_pair(a, w, c, d)
    assert first.tobytes() == np.matmul(a, w).tobytes()
    assert second.tobytes() == _gemm._outer(c, d).tobytes()
    big = np.ones((256, 256), np.float32)
    assert _gemm._pairs(big, big)  # 2 * 256**3 FLOPs: still paired


@pytest.mark.parametrize("shape", [(1, 18), (1, 2), (3, 5), (768, 65), (100, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_one_hot_log_softmax_gradient(shape: tuple[int, int], dtype: type) -> None:
    """A small one-hot ``g`` (nll_loss's) takes the dense formula now: its bits are the sparse
    path's (-0.0 values, -inf log-probabilities and sums of either sign included)."""
    rng = np.random.default_rng(2)
    m, c = shape
    for trial in range(6):
        x = (rng.standard_normal(shape) * 10).astype(dtype)
        top = x.max(1, keepdims=True)
        y = (x - top - np.log(np.exp(x - top).sum(1, keepdims=True))).astype(dtype)
        if trial % 3 == 0:
            y[0, 0] = -np.inf
        cols = rng.integers(0, c, m)
        values = (rng.standard_normal(m) / m).astype(dtype) if trial % 2 else (
            -rng.random(m) / m).astype(dtype)  # fmt: skip
        if trial == 4:
            values[0] = -0.0
        g = K.CpuOneHotRows.forward(None, (m, c), cols, values)
        sparse = K._one_hot_log_softmax_grad(g, y, 1)
        got = K.CpuLogSoftmaxGrad.forward(None, g, y, 1)
        assert sparse is not None and got is not None
        assert got.dtype == sparse.dtype and got.shape == sparse.shape
        assert got.tobytes() == sparse.tobytes()
