"""torch.multiprocessing's sharing strategies and torch.profiler's availability queries, as
lucid answers them."""

from __future__ import annotations

import pytest

import lucid.multiprocessing as mp
from lucid import profiler


def test_sharing_strategy_is_remembered_and_checked() -> None:
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    assert mp.get_sharing_strategy() == "file_descriptor"
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
        with pytest.raises(AssertionError, match="set_sharing_strategy expects one of"):
            mp.set_sharing_strategy("shm")
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")


def test_profiler_reports_cpu_activity_without_kineto() -> None:
    assert profiler.supported_activities() == {profiler.ProfilerActivity.CPU}
    assert profiler.kineto_available() is False


@pytest.mark.parity
def test_torch_has_the_same_strategies_and_default() -> None:
    torch = pytest.importorskip("torch")
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert {a.name for a in profiler.supported_activities()} <= {
        a.name for a in torch.profiler.supported_activities()
    }
