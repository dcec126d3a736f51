"""softmax/log_softmax and their gradients in row blocks (``backends/_numpy/kernels/softmax``):
the ufuncs' blocks give the op's own values and gradients bit for bit (the same ufuncs per
row), -inf and NaN rows included; small float arrays run the op's passes as bare ufunc calls
(any dim); other big dims and layouts go to the op's code. Float32 rows with numba in use take
compiled passes (``COMPILED_ROWS``): within float32 rounding of a float64 oracle, NaN where it
is NaN, the same bits at one and two threads and through the one-hot gradient."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import kernels

_CPU = lucid.backends.get_backend("cpu")
_CONTRACTS = (kernels.SOFTMAX, kernels.LOG_SOFTMAX, kernels.SOFTMAX_GRAD, kernels.LOG_SOFTMAX_GRAD)


@pytest.fixture(params=["ufuncs", "compiled"])
def rows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test so marked runs over the ufuncs' row blocks and over the compiled rows (where
    numba is in use; skipped otherwise)."""
    from lucid.backends._numpy import _compiled
    from lucid.backends._numpy.kernels import softmax

    if request.param == "compiled":
        if _compiled.load(softmax._JIT) is None:
            pytest.skip("numba is not in use here (lucid-core[numba], LUCID_NUMBA)")
        monkeypatch.setattr(softmax, "COMPILED_ROWS", True)
    else:
        monkeypatch.setattr(softmax, "COMPILED_ROWS", False)
    return str(request.param)


@pytest.fixture
def ufunc_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ufuncs' row blocks (held to the op's bits), not the compiled rows."""
    from lucid.backends._numpy.kernels import softmax

    monkeypatch.setattr(softmax, "COMPILED_ROWS", False)


@pytest.fixture
def without_kernels(ufunc_rows: None) -> Iterator[None]:
    saved = {c: _CPU.kernels.pop(c) for c in _CONTRACTS}
    yield
    _CPU.kernels.update(saved)


def _values_and_grad(fn: str, x: np.ndarray, g: np.ndarray, dim: int) -> tuple[np.ndarray, ...]:
    t = lucid.from_numpy(x).requires_grad_()
    y = getattr(lucid, fn)(t, dim)
    y.backward(lucid.from_numpy(g))
    assert t.grad is not None
    return y.detach().numpy().copy(), t.grad.numpy().copy()


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "dim"), [((700, 1000), -1), ((3, 50, 3000), 2),
                                            ((3, 50, 3000), 1), ((4, 10), -1), ((4, 10), 0),
                                            ((3, 5, 7), 1)])  # fmt: skip
def test_blocks_equal_the_op_bit_for_bit(fn: str, dtype: str, shape: tuple[int, ...], dim: int,
                                         without_kernels: None) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    x.reshape(-1, shape[-1])[0] = -np.inf
    x.reshape(-1, shape[-1])[1, 3] = np.nan
    x.reshape(-1, shape[-1])[2, :7] = 1e30
    g = rng.standard_normal(shape).astype(dtype)
    with np.errstate(invalid="ignore"):
        want = _values_and_grad(fn, x, g, dim)
        _CPU.kernels.update({c: k for c, k in _SAVED.items()})
        try:
            got = _values_and_grad(fn, x, g, dim)
        finally:
            for c in _CONTRACTS:
                _CPU.kernels.pop(c)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_the_kernels_decline_what_they_do_not_take() -> None:
    big = np.zeros((600, 1000), np.float32)
    assert _SAVED[kernels.LOG_SOFTMAX].forward(_CPU, big, 1) is not None
    assert _SAVED[kernels.LOG_SOFTMAX].forward(_CPU, big, 0) is None  # not the last dim
    assert _SAVED[kernels.LOG_SOFTMAX].forward(_CPU, big[:, ::2], 1) is None  # strided
    assert _SAVED[kernels.SOFTMAX].forward(_CPU, big[:10], 1) is not None  # small: bare ufuncs
    assert _SAVED[kernels.SOFTMAX].forward(_CPU, big[:10].astype(np.float16), 1) is None
    assert _SAVED[kernels.SOFTMAX_GRAD].forward(_CPU, big, big.astype(np.float64), 1) is None


def test_double_backward_still_runs_in_lucid_ops() -> None:
    x = lucid.randn(600, 1000, dtype=lucid.float64, requires_grad=True)
    (g,) = lucid.autograd.grad(lucid.log_softmax(x, 1)[:, 0].sum(), x, create_graph=True)
    (gg,) = lucid.autograd.grad((g * g).sum(), x)
    assert gg.shape == (600, 1000) and np.isfinite(gg.numpy()).all()


_SAVED = {c: _CPU.kernels[c] for c in _CONTRACTS}


@pytest.mark.parametrize("contract", _CONTRACTS)
def test_blocks_shared_over_two_threads_equal_one_thread(contract: Any, rows: str) -> None:
    # (430, 10000) float32 is past _parallel.PARALLEL_ELEMENTS: two threads take the blocks
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((430, 10_000)) * 5).astype(np.float32)
    x[0] = -np.inf
    y = rng.standard_normal(x.shape).astype(np.float32)
    args = (x, 1) if contract in (kernels.SOFTMAX, kernels.LOG_SOFTMAX) else (x, y, 1)
    saved = lucid.get_num_threads()
    try:
        lucid.set_num_threads(1)
        with np.errstate(invalid="ignore"):
            one = _SAVED[contract].forward(_CPU, *args)
        lucid.set_num_threads(2)
        with np.errstate(invalid="ignore"):
            two = _SAVED[contract].forward(_CPU, *args)
    finally:
        lucid.set_num_threads(saved)
    np.testing.assert_array_equal(one, two)


def _one_hot_grads(shape: tuple[int, int], dtype: str, values: np.ndarray) -> tuple[Any, Any]:
    """log_softmax's gradient for a ``ONE_HOT_ROWS`` array: through its nonzeros, and the
    dense formula over an equal copy (a copy is not the remembered array)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 30).astype(dtype)
    x[0, :] = -1e30  # exp underflows to 0 in a whole row: signed zeros
    cols = rng.integers(0, shape[1], shape[0])
    y = _CPU.kernels[kernels.LOG_SOFTMAX].forward(_CPU, x, 1)
    assert y is not None
    one_hot = _CPU.kernels[kernels.ONE_HOT_ROWS]
    g = one_hot.forward(_CPU, shape, cols, values.astype(dtype))
    assert not g.flags.writeable  # nothing can change it once made
    dense = np.zeros(shape, dtype)
    dense[np.arange(shape[0]), cols] = values
    np.testing.assert_array_equal(g, dense)
    grad = _CPU.kernels[kernels.LOG_SOFTMAX_GRAD]
    with np.errstate(all="ignore"):  # as the op runs it (inf and NaN gradients)
        fast = grad.forward(_CPU, g, y, 1)
        ref = grad.forward(_CPU, g.copy(), y, 1)
    return fast, ref


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(700, 1600), (5, 7)])  # mapped, and np.zeros
def test_a_one_hot_gradient_through_log_softmax_equals_the_dense_formula(
    dtype: str, shape: tuple[int, int], rows: str
) -> None:
    # nll_loss's values (-1/N), an ignored row's -0.0 and 0.0, an infinite and a NaN gradient
    values = np.full(shape[0], -1.0 / shape[0])
    values[:4] = [-0.0, 0.0, np.inf, np.nan]
    fast, ref = _one_hot_grads(shape, dtype, values)
    assert fast.dtype == ref.dtype
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(ref))
    np.testing.assert_array_equal(fast, ref)


def test_nll_loss_of_log_softmax_takes_the_one_hot_path_with_the_same_gradients(rows: str) -> None:
    lucid_nn = pytest.importorskip("lucid.nn")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 1000)).astype(np.float32)
    t = rng.integers(0, 1000, 300)
    t[:3] = -100  # ignored rows

    def grad() -> np.ndarray:
        xt = lucid.from_numpy(x).requires_grad_()
        logp = lucid_nn.functional.log_softmax(xt * 2.0, dim=1)
        lucid_nn.functional.nll_loss(logp, lucid.from_numpy(t)).backward()
        assert xt.grad is not None
        return np.array(xt.grad.numpy())

    made: list[Any] = []
    real = _CPU.kernels[kernels.ONE_HOT_ROWS]

    class Counting:
        @staticmethod
        def forward(backend: Any, shape: Any, cols: Any, values: Any) -> Any:
            made.append(shape)
            return real.forward(backend, shape, cols, values)

    _CPU.kernels[kernels.ONE_HOT_ROWS] = Counting
    try:
        fast = grad()
    finally:
        _CPU.kernels[kernels.ONE_HOT_ROWS] = real
    assert made == [(300, 1000)]
    saved = _CPU.kernels.pop(kernels.ONE_HOT_ROWS)
    try:
        ref = grad()
    finally:
        _CPU.kernels[kernels.ONE_HOT_ROWS] = saved
    np.testing.assert_array_equal(fast, ref)


def test_a_watched_log_probability_gets_an_ordinary_gradient() -> None:
    # retain_grad or a hook on nll_loss's input: the user holds its gradient, so it is the
    # ordinary writable array, not the read-only one-hot one
    lucid_nn = pytest.importorskip("lucid.nn")
    x = lucid.randn(4, 5, requires_grad=True)
    logp = lucid_nn.functional.log_softmax(x * 1.0, dim=1)
    logp.retain_grad()
    seen: list[Any] = []
    logp.register_hook(lambda g: seen.append(g.numpy()))
    lucid_nn.functional.nll_loss(logp, lucid.tensor([0, 1, 2, 3])).backward()
    assert logp.grad is not None
    assert logp.grad.numpy().flags.writeable
    assert seen[0].flags.writeable
    np.testing.assert_allclose(logp.grad.numpy(), np.eye(4, 5) * -0.25, rtol=0, atol=0)


def test_one_hot_pages_are_reused_only_when_nothing_views_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lucid.backends._numpy.kernels import softmax

    one_hot = _CPU.kernels[kernels.ONE_HOT_ROWS]
    shape = (300, 4000)  # 4.8 MB: mapped
    rng = np.random.default_rng(5)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    bases = set()
    for i in range(8):
        cols = rng.integers(-4000, 4000, shape[0])  # negative columns count from the end
        values = rng.standard_normal(shape[0]).astype(np.float32)
        g = one_hot.forward(_CPU, shape, cols, values)
        dense = np.zeros(shape, np.float32)
        dense[np.arange(shape[0]), cols] = values
        np.testing.assert_array_equal(g, dense)
        assert not g.flags.writeable
        base = g
        while isinstance(base.base, np.ndarray):
            base = base.base
        bases.add(id(base.base))
        if i in (2, 3):  # a view kept alive: its values must not change
            kept.append((g[7:9, ::3], dense[7:9, ::3].copy()))
        del g, base
    for view, expect in kept:
        np.testing.assert_array_equal(view, expect)
    assert softmax.REUSE_ONE_HOT_PAGES
    monkeypatch.setattr(softmax, "REUSE_ONE_HOT_PAGES", False)
    g = one_hot.forward(_CPU, shape, cols, values)
    np.testing.assert_array_equal(g, dense)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fold", [True, False])
def test_negative_one_hot_rows_fold_the_sign_with_the_dense_formulas_bits(
    dtype: str, fold: bool, monkeypatch: pytest.MonkeyPatch, rows: str
) -> None:
    # every row's value negative (nll_loss's -1/N, an infinite one, a subnormal one): the rows
    # are exp(y) * (-s) in one pass fewer, the same bits as 0 - exp(y) * s (signed zeros too)
    from lucid.backends._numpy.kernels import softmax

    monkeypatch.setattr(softmax, "FOLD_ONE_HOT_SIGN", fold)
    values = np.full(700, -1.0 / 700)
    values[:3] = [-np.inf, -1e-310, -5.0]
    fast, ref = _one_hot_grads((700, 1600), dtype, values)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(ref))
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.filterwarnings("ignore:This process .* fork:DeprecationWarning")
def test_a_forked_child_does_not_see_the_parents_reused_pages() -> None:
    # the mapping is shared with a forked child: after a fork the parent must not rewrite it
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    one_hot = _CPU.kernels[kernels.ONE_HOT_ROWS]
    shape = (300, 4000)
    cols = np.arange(300) % 4000
    g = one_hot.forward(_CPU, shape, cols, np.full(300, -1.0, np.float32))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the parent's rewrite, then check its own copy
        try:
            os.read(r, 1)
            os._exit(0 if float(g[0, 0]) == -1.0 and float(g.sum()) == -300.0 else 1)
        except BaseException:
            os._exit(2)
    view = g[:1]  # the parent: drop its array, reuse the pages with other values
    del g, view
    one_hot.forward(_CPU, shape, (cols + 1) % 4000, np.full(300, -2.0, np.float32))
    os.write(w, b"x")
    _, status = os.waitpid(pid, 0)
    os.close(r)
    os.close(w)
    assert os.WEXITSTATUS(status) == 0


def _oracle(fn: str, x: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fn``'s values and gradient in float64 with NumPy (each row shifted by its maximum)."""
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    with np.errstate(all="ignore"):
        s = x64 - x64.max(axis=-1, keepdims=True)
        lse = np.log(np.exp(s).sum(axis=-1, keepdims=True))
        y = s - lse
        if fn == "log_softmax":
            return y, g64 - np.exp(y) * g64.sum(axis=-1, keepdims=True)
        p = np.exp(y)
        return p, p * (g64 - (g64 * p).sum(axis=-1, keepdims=True))


# the last two are small: log_softmax's compiled rows in one call (COMPILED_SMALL_ROWS)
_ORACLE_SHAPES = [(700, 1000), (30_000, 9), (40, 10_037), (3, 100_003), (6, 18), (768, 65)]


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", _ORACLE_SHAPES)
def test_compiled_rows_match_a_float64_oracle(fn: str, shape: tuple[int, int], rows: str) -> None:
    # rows of fewer than 16 lanes, lengths that leave a tail, runs of 1,024 and a row past 2^16;
    # rows of -inf, with a NaN, with +inf and of -1e30 but one value (exp underflows to 0)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    x[0] = -np.inf
    x[1, 2] = np.nan
    x[2, 1] = np.inf
    x[-1] = -1e30
    x[-1, -1] = 3.0
    g = rng.standard_normal(shape).astype(np.float32)
    with np.errstate(invalid="ignore"):
        got = _values_and_grad(fn, x, g, -1)
    want = _oracle(fn, x, g)
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        # float32 rounding: of the largest |value| a row holds (the gradient's sum of g)
        ok = ~np.isnan(b)
        scale = np.abs(np.where(ok, b, 0)).max(axis=-1, keepdims=True) + 1.0
        np.testing.assert_allclose(a[ok] / np.broadcast_to(scale, a.shape)[ok],
                                   b[ok] / np.broadcast_to(scale, b.shape)[ok],
                                   rtol=0, atol=4e-6)  # fmt: skip
    if fn == "softmax":  # an underflowing term is exactly 0, every row sums to 1
        assert (got[0][-1, :-1] == 0).all() and got[0][-1, -1] == 1
        sums = got[0][3:-1].astype(np.float64).sum(axis=-1)
        np.testing.assert_allclose(sums, 1.0, rtol=0, atol=1e-5)


@pytest.mark.parametrize(("shape", "dim"), [((1, 18), -1), ((18, 1), 0), ((2, 3, 5), 2),
                                            ((4, 10), 1)])  # fmt: skip
def test_small_float32_log_softmax_takes_the_compiled_rows_in_one_call(
    shape: tuple[int, ...], dim: int, rows: str
) -> None:
    # COMPILED_SMALL_ROWS: a small float32 log_softmax over its last dim (or one row) is the
    # compiled rows' values; without them (or for softmax, float64, a strided array, another
    # dim) the op's ufunc passes, bit for bit
    from lucid.backends._numpy import _compiled
    from lucid.backends._numpy.kernels import softmax

    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) * 6).astype(np.float32)
    fwd = _SAVED[kernels.LOG_SOFTMAX].forward
    got = fwd(_CPU, x, dim)
    if rows == "compiled":
        n = shape[dim]
        want = np.empty((x.size // n, n), np.float32)
        _compiled.load(softmax._JIT).log_softmax_rows(x.reshape(-1, n), want, 0, want.shape[0])
        np.testing.assert_array_equal(got, want.reshape(shape))
    else:
        np.testing.assert_array_equal(got, softmax._small_forward(x, dim, True))
    assert got.shape == shape and got.dtype == np.float32
    strided = np.repeat(x, 2, axis=-1)[..., ::2]  # x's values, not C-contiguous
    assert not strided.flags.c_contiguous
    for other in (x.astype(np.float64), strided):
        want = softmax._small_forward(other, dim, True)
        np.testing.assert_array_equal(fwd(_CPU, other, dim), want)
    np.testing.assert_array_equal(_SAVED[kernels.SOFTMAX].forward(_CPU, x, dim),
                                  softmax._small_forward(x, dim, False))  # fmt: skip
    if len(shape) == 3:  # not the last dim
        np.testing.assert_array_equal(fwd(_CPU, x, 1), softmax._small_forward(x, 1, True))


def test_compiled_exp_matches_float64_over_the_float32_range() -> None:
    numba = pytest.importorskip("numba")
    from lucid.backends._numpy import _compiled

    jit = _compiled.load("_softmax_jit")
    if jit is None:
        pytest.skip("numba is not in use here (lucid-core[numba], LUCID_NUMBA)")
    expf = jit._expf

    def loop(x: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover (compiled)
        for i in range(x.shape[0]):
            out[i] = expf(x[i])

    each = numba.njit(loop)

    x = np.linspace(-87.3, 88.7, 400_001, dtype=np.float32)
    out = np.empty_like(x)
    each(x, out)
    want = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=2.5e-7, atol=0)
    assert out[np.searchsorted(x, 0.0)] == np.exp(np.float32(x[np.searchsorted(x, 0.0)]))
    edge = np.array([0.0, -0.0, -87.4, -200.0, -np.inf, 88.8, np.inf, np.nan], np.float32)
    out = np.empty_like(edge)
    each(edge, out)
    np.testing.assert_array_equal(out[:7], [1.0, 1.0, 0.0, 0.0, 0.0, np.inf, np.inf])
    assert np.isnan(out[7])


def test_compiled_rows_run_on_the_pool_or_numbas_threads_with_the_same_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lucid.backends._numpy import _compiled, _parallel
    from lucid.backends._numpy.kernels import softmax
    from lucid.backends._numpy.kernels.special import pool_blocks

    if _compiled.load(softmax._JIT) is None:
        pytest.skip("numba is not in use here (lucid-core[numba], LUCID_NUMBA)")
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((400, 10_000)) * 4).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    saved = lucid.get_num_threads()
    results = []
    try:
        lucid.set_num_threads(2)
        for leader in (_parallel.POOL, _parallel.NUMBA):
            monkeypatch.setattr(_parallel.blas_threads, "last", leader)
            assert pool_blocks() == (leader == _parallel.POOL)
            y = _SAVED[kernels.LOG_SOFTMAX].forward(_CPU, x, 1)
            results.append((y, _SAVED[kernels.LOG_SOFTMAX_GRAD].forward(_CPU, g, y, 1),
                            _SAVED[kernels.SOFTMAX].forward(_CPU, x, 1)))  # fmt: skip
    finally:
        lucid.set_num_threads(saved)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
