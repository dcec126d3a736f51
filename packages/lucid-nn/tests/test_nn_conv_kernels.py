"""The NumPy backend's convolution kernels against lucid.nn's reference im2col + GEMM.

Both implement ``lucid.kernels.CONV_ARRAYS``; the reference is the oracle. Each geometry runs
forward, input gradient (= transposed convolution), weight gradient and bias sum through both,
in float32 and float64, with the chunked / threaded paths forced on as well.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import kernels
from lucid.backends import blas_threads, get_backend
from lucid.nn.functional._im2col import ReferenceConv

# (batch, C_in, C_out, spatial size, kernel, stride, padding pairs, dilation, groups)
GEOMETRIES = {
    "1d": (3, 4, 6, (11,), (3,), (2,), ((1, 2),), (1,), 1),
    "2d": (2, 3, 5, (9, 8), (3, 2), (1, 1), ((1, 1), (0, 1)), (1, 1), 1),
    "2d-strided-dilated": (2, 4, 4, (12, 11), (3, 3), (2, 3), ((2, 2), (1, 1)), (2, 1), 1),
    "2d-groups": (2, 6, 4, (7, 7), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2),
    "2d-depthwise": (3, 5, 5, (8, 9), (3, 3), (2, 1), ((1, 1), (1, 1)), (1, 2), 5),
    "2d-wide": (2, 40, 8, (6, 6), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    "3d": (2, 2, 3, (5, 6, 4), (2, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (1, 0)), (1, 1, 2), 1),
    "empty-batch": (0, 3, 4, (6, 6), (3, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), 1),
}
TOL = {np.float32: (1e-4, 1e-5), np.float64: (1e-11, 1e-12)}  # (rtol, atol)


def _case(name: str, dtype: type) -> tuple[object, ...]:
    n, cin, cout, size, k, s, pads, d, groups = GEOMETRIES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    g = kernels.conv_geometry(size, k, s, pads, d, groups)
    x = rng.standard_normal((n, cin, *size)).astype(dtype)
    w = rng.standard_normal((cout, cin // groups, *k)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    dy = rng.standard_normal((n, cout, *g.out_size)).astype(dtype)
    return g, x, w, b, dy


@pytest.fixture(params=[False, True], ids=["inline", "threaded"])
def cpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> object:
    """The NumPy backend; ``threaded`` forces two workers and tiny chunks."""
    if request.param:
        from lucid.backends._numpy.kernels import im2col

        monkeypatch.setattr(blas_threads, "budget", lambda: 2)
        monkeypatch.setattr(im2col, "_CHUNK_BYTES", 1 << 10)
        monkeypatch.setattr("lucid.backends._numpy._parallel.PARALLEL_FLOPS", 0.0)
    return get_backend("cpu")


def test_the_numpy_backend_registers_its_conv_kernel_under_the_contract() -> None:
    backend = get_backend("cpu")
    fast = backend.kernels[kernels.CONV_ARRAYS]
    assert fast is not ReferenceConv
    for contract, impl in backend.kernels.items():
        assert contract in kernels.CONTRACTS
        contract.check(impl)
    kernels.CONV_ARRAYS.check(ReferenceConv)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(GEOMETRIES))
def test_fast_kernels_match_the_reference(cpu: object, name: str, dtype: type) -> None:
    fast = kernels.CONV_ARRAYS.get(cpu, ReferenceConv)  # type: ignore[arg-type]
    g, x, w, b, dy = _case(name, dtype)
    rtol, atol = TOL[dtype]
    keep: dict[object, object] = {}
    for bias in (None, b):
        want = ReferenceConv.forward(cpu, x, w, bias, g, None)
        got = fast.forward(cpu, x, w, bias, g, keep)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    want_dx = ReferenceConv.input_grad(cpu, dy, w, g)
    np.testing.assert_allclose(fast.input_grad(cpu, dy, w, g), want_dx, rtol=rtol, atol=atol)
    want_dw = ReferenceConv.weight_grad(cpu, x, dy, g, None)
    for kept in (None, keep):  # recomputed columns, and the forward's kept columns
        got_dw = fast.weight_grad(cpu, x, dy, g, kept)
        np.testing.assert_allclose(got_dw, want_dw, rtol=rtol, atol=atol)
    want_db = ReferenceConv.channel_sum(cpu, dy)
    np.testing.assert_allclose(fast.channel_sum(cpu, dy), want_db, rtol=rtol, atol=atol)


def _with_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(get_backend("cpu").kernels, kernels.CONV_ARRAYS, ReferenceConv)


@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "conv_transpose"])
def test_double_backward_matches_through_either_kernel(
    monkeypatch: pytest.MonkeyPatch, transposed: bool
) -> None:
    """The Functions compose the kernel's arrays: second-order gradients agree as well."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 4, 6, 6))
    wa = rng.standard_normal((4, 2, 3, 3))

    def grads() -> list[np.ndarray]:
        x = lucid.tensor(a, requires_grad=True)
        w = lucid.tensor(wa, requires_grad=True)
        if transposed:
            y = F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2)
        else:
            y = F.conv2d(x, w, stride=1, padding=1, dilation=1, groups=2)
        gx, gw = lucid.autograd.grad((y * y).sum(), [x, w], create_graph=True)
        ggx, ggw = lucid.autograd.grad((gx * gx).sum() + gw.sum(), [x, w])
        return [t.detach().numpy() for t in (y, gx, gw, ggx, ggw)]

    fast = grads()
    _with_reference(monkeypatch)
    for got, want in zip(fast, grads()):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
