"""A failing rank ends the whole job with a non-zero exit and its error, never a hang."""

from __future__ import annotations

import time
from pathlib import Path

WORKERS = Path(__file__).parent / "workers"


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


def test_distributed_a_stuck_rank_ends_the_job_at_the_timeout(mpi_job) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    job = mpi_job("faults.py", "stuck")  # rank 1 sleeps 60 s; the group's timeout is 2 s
    assert job.returncode != 0
    assert "all_reduce did not complete within the process group's timeout of 2 s" in job.stderr
    assert "[rank 0] aborting the job" in job.stderr
    assert time.monotonic() - start < 30


def test_distributed_a_rank_that_exits_with_an_error_ends_the_job(lucid_run) -> None:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    job = lucid_run("--nproc-per-node", "2", str(WORKERS / "faults.py"), "exit")
    assert job.returncode != 0
    assert "[rank 1] aborting the job: this rank exited with status 3" in job.stderr
    assert time.monotonic() - start < 60
