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


def test_distributed_an_aborting_rank_waits_until_the_launcher_has_read_its_output() -> None:
    """MPI_Abort kills every rank at once: what a rank wrote just before must have left its
    pipe first, or the job fails with an empty stderr (seen once in CI)."""
    import select
    import subprocess
    import sys

    child = (
        "import sys, time\n"
        "from lucid.distributed._mpi import drain_stdio\n"
        "sys.stderr.write('x' * 100)\n"
        "t = time.monotonic(); drain_stdio(limit=float(sys.argv[1]))\n"
        "print(round(time.monotonic() - t, 3))\n"
    )
    for limit, reader_delay in ((10.0, 0.6), (0.3, None)):
        proc = subprocess.Popen([sys.executable, "-c", child, str(limit)], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        assert proc.stderr is not None and proc.stdout is not None
        if reader_delay is None:  # nobody reads: drain gives up at its limit
            waited = float(proc.stdout.readline())
            assert 0.3 <= waited < 5
            assert proc.stderr.read() == "x" * 100
        else:
            select.select([proc.stderr], [], [], 30)  # the child has written (nothing read)
            time.sleep(reader_delay)
            assert proc.stderr.read(100) == "x" * 100
            waited = float(proc.stdout.readline())
            assert reader_delay - 0.2 <= waited < 10  # it waited for the read
        assert proc.wait(timeout=30) == 0
