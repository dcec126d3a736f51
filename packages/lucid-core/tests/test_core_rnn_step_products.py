"""The recurrent layers' per-step products on OpenBLAS's small-matrix kernels (issue 30): a
float32 LSTM or GRU layer of few rows runs ``h @ w_hh^T`` (and backward ``dgates @ w_hh``) as
column blocks (``_gemm_jit.add_blocks``), each GEMM adding into its destination. Another order
of float32 sums than one GEMM: against the ``np.matmul`` path (``SMALL_STEP_PRODUCTS`` off,
and the LUCID_NUMBA=0 code) and a float64 oracle within float32 rounding (rtol and atol); at
one thread and at two (the pipelined input-side products) the same bits. The blocks are forced
on cores without the small kernels (``small_blocks`` patched), so the path runs everywhere
numba does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lucid.backends._numpy import _compiled, _parallel
from lucid.backends._numpy._settings import cpu
from lucid.backends._numpy.kernels import lstm
from lucid.backends._numpy.kernels.gru import CpuGru
from lucid.backends._numpy.kernels.lstm import CpuLstm

_RTOL, _ATOL = 2e-5, 2e-5  # float32 against float64 and against the np.matmul path

pytestmark = pytest.mark.skipif(
    _compiled.load("_gemm_jit") is None, reason="numba or NumPy's OpenBLAS CBLAS missing"
)


def _blocks(m: int, k: int) -> int:
    """``small_blocks``'s column block without its core check (the blocks run on any BLAS)."""
    if k < 32 or not (m <= 24 or (k >= 128 and m <= 100)):
        return 0
    return min(1200 // m, 100**3 // (m * k))


@pytest.fixture
def blocks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The blocks on, on every core; the names of the compiled calls made, in order."""
    gemm = _compiled.load("_gemm_jit")
    # blocks of at most 40 columns: several a product, the last one ragged
    monkeypatch.setattr(gemm, "small_blocks", lambda m, k: min(40, _blocks(m, k)))
    calls: list[str] = []
    run = _compiled.run

    def counted(name: str, fn: str, *args: Any) -> bool:
        calls.append(fn)
        return run(name, fn, *args)

    monkeypatch.setattr(_compiled, "run", counted)
    return calls


def _arrays(rng: Any, dtype: Any, steps: int, n: int, i: int, h: int, g: int) -> list[Any]:
    x = rng.standard_normal((steps, n, i)).astype(dtype)
    w_ih, w_hh = (rng.standard_normal((g * h, k)).astype(dtype) * 0.1 for k in (i, h))
    b_ih, b_hh = (rng.standard_normal(g * h).astype(dtype) for _ in range(2))
    return [x, w_ih, w_hh, b_ih, b_hh]


def _lstm(dtype: Any, reverse: bool, dy: bool, states: bool, steps: int = 9, n: int = 6,
          i: int = 40, h: int = 48) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(3)
    x, w_ih, w_hh, b_ih, b_hh = _arrays(rng, dtype, steps, n, i, h, 4)
    h0 = rng.standard_normal((h, n)).astype(dtype).T  # not C-contiguous
    c0 = rng.standard_normal((n, h)).astype(dtype)
    gy = rng.standard_normal((steps, n, h)).astype(dtype) if dy else None
    dh = rng.standard_normal((h, n)).astype(dtype).T if states else None
    dc = rng.standard_normal((n, h)).astype(dtype) if states else None
    outs, res = CpuLstm.forward(None, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
    grads = CpuLstm.backward(None, res, (gy, dh, dc), [True] * 7)
    return [np.array(o) for o in outs] + [g for g in grads if g is not None]


def _gru(dtype: Any, reverse: bool, dy: bool, states: bool, bias: bool = True, steps: int = 9,
         n: int = 6, i: int = 40, h: int = 48) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(4)
    x, w_ih, w_hh, b_ih, b_hh = _arrays(rng, dtype, steps, n, i, h, 3)
    if not bias:
        b_ih = b_hh = None
    h0 = rng.standard_normal((h, n)).astype(dtype).T  # not C-contiguous
    gy = rng.standard_normal((steps, n, h)).astype(dtype) if dy else None
    dh = rng.standard_normal((n, h)).astype(dtype) if states else None
    outs, res = CpuGru.forward(None, x, h0, w_ih, w_hh, b_ih, b_hh, reverse)
    grads = CpuGru.backward(None, res, (gy, dh), [True] * 6)
    return [np.array(o) for o in outs] + [g for g in grads if g is not None]


def _compare(got: list[np.ndarray], want: list[np.ndarray], rtol: float, atol: float) -> None:
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"item {k}")


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("dy", "states"), [(True, True), (True, False), (False, True)])
def test_lstm_step_products_on_blocks_match_matmul_and_float64(
    blocks: list[str], monkeypatch: pytest.MonkeyPatch, reverse: bool, dy: bool, states: bool
) -> None:
    got = _lstm(np.float32, reverse, dy, states)
    assert blocks.count("add_small") == 2 * 9  # every step, forward and backward
    oracle = _lstm(np.float64, reverse, dy, states)
    monkeypatch.setattr(lstm, "SMALL_STEP_PRODUCTS", False)
    calls = len(blocks)
    plain = _lstm(np.float32, reverse, dy, states)
    assert "add_small" not in blocks[calls:]
    monkeypatch.setattr(cpu, "numba_enabled", False)  # the LUCID_NUMBA=0 code
    numpy_only = _lstm(np.float32, reverse, dy, states)
    for k, (a, b) in enumerate(zip(plain, numpy_only)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")
    _compare(got, plain, _RTOL, _ATOL)
    _compare(got, oracle, _RTOL, _ATOL)
    _compare(plain, oracle, _RTOL, _ATOL)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("dy", "states", "bias"), [(True, True, True), (False, True, False),
                                                    (True, False, True)])  # fmt: skip
def test_gru_step_products_on_blocks_match_matmul_and_float64(
    blocks: list[str], monkeypatch: pytest.MonkeyPatch, reverse: bool, dy: bool, states: bool,
    bias: bool,
) -> None:  # fmt: skip
    got = _gru(np.float32, reverse, dy, states, bias)
    assert blocks.count("linear_blocks") == 9 and blocks.count("add_small") == 9
    oracle = _gru(np.float64, reverse, dy, states, bias)
    monkeypatch.setattr(lstm, "SMALL_STEP_PRODUCTS", False)
    plain = _gru(np.float32, reverse, dy, states, bias)
    monkeypatch.setattr(cpu, "numba_enabled", False)
    numpy_only = _gru(np.float32, reverse, dy, states, bias)
    for k, (a, b) in enumerate(zip(plain, numpy_only)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")
    _compare(got, plain, _RTOL, _ATOL)
    _compare(got, oracle, _RTOL, _ATOL)


def test_float64_many_rows_and_numba_off_keep_matmul(blocks: list[str]) -> None:
    _lstm(np.float64, False, True, True)
    _gru(np.float64, False, True, True)
    _lstm(np.float32, False, True, True, n=40, h=128)  # over _STEP_ROWS
    assert "add_small" not in blocks and "linear_blocks" not in blocks
    assert lstm._small_steps(6, 48, np.zeros((6, 4), np.float32))[1] > 0
    assert lstm._small_steps(6, 48, np.zeros((4, 6), np.float32).T)[1] == 0  # not C-contiguous
    assert lstm._small_steps(6, 8, np.zeros((6, 4), np.float32))[1] == 0  # k < 32


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_step_products_give_the_same_bits_at_one_thread_and_two(
    blocks: list[str], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    # word_language_model's layer: at two threads the input-side products run pipelined on the
    # pool (LSTM), the per-step products on the calling thread either way
    run = _lstm if mode == "lstm" else _gru
    shape = {"steps": 35, "n": 20, "i": 200, "h": 200}
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    two = run(np.float32, False, True, True, **shape)  # type: ignore[operator]
    monkeypatch.setattr(_parallel, "workers", lambda: 1)
    one = run(np.float32, False, True, True, **shape)  # type: ignore[operator]
    assert "add_small" in blocks
    for k, (a, b) in enumerate(zip(two, one)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")


@pytest.mark.parametrize("shape", [(20, 200, 800), (5, 40, 160), (1, 64, 256), (7, 800, 200)])
def test_add_blocks_adds_the_products_bits(shape: tuple[int, int, int]) -> None:
    """``out += x @ w.T`` in column blocks, each GEMM adding into ``out`` (beta 1): the bits of
    ``linear_blocks``' products added by NumPy's add, at one thread and split over two, and a
    float64 oracle's values to float32 rounding."""
    gemm = _compiled.load("_gemm_jit")
    m, k, n = shape
    rng = np.random.default_rng(m * k)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    acc = rng.standard_normal((m, n)).astype(np.float32)
    nb = _blocks(m, k) or 60
    prod = np.empty((m, n), np.float32)
    gemm.linear_blocks(x, w, w[0], prod, False, nb, 0, n)
    want = acc + prod
    for threads in (False, True):
        out = acc.copy()
        gemm.add_small(x, w, out, nb, threads)
        np.testing.assert_array_equal(out, want)
    part = acc.copy()
    gemm.add_blocks(x, w, part, nb, nb, n)  # the columns from nb on
    np.testing.assert_array_equal(part[:, :nb], acc[:, :nb])
    np.testing.assert_array_equal(part[:, nb:], want[:, nb:])
    oracle = acc.astype(np.float64) + x.astype(np.float64) @ w.T.astype(np.float64)
    np.testing.assert_allclose(want, oracle, rtol=1e-5, atol=1e-4 * np.sqrt(k))
