"""``lucid-train --nproc N``: data-parallel training on N processes (lucid-distributed, on MPI).

``lucid-train ... --nproc N`` checks its settings, then starts itself again as N ranks through
MPI's launcher (``lucid-run --nproc-per-node N`` does the same); a process that is already
one of N ranks (under ``lucid-run`` or ``mpiexec -n N``) trains as that rank. Each rank reads
its shard of every epoch (``DistributedSampler``: the same seeded order on every rank, a new
one each epoch), runs the model wrapped in ``DistributedDataParallel`` on ``--batch-size``
images (so a step's global batch is N x ``--batch-size``, as with ``torch.distributed``), and
only rank 0 prints, evaluates and writes. lucid-models does not depend on lucid-distributed:
it is imported only when N > 1.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from lucid.models.train.errors import TrainError

# The world size as lucid-run, MPICH's hydra and Open MPI's launcher set it.
_WORLD_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
_RANK_VARS = ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK")


def launched_world() -> int:
    """How many ranks the launcher started this process among (1 when none did)."""
    return next((int(os.environ[v]) for v in _WORLD_VARS if v in os.environ), 1)


def launched_rank() -> int:
    """This process's rank as the launcher set it (0 when none did)."""
    return next((int(os.environ[v]) for v in _RANK_VARS if v in os.environ), 0)


def resolve_nproc(given: int | None) -> int:
    """``--nproc``: as given, else the launcher's world size; one that contradicts it is refused."""
    world = launched_world()
    if given is None:
        return world
    if given < 1:
        raise TrainError(f"--nproc must be at least 1, got {given}")
    if world > 1 and given != world:
        raise TrainError(f"--nproc {given}, but the launcher started {world} processes; pass "
                         f"--nproc {world} or leave it out")  # fmt: skip
    return given


def _module(name: str) -> ModuleType:
    """A lucid-distributed module (imported by name: lucid-models does not declare it)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not "lucid.distributed".startswith(exc.name):
            raise
        raise TrainError("--nproc above 1 trains with lucid-distributed: pip install "
                         "lucid-distributed") from None  # fmt: skip


def require_distributed() -> None:
    """Refuse ``--nproc`` above 1 in one line when lucid-distributed is not installed."""
    _module("lucid.distributed")


def relaunch(argv: Sequence[str], nproc: int) -> int:
    """Run ``lucid-train argv`` as ``nproc`` MPI ranks on this machine; the job's exit code.

    The ranks stop on Ctrl-C (MPI's launcher passes it on to them once); this process waits.
    """
    run = _module("lucid.distributed.run")
    target = ["-m", "lucid.models.train", *argv]
    cmd = run.mpiexec_command(run.find_mpiexec(None), nproc, None, None, target)
    old = signal.signal(signal.SIGINT, _ignore)  # a handler, not SIG_IGN: exec resets it
    try:
        return subprocess.call(cmd, env=run.rank_environment(nproc, nproc))
    finally:
        signal.signal(signal.SIGINT, old)


def _ignore(signum: int, frame: Any) -> None:
    """The launcher's Ctrl-C reaches the ranks through MPI; this process only waits."""


@dataclass
class Ranks:
    """This process's place in the job: rank ``rank`` of ``world`` (``dist`` when joined)."""

    rank: int = 0
    world: int = 1
    dist: Any = None

    @property
    def is_main(self) -> bool:
        """Rank 0: the one that prints, evaluates and writes."""
        return self.rank == 0

    @property
    def writes(self) -> bool:
        """Whether this process writes the run's files: rank 0 of the job it has joined (a
        single process is one), not a process that only checks a job's settings."""
        return self.is_main and (self.dist is not None or self.world == 1)

    def wrap(self, model: Any) -> Any:
        """``model`` in ``DistributedDataParallel`` when there are several ranks."""
        if self.dist is None:
            return model
        return self.dist.DistributedDataParallel(model)

    def sum(self, values: list[float]) -> list[float]:
        """``values`` summed over the ranks (float64; itself on one process)."""
        if self.dist is None:
            return values
        import lucid

        t = lucid.tensor(values, dtype=lucid.float64)
        self.dist.all_reduce(t)
        return [float(v) for v in t.tolist()]

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` is set on any rank (so every rank stops at the same step)."""
        return self.sum([float(flag)])[0] > 0 if self.dist is not None else flag

    def barrier(self) -> None:
        """Wait until every rank gets here."""
        if self.dist is not None:
            self.dist.barrier()

    def leave(self) -> None:
        """Leave the job's process group (nothing on one process)."""
        if self.dist is not None and self.dist.is_initialized():
            self.dist.destroy_process_group()


def join(nproc: int) -> Ranks:
    """This process's ``Ranks``: joins the job's process group when ``nproc`` is above 1."""
    if nproc == 1:
        return Ranks()
    dist = _module("lucid.distributed")
    dist.init_process_group(backend="mpi")
    return Ranks(dist.get_rank(), dist.get_world_size(), dist)
