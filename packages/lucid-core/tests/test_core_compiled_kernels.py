"""The kernels compiled with numba (``lucid-core[numba]``) against the NumPy code they replace.

Winograd's transforms do the NumPy code's adds in the same order, so every result must be equal
bit for bit: the transforms alone, and whole convolutions (forward, input and weight gradients)
with the compiled transforms on and off. Batch norm's elementwise passes are bit-identical too;
its reductions sum in float64 where NumPy's path sums float32 blocks, so they agree to float32
rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from lucid.backends import get_backend
from lucid.backends._numpy.kernels import _compiled, batchnorm, winograd
from lucid.kernels import conv_geometry

pytest.importorskip("numba")

F2 = winograd.F2


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A context that runs the NumPy transforms."""

    class _Off:
        def __enter__(self) -> None:
            monkeypatch.setattr(_compiled, "NUMBA", False)

        def __exit__(self, *exc: object) -> None:
            monkeypatch.setattr(_compiled, "NUMBA", True)

    return _Off()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, tiles, c", [(1, (1, 1), 1), (2, (3, 5), 7), (3, (8, 8), 64)])
def test_compiled_transforms_equal_numpy_bit_for_bit(numpy_only, dtype, n, tiles, c) -> None:  # type: ignore[no-untyped-def]
    assert winograd._jit(F2, np.dtype(dtype)) is not None
    rng = np.random.default_rng(n * 100 + c)
    th, tw = tiles
    xpad = rng.standard_normal((n, 2 * th + 2, 2 * tw + 2, c)).astype(dtype)
    dy = rng.standard_normal((n, 2 * th, 2 * tw, c)).astype(dtype)
    prod = rng.standard_normal((16, n * th * tw, c)).astype(dtype)
    out_jit = np.full((n, th, 2, tw, 2, c), np.nan, dtype)
    out_np = np.full((n, th, 2, tw, 2, c), np.nan, dtype)
    v_jit = winograd._input_transform(F2, xpad, tiles)
    g_jit = winograd._output_grad_transform(F2, dy, tiles)
    winograd._output_transform(F2, prod, out_jit)
    with numpy_only:
        assert winograd._jit(F2, np.dtype(dtype)) is None
        v_np = winograd._input_transform(F2, xpad, tiles)
        g_np = winograd._output_grad_transform(F2, dy, tiles)
        winograd._output_transform(F2, prod, out_np)
    np.testing.assert_array_equal(v_jit, v_np)
    np.testing.assert_array_equal(g_jit, g_np)
    np.testing.assert_array_equal(out_jit, out_np)


@pytest.mark.parametrize("size, pad", [(8, 1), (7, 1), (6, 0), (5, 2)])
def test_whole_convolutions_equal_with_the_compiled_transforms_on_and_off(
    numpy_only, size: int, pad: int
) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(size)
    x = rng.standard_normal((3, 16, size, size)).astype(np.float32)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    g = conv_geometry((size, size), (3, 3), (1, 1), ((pad, pad), (pad, pad)), (1, 1), 1)
    backend = get_backend("cpu")
    y = winograd.conv_forward(backend, x, w, b, g)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    dx = winograd.conv_input_grad(backend, dy, w, g)
    dw = winograd.conv_weight_grad(backend, x, dy, g)
    with numpy_only:
        np.testing.assert_array_equal(y, winograd.conv_forward(backend, x, w, b, g))
        np.testing.assert_array_equal(dx, winograd.conv_input_grad(backend, dy, w, g))
        np.testing.assert_array_equal(dw, winograd.conv_weight_grad(backend, x, dy, g))


def test_other_tilings_and_dtypes_use_numpy() -> None:
    assert winograd._jit(winograd.F4, np.dtype(np.float32)) is None
    assert winograd._jit(F2, np.dtype(np.float16)) is None


def test_a_numba_that_fails_falls_back_to_numpy_with_one_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken:
        calls = 0

        @staticmethod
        def input_transform(*args: object) -> None:
            Broken.calls += 1
            raise RuntimeError("LLVM ERROR: cannot select")

    rng = np.random.default_rng(3)
    xpad = rng.standard_normal((2, 6, 6, 5)).astype(np.float32)
    monkeypatch.setattr(_compiled, "NUMBA", False)
    want = winograd._input_transform(F2, xpad, (2, 2))
    monkeypatch.setattr(_compiled, "NUMBA", True)
    monkeypatch.setitem(_compiled._modules, "_winograd_jit", Broken)
    with pytest.warns(
        RuntimeWarning, match="numba could not run the compiled kernel _winograd_jit"
    ):
        got = winograd._input_transform(F2, xpad, (2, 2))
    np.testing.assert_array_equal(got, want)
    assert winograd._jit(F2, np.dtype(np.float32)) is None  # NumPy's from now on
    np.testing.assert_array_equal(winograd._input_transform(F2, xpad, (2, 2)), want)
    assert Broken.calls == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 8, 6, 6), (3, 64, 5, 5), (64, 10)])
def test_batch_norm_passes_equal_numpy(numpy_only, dtype, shape) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(len(shape) * 10 + shape[1])
    c = shape[1]
    # channels-last memory (a convolution's output), seen as (N, C, ...)
    xl = (3 + 2 * rng.standard_normal((shape[0], *shape[2:], c))).astype(dtype)
    x = np.moveaxis(xl, -1, 1)
    dyl = rng.standard_normal(xl.shape).astype(dtype)
    dy_ = np.moveaxis(dyl, -1, 1)
    lay = batchnorm._Layout(x, True)
    assert lay.k and batchnorm._jit(lay) is not None
    vec = [rng.standard_normal(c) for _ in range(4)]
    rtol, atol = (1e-5, 1e-6) if dtype == np.float32 else (1e-12, 1e-12)

    def passes() -> list[np.ndarray]:
        mean, var = batchnorm.batch_stats(lay)
        y = batchnorm.normalize(lay, vec[0], vec[1])
        gb, gc = batchnorm.grad_sums(lay, lay.view(dy_), vec[2])
        dx = batchnorm.input_grad(lay, lay.view(dy_), vec[0], vec[1], vec[3])
        return [mean, var, y, gb, gc, dx]

    got = passes()
    with numpy_only:
        assert batchnorm._jit(lay) is None
        want = passes()
    for name, g, w in zip(["mean", "var", "y", "gb", "gc", "dx"], got, want):
        if name in ("y", "dx"):
            np.testing.assert_array_equal(g, w, err_msg=name)  # elementwise: bit for bit
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)


# -- max pooling and im2col/col2im (the compiled 2-D loops) -----------------------------------
def _layout(x: np.ndarray, layout: str) -> np.ndarray:
    """``x`` (N, C, H, W) in the memory order ``layout`` names, as the same values."""
    if layout == "channels_last":
        return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if layout == "other":  # (C, N, H, W) in memory: neither; the NumPy code takes it
        return np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    return np.ascontiguousarray(x)


POOLS = [  # shape, kernel, stride, padding, dilation, ceil_mode
    ((4, 6, 28, 28), (2, 2), (2, 2), (0, 0), (1, 1), False),  # LeNet-5's
    ((2, 5, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), True),  # overlapping, ceil mode overhang
    ((2, 3, 8, 7), (3, 2), (1, 1), (1, 0), (2, 1), False),  # dilated, overlapping
    ((1, 1, 5, 5), (1, 1), (1, 1), (0, 0), (1, 1), False),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["channels_last", "channels_first", "other"])
@pytest.mark.parametrize("shape, k, s, p, d, ceil", POOLS)
def test_compiled_max_pool_equals_numpy(numpy_only, dtype, layout, shape, k, s, p, d, ceil) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels.pool import CpuMaxPool
    from lucid.kernels import MaxPoolArrays, pool_geometry

    backend = get_backend("cpu")
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0, 0, :3] = [np.nan, 5.0, np.nan]  # NaN propagates; the first NaN's tap stays
    x[-1, -1, 1, 1] = x[-1, -1, 1, 2] = 9.0  # ties: the first tap wins
    x = _layout(x, layout)
    g = pool_geometry(shape[2:], k, s, p, d, ceil)
    out, idx = CpuMaxPool.forward(backend, x, g, True)
    grad = rng.standard_normal(out.shape).astype(dtype)
    dx = CpuMaxPool.scatter(backend, grad, idx, shape, g)
    want_out, want_idx = MaxPoolArrays.forward(backend, x, g, True)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(idx, want_idx)
    assert idx.dtype == want_idx.dtype
    np.testing.assert_array_equal(dx, MaxPoolArrays.scatter(backend, grad, want_idx, shape, g))
    assert CpuMaxPool.forward(backend, x, g, False)[1] is None
    with numpy_only:  # the NumPy backend's kernel without numba is core's code
        np.testing.assert_array_equal(CpuMaxPool.forward(backend, x, g, True)[0], want_out)


def test_max_pool_of_a_batch_split_over_threads_equals_one_block(numpy_only) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import pool
    from lucid.kernels import MaxPoolArrays, pool_geometry

    backend = get_backend("cpu")
    x = _layout(np.random.default_rng(0).standard_normal((64, 32, 32, 32)).astype(np.float32),
                "channels_last")  # fmt: skip
    assert x.size >= pool._PARALLEL_ELEMENTS
    g = pool_geometry((32, 32), (2, 2), (2, 2), (0, 0), (1, 1), False)
    out, idx = pool.CpuMaxPool.forward(backend, x, g, True)
    want_out, want_idx = MaxPoolArrays.forward(backend, x, g, True)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(idx, want_idx)


CONVS = [  # x shape, C_out, kernel, stride, padding, dilation
    ((4, 6, 14, 14), 16, (5, 5), (1, 1), (0, 0), (1, 1)),  # LeNet-5's second
    ((2, 3, 9, 8), 5, (3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 4, 11, 10), 3, (3, 2), (1, 2), (2, 1), (2, 2)),  # dilated: taps one by one
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, cout, k, s, p, d", CONVS)
def test_compiled_im2col_and_col2im_match_numpy(numpy_only, dtype, shape, cout, k, s, p, d) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import im2col as cpu
    from lucid.kernels import channels_last, im2col

    backend = get_backend("cpu")
    rng = np.random.default_rng(sum(shape) + cout)
    x = _layout(rng.standard_normal(shape).astype(dtype), "channels_last")
    w = rng.standard_normal((cout, shape[1], *k)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    g = conv_geometry(shape[2:], k, s, tuple((q, q) for q in p), d, 1)
    assert cpu._jit(x, shape[1], g) is not None
    xl = channels_last(x, np)
    np.testing.assert_array_equal(cpu.col_matrix(backend, xl, g), im2col(backend, xl, g))
    y = cpu.conv_forward(backend, x, w, b, g)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = cpu.conv_input_grad(backend, dy, w, g)
    dw = cpu.conv_weight_grad(backend, x, dy, g)
    with numpy_only:
        assert cpu._jit(x, shape[1], g) is None
        np.testing.assert_array_equal(y, cpu.conv_forward(backend, x, w, b, g))
        tol = 1e-5 if dtype == np.float32 else 1e-12  # col2im sums overlapping taps in row order
        np.testing.assert_allclose(dx, cpu.conv_input_grad(backend, dy, w, g), rtol=tol, atol=tol)
        np.testing.assert_array_equal(dw, cpu.conv_weight_grad(backend, x, dy, g))


def test_one_input_channel_and_groups_keep_numpy_im2col() -> None:
    from lucid.backends._numpy.kernels import im2col as cpu

    x = np.zeros((2, 1, 8, 8), np.float32)
    g = conv_geometry((8, 8), (3, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    assert cpu._jit(x, 1, g) is None
    g2 = conv_geometry((8, 8), (3, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), 2)
    assert cpu._jit(x, 4, g2) is None
    assert cpu._jit(x.astype(np.float16), 4, g) is None


def test_pools_numba_does_not_compile_use_numpy() -> None:
    from lucid.backends._numpy.kernels import pool
    from lucid.kernels import pool_geometry

    g = pool_geometry((8, 8), (2, 2), (2, 2), (0, 0), (1, 1), False)
    assert pool._jit(np.zeros((1, 1, 8, 8), np.float32), g) is not None
    assert pool._jit(np.zeros((1, 1, 8, 8), np.float16), g) is None
    assert pool._jit(np.zeros((1, 1, 8, 8), np.int32), g) is None
    g1 = pool_geometry((8,), (2,), (2,), (0,), (1,), False)
    assert pool._jit(np.zeros((1, 1, 8), np.float32), g1) is None


def test_a_kernel_size_asked_for_by_two_threads_at_once_is_made_once() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from lucid.backends._numpy.kernels import _winograd_jit
    from lucid.backends._numpy.kernels import im2col as cpu
    from lucid.kernels import channels_last, im2col

    backend = get_backend("cpu")
    x = _layout(np.random.default_rng(9).standard_normal((2, 3, 9, 8)).astype(np.float32),
                "channels_last")  # fmt: skip
    g = conv_geometry((9, 8), (4, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    xl = channels_last(x, np)
    with ThreadPoolExecutor(4) as pool:
        cols = list(pool.map(lambda _: cpu.col_matrix(backend, xl, g), range(4)))
    for col in cols:
        np.testing.assert_array_equal(col, im2col(backend, xl, g))
    assert "im2col_4x1" in _winograd_jit._specialised


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "shape, cout, k, p, bias",
    [((3, 1, 28, 28), 6, (5, 5), (2, 2), True),  # LeNet-5's first layer
     ((2, 1, 9, 8), 4, (3, 3), (1, 1), False),
     ((2, 1, 7, 6), 3, (2, 3), (0, 1), True),
     ((1, 1, 4, 4), 2, (4, 4), (0, 0), True)],
)  # fmt: skip
def test_one_input_channel_convolution_compiled_matches_numpy(  # type: ignore[no-untyped-def]
    numpy_only, dtype, shape, cout, k, p, bias
) -> None:
    from lucid.backends._numpy.kernels import im2col as cpu

    backend = get_backend("cpu")
    rng = np.random.default_rng(sum(shape) + cout)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((cout, 1, *k)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype) if bias else None
    g = conv_geometry(shape[2:], k, (1, 1), tuple((q, q) for q in p), (1, 1), 1)
    assert cpu._one_channel(x, g)
    keep: dict[object, object] = {}
    y = cpu.conv_forward(backend, x, w, b, g, keep)
    assert not keep  # no column matrix was built, so none is kept for the weight gradient
    with numpy_only:
        assert not cpu._one_channel(x, g)
        tol = 1e-5 if dtype == np.float32 else 1e-12  # the taps sum in another order than GEMM's
        np.testing.assert_allclose(y, cpu.conv_forward(backend, x, w, b, g), rtol=tol, atol=tol)
    strided = conv_geometry(shape[2:], k, (2, 2), tuple((q, q) for q in p), (1, 1), 1)
    assert not cpu._one_channel(x, strided)
