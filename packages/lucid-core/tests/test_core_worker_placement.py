"""The pool's threads kept off the CPU of the thread that hands them work (``PLACE_WORKERS``,
issue 30): Linux may wake a thread on its waker's CPU, where the two then share one CPU until
the next balancing tick, while the caller works beside the pool (chunks, a recurrence)."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from lucid.backends._numpy import _parallel
from lucid.backends._numpy._parallel import BlasThreads


def _allowed() -> set[int]:
    return set(os.sched_getaffinity(0))


def _can_place() -> bool:
    if not hasattr(os, "sched_setaffinity") or _parallel._sched_getcpu() is None:
        return False
    try:
        os.sched_setaffinity(0, _allowed())  # a sandbox may refuse any change
    except OSError:
        return False
    return len(_allowed()) > 1


needs_placement = pytest.mark.skipif(
    not _can_place(), reason="needs Linux's sched_setaffinity and two CPUs this process may use"
)


@pytest.fixture
def threads() -> Any:
    bt = BlasThreads()
    yield bt
    if bt._pool is not None:
        bt._pool.shutdown(wait=True)


def _affinities(pool: Any, n: int) -> list[set[int]]:
    """Each of ``n`` pool threads' CPU set (all ``n`` held at a barrier, so each runs one)."""
    barrier = threading.Barrier(n)

    def report() -> set[int]:
        barrier.wait(timeout=10)
        return set(os.sched_getaffinity(0))

    return [f.result(timeout=10) for f in [pool.submit(report) for _ in range(n)]]


@needs_placement
def test_the_pool_threads_run_off_the_callers_cpu(threads: BlasThreads) -> None:
    pool = threads.pool(2)
    off = threads._off
    assert off is not None and off in _allowed()  # the caller's CPU when it asked
    # both threads, the second made after the placement (its initializer places it)
    for cpus in _affinities(pool, 2):
        assert cpus == _allowed() - {off}
    assert len(threads._tids) == 2


@needs_placement
def test_a_caller_on_another_cpu_moves_them(
    threads: BlasThreads, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = threads.pool(2)
    _affinities(pool, 2)
    first = threads._off
    other = min(_allowed() - {first})
    monkeypatch.setattr(threads, "_getcpu", lambda: other)
    calls: list[Any] = []
    real = os.sched_setaffinity
    monkeypatch.setattr(os, "sched_setaffinity", lambda *a: (calls.append(a), real(*a)))
    threads.pool(2)
    assert threads._off == other
    assert sorted(tid for tid, _ in calls) == sorted(threads._tids)
    for cpus in _affinities(pool, 2):
        assert cpus == _allowed() - {other}
    calls.clear()
    threads.pool(2)  # the same CPU again: no system call
    assert calls == []


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs sched_getaffinity")
@pytest.mark.parametrize("how", ["switched off", "no sched_getcpu"])
def test_without_placement_the_threads_stay_where_the_scheduler_puts_them(
    threads: BlasThreads, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "switched off":
        monkeypatch.setattr(_parallel, "PLACE_WORKERS", False)
    else:
        monkeypatch.setattr(threads, "_getcpu", None)
    pool = threads.pool(2)
    assert threads._off is None
    for cpus in _affinities(pool, 2):
        assert cpus == _allowed()


def test_one_cpu_or_a_refusal_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    monkeypatch.setattr(os, "sched_setaffinity", lambda *a: calls.append(a), raising=False)
    assert not BlasThreads._keep_off([12345], 3)  # no other CPU: the thread stays as it is
    assert calls == []

    def refuse(*a: Any) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "sched_setaffinity", refuse, raising=False)
    assert not BlasThreads._keep_off([12345], 0)
