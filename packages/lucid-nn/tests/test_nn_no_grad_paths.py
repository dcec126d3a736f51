"""The no-grad fast paths of linear, layer_norm and scaled_dot_product_attention (issue 30):
where nothing records, each computes on the arrays without a Function call. Each must give
the op path's bits, and step aside where something watches the ops or the input is unusual."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd.function import observe_ops, records_nothing

RNG = np.random.default_rng(30)


def _t(*shape: int, dtype: type = np.float32) -> lucid.Tensor:
    return lucid.from_numpy(RNG.standard_normal(shape).astype(dtype))


def _both(fn, *tensors: lucid.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """``fn`` without grad (the fast path) and recorded (inputs requiring grad: the op path)."""
    with lucid.no_grad():
        assert records_nothing()
        fast = fn(*tensors).numpy()
    leaves = [t.detach().requires_grad_(True) for t in tensors]
    recorded = fn(*leaves)
    assert recorded.grad_fn is not None
    return fast, recorded.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape", [(1, 128), (40, 128), (1, 16, 128), (1, 64, 128), (2, 16, 128), (3, 5, 128)]
)
@pytest.mark.parametrize("bias", [False, True])
def test_linear_no_grad_same_bits(dtype: type, shape: tuple[int, ...], bias: bool) -> None:
    x, w = _t(*shape, dtype=dtype), _t(384, 128, dtype=dtype)
    args = (x, w, _t(384, dtype=dtype)) if bias else (x, w)
    fast, recorded = _both(F.linear, *args)
    np.testing.assert_array_equal(fast, recorded)
    assert fast.shape == recorded.shape and fast.dtype == recorded.dtype


def test_linear_no_grad_transposed_product_behaves() -> None:
    # 16-32 rows: the product as (W @ x^T)^T, copied row-major (the recorded path's layout, so
    # later products round the same); views, reshapes and in-place ops on the result give the
    # recorded path's values
    x, w = _t(1, 32, 128), _t(96, 128)
    with lucid.no_grad():
        y = F.linear(x, w)
        assert y.is_contiguous() and y.numpy().flags.c_contiguous
        q, k, v = y.split(32, dim=2)
        heads = q.view(1, 32, 4, 8).transpose(1, 2)
        y2 = y * 2
        y.add_(1.0)
    expected = F.linear(x, w.detach().requires_grad_(True)).detach().numpy()
    # heads is a view of y (as in torch): it sees the in-place add
    np.testing.assert_array_equal(heads.numpy(), (expected[..., :32] + 1).reshape(1, 32, 4, 8)
                                  .transpose(0, 2, 1, 3))  # fmt: skip
    np.testing.assert_array_equal(y2.numpy(), expected * 2)
    np.testing.assert_array_equal(y.numpy(), expected + 1)


def test_linear_no_grad_errors_as_the_op() -> None:
    x, w, b = _t(2, 8), _t(4, 8), _t(3)
    with pytest.raises(RuntimeError) as recorded:
        F.linear(x, w.requires_grad_(True), b)
    with lucid.no_grad(), pytest.raises(RuntimeError) as fast:
        F.linear(x, w, b)
    assert str(fast.value) == str(recorded.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
def test_layer_norm_no_grad_same_bits(dtype: type, affine: str) -> None:
    x = _t(1, 64, 128, dtype=dtype) * 3 + 1
    w = None if affine == "none" else _t(128, dtype=dtype)
    b = _t(128, dtype=dtype) if affine == "both" else None
    with lucid.no_grad():
        fast = F.layer_norm(x, (128,), w, b).numpy()
    xr = x.detach().requires_grad_(True)
    recorded = F.layer_norm(xr, (128,), w, b).detach().numpy()
    np.testing.assert_array_equal(fast, recorded)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length", [1, 7, 64])
def test_sdpa_no_grad_same_bits(causal: bool, length: int) -> None:
    q, k, v = (_t(1, 4, length, 32) for _ in range(3))
    fast, recorded = _both(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal), q, k, v
    )
    np.testing.assert_array_equal(fast, recorded)


def test_no_grad_paths_step_aside_when_ops_are_watched() -> None:
    seen: list[str] = []
    x, w = _t(1, 16, 32), _t(48, 32)
    with lucid.no_grad(), observe_ops(lambda cls, *_: seen.append(cls.__name__)):
        assert not records_nothing()
        y = F.linear(x, w)
        F.layer_norm(y, (48,))
        q = y[..., :32].reshape(1, 2, 16, 16)
        F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert "_Linear" in seen and "_LayerNorm" in seen
    assert any("Attention" in name or "Softmax" in name for name in seen)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_embedding_no_grad_same_rows(index_dtype: type) -> None:
    w = _t(65, 16)
    idx = lucid.from_numpy(RNG.integers(0, 65, (2, 7)).astype(index_dtype))
    with lucid.no_grad():
        fast = F.embedding(idx, w)
    recorded = F.embedding(idx, w.detach().requires_grad_(True))
    assert fast.dtype is recorded.dtype and fast.shape == recorded.shape
    np.testing.assert_array_equal(fast.numpy(), recorded.detach().numpy())
    with lucid.no_grad(), pytest.raises(IndexError, match="index out of range"):
        F.embedding(lucid.tensor([[0, 65]]), w)
