"""ReLU's gradient kernel (``kernels.RELU_GRAD`` on NumPy): the compiled pass
(``lucid-core[numba]``) gives NumPy's ``g * (out > 0)`` bit for bit, in g's memory order, for
every layout it takes and every one it hands back to NumPy; double backward and autograd see
the same op."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backends import cpu
from lucid.backends._numpy.kernels import relu
from lucid.kernels import RELU_GRAD

pytest.importorskip("numba")

_CPU = lucid.backends.get_backend("cpu")


def _ref(g: np.ndarray, out: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # inf * 0 (the ops run under the same state)
        return np.multiply(g, np.greater(out, 0))


def _channels_last(a: np.ndarray) -> np.ndarray:
    """``a`` laid out as a convolution's output: dense, not in index order."""
    return np.transpose(np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1))), (0, 3, 1, 2))


def _cases(rng: np.random.Generator, dtype: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    shape = (8, 16, 20, 20)  # 51,200 elements: the compiled pass; > 2 blocks on every core
    g = rng.standard_normal(shape).astype(dtype)
    out = np.maximum(rng.standard_normal(shape), 0).astype(dtype)
    g.flat[:4] = [np.inf, -np.inf, np.nan, -0.0]  # NumPy's bits: inf * 0 is nan, -0.0 kept
    out.flat[:4] = [0.0, 1.0, 0.0, 2.0]
    cl, cl_out = _channels_last(g), _channels_last(out)
    return [
        ("contiguous", g, out),
        ("channels-last", cl, cl_out),
        ("mixed layouts", g, cl_out),  # NumPy's path
        ("strided", g[:, ::2], out[:, ::2]),  # NumPy's path
        ("small", g[:1, :1], out[:1, :1]),  # NumPy's path
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_pass_equals_numpy_bit_for_bit(dtype: str) -> None:
    rng = np.random.default_rng(0)
    for name, g, out in _cases(rng, dtype):
        with np.errstate(invalid="ignore"):
            res = relu.CpuReluGrad.forward(_CPU, g, out)
        ref = _ref(g, out)
        assert res.dtype == ref.dtype, name
        np.testing.assert_array_equal(res, ref, err_msg=name)
        assert np.array_equal(np.signbit(res), np.signbit(ref)), name
        assert res.strides == ref.strides, name  # g's memory order, as NumPy's multiply gives


@pytest.mark.skipif(not cpu.numba_enabled, reason="the compiled kernels are off (LUCID_NUMBA=0)")
def test_the_compiled_pass_is_what_runs_for_dense_float_arrays() -> None:
    rng = np.random.default_rng(1)
    g = rng.standard_normal((4, 64, 16, 16)).astype(np.float32)
    out = rng.standard_normal((4, 64, 16, 16)).astype(np.float32)
    assert relu._fused(g, out) is not None
    assert relu._fused(_channels_last(g), _channels_last(out)) is not None
    assert relu._fused(g, out.astype(np.float64)) is None  # mixed dtypes: NumPy's promotion
    assert relu._fused(g.astype(np.float16), out.astype(np.float16)) is None


def test_without_numba_numpys_expression_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lucid.backends.cpu, "numba_enabled", False)
    g = np.ones((64, 512), np.float32)
    out = np.linspace(-1, 1, 64 * 512, dtype=np.float32).reshape(64, 512)
    assert relu._fused(g, out) is None
    np.testing.assert_array_equal(relu.CpuReluGrad.forward(_CPU, g, out), _ref(g, out))


def test_relu_gradients_through_autograd_match_numpy() -> None:
    assert RELU_GRAD in lucid.backends.get_backend("cpu").kernels
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 32, 16, 16))
    x = lucid.tensor(a, requires_grad=True)
    y = lucid.relu(x)
    (gx,) = lucid.autograd.grad((y * y).sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), 2 * np.maximum(a, 0), rtol=1e-12, atol=1e-12)
    # double backward: d/dx sum(gx * w) = 2 w (x > 0), the same masked op again
    w = rng.standard_normal(a.shape)
    (ggx,) = lucid.autograd.grad((gx * lucid.tensor(w)).sum(), x)
    np.testing.assert_allclose(ggx.numpy(), 2 * w * (a > 0), rtol=1e-12, atol=1e-12)
