"""Jobs of 2 real MPI ranks on this machine, started as subprocesses with a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

WORKERS = Path(__file__).parent / "workers"
TIMEOUT_S = 90  # far above a job's few seconds: reaching it means a hang


def _mpiexec() -> str:
    path = Path(sys.executable).parent / "mpiexec"
    if not path.exists():
        pytest.skip("no mpiexec next to this Python (pip install mpich)")
    return str(path)


LAUNCHER_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")


def _env() -> dict[str, str]:
    """This environment without a launcher's variables (a job sets its own), 1 BLAS thread."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


Job = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def mpi_job() -> Job:
    """``mpi_job(worker, *args, n=2)`` runs ``tests/workers/<worker>`` on ``n`` ranks."""

    def run(worker: str, *args: str, n: int = 2) -> subprocess.CompletedProcess[str]:
        cmd = [_mpiexec(), "-n", str(n), sys.executable, str(WORKERS / worker), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env())

    return run


@pytest.fixture(scope="session")
def lucid_run() -> Job:
    """``lucid_run(*argv)``: the ``lucid-run`` command line, run in a subprocess."""

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        _mpiexec()
        cmd = [sys.executable, "-m", "lucid.distributed.run", *argv]
        env = {k: v for k, v in _env().items() if not k.endswith("_NUM_THREADS")}
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)

    return run
