"""The GPT step's kernels split over two threads (issue 30) against the same kernels on one.

GELU's gradient blocks and the ufunc code's blocks (lucid's pool), GELU's forward, layer norm's
rows and the Adam step (numba's threads) split over independent elements or rows: their results
must equal the one-thread results bit for bit. Layer norm's weight and bias gradients add each
thread's float64 partial sums: equal in float32 here, within float64 rounding in float64.
Each split is forced at small sizes (its module's threshold at 0, two workers); where the
machine has one core or no thread-safe numba layer, the same partition code runs inline.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lucid.backends import cpu, get_backend
from lucid.backends._numpy import _compiled, _parallel
from lucid.backends._numpy.kernels import special
from lucid.kernels import ADAM_STEP, GELU, GELU_GRAD

_CPU = get_backend("cpu")


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every runtime may split over two threads, from any size."""
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", False)
    monkeypatch.setattr(special, "SPLIT_BLOCKS_ELEMENTS", 0)
    if _compiled.load("_special_jit") is not None:
        from lucid.backends._numpy import _numba

        monkeypatch.setattr(_numba, "SPLIT_ELEMENTS", 0)


def _gelu_pair(x: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
    fwd, grad = GELU.find(_CPU), GELU_GRAD.find(_CPU)
    assert fwd is not None and grad is not None
    return [fwd.forward(_CPU, x, "none"), grad.forward(_CPU, g, x, "none"),
            fwd.forward(_CPU, x, "tanh"), grad.forward(_CPU, g, x, "tanh")]  # fmt: skip


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "ufuncs"])
def test_gelu_split_over_threads_gives_one_threads_bits(
    numba: bool, two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if numba and _compiled.load("_special_jit") is None:
        pytest.skip("numba not installed")
    monkeypatch.setattr(cpu, "numba_enabled", numba)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 70_001)) * 3).astype(np.float32)  # 6 blocks, a short last one
    x[0, :5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    g = rng.standard_normal(x.shape).astype(np.float32)
    with np.errstate(all="ignore"):
        split = _gelu_pair(x, g)
        monkeypatch.setattr(special, "SPLIT_BLOCKS_ELEMENTS", 1 << 62)
        if numba:
            jit = _compiled.load("_special_jit")
            monkeypatch.setattr(jit, "SPLIT_ELEMENTS", 1 << 62)
            monkeypatch.setattr(jit, "HOT_SPLIT_ELEMENTS", 1 << 62)
        one = _gelu_pair(x, g)
    for a, b in zip(split, one):  # None: the op's own code (the tanh form without numba)
        assert (a is None) == (b is None)
        assert a is None or a.tobytes() == b.tobytes()


@pytest.mark.parametrize(
    ("last", "spins"), [("numba", True), ("numba", False), ("pool", True), (None, True)]
)
def test_gelu_splits_from_32k_elements_where_numbas_threads_are_awake(
    last: str | None, spins: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generated token's GELU, (64, 512): split over numba's threads right after a split of
    theirs where they spin after one (awake), on the calling thread otherwise (asleep, or
    another runtime ran last); the same bits either way."""
    jit = _compiled.load("_special_jit")
    if jit is None:
        pytest.skip("numba not installed")
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel.blas_threads, "openblas_after_numba", False)
    monkeypatch.setattr(_parallel.blas_threads, "omp_spins", spins)
    monkeypatch.setattr(_parallel.blas_threads, "pool_follows", set())
    monkeypatch.setattr(_parallel.blas_threads, "last", last)
    splits: list[str] = []
    run_split = jit.run.__globals__["run_split"]

    def counted(name: str, *args: Any) -> None:
        splits.append(name)
        run_split(name, *args)

    monkeypatch.setitem(jit.run.__globals__, "run_split", counted)
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((64, 512)) * 3).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    fwd = GELU.find(_CPU)
    assert fwd is not None
    with np.errstate(all="ignore"):
        got = fwd.forward(_CPU, x, "none")
        serial = np.empty_like(x)
        jit.gelu_rational(x.reshape(-1), serial.reshape(-1))
    assert got.tobytes() == serial.tobytes()
    import numba  # noqa: PLC0415  (installed: ``jit`` loaded)

    # one core, or no thread-safe layer: the split's own check keeps it on the calling thread
    can_split = numba.config.NUMBA_NUM_THREADS >= 2 and _numba_layer_ok()
    awake = last == "numba" and spins
    assert splits == (["gelu_rational_split"] if awake and can_split else [])


def _numba_layer_ok() -> bool:
    from lucid.backends._numpy import _numba  # noqa: PLC0415  (numba installed)

    return _numba.thread_layer.ok is not False


def _layernorm(jit: object, x: np.ndarray, w: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
    rows, d = x.shape
    y, mean, rstd = np.empty_like(x), np.empty(rows), np.empty(rows)
    jit.forward(x, w, np.empty(0, x.dtype), 1e-5, y, mean, rstd)  # type: ignore[attr-defined]
    dx, dw, db = np.empty_like(x), np.zeros(d), np.zeros(d)
    jit.backward(x, g, w, mean, rstd, dx, dw, db, True)  # type: ignore[attr-defined]
    return [y, mean, rstd, dx, dw, db]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(768, 128), (7, 33)])
def test_layer_norm_rows_split_over_threads(
    dtype: Any, shape: tuple[int, int], two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    jit = _compiled.load("_layernorm_jit")
    if jit is None:
        pytest.skip("numba not installed")
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    monkeypatch.setattr(jit, "SPLIT_ELEMENTS", 0)
    split = _layernorm(jit, x, w, g)
    monkeypatch.setattr(jit, "SPLIT_ELEMENTS", 1 << 62)
    one = _layernorm(jit, x, w, g)
    for a, b in zip(split[:4], one[:4]):  # per row: the same bits
        assert a.tobytes() == b.tobytes()
    for a, b in zip(split[4:], one[4:]):  # float64 sums added in another order
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
        if dtype == np.float32:
            np.testing.assert_array_equal(a.astype(dtype), b.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("decoupled", [True, False])
def test_adam_step_split_over_threads_gives_one_threads_bits(
    dtype: Any, decoupled: bool, two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    jit = _compiled.load("_adam_jit")
    if jit is None:
        pytest.skip("numba not installed")
    kernel = ADAM_STEP.find(_CPU)
    assert kernel is not None
    rng = np.random.default_rng(5)
    start = [rng.standard_normal(10_001).astype(dtype) for _ in range(3)]
    start[2] = np.abs(start[2])  # v
    g = rng.standard_normal(10_001).astype(dtype)
    hyper = (1e-3, 0.9, 0.99, 1e-8, 0.1, decoupled, False, 0.3, -2e-3)
    results = []
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(jit, "SPLIT_ELEMENTS", threshold)
        p, m, v = (a.copy() for a in start)
        for _ in range(3):
            assert kernel.forward(_CPU, p, g, m, v, hyper)
        results.append((p, m, v))
    for a, b in zip(*results):
        assert a.tobytes() == b.tobytes()
