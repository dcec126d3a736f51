"""Big elementwise ops of the NumPy backend split across threads (``_numpy/_ufuncs`` on the
pool of ``_numpy/_parallel``).

Blocked results must be NumPy's own: values, dtype and memory order, for every broadcasting
form. The fixture forces two workers and tiny blocks so that small arrays take the blocked path.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.backends import blas_threads, get_backend
from lucid.backends._numpy import _parallel, _ufuncs


@pytest.fixture
def xp(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The backend namespace with two workers, 4-element blocks and an 8-element threshold."""
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(_parallel, "PARALLEL_ELEMENTS", 8)
    monkeypatch.setattr(_ufuncs, "BLOCK_ELEMENTS", 4)
    monkeypatch.setattr(_ufuncs, "STEP_SPLIT_ELEMENTS", 8)
    monkeypatch.setattr(_ufuncs, "_SMALLEST_SPLIT", 8)
    return get_backend("cpu").xp


def _order(a: Any) -> list[int]:
    return np.argsort(np.asarray(a).strides, kind="stable").tolist()


def _channels_last(shape: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((shape[0], *shape[2:], shape[1])).astype(dtype)
    return a.transpose(0, a.ndim - 1, *range(1, a.ndim - 1))


OPERANDS = {
    "same shape": lambda a: (a, a[::-1] + 1.0),
    "row": lambda a: (a, np.linspace(1.0, 2.0, a.shape[-1]).astype(a.dtype)),
    "column": lambda a: (np.arange(a.shape[0], dtype=a.dtype).reshape(-1, 1, 1, 1) + 1.0, a),
    "python float": lambda a: (a, 2.5),
    "0-d array": lambda a: (np.array(3.0), a),
    "int and float": lambda a: ((a * 10).astype(np.int32), a),
    "float64 and float32": lambda a: (a.astype(np.float64), a),
}


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "maximum",
                                  "greater", "equal"])  # fmt: skip
@pytest.mark.parametrize("form", list(OPERANDS))
def test_blocked_binary_ufuncs_give_numpys_result(xp: Any, name: str, form: str) -> None:
    a = _channels_last((3, 4, 5, 6))
    args = OPERANDS[form](a)
    got, want = getattr(xp, name)(*args), getattr(np, name)(*args)
    assert isinstance(getattr(xp, name), _ufuncs.ThreadedUfunc)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert _order(got) == _order(want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["exp", "negative", "sqrt", "tanh", "abs"])
def test_blocked_unary_ufuncs_keep_a_channels_last_layout(xp: Any, name: str) -> None:
    a = np.abs(_channels_last((2, 5, 3, 7))) + 0.5
    got = getattr(xp, name)(a)
    np.testing.assert_array_equal(got, getattr(np, name)(a))
    assert _order(got) == _order(a)


def test_operands_broadcast_both_ways_and_keyword_calls_are_numpys_own(xp: Any) -> None:
    col, row = np.arange(6.0).reshape(6, 1), np.arange(5.0).reshape(1, 5)
    np.testing.assert_array_equal(xp.add(col, row), col + row)
    out = np.empty((6, 5))
    assert xp.multiply(col, row, out=out) is out
    np.testing.assert_array_equal(out, col * row)


@pytest.mark.parametrize("split", [True, False])
@pytest.mark.parametrize("form", list(OPERANDS))
def test_calls_with_out_give_numpys_result(
    xp: Any, monkeypatch: pytest.MonkeyPatch, split: bool, form: str
) -> None:
    monkeypatch.setattr(_ufuncs, "SPLIT_STEP_ELEMENTWISE", split)
    calls: list[int] = []
    run = _ufuncs._run_blocked

    def counted(*a: Any) -> Any:
        calls.append(1)
        return run(*a)

    monkeypatch.setattr(_ufuncs, "_run_blocked", counted)
    a = _channels_last((3, 4, 5, 6), np.float64)
    args = OPERANDS[form](a)
    want = np.add(*args)
    out = np.empty_like(want)
    assert xp.add(*args, out=out) is out
    np.testing.assert_array_equal(out, want)
    assert bool(calls) == split
    out_tuple = np.empty_like(want)
    assert xp.add(*args, out=(out_tuple,)) is not None
    np.testing.assert_array_equal(out_tuple, want)


def test_in_place_updates_split_and_overlapping_operands_do_not(xp: Any) -> None:
    rng = np.random.default_rng(3)
    p = rng.standard_normal((64, 9)).astype(np.float32)
    g = rng.standard_normal((64, 9)).astype(np.float32)
    want = p - 0.1 * g
    scaled = xp.multiply(g, np.float32(0.1))
    assert xp.subtract(p, scaled, out=p) is p  # an optimizer's in-place update
    np.testing.assert_array_equal(p, want)
    assert _ufuncs._blocks_apart((p, scaled), p)
    # Shifted views of one buffer: NumPy copies the operand first; the blocks must not split.
    buf = np.arange(40, dtype=np.float64)
    assert not _ufuncs._blocks_apart((buf[:-1], 1.0), buf[1:])
    expected = buf.copy()
    np.add(expected[:-1], 1.0, out=expected[1:])
    xp.add(buf[:-1], 1.0, out=buf[1:])
    np.testing.assert_array_equal(buf, expected)
    # A result of another shape (an operand broadcast into out is fine, out broadcast is not).
    out = np.zeros((4, 10))
    xp.add(np.ones(10), np.arange(40.0).reshape(4, 10), out=out)
    np.testing.assert_array_equal(out, np.arange(40.0).reshape(4, 10) + 1)


def test_ufunc_methods_are_the_ufuncs_own(xp: Any) -> None:
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(xp.add.reduce(a, axis=1), a.sum(axis=1))
    np.testing.assert_array_equal(xp.maximum.accumulate(a[::-1], axis=0),
                                  np.maximum.accumulate(a[::-1], axis=0))  # fmt: skip
    b = np.zeros(3)
    xp.add.at(b, [0, 0, 2], 1.0)
    np.testing.assert_array_equal(b, [2.0, 0.0, 1.0])
    assert xp.add.nin == 2


def test_blocked_casts_keep_values_and_layout(xp: Any) -> None:
    a = _channels_last((3, 4, 2, 5), np.float64)
    backend = get_backend("cpu")
    got = backend.astype(a, lucid.float32)
    assert got.dtype == np.float32 and _order(got) == _order(a)
    np.testing.assert_array_equal(got, a.astype(np.float32))
    assert backend.astype(a, lucid.float64) is a  # no copy when the dtype is already right


@pytest.mark.parametrize("split", [True, False])
def test_backend_copies_keep_values_and_layout(
    xp: Any, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    monkeypatch.setattr(_ufuncs, "SPLIT_STEP_ELEMENTWISE", split)
    backend = get_backend("cpu")
    a = _channels_last((3, 4, 2, 5), np.float32)
    for arr in (a, a[:, ::-1], np.asfortranarray(a), np.arange(12)):
        got = backend.copy(arr)
        want = np.array(arr, copy=True)
        assert got.dtype == want.dtype and got.strides == want.strides
        assert not np.shares_memory(got, arr)
        np.testing.assert_array_equal(got, want)


def test_lucid_ops_on_big_tensors_match_numpy(xp: Any) -> None:
    a, b = _channels_last((2, 3, 4, 4), seed=1), _channels_last((2, 3, 4, 4), seed=2)
    x, y = lucid.from_numpy(a).requires_grad_(True), lucid.from_numpy(b)
    z = (x + y) * y
    np.testing.assert_allclose(z.detach().numpy(), (a + b) * b, rtol=1e-6, atol=1e-6)
    lucid.relu(z).sum().backward()
    want = np.where((a + b) * b > 0, b, 0.0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-6)


def test_map_blocks_runs_on_the_pool_and_keeps_order(xp: Any) -> None:
    both = threading.Barrier(2, timeout=10)  # passes only if two threads work at once

    def work(r: tuple[int, int]) -> tuple[int, str]:
        if r[0] < 2:
            both.wait()
        return r[0], threading.current_thread().name

    out = _parallel.map_blocks(work, _parallel.blocks(4, 1), elements=100)
    assert [s for s, _ in out] == [0, 1, 2, 3]
    assert len({name for _, name in out[:2]}) == 2


def test_a_workers_error_reaches_the_caller(xp: Any) -> None:
    def work(r: tuple[int, int]) -> int:
        if r[0] == 3:
            raise ValueError("block 3")
        return r[0]

    with pytest.raises(ValueError, match="block 3"):
        _parallel.map_blocks(work, _parallel.blocks(6, 1), elements=100)


def test_small_work_and_work_inside_a_pool_worker_run_inline(xp: Any) -> None:
    assert _parallel.workers_for(4) == 1
    assert _parallel.workers_for(100) == 2
    # a thread of the pool itself (marked by the pool's initializer), and a plain thread
    pool = _parallel.blas_threads.pool(2)
    assert pool.submit(_parallel.workers_for, 100).result() == 1
    assert pool.submit(_parallel.in_worker).result() is True
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(_parallel.workers_for(100)))
    t.start()
    t.join()
    assert seen == [2]
    assert not _parallel.in_worker()


def test_without_the_forcing_only_large_arrays_are_split() -> None:
    assert _parallel.PARALLEL_ELEMENTS >= 1 << 16
    a = np.ones(16, np.float32)
    assert _parallel.workers_for(a.size) == 1
