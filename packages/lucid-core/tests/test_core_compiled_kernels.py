"""The kernels compiled with numba (``lucid-core[numba]``) against the NumPy code they replace.

Winograd's transforms do the NumPy code's adds in the same order, so every result must be equal
bit for bit: the transforms alone, and whole convolutions (forward, input and weight gradients)
with the compiled transforms on and off. Batch norm's elementwise passes are bit-identical too;
its reductions sum in float64 where NumPy's path sums float32 blocks, so they agree to float32
rounding.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import pytest

import lucid
from lucid.backends import cpu, get_backend
from lucid.backends._numpy import _compiled, _gemm, _parallel
from lucid.backends._numpy.kernels import batchnorm, winograd
from lucid.kernels import conv_geometry

pytest.importorskip("numba")
if not cpu.numba_enabled:  # LUCID_NUMBA=0: these tests compare the compiled passes with NumPy's
    pytest.skip("the compiled kernels are switched off (LUCID_NUMBA=0)", allow_module_level=True)

F2 = winograd.F2


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A context that runs the NumPy transforms."""

    class _Off:
        def __enter__(self) -> None:
            monkeypatch.setattr(cpu, "numba_enabled", False)

        def __exit__(self, *exc: object) -> None:
            monkeypatch.setattr(cpu, "numba_enabled", True)

    return _Off()


@pytest.mark.parametrize("f", [F2, winograd.F4], ids=["F2", "F4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, tiles, c", [(1, (1, 1), 1), (2, (3, 5), 7), (3, (8, 8), 64)])
def test_compiled_transforms_equal_numpy_bit_for_bit(numpy_only, f, dtype, n, tiles, c) -> None:  # type: ignore[no-untyped-def]
    """F(2x2, 3x3)'s hand-unrolled transforms and F(4x4, 3x3)'s generated ones."""
    assert winograd._jit(f, np.dtype(dtype)) is not None
    rng = np.random.default_rng(n * 100 + c)
    th, tw = tiles
    m, t = f.m, f.t
    xpad = rng.standard_normal((n, m * th + 2, m * tw + 2, c)).astype(dtype)
    dy = rng.standard_normal((n, m * th, m * tw, c)).astype(dtype)
    prod = rng.standard_normal((t * t, n * th * tw, c)).astype(dtype)
    out_jit = np.full((n, th, m, tw, m, c), np.nan, dtype)
    out_np = np.full((n, th, m, tw, m, c), np.nan, dtype)
    v_jit = winograd._input_transform(f, xpad, tiles)
    g_jit = winograd._output_grad_transform(f, dy, tiles)
    winograd._output_transform(f, prod, out_jit)
    with numpy_only:
        assert winograd._jit(f, np.dtype(dtype)) is None
        v_np = winograd._input_transform(f, xpad, tiles)
        g_np = winograd._output_grad_transform(f, dy, tiles)
        winograd._output_transform(f, prod, out_np)
    np.testing.assert_array_equal(v_jit, v_np)
    np.testing.assert_array_equal(g_jit, g_np)
    np.testing.assert_array_equal(out_jit, out_np)


@pytest.mark.parametrize("tiling", ["F2", "F4"])
@pytest.mark.parametrize("size, pad", [(8, 1), (7, 1), (6, 0), (5, 2)])
def test_whole_convolutions_equal_with_the_compiled_transforms_on_and_off(
    numpy_only, monkeypatch, size: int, pad: int, tiling: str
) -> None:  # type: ignore[no-untyped-def]
    """The same tiling with and without numba: bit for bit. (Left to choose, the compiled path
    takes F(4x4, 3x3) for outputs of 8 and more, NumPy's F(2x2, 3x3) everywhere.)"""
    monkeypatch.setattr(cpu, "winograd_tiling", tiling)
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


def test_other_dtypes_use_numpy() -> None:
    assert winograd._jit(F2, np.dtype(np.float16)) is None
    assert winograd._jit(winograd.F4, np.dtype(np.float16)) is None


def test_auto_tiling_takes_f4_where_compiled_and_big_enough(numpy_only) -> None:  # type: ignore[no-untyped-def]
    def geo(size: int):  # type: ignore[no-untyped-def]
        return conv_geometry((size, size), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)

    assert cpu.winograd_tiling == "auto"
    assert winograd.tiling(geo(32)) is winograd.F4 and winograd.tiling(geo(8)) is winograd.F4
    assert winograd.tiling(geo(4)) is F2  # too few tiles to pay for F4's transforms
    assert winograd.tiling(geo(12)) is winograd.F4
    assert winograd.tiling(geo(10)) is F2  # not a whole number of 4x4 tiles
    with numpy_only:  # F4's NumPy transforms measured slower than F2's: F2 without numba
        assert winograd.tiling(geo(32)) is F2


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
    monkeypatch.setattr(cpu, "numba_enabled", False)
    want = winograd._input_transform(F2, xpad, (2, 2))
    monkeypatch.setattr(cpu, "numba_enabled", True)
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


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Compiled passes split over two of numba's threads from any size (where it can: a
    thread-safe layer), and a ``threads_used`` list of what each pass asked for."""
    from lucid.backends._numpy import _numba

    used: list[int] = []
    real = _numba.split_threads

    def spy(elements: int) -> int:
        used.append(real(elements))
        return used[-1]

    monkeypatch.setattr(_numba, "SPLIT_ELEMENTS", 0)
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(_numba, "split_threads", spy)  # ``_numba.run``'s
    for mod in ("_im2col_jit", "_gemm_jit"):  # every pass that asks
        monkeypatch.setattr(f"lucid.backends._numpy.kernels.{mod}.split_threads", spy)
    return used


def test_max_pool_of_a_batch_split_over_threads_equals_one_block(split) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import pool
    from lucid.kernels import MaxPoolArrays, pool_geometry

    backend = get_backend("cpu")
    x = _layout(np.random.default_rng(0).standard_normal((7, 5, 12, 12)).astype(np.float32),
                "channels_last")  # fmt: skip
    g = pool_geometry((12, 12), (3, 3), (2, 2), (1, 1), (1, 1), False)  # overlapping windows
    out, idx = pool.CpuMaxPool.forward(backend, x, g, True)
    dy = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    dx = pool.CpuMaxPool.scatter(backend, dy, idx, x.shape, g)
    assert split[:2] == [min(2, split[0]), min(2, split[0])]
    want_out, want_idx = MaxPoolArrays.forward(backend, x, g, True)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(dx, MaxPoolArrays.scatter(backend, dy, want_idx, x.shape, g))


def test_split_passes_equal_the_serial_ones_bit_for_bit(split) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import _im2col_jit

    rng = np.random.default_rng(3)
    grid = rng.standard_normal((5, 9, 9 * 3)).astype(np.float32)
    col = np.empty((5 * 25, 9 * 3), np.float32)
    _im2col_jit.im2col(3, 3, grid, 1, 1, 1, 1, 5, 5, col)
    back = np.zeros_like(grid)
    _im2col_jit.col2im(3, 3, col, 1, 1, 1, 1, 5, 5, back)
    xflat = rng.standard_normal((5, 12 * 12)).astype(np.float32)
    w = rng.standard_normal((4, 9)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    planes = np.empty((5, 4, 9 * 12 + 10), np.float32)
    out = np.empty((5, 10, 10, 4), np.float32)
    _im2col_jit.conv_one_channel(3, 3, xflat, 12, w, b, planes, out)
    assert len(split) == 3 and split[0] >= 1
    split.clear()
    _parallel.workers = lambda: 1  # type: ignore[assignment]  (undone by monkeypatch)
    col1, back1, out1 = np.empty_like(col), np.zeros_like(grid), np.empty_like(out)
    _im2col_jit.im2col(3, 3, grid, 1, 1, 1, 1, 5, 5, col1)
    _im2col_jit.col2im(3, 3, col1, 1, 1, 1, 1, 5, 5, back1)
    _im2col_jit.conv_one_channel(3, 3, xflat, 12, w, b, np.empty_like(planes), out1)
    assert split == [1, 1, 1]
    np.testing.assert_array_equal(col, col1)
    np.testing.assert_array_equal(back, back1)
    np.testing.assert_array_equal(out, out1)


def test_no_split_in_a_forked_child_or_after_openblas_ran_last(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy import _numba

    layer = _numba.thread_layer
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(layer, "pid", None)
    monkeypatch.setattr(layer, "ok", None)
    cores = _numba.numba.config.NUMBA_NUM_THREADS
    assert _numba.split_threads(1 << 20) == min(2, cores)
    assert _numba.split_threads(10) == 1  # too small to pay for the fork-join
    _parallel.blas_threads.ran(_parallel.OPENBLAS)  # OpenBLAS's threads ran since numba's split
    assert _numba.split_threads(1 << 20) == 1
    _parallel.blas_threads.pool(2)  # the pool's threads do not spin: still OpenBLAS's after
    assert _numba.split_threads(1 << 20) == 1
    _parallel.blas_threads.ran(_parallel.NUMBA)  # (a split, as ``run_split`` records it)
    assert _numba.split_threads(1 << 20) == min(2, cores)
    monkeypatch.setattr(layer, "pid", -1)  # as after a fork
    monkeypatch.setattr(layer, "ok", True)
    assert _numba.split_threads(1 << 20) == 1
    monkeypatch.setattr(layer, "pid", None)
    monkeypatch.setattr(layer, "ok", False)  # the workqueue layer
    assert _numba.split_threads(1 << 20) == 1


@pytest.mark.parametrize("preset", [None, "ACTIVE"])
@pytest.mark.parametrize("quiet", [False, True])
def test_numbas_threads_sleep_unless_the_user_chose_a_policy(preset, quiet, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Before the first split starts numba's OpenMP runtime (which reads the variables once),
    # lucid asks for sleeping threads on a loaded machine and for a short spin on a quiet one
    # (docs/performance.md); a policy already set is kept. Once numba's threads have started,
    # the variables lucid set are taken out again (child processes decide for themselves).
    import os

    from lucid.backends._numpy import _numba

    monkeypatch.setattr(_numba, "_machine_quiet", lambda: quiet)
    monkeypatch.setattr(_numba.omp_threads, "spins", None)
    monkeypatch.setattr(_numba, "_gnu_openmp_loaded", lambda: False)
    monkeypatch.setattr(_numba, "_set_for_openmp", [])
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)

    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(_numba.thread_layer, "pid", None)
    monkeypatch.setattr(_numba.thread_layer, "ok", None)
    if preset is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", preset)
    _numba.split_threads(1 << 20)
    if preset is not None:
        assert os.environ["OMP_WAIT_POLICY"] == preset and "GOMP_SPINCOUNT" not in os.environ
        assert _numba._set_for_openmp == []
    elif quiet:
        assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
        assert os.environ["GOMP_SPINCOUNT"] == str(_numba.SPIN_COUNT)
        assert _numba.omp_threads.spins is True
    else:
        assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE" and "GOMP_SPINCOUNT" not in os.environ
        assert _numba.omp_threads.spins is False
    _numba._openmp_started()
    assert os.environ.get("OMP_WAIT_POLICY") == preset and "GOMP_SPINCOUNT" not in os.environ


@pytest.mark.parametrize(
    ("policy", "spin_count", "loaded", "spins"),
    [
        (None, None, False, False),  # lucid's passive default takes effect
        (None, None, True, True),  # torch loaded GNU OpenMP first: GNU's spinning default
        ("PASSIVE", None, True, False),
        ("active", None, False, True),
        (None, "20000", False, True),  # a spin count wins over any policy
        (None, "0", True, True),
    ],
)
def test_whether_numbas_openmp_threads_will_spin(  # type: ignore[no-untyped-def]
    policy, spin_count, loaded, spins, monkeypatch
) -> None:
    # GNU OpenMP reads its policy once, when it loads: lucid's default only counts where it
    # is set before (docs/performance.md, "A shared OpenMP runtime").
    from lucid.backends._numpy import _numba

    for name, value in (("OMP_WAIT_POLICY", policy), ("GOMP_SPINCOUNT", spin_count)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(_numba, "_gnu_openmp_loaded", lambda: loaded)
    monkeypatch.setattr(_numba, "_machine_quiet", lambda: False)  # the short spin: above
    monkeypatch.setattr(_numba, "_set_for_openmp", [])
    monkeypatch.setattr(_numba.omp_threads, "spins", None)
    _numba._sleeping_omp_threads()
    assert _numba.omp_threads.spins is spins
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")  # decided once: a later call keeps it
    _numba._sleeping_omp_threads()
    assert _numba.omp_threads.spins is spins


def test_spinning_openmp_threads_stop_the_splits_the_pool_follows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Where numba's OpenMP threads spin after a split (torch loaded GNU OpenMP first), a pool
    # hand-off right after a split waits for them to let go of the cores: that split runs on one
    # thread from then on (same bits), the others still split, until ``set_num_threads``.
    from lucid.backends._numpy import _numba

    threads = _parallel.blas_threads
    monkeypatch.setattr(threads, "last", None)
    monkeypatch.setattr(threads, "last_split", None)
    monkeypatch.setattr(threads, "pool_follows", set())
    monkeypatch.setattr(threads, "omp_spins", True)
    monkeypatch.setattr(_numba.thread_layer, "pid", None)
    monkeypatch.setattr(_numba.thread_layer, "ok", True)
    ran: list[str] = []

    def serial(out: np.ndarray) -> None:
        ran.append("serial")
        out[:] = 1.0

    def make() -> Callable[..., None]:
        def split(out: np.ndarray, k: int) -> None:  # numba compiles it under the name given
            for i in _numba.numba.prange(k):
                out[i] = 1.0

        ran.append("split")
        return split

    def use(name: str) -> None:
        monkeypatch.setattr(_numba, "specialised", lambda n, mk, **kw: (ran.append(n), mk())[1])
        _numba.run_split(name, make, serial, (np.zeros(2),), 2)

    use("a_split")
    use("b_split")
    threads.pool(2)  # the pool right after b's split: b is to blame
    assert threads.pool_follows == {"b_split"}
    ran.clear()
    use("b_split")
    assert ran == ["serial"]
    ran.clear()
    use("a_split")
    assert ran[0] == "a_split"
    threads.pool(2)
    threads.pool(2)  # the pool after the pool: nothing new to blame
    assert threads.pool_follows == {"a_split", "b_split"}
    monkeypatch.setattr(threads, "omp_spins", False)  # sleeping threads: the pool is no reason
    ran.clear()
    use("a_split")
    assert ran[0] == "a_split"
    monkeypatch.setattr(threads, "omp_spins", True)
    monkeypatch.setattr(threads, "_requested", threads._requested)  # restored afterwards
    threads.set_budget(threads.requested())  # ``set_num_threads`` starts the rules afresh
    assert threads.pool_follows == set()


def test_a_split_keeps_products_off_openblas_threads(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy import _numba

    monkeypatch.setattr(_parallel.blas_threads, "last", None)
    monkeypatch.setattr(_numba.thread_layer, "pid", None)
    monkeypatch.setattr(_numba.thread_layer, "ok", True)
    assert _parallel.blas_threads.openblas_may_run()
    x = np.arange(64.0).reshape(2, 32)
    out = np.zeros(2)
    serial = _numba.numba.njit(_serial_sums)
    _numba.run_split("test_sums_split", _split_sums, serial, (x, out), 2)
    np.testing.assert_array_equal(out, x.sum(axis=1))
    assert not _parallel.blas_threads.openblas_may_run()


def _serial_sums(x, out):  # type: ignore[no-untyped-def]
    for i in range(x.shape[0]):
        out[i] = x[i].sum()


def _split_sums():  # type: ignore[no-untyped-def]
    from numba import prange

    def sums(x, out, k):  # type: ignore[no-untyped-def]
        for t in prange(k):
            inner(x[t : t + 1], out[t : t + 1])  # noqa: F821  (run_split's global)

    return sums


def test_a_split_that_cannot_compile_runs_the_serial_pass(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy import _numba

    monkeypatch.setattr(_numba.thread_layer, "pid", None)
    monkeypatch.setattr(_numba.thread_layer, "ok", None)

    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("no threading layer")

    monkeypatch.setattr(_numba, "specialised", lambda *a, **k: broken())
    out = np.zeros(2)
    _numba.run_split("x", None, lambda x, o: o.__setitem__(slice(None), 7.0),
                     (np.zeros(2), out), 2)  # fmt: skip
    assert (out == 7.0).all() and _numba.thread_layer.ok is False


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
        want = cpu.conv_weight_grad(backend, x, dy, g)
        if dtype == np.float32:  # by column blocks (``_convblock_jit``): sums in another order
            np.testing.assert_allclose(dw, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
        else:
            np.testing.assert_array_equal(dw, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cin, k", [(3, 3), (1, 5), (6, 1)])
def test_a_convolution_of_no_output_channels_has_zero_gradients(dtype, cin, k) -> None:  # type: ignore[no-untyped-def]
    """0 output channels (torch allows them): an empty output and zero gradients, not an error
    (the input gradient's ``rows_of`` reshaped with -1, ambiguous for 0 columns)."""
    from lucid.backends._numpy.kernels import im2col as cpu

    backend = get_backend("cpu")
    x = np.random.default_rng(cin).standard_normal((2, cin, 8, 8)).astype(dtype)
    w = np.zeros((0, cin, k, k), dtype)
    g = conv_geometry((8, 8), (k, k), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    y = cpu.conv_forward(backend, x, w, None, g)
    assert y.shape == (2, 0, *g.out_size)
    dy = np.zeros(y.shape, dtype)
    dx = cpu.conv_input_grad(backend, dy, w, g)
    dw = cpu.conv_weight_grad(backend, x, dy, g)
    assert dx.shape == x.shape and dw.shape == w.shape
    assert dx.dtype == dw.dtype == dtype and not dx.any()


_FRESH_BLOCKS = """
import numpy as np
from lucid.backends import get_backend
from lucid.backends._numpy import _numba
from lucid.backends._numpy.kernels import im2col as cpu
from lucid.kernels import conv_geometry
g = conv_geometry((9, 8), (4, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), 1)
x = np.ones((3, 2, 9, 8), np.float32)
dy = np.ones((3, 4, 6, 6), np.float32)
assert "im2col_4x3" not in _numba.compiled
dw = cpu.conv_weight_grad(get_backend("cpu"), x, dy, g)
assert (dw == 108.0).all(), dw
print("done")
"""


def test_weight_gradient_blocks_of_a_new_kernel_size_in_a_fresh_process() -> None:
    """The first convolution of a kernel size in a process reaches the column blocks before
    im2col of that size was made: making the blocks' function (under ``specialised``'s lock)
    must not wait for that lock again to make the im2col it calls (it hung, session 17)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FRESH_BLOCKS], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]


@pytest.mark.parametrize("threads", ["serial", "split"])
@pytest.mark.parametrize("shape, cout, k, s, p, d", CONVS)
def test_float32_convolution_by_column_blocks_against_a_float64_oracle(  # type: ignore[no-untyped-def]
    threads, shape, cout, k, s, p, d, monkeypatch
) -> None:
    """A float32 convolution whose column matrix the forward would keep runs by column blocks
    of a few samples (``_convblock_jit``), blocks that do not divide the batch, on one thread
    or split over two: its forward, input and weight gradients within float32 rounding of the
    same convolution in float64 (which keeps its whole columns), the forward keeping no
    columns; with ``COLUMN_BLOCKS`` off, the forward and input gradient are the same bits."""
    from lucid.backends._numpy import _numba
    from lucid.backends._numpy.kernels import im2col as cpu

    monkeypatch.setattr(cpu, "_BLOCK_BYTES", 1)  # one sample a block
    if threads == "split":
        monkeypatch.setattr(_numba, "SPLIT_ELEMENTS", 0)
    backend = get_backend("cpu")
    rng = np.random.default_rng(sum(shape) + cout + 1)
    shape = (5, *shape[1:])  # 5 samples: 2 and 3 a thread, one block each
    x = rng.standard_normal(shape)
    w = rng.standard_normal((cout, shape[1], *k))
    b = rng.standard_normal(cout)
    g = conv_geometry(shape[2:], k, s, tuple((q, q) for q in p), d, 1)
    x32, w32, b32 = (a.astype(np.float32) for a in (x, w, b))
    assert cpu._blocks(x32, shape[1], cout, g) is not None
    assert cpu._blocks(x, shape[1], cout, g) is None  # float64: whole, kept columns
    keep: dict[object, object] = {}
    y = cpu.conv_forward(backend, x32, w32, b32, g, keep)
    assert not keep and y.dtype == np.float32
    dy = rng.standard_normal(y.shape)
    dy32 = dy.astype(np.float32)
    dx = cpu.conv_input_grad(backend, dy32, w32, g)
    dw = cpu.conv_weight_grad(backend, x32, dy32, g)
    assert dw.dtype == dx.dtype == np.float32 and dw.shape == w.shape and dx.shape == x.shape
    for got, want in ((y, cpu.conv_forward(backend, x, w, b, g)),
                      (dx, cpu.conv_input_grad(backend, dy, w, g)),
                      (dw, cpu.conv_weight_grad(backend, x, dy, g))):  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # a float64 output gradient beside a float32 input keeps the whole columns (the blocks'
    # GEMM is float32's): the float64 values of the rounded input
    mixed = cpu.conv_weight_grad(backend, x32, dy, g)
    assert mixed.dtype == np.float64
    want = cpu.conv_weight_grad(backend, x32.astype(np.float64), dy, g)
    np.testing.assert_allclose(mixed, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    monkeypatch.setattr(cpu, "COLUMN_BLOCKS", False)
    np.testing.assert_array_equal(y, cpu.conv_forward(backend, x32, w32, b32, g))
    np.testing.assert_array_equal(dx, cpu.conv_input_grad(backend, dy32, w32, g))


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

    from lucid.backends._numpy import _numba
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
    assert "im2col_4x1" in _numba.compiled


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
    dy = _layout(rng.standard_normal(y.shape).astype(dtype), "channels_last")
    dw = cpu.conv_weight_grad(backend, x, dy, g)
    assert dw.shape == w.shape and dw.dtype == w.dtype
    with numpy_only:
        assert not cpu._one_channel(x, g)
        tol = 1e-5 if dtype == np.float32 else 1e-12  # the taps sum in another order than GEMM's
        np.testing.assert_allclose(y, cpu.conv_forward(backend, x, w, b, g), rtol=tol, atol=tol)
        want = cpu.conv_weight_grad(backend, x, dy, g)
        np.testing.assert_allclose(dw, want, rtol=tol, atol=tol * np.abs(want).max())
    strided = conv_geometry(shape[2:], k, (2, 2), tuple((q, q) for q in p), (1, 1), 1)
    assert not cpu._one_channel(x, strided)


def test_one_input_channel_weight_gradient_split_over_threads(split) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import im2col as cpu

    backend = get_backend("cpu")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 1, 12, 12)).astype(np.float64)
    dy = _layout(rng.standard_normal((5, 3, 12, 12)), "channels_last")
    g = conv_geometry((12, 12), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    dw = cpu.conv_weight_grad(backend, x, dy, g)
    assert split == [min(2, split[0])]
    xp = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
    want = np.stack([np.stack([np.einsum("nij,noij->o", xp[:, u:u + 12, v:v + 12], dy)
                               for v in range(3)], -1) for u in range(3)], -2)  # fmt: skip
    np.testing.assert_allclose(dw[:, 0], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("threads", ["serial", "split"])
def test_one_input_channel_weight_gradient_float32_against_a_float64_oracle(  # type: ignore[no-untyped-def]
    threads, monkeypatch
) -> None:
    """LeNet-5's conv1 at b64 in float32: a kernel row's taps are summed side by side in one
    pass (float32 runs per sample, reassociated, added up in float64), so the weight gradient
    is not a GEMM's bits but within float32 rounding of the float64 sums: measured ~2e-7 of
    the largest entry, asserted within 1e-5 of it (and rtol 1e-5)."""
    from lucid.backends._numpy import _numba
    from lucid.backends._numpy.kernels import im2col as cpu

    if threads == "split":
        monkeypatch.setattr(_numba, "SPLIT_ELEMENTS", 0)
    backend = get_backend("cpu")
    rng = np.random.default_rng(30)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    dy = _layout(rng.standard_normal((64, 6, 28, 28)).astype(np.float32), "channels_last")
    g = conv_geometry((28, 28), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1)
    assert cpu._one_channel(x, g)
    dw = cpu.conv_weight_grad(backend, x, dy, g)
    assert dw.dtype == np.float32
    xp = np.pad(x[:, 0].astype(np.float64), ((0, 0), (2, 2), (2, 2)))
    d64 = dy.astype(np.float64)
    want = np.stack([np.stack([np.einsum("nij,noij->o", xp[:, u:u + 28, v:v + 28], d64)
                               for v in range(5)], -1) for u in range(5)], -2)  # fmt: skip
    np.testing.assert_allclose(dw[:, 0], want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


# -- mid-sized products on numba's threads (``_gemm_jit``) ----------------------------------
def _gemm_operands(rng, dtype, m, k, n, layout):  # type: ignore[no-untyped-def]
    """``a (m, k)``, ``b (k, n)``: row-major (C) or transposed row-major views (T)."""
    a = rng.standard_normal((k, m) if layout[0] == "T" else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if layout[1] == "T" else (k, n)).astype(dtype)
    return (a.T if layout[0] == "T" else a), (b.T if layout[1] == "T" else b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["CC", "CT", "TC", "TT"])
@pytest.mark.parametrize("m, k, n", [(7, 5, 3), (130, 150, 16), (75, 640, 16), (64, 128, 385),
                                     (12, 130, 70), (600, 40, 50)])  # fmt: skip
def test_compiled_gemm_split_over_threads_matches_numpy(split, dtype, layout, m, k, n) -> None:  # type: ignore[no-untyped-def]
    # by rows, and by columns (fewer than COLUMN_ROWS rows and enough columns: (64, 385),
    # (12, 70), with an odd count to share out)
    from lucid.backends._numpy.kernels import _gemm_jit

    a, b = _gemm_operands(np.random.default_rng(m + k + n), dtype, m, k, n, layout)
    out = _gemm_jit.matmul(a, b, 2.0 * m * k * n)
    if split[0] == 1:  # no thread-safe threading layer here: the caller runs NumPy's product
        assert out is None
        return
    assert split == [2] and out.dtype == dtype and out.shape == (m, n)
    assert out.flags.c_contiguous
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(k))
    from lucid.backends._numpy import _numba  # (numba: after the module's importorskip)

    by_columns = m < _gemm_jit.COLUMN_ROWS and n >= 32
    name = f"{'s' if dtype == np.float32 else 'd'}gemm_split{'_columns' if by_columns else ''}"
    assert name in _numba.compiled


def test_compiled_gemm_declines_what_it_does_not_do(split) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels import _gemm_jit

    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 30)).astype(np.float32)
    b = rng.standard_normal((30, 20)).astype(np.float32)
    assert _gemm_jit.matmul(a[:, ::2], b[::2], 1e7) is None  # strided columns: not a BLAS layout
    assert _gemm_jit.matmul(a, b.astype(np.float64), 1e7) is None  # mixed dtypes
    assert _gemm_jit.matmul(a.astype(np.int64), b.astype(np.int64), 1e7) is None
    assert _gemm_jit.matmul(a[:1], b, 1e7) is None  # a single row: a vector product
    split.clear()
    _parallel.workers = lambda: 1  # type: ignore[assignment]  (undone by monkeypatch)
    assert _gemm_jit.matmul(a, b, 1e7) is None and split == [1]  # one thread: NumPy's product


def test_mid_sized_products_go_to_numba_threads_after_compiled_passes(split, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """After a compiled pass (lucid's threads ran last), ``_gemm.matmul`` and ``tn_matmul``
    hand products between THREADED_FLOPS and PARALLEL_FLOPS to ``_gemm_jit``, with the same
    values as NumPy's; where OpenBLAS's threads ran last a product goes to them as before."""
    from lucid.backends._numpy.kernels import _gemm_jit

    assert _compiled.load("_im2col_jit") is not None and _compiled.in_use()
    calls: list[tuple[int, ...]] = []
    real = _gemm_jit.matmul

    def spy(a, b, flops):  # type: ignore[no-untyped-def]
        calls.append((*a.shape, b.shape[1]))
        return real(a, b, flops)

    monkeypatch.setattr(_gemm_jit, "matmul", spy)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((1600, 150)).astype(np.float32)  # 7.7 MFLOP with b
    b = rng.standard_normal((150, 16)).astype(np.float32)
    dy = rng.standard_normal((1600, 16)).astype(np.float32)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)  # no parallel work yet
    _gemm.matmul(a, b)
    assert calls == []
    _parallel.blas_threads.ran(_parallel.NUMBA)  # as after a compiled pass on numba's threads
    y = _gemm.matmul(a, b)
    dw = _gemm.tn_matmul(a, dy)
    assert calls == [(1600, 150, 16), (150, 1600, 16)]
    np.testing.assert_allclose(y, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, a.T.astype(np.float64) @ dy, rtol=1e-4, atol=1e-3)


def test_compiled_gemm_needs_numpys_own_openblas(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Another BLAS (Accelerate, MKL, a second OpenBLAS that is not NumPy's): no module, so
    ``_compiled.load`` gives None and products run as ``_gemm.matmul`` always did."""
    from lucid.backends._numpy.kernels import _gemm_jit

    assert "openblas" in str(_gemm_jit._numpy_openblas()._name).lower()
    monkeypatch.setattr(_gemm_jit, "threadpool_info", lambda: [{"internal_api": "mkl"}])
    with pytest.raises(ImportError, match="no OpenBLAS of NumPy's"):
        _gemm_jit._numpy_openblas()
    two = [{"internal_api": "openblas", "filepath": f"/elsewhere/lib{i}.so"} for i in (1, 2)]
    monkeypatch.setattr(_gemm_jit, "threadpool_info", lambda: two)
    with pytest.raises(ImportError):
        _gemm_jit._numpy_openblas()


def test_generated_f4_transforms_are_up_to_date() -> None:
    """``_winograd4_jit.py`` is what ``tools/codegen/winograd_jit.py`` writes from the tables."""
    import importlib.util
    from pathlib import Path

    from lucid.backends._numpy.kernels import _winograd4_jit

    root = Path(__file__).resolve().parents[3]
    gen = root / "tools" / "codegen" / "winograd_jit.py"
    if not gen.is_file():
        pytest.skip("not in a checkout of the repository")
    spec = importlib.util.spec_from_file_location("winograd_codegen", gen)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    assert Path(_winograd4_jit.__file__).read_text() == mod.generate(winograd.F4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
def test_compiled_lstm_gates_equal_numpy_bit_for_bit(
    numpy_only, dtype, reverse, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The LSTM layer's gate math compiled (one pass a step each way) and in NumPy's ufuncs:
    outputs, final states and every gradient equal, a strided initial state included. (The
    per-step products on the small-matrix kernels, another order of sums, are off here:
    ``test_core_rnn_step_products.py``.)"""
    from lucid.backends._numpy.kernels import lstm
    from lucid.backends._numpy.kernels.lstm import CpuLstm

    monkeypatch.setattr(lstm, "SMALL_STEP_PRODUCTS", False)
    if not cpu.numba_enabled:
        pytest.skip("the compiled kernels are off (LUCID_NUMBA=0)")
    assert _compiled.load("_lstm_jit") is not None
    rng = np.random.default_rng(7)
    steps, n, i, h = 6, 5, 7, 9
    x = rng.standard_normal((steps, n, i)).astype(dtype)
    h0 = rng.standard_normal((n, h)).astype(dtype)
    c0 = rng.standard_normal((h, n)).astype(dtype).T  # not C-contiguous
    w_ih, w_hh = (rng.standard_normal((4 * h, k)).astype(dtype) * 0.5 for k in (i, h))
    b_ih, b_hh = (rng.standard_normal(4 * h).astype(dtype) for _ in range(2))
    g = (rng.standard_normal((steps, n, h)).astype(dtype), None,
         rng.standard_normal((n, h)).astype(dtype))  # fmt: skip

    def run() -> list[np.ndarray]:
        outs, res = CpuLstm.forward(None, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
        return [*outs, *CpuLstm.backward(None, res, g, [True] * 7)]

    compiled = run()
    with numpy_only:
        plain = run()
    for k, (a, b) in enumerate(zip(compiled, plain)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_compiled_gru_gates_equal_numpy_bit_for_bit(
    numpy_only, dtype, reverse, bias, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The GRU layer's gate math compiled (three passes a step forward around the tanh
    passes, one backward) and in NumPy's ufuncs: outputs, final state and every gradient
    equal, a strided initial state included (the per-step products as NumPy's, as above)."""
    from lucid.backends._numpy.kernels import lstm
    from lucid.backends._numpy.kernels.gru import CpuGru

    monkeypatch.setattr(lstm, "SMALL_STEP_PRODUCTS", False)
    if not cpu.numba_enabled:
        pytest.skip("the compiled kernels are off (LUCID_NUMBA=0)")
    assert _compiled.load("_lstm_jit") is not None
    rng = np.random.default_rng(8)
    steps, n, i, h = 6, 5, 7, 9
    x = rng.standard_normal((steps, n, i)).astype(dtype)
    h0 = rng.standard_normal((h, n)).astype(dtype).T  # not C-contiguous
    w_ih, w_hh = (rng.standard_normal((3 * h, k)).astype(dtype) * 0.5 for k in (i, h))
    b_ih, b_hh = (rng.standard_normal(3 * h).astype(dtype) if bias else None for _ in range(2))
    g = (
        rng.standard_normal((steps, n, h)).astype(dtype),
        rng.standard_normal((n, h)).astype(dtype),
    )

    def run() -> list[np.ndarray]:
        outs, res = CpuGru.forward(None, x, h0, w_ih, w_hh, b_ih, b_hh, reverse)
        grads = CpuGru.backward(None, res, g, [True] * 6)
        return [*outs, *(a for a in grads if a is not None)]

    calls: list[str] = []
    real = _compiled.run
    monkeypatch.setattr(_compiled, "run", lambda *a: calls.append(a[1]) or real(*a))
    compiled = run()
    assert calls.count("gru_backward") == steps and calls.count("gru_out") == steps
    with numpy_only:
        plain = run()
    for k, (a, b) in enumerate(zip(compiled, plain)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [5000, 70_000, 600_000])  # serial, serial pieces, split
@pytest.mark.parametrize("method", ["add_", "sub_"])
@pytest.mark.parametrize("alpha", [-0.1, 3, 1e-30])
def test_compiled_scaled_add_equals_the_ufuncs_bit_for_bit(
    numpy_only, dtype, size, method, alpha, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """``p.add_(g, alpha=)`` / ``sub_`` outside autograd (an SGD step written by hand): the
    compiled pass (split over the threads from ``SPLIT_ELEMENTS``) gives the ufuncs' bits,
    at one thread and at two, and a float64 oracle's values to float rounding."""
    import lucid
    from lucid.backends._numpy.kernels import _axpy_jit

    monkeypatch.setattr(_axpy_jit, "SPLIT_ELEMENTS", 1 << 18)
    rng = np.random.default_rng(size)
    p0 = rng.standard_normal((size // 100, 100)).astype(dtype)
    g0 = rng.standard_normal((size // 100, 100)).astype(dtype)
    results = []
    for threads in (2, 1):
        monkeypatch.setattr(_parallel.blas_threads, "budget", lambda threads=threads: threads)
        p, g = lucid.from_numpy(p0.copy()), lucid.from_numpy(g0.copy())
        with lucid.no_grad():
            getattr(p, method)(g, alpha=alpha)
        results.append(p.numpy().copy())
    with numpy_only:
        p, g = lucid.from_numpy(p0.copy()), lucid.from_numpy(g0.copy())
        with lucid.no_grad():
            getattr(p, method)(g, alpha=alpha)
        want = p.numpy()
    for got in results:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    sign = -1.0 if method == "sub_" else 1.0
    oracle = p0.astype(np.float64) + sign * g0.astype(np.float64) * alpha
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(results[0], oracle, rtol=tol, atol=tol * 10)


def test_compiled_scaled_add_declines_what_it_does_not_take() -> None:
    """Small, strided, mixed-dtype or read-only arrays are left to the ufuncs."""
    from lucid.backends._numpy.kernels.scaled_add import CpuScaledAdd

    be = get_backend("cpu")
    a = np.ones((200, 100), np.float32)
    assert CpuScaledAdd.forward(be, a, np.ones((200, 100), np.float32), 2.0, False)
    assert (a == 3).all()
    assert not CpuScaledAdd.forward(be, a[:, ::2], np.ones((200, 50), np.float32), 2.0, False)
    assert not CpuScaledAdd.forward(be, a, np.ones((200, 100), np.float64), 2.0, False)
    assert not CpuScaledAdd.forward(be, a[:2], np.ones((2, 100), np.float32), 2.0, False)
    ro = np.ones((200, 100), np.float32)
    ro.flags.writeable = False
    assert not CpuScaledAdd.forward(be, ro, a, 2.0, False)
    assert not CpuScaledAdd.forward(be, a, a, 10**400, False)
    assert (a == 3).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n", [(128, 185), (18, 185), (64, 64), (3, 5), (1, 4096)])
@pytest.mark.parametrize("transposed", [True, False])
def test_compiled_outer_product_equals_numpys_bit_for_bit(
    numpy_only, dtype, m, n, transposed
) -> None:  # type: ignore[no-untyped-def]
    """A product with an inner dimension of 1 (a batch-1 Linear's weight gradient ``g.T @
    x``): the compiled loop gives NumPy's bits (one product per element) in a C-contiguous
    array, for a transposed (strided) left operand too, and a float64 oracle's values; small
    results keep NumPy's multiply. The whole Linear's gradients agree with numba on and off."""
    import lucid

    rng = np.random.default_rng(m * n)
    g = rng.standard_normal((1, m)).astype(dtype)
    a = g.T if transposed else np.ascontiguousarray(g.T)
    b = rng.standard_normal((1, n)).astype(dtype)
    got = _gemm.matmul(a, b)
    with numpy_only:
        want = _gemm.matmul(a, b)
    assert got.dtype == dtype and got.shape == (m, n) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    oracle = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, oracle, rtol=tol, atol=tol)

    def grads() -> list[np.ndarray]:
        lin = lucid.nn.Linear(n, m).to(lucid.float64 if dtype == np.float64 else lucid.float32)
        with lucid.no_grad():
            lin.weight.copy_(lucid.from_numpy(rng.standard_normal((m, n)).astype(dtype)))
        x = lucid.from_numpy(b.copy()).requires_grad_()
        lin(x).sum().backward()
        return [lin.weight.grad.numpy(), lin.bias.grad.numpy(), x.grad.numpy()]

    rng = np.random.default_rng(7)
    on = grads()
    rng = np.random.default_rng(7)
    with numpy_only:
        off = grads()
    for k, (u, v) in enumerate(zip(on, off)):
        np.testing.assert_array_equal(u, v, err_msg=f"gradient {k}")


def test_compiled_outer_product_declines_what_it_does_not_take(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Mixed dtypes and integers never reach the compiled loop; a numba that fails there
    warns once, NumPy's multiply gives the product, and the loop is not tried again."""
    import types

    calls: list[str] = []
    real = _compiled.run
    monkeypatch.setattr(_compiled, "run", lambda *a: calls.append(a[0]) or real(*a))
    ones = np.ones((100, 1), np.float32)
    for a, b in [(ones, np.ones((1, 100), np.float64)),
                 (ones.astype(np.int64), np.ones((1, 100), np.int64))]:  # fmt: skip
        np.testing.assert_array_equal(_gemm.matmul(a, b), np.matmul(a, b))
    assert calls == []
    _gemm.matmul(ones, np.ones((1, 100), np.float32))
    assert calls == ["_outer_jit"]

    def broken(*args: object) -> None:
        raise RuntimeError("cannot build")

    monkeypatch.setitem(_compiled._modules, "_outer_jit", types.SimpleNamespace(outer=broken))
    b = np.full((1, 100), 3.0, np.float32)
    with pytest.warns(RuntimeWarning, match="_outer_jit.outer"):
        np.testing.assert_array_equal(_gemm.matmul(ones, b), np.multiply(ones, b))
    np.testing.assert_array_equal(_gemm.matmul(ones, b), np.multiply(ones, b))  # no warning
    assert calls == ["_outer_jit"] * 2


def _shift_with_ufuncs(pt: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """lucid-nn attention's passes before ``exp``, as the ufuncs make them."""
    if bias is not None:
        np.add(pt, bias, out=pt)
    np.subtract(pt, np.max(pt, axis=-2, keepdims=True), out=pt)
    return pt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 4, 64, 64), (6, 4, 64, 64), (3, 7, 5), (1, 9)])
@pytest.mark.parametrize("causal", [True, False])
def test_compiled_attention_shift_equals_the_ufuncs(dtype, shape, causal) -> None:  # type: ignore[no-untyped-def]
    """``kernels.ATTENTION_SHIFT``: the causal mask added and each column's maximum (over the
    second-last dim) subtracted in place; after ``exp`` (all attention reads) the values are
    the ufuncs' bit for bit, with NaN columns, fully masked columns (-inf: NaN after the
    shift, as torch's) and ties included, and a float64 oracle's before it."""
    from lucid.backends._numpy.kernels.attention import CpuAttentionShift

    rng = np.random.default_rng(sum(shape))
    pt0 = (rng.standard_normal(shape) * 8).astype(dtype)
    rows, cols = shape[-2], shape[-1]
    flat = pt0.reshape(-1, rows, cols)
    flat[0, rows // 2, 0] = np.nan
    flat[-1, :, cols - 1] = -np.inf
    flat[0, :, min(1, cols - 1)] = 2.5  # every value a tie
    bias = np.tril(np.full((rows, cols), -np.inf, dtype=dtype), -1) if causal else None
    got = pt0.copy()
    assert CpuAttentionShift.forward(get_backend("cpu"), got, bias)
    want = _shift_with_ufuncs(pt0.copy(), bias)
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(np.exp(got), np.exp(want))
        oracle = pt0.astype(np.float64) + (0 if bias is None else bias)
        oracle = oracle - np.max(oracle, axis=-2, keepdims=True)
    np.testing.assert_allclose(got, oracle, rtol=1e-6, atol=1e-6)


def test_compiled_attention_shift_declines_what_it_does_not_take() -> None:
    from lucid.backends._numpy.kernels.attention import CpuAttentionShift

    be = get_backend("cpu")
    pt = np.ones((2, 4, 4), np.float32)
    assert not CpuAttentionShift.forward(be, pt[:, :, ::2], None)  # strided
    assert not CpuAttentionShift.forward(be, pt.astype(np.int32), None)
    assert not CpuAttentionShift.forward(be, pt, np.zeros((4, 4), np.float64))  # bias dtype
    assert not CpuAttentionShift.forward(be, pt, np.zeros((3, 4), np.float32))  # bias shape
    ro = pt.copy()
    ro.flags.writeable = False
    assert not CpuAttentionShift.forward(be, ro, None)
    assert (pt == 1).all()


def _attention_oracle(q: np.ndarray, k: np.ndarray, v: np.ndarray, factor: float,
                      causal: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Attention in float64: the weights transposed (..., S, L) and the result (..., L, Ev)."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * factor
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    with np.errstate(invalid="ignore"):
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
    return np.swapaxes(w, -1, -2), w @ v


@pytest.mark.parametrize(
    ("qs", "ks", "ev"),
    [((12, 4, 64, 32), (12, 4, 64, 32), 32), ((1, 4, 1, 32), (1, 4, 1, 32), 32),
     ((2, 3, 5, 4), (2, 3, 7, 4), 6), ((3, 9, 4), (3, 2, 4), 5), ((5, 3), (4, 3), 2)],
)  # fmt: skip
@pytest.mark.parametrize("causal", [True, False])
def test_compiled_attention_heads_against_a_float64_oracle(qs, ks, ev, causal) -> None:  # type: ignore[no-untyped-def]
    """``kernels.ATTENTION`` (``_sdpa_jit``): the weights and the result of whole heads within
    float32 rounding of a float64 oracle (1e-6 times the largest score, of the largest
    magnitude), with key/query counts
    that differ (causal top-left aligned), one query, 2-D to 4-D arrays, large scores."""
    from lucid.backends._numpy.kernels.attention import CpuAttention

    rng = np.random.default_rng(sum(qs) + sum(ks))
    q = (rng.standard_normal(qs) * 3).astype(np.float32)
    k = (rng.standard_normal(ks) * 3).astype(np.float32)
    v = rng.standard_normal((*ks[:-1], ev)).astype(np.float32)
    out = np.empty((*qs[:-1], ev), np.float32)
    pt = np.empty((*qs[:-2], ks[-2], qs[-2]), np.float32)
    factor = 0.7
    assert CpuAttention.forward(get_backend("cpu"), q, k, v, factor, causal, out, pt)
    want_pt, want = _attention_oracle(q, k, v, factor, causal)
    # a float32 score is off by ~1e-7 of its size, and exp's relative error is that
    big = 1.0 + np.abs(q.astype(np.float64) @ np.swapaxes(k, -1, -2) * factor).max()
    np.testing.assert_allclose(pt, want_pt, rtol=0, atol=1e-6 * big)
    np.testing.assert_allclose(out, want, rtol=0, atol=1e-6 * big * np.abs(want).max())


def test_compiled_attention_heads_read_strided_views_and_write_any_layout() -> None:
    """The heads of a fused q/k/v projection split and transposed (rows 3E apart), the result
    written into a transposed (N, L, H, Ev) array: the values of the contiguous call."""
    from lucid.backends._numpy.kernels.attention import CpuAttention

    be = get_backend("cpu")
    rng = np.random.default_rng(3)
    b, t, h, d = 3, 10, 2, 4
    qkv = rng.standard_normal((b, t, 3 * h * d)).astype(np.float32)
    q, k, v = (qkv[..., i * h * d:(i + 1) * h * d].reshape(b, t, h, d).transpose(0, 2, 1, 3)
               for i in range(3))  # fmt: skip
    out = np.empty((b, t, h, d), np.float32).transpose(0, 2, 1, 3)
    pt = np.empty((b, h, t, t), np.float32)
    assert CpuAttention.forward(be, q, k, v, 0.5, True, out, pt)
    out2, pt2 = np.empty((b, h, t, d), np.float32), np.empty_like(pt)
    assert CpuAttention.forward(be, *(np.ascontiguousarray(a) for a in (q, k, v)), 0.5, True,
                                out2, pt2)  # fmt: skip
    np.testing.assert_array_equal(out, out2)
    np.testing.assert_array_equal(pt, pt2)


def test_compiled_attention_heads_nan_inf_and_a_split_over_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A NaN score makes its query's weights and result NaN (as torch's softmax); +inf scores
    give NaN (inf - inf); the heads split over numba's threads give one thread's bits."""
    from lucid.backends._numpy.kernels import _sdpa_jit
    from lucid.backends._numpy.kernels.attention import CpuAttention

    be = get_backend("cpu")
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((4, 3, 16, 8)).astype(np.float32) for _ in range(3))
    q[0, 0, 2, 1] = np.nan  # query 2 of head (0, 0)
    k[1, 2, 0, 0] = np.inf  # key 0 of head (1, 2): inf * q's sign for every query
    out, pt = np.empty_like(q), np.empty((4, 3, 16, 16), np.float32)
    assert CpuAttention.forward(be, q, k, v, 0.5, False, out, pt)
    assert np.isnan(out[0, 0, 2]).all() and np.isfinite(np.delete(out[0, 0], 2, axis=0)).all()
    with np.errstate(invalid="ignore", over="ignore"):
        _, want = _attention_oracle(q, k, v, 0.5, False)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    monkeypatch.setattr(_sdpa_jit, "SPLIT_ELEMENTS", 1)
    monkeypatch.setattr(_parallel.blas_threads, "budget", lambda: 2)
    out2, pt2 = np.empty_like(out), np.empty_like(pt)
    assert CpuAttention.forward(be, q, k, v, 0.5, False, out2, pt2)
    np.testing.assert_array_equal(out2, out)
    np.testing.assert_array_equal(pt2, pt)


def test_compiled_attention_heads_exp_is_float32_accurate() -> None:
    """The kernel's ``exp`` over a fine grid of [-87, 0]: two keys scoring 0 and x give the
    weights 1 / (1 + e^x) and e^x / (1 + e^x), whose ratio is within 3e-7 of float64's e^x; 1
    at 0; 0 below -87."""
    from lucid.backends._numpy.kernels.attention import CpuAttention

    be = get_backend("cpu")
    x = np.linspace(-87.0, 0.0, 200_001).astype(np.float32)
    x = np.concatenate([x, np.float32([-87.5, -1e30])])
    q = x.reshape(-1, 1)  # a query per value
    k = np.float32([[0.0], [1.0]])  # scores 0 and x
    v = np.ones((2, 1), np.float32)
    out, pt = np.empty((x.size, 1), np.float32), np.empty((2, x.size), np.float32)
    assert CpuAttention.forward(be, q, k, v, 1.0, False, out, pt)
    ok = x >= -87.0
    got = pt[1].astype(np.float64) / pt[0]
    np.testing.assert_allclose(got[ok], np.exp(x[ok].astype(np.float64)), rtol=3e-7, atol=0)
    assert pt[1, 200_000] == pt[0, 200_000] == 0.5  # x = 0 (the grid's end)
    assert (pt[1, ~ok] == 0).all() and (pt[0, ~ok] == 1).all()


def test_compiled_attention_heads_decline_what_they_do_not_take() -> None:
    from lucid.backends._numpy.kernels.attention import CpuAttention

    be = get_backend("cpu")
    q = np.ones((2, 3, 4, 8), np.float32)
    out, pt = np.empty_like(q), np.empty((2, 3, 4, 4), np.float32)
    assert not CpuAttention.forward(be, q.astype(np.float64), q.astype(np.float64),
                                    q.astype(np.float64), 1.0, True, out.astype(np.float64),
                                    pt.astype(np.float64))  # fmt: skip
    assert not CpuAttention.forward(be, q[..., ::2], q[..., ::2], q[..., ::2], 1.0, True,
                                    out[..., ::2], pt)  # columns strided  # fmt: skip
    assert not CpuAttention.forward(be, q[None], q[None], q[None], 1.0, True, out[None],
                                    pt[None])  # five dims  # fmt: skip
    assert not CpuAttention.forward(be, q, q, q, 1.0, True, out, pt.transpose(0, 1, 3, 2))


@pytest.mark.parametrize(("length", "source"), [(100, 100), (100, 70), (70, 100), (64, 64)])
def test_causal_attention_heads_in_query_blocks_equal_one_block(
    length: int, source: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A causal head run by blocks of queries, each against the keys it may see only (the
    masked corner skipped, ``_sdpa_jit.QUERY_BLOCK``; a last block shorter than the others):
    the weights (the skipped ones exactly 0), the result and every gradient within float32
    rounding of the head in one block, which the float64 oracle checks above; the backward's
    blocks too where there are more keys than queries (there it runs in one block)."""
    from lucid.backends._numpy.kernels import _sdpa_jit
    from lucid.backends._numpy.kernels.attention import CpuAttention

    be = get_backend("cpu")
    rng = np.random.default_rng(length + source)
    q = (rng.standard_normal((2, 3, length, 8)) * 2).astype(np.float32)
    k = (rng.standard_normal((2, 3, source, 8)) * 2).astype(np.float32)
    v = rng.standard_normal((2, 3, source, 5)).astype(np.float32)
    g = rng.standard_normal((2, 3, length, 5)).astype(np.float32)

    def run(block: float) -> list[np.ndarray]:
        monkeypatch.setattr(_sdpa_jit, "QUERY_BLOCK", block)
        out = np.empty((2, 3, length, 5), np.float32)
        pt = np.empty((2, 3, source, length), np.float32)
        pt.fill(np.nan)  # every weight is written, the skipped ones as 0
        assert CpuAttention.forward(be, q, k, v, 0.4, True, out, pt)
        grads = CpuAttention.backward(be, q, k, v, g, pt, 0.4, True, (True, True, True))
        assert grads is not None
        return [out, pt, *grads]

    assert _sdpa_jit.query_block(length, True) < length  # the default blocks these heads
    assert _sdpa_jit.query_block(length, False) == length
    blocked, whole = run(8), run(np.inf)
    assert _sdpa_jit.query_block(length, True) == length
    masked = np.arange(source)[:, None] > np.arange(length)[None, :]
    assert (blocked[1][..., masked] == 0).all()
    for a, b in zip(blocked, whole):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * np.abs(b).max())


@pytest.mark.parametrize("name", ["gelu_rational", "gelu_tanh", "erf_rational"])
def test_a_big_compiled_unary_pass_in_blocks_on_the_pool_equals_one_pass(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GELU's forward (and erf) over a GPT step's (12, 64, 512) activations runs its blocks on
    every thread through lucid's pool (``special.POOL_UNARY``): elementwise, so the same bits
    as one pass, at two threads and at one."""
    from lucid.backends._numpy.kernels import special

    x = np.random.default_rng(5).standard_normal((12, 64, 512)).astype(np.float32) * 3
    x[0, 0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    monkeypatch.setattr(special, "POOL_UNARY", False)
    want = special._compiled_unary(name, x)
    monkeypatch.setattr(special, "POOL_UNARY", True)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)  # not after numba's threads
    ran: list[int] = []
    real = _parallel.map_blocks
    monkeypatch.setattr(_parallel, "map_blocks",
                        lambda *a, **k: ran.append(len(a[1])) or real(*a, **k))  # fmt: skip
    for threads in (2, 1):
        monkeypatch.setattr(_parallel.blas_threads, "budget", lambda threads=threads: threads)
        got = special._compiled_unary(name, x)
        assert got is not None and want is not None
        np.testing.assert_array_equal(got, want)
    assert ran and ran[0] == 6  # 393,216 elements in 64K blocks


def test_after_numbas_threads_gelu_and_big_products_stay_on_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where numba's threads ran the last parallel work, GELU's forward and gradient split over
    them (no block on lucid's pool) and a big product splits over them too
    (``special.NUMBA_LEADS``, ``_gemm.NUMBA_KEEPS_BIG``): the same bits as the pool's blocks."""
    from lucid.backends._numpy import _numba
    from lucid.backends._numpy.kernels import special

    rng = np.random.default_rng(8)
    x = (rng.standard_normal((12, 64, 512)) * 3).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    a = rng.standard_normal((768, 512)).astype(np.float32)
    b = rng.standard_normal((512, 128)).astype(np.float32)  # 100 MFLOP: PARALLEL_FLOPS and up
    monkeypatch.setattr(_parallel.blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "last", None)
    pool = [special._compiled_unary("gelu_rational", x), special._compiled_gelu_grad(g, x)]
    pooled = _gemm.matmul(a, b)
    pools: list[int] = []
    real_pool = _parallel.BlasThreads.pool
    monkeypatch.setattr(_parallel.BlasThreads, "pool",
                        lambda self, k: pools.append(k) or real_pool(self, k))  # fmt: skip
    splits: list[str] = []
    real_split = _numba.run_split

    def run_split(name: str, *a: object, **k: object) -> None:
        splits.append(name)
        real_split(name, *a, **k)

    monkeypatch.setattr(_numba, "run_split", run_split)
    from lucid.backends._numpy.kernels import _gemm_jit, _special_jit

    monkeypatch.setattr(_gemm_jit, "run_split", _numba.run_split)
    monkeypatch.setattr(_special_jit, "run", _numba.run)
    for _ in range(2):
        monkeypatch.setattr(_parallel.blas_threads, "last", _parallel.NUMBA)
        got = [special._compiled_unary("gelu_rational", x), special._compiled_gelu_grad(g, x)]
        monkeypatch.setattr(_parallel.blas_threads, "last", _parallel.NUMBA)
        product = _gemm.matmul(a, b)
        for u, v in zip(got, pool):
            np.testing.assert_array_equal(u, v)
        np.testing.assert_array_equal(product, pooled)
    assert not pools
    if _numba.thread_layer.ok:  # a thread-safe layer: the passes split
        assert {"gelu_rational_split", "gelu_grad_rational_split", "sgemm_split"} <= set(splits)


def test_compiles_gelu_slope_runs_on_the_threads_eager_gelu_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``lucid.compile``'s GELU that keeps its slope (``_fused_gelu._gelu_and_slope``): split
    over numba's threads after their parallel work, in blocks on the pool's otherwise; both give
    eager code's GELU and its gradient of ones bit for bit, on one thread and on two."""
    from lucid.backends._numpy import _numba
    from lucid.backends._numpy.kernels import special
    from lucid.compiler import _fused_gelu

    x = (np.random.default_rng(4).standard_normal((12, 64, 512)) * 3).astype(np.float32)
    x.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, 0.0]
    want = (special.CpuGelu.forward(None, x, "none"),
            special.CpuGeluGrad.forward(None, np.ones_like(x), x, "none"))  # fmt: skip
    pools: list[int] = []
    real_pool = _parallel.BlasThreads.pool
    monkeypatch.setattr(_parallel.BlasThreads, "pool",
                        lambda self, k: pools.append(k) or real_pool(self, k))  # fmt: skip
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    for threads in (2, 1):
        monkeypatch.setattr(_parallel.blas_threads, "budget", lambda threads=threads: threads)
        for last in (_parallel.NUMBA, None):
            monkeypatch.setattr(_parallel.blas_threads, "last", last)
            before = len(pools)
            got = _fused_gelu._gelu_and_slope(x)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
            if threads == 2:  # numba's threads after theirs, else the pool's blocks
                assert (len(pools) > before) == (last is None)
    assert _numba.thread_layer.ok is not None


@pytest.mark.parametrize("variable", ["WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"])
def test_a_rank_of_a_multi_process_job_never_spins(variable, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The ranks of a job share the cores: spinning threads of one would take the core the
    # next pass of another needs (two LeNet-5 processes on two cores: 2x slower a step).
    from lucid.backends._numpy import _numba

    monkeypatch.setenv(variable, "2")
    assert _numba._machine_quiet() is False
    monkeypatch.setattr(_numba.omp_threads, "spins", None)
    monkeypatch.setattr(_numba, "_gnu_openmp_loaded", lambda: False)
    monkeypatch.setattr(_numba, "_set_for_openmp", [])
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    _numba._sleeping_omp_threads()
    assert _numba.omp_threads.spins is False
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_relu_gives_numpys_maximum_bits_and_keeps_layouts(dtype) -> None:  # type: ignore[no-untyped-def]
    from lucid.backends._numpy.kernels.activation import CpuActivation

    backend = get_backend("cpu")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((64, 6, 24, 24)).astype(dtype)
    x.reshape(-1)[:8] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45]
    got = CpuActivation.forward(backend, "relu", x)
    want = np.maximum(x, 0)
    assert got is not None and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # channels-last (a conv output's layout): the same pass over its memory, the layout kept;
    # a strided slice declines (NumPy's maximum runs)
    cl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    got = CpuActivation.forward(backend, "relu", cl)
    assert got is not None and got.strides == cl.strides
    np.testing.assert_array_equal(got, want)
    assert CpuActivation.forward(backend, "relu", x[:, :, ::2]) is None
    # a small array declines too: NumPy's maximum is faster there, and the op's result the same
    small = x.reshape(-1)[:7680].reshape(64, 120)
    assert CpuActivation.forward(backend, "relu", small) is None
    ys = lucid.relu(lucid.from_numpy(small)).numpy()
    np.testing.assert_array_equal(ys, np.maximum(small, 0))
    np.testing.assert_array_equal(np.signbit(ys), np.signbit(np.maximum(small, 0)))
    t = lucid.from_numpy(cl).requires_grad_()
    y = lucid.relu(t)
    assert y.detach().numpy().strides == np.maximum(cl, 0).strides
    np.testing.assert_array_equal(y.detach().numpy(), want)
    y.backward(lucid.ones_like(y))
    assert t.grad is not None
    np.testing.assert_array_equal(t.grad.numpy(), (want > 0).astype(dtype))
