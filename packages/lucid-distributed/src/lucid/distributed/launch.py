"""What each rank of ``lucid-run`` runs first: ``python -m lucid.distributed.launch script
args``. It sets ``RANK`` and ``LOCAL_RANK`` from the MPI launcher's environment, makes an
uncaught exception or a non-zero ``sys.exit`` end the whole job (from the first line of the
script on, before ``init_process_group``), then runs the script as ``__main__``."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

__all__ = ["main", "rank_from_launcher"]

# (rank, local rank, local size) as MPICH's hydra and Open MPI's launcher name them.
_LAUNCHER_VARS = (
    ("PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
)


def rank_from_launcher(env: dict[str, str]) -> dict[str, str]:
    """``RANK``, ``LOCAL_RANK`` (and ``LOCAL_WORLD_SIZE``) from the MPI launcher's variables."""
    for rank, local, local_size in _LAUNCHER_VARS:
        if rank in env:
            out = {"RANK": env[rank], "LOCAL_RANK": env.get(local, "0")}
            if local_size in env:
                out["LOCAL_WORLD_SIZE"] = env[local_size]
            return out
    return {"RANK": "0", "LOCAL_RANK": "0"}


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m lucid.distributed.launch [-m] script [args...]")
    os.environ.update(rank_from_launcher(dict(os.environ)))
    os.environ.setdefault("WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))
    several = int(os.environ["WORLD_SIZE"]) > 1
    if several:
        from lucid.distributed._mpi import abort_on_uncaught_exceptions

        abort_on_uncaught_exceptions()
    try:
        _run(args)
    except SystemExit as e:
        if several and e.code not in (None, 0):
            _abort_job(e.code)
        raise


def _run(args: list[str]) -> None:
    as_module = args[0] == "-m"
    target = args[1] if as_module else args[0]
    sys.argv = args[1:] if as_module else args
    if as_module:
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        runpy.run_path(target, run_name="__main__")


def _abort_job(code: object) -> None:
    """A rank that exits with an error ends the job: the others may be waiting for it."""
    from lucid.distributed._mpi import drain_stdio, mpi

    status = code if isinstance(code, int) else 1
    if not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
    rank = os.environ.get("RANK", "?")
    sys.stderr.write(f"[rank {rank}] aborting the job: this rank exited with status {status}\n")
    drain_stdio()  # MPI_Abort ends the process without flushing what the rank printed
    mpi().COMM_WORLD.Abort(status)


if __name__ == "__main__":
    main()
