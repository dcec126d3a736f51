"""A failing rank ends the whole job with a non-zero exit and its error, never a hang."""

from __future__ import annotations

import time


def test_distributed_a_rank_that_raises_ends_the_job_with_its_error(mpi_job) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    job = mpi_job("faults.py")  # rank 0 waits in all_reduce for rank 1, which raises
    assert job.returncode != 0
    assert "ValueError: rank 1 failed on purpose" in job.stderr
    assert "[rank 1] aborting the job" in job.stderr
    assert time.monotonic() - start < 60


def test_distributed_a_rank_that_is_killed_ends_the_job(mpi_job) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    job = mpi_job("faults.py", "kill")
    assert job.returncode != 0
    assert time.monotonic() - start < 60
