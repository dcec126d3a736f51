"""The LSTM layer's input-side products overlapping its recurrence on a pool thread (issue 30):
the forward's input projection and the backward's input gradient in blocks of time steps. Row
blocks of the same products: outputs, states and every gradient equal the whole products' bits
(``PIPELINE_INPUT_PRODUCTS`` off), and both are within float32 rounding of a float64 oracle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lucid.backends._numpy import _parallel
from lucid.backends._numpy.kernels import lstm
from lucid.backends._numpy.kernels.lstm import CpuLstm


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_parallel, "workers", lambda: 2)


def _layer(dtype: Any, reverse: bool, steps: int = 35, n: int = 20, i: int = 200,
           h: int = 200) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(11)
    x = rng.standard_normal((steps, n, i)).astype(dtype)
    h0, c0 = (rng.standard_normal((n, h)).astype(dtype) for _ in range(2))
    w_ih, w_hh = (rng.standard_normal((4 * h, k)).astype(dtype) * 0.1 for k in (i, h))
    b_ih, b_hh = (rng.standard_normal(4 * h).astype(dtype) for _ in range(2))
    dy = rng.standard_normal((steps, n, h)).astype(dtype)
    g = (dy, rng.standard_normal((n, h)).astype(dtype), rng.standard_normal((n, h)).astype(dtype))
    outs, res = CpuLstm.forward(None, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
    return [np.array(o) for o in outs] + list(CpuLstm.backward(None, res, g, [True] * 7))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pipelined_products_give_the_whole_products_bits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch, dtype: Any, reverse: bool
) -> None:
    made: list[str] = []
    start, finish = lstm._Projection.start, lstm._InputGrads.finish

    def counted_start(self: Any) -> None:
        made.append("fwd")
        start(self)

    def counted_finish(self: Any) -> Any:
        made.append("bwd")
        return finish(self)

    monkeypatch.setattr(lstm._Projection, "start", counted_start)
    monkeypatch.setattr(lstm._InputGrads, "finish", counted_finish)
    piped = _layer(dtype, reverse)
    assert made == ["fwd", "bwd"]  # the pipeline ran (a 224-MFLOP projection, 35 steps)
    monkeypatch.setattr(lstm, "PIPELINE_INPUT_PRODUCTS", False)
    whole = _layer(dtype, reverse)
    assert made == ["fwd", "bwd"]
    db_ih, db_hh = piped[-2:]
    assert db_ih is not db_hh  # one sum, two arrays: a leaf gradient may be scaled in place
    np.testing.assert_array_equal(db_ih, db_hh)
    for k, (a, b) in enumerate(zip(piped, whole)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")
    if dtype == np.float32:  # both against a float64 oracle
        monkeypatch.setattr(lstm, "PIPELINE_INPUT_PRODUCTS", True)
        oracle = _layer(np.float64, reverse)
        for k, (a, o) in enumerate(zip(piped, oracle)):
            np.testing.assert_allclose(a, o, rtol=1e-3, atol=1e-4, err_msg=f"item {k}")


def test_small_layers_and_one_thread_take_the_whole_products(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # below PARALLEL_FLOPS matmul runs a product whole (OpenBLAS's small-matrix kernels give
    # other bits for other row counts), and one thread has nothing to overlap
    w = np.zeros((800, 200), np.float32)
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    assert lstm._pipelined(35, 20, w)
    assert not lstm._pipelined(35, 1, w)  # 11 MFLOP: under PARALLEL_FLOPS
    assert not lstm._pipelined(lstm.PIPE_STEPS, 200, w)
    monkeypatch.setattr(_parallel, "workers", lambda: 1)
    assert not lstm._pipelined(35, 20, w)


def test_an_error_on_the_pool_thread_reaches_the_caller(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = lstm._Projection.block

    def failing(self: Any, i: int) -> None:
        if i == self.order[2]:
            raise MemoryError("no room for the block")
        block(self, i)

    monkeypatch.setattr(lstm._Projection, "block", failing)
    with pytest.raises(MemoryError, match="no room"):
        _layer(np.float32, False)


def test_blocks_stay_past_the_small_matrix_size(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 400 steps of batch 10, 50 -> 50: 80 MFLOP, pipelined; blocks of 5 steps would be
    # (50, 200) x (200, 50) input gradients, m * n * k = 500,000, which OpenBLAS may run on its
    # small-matrix kernels (other sums than the whole product's: at one thread and at two the
    # input gradient differed); blocks of 11 steps (the fewest past 100^3) keep the bits
    assert lstm._least_steps(10, 50, 200) == 11
    assert lstm._least_steps(20, 200, 800) == 1
    blocks = lstm._Blocks(400, 11)
    assert all(e - s >= 11 for s, e in blocks.ranges)
    assert blocks.ranges[0][0] == 0 and blocks.ranges[-1][1] == 400
    assert [e - s for s, e in lstm._Blocks(35, 1).ranges] == [5] * 7
    assert [e - s for s, e in lstm._Blocks(23, 11).ranges] == [11, 12]  # no 1-step remainder
    piped = _layer(np.float32, False, steps=400, n=10, i=50, h=50)
    monkeypatch.setattr(_parallel, "workers", lambda: 1)
    one = _layer(np.float32, False, steps=400, n=10, i=50, h=50)
    for k, (a, b) in enumerate(zip(piped, one)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")
