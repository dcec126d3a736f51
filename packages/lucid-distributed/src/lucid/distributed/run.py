"""``lucid-run``: start a data-parallel job (``torchrun``'s role) through MPI's launcher.

    lucid-run --nproc-per-node 2 train.py --lr 0.1
    lucid-run --hostfile hosts --nproc-per-node 4 --iface eth1 train.py

Each process gets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` and, unless
``OMP_NUM_THREADS`` is set, ``cores // nproc-per-node`` BLAS threads. The exit status is the
job's: non-zero when any rank fails (MPI then stops the others).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "mpiexec_command"]

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lucid-run",
        description="Run a Python script as a data-parallel job of N processes per machine.",
        allow_abbrev=False,  # a script option such as --nproc is the script's, not --nproc-per-node
    )
    add = p.add_argument
    add("--nproc-per-node", "--nproc_per_node", type=int, default=1, metavar="N",
        help="processes per machine (default 1)")  # fmt: skip
    add("--hostfile", type=Path, default=None,
        help="machines to run on, one 'host[:slots]' per line (default: this one)")  # fmt: skip
    add("--iface", default=None, help="network interface the ranks talk over (e.g. eth1)")
    add("--mpiexec", default=None, help="the MPI launcher (default: the one beside this Python)")
    add("-m", dest="module", action="store_true",
        help="run the script argument as a module, like python -m")  # fmt: skip
    add("script", help="the Python script (or module, with -m) every rank runs")
    add("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def find_mpiexec(given: str | None = None) -> str:
    """The ``mpiexec`` of the MPI wheel installed with this Python, else one on ``PATH``."""
    if given:
        return given
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit(
            "lucid-run: no mpiexec found next to this Python or on PATH: pip install mpich"
        )
    return found


def hosts_in(hostfile: Path) -> list[str]:
    lines = hostfile.read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]


def mpiexec_command(
    mpiexec: str,
    nproc_per_node: int,
    hostfile: Path | None,
    iface: str | None,
    target: Sequence[str],
) -> list[str]:
    """The MPICH (hydra) command line that starts ``target`` on every rank."""
    nodes = len(hosts_in(hostfile)) if hostfile is not None else 1
    cmd = [mpiexec, "-n", str(nodes * nproc_per_node)]
    if hostfile is not None:
        cmd += ["-f", str(hostfile), "-ppn", str(nproc_per_node)]
    if iface is not None:
        cmd += ["-iface", iface]
    return cmd + [sys.executable, "-m", "lucid.distributed.launch", *target]


def rank_environment(nproc_per_node: int, world_size: int) -> dict[str, str]:
    """What every rank inherits: the sizes and each rank's share of this machine's cores."""
    env = dict(os.environ)
    env["WORLD_SIZE"] = str(world_size)
    env["LOCAL_WORLD_SIZE"] = str(nproc_per_node)
    if not any(v in os.environ for v in THREAD_VARS):
        threads = str(max(1, (os.cpu_count() or 1) // nproc_per_node))
        env.update({v: threads for v in THREAD_VARS})
    return env


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.nproc_per_node < 1:
        raise SystemExit(f"lucid-run: --nproc-per-node must be >= 1, got {args.nproc_per_node}")
    target = (["-m"] if args.module else []) + [args.script, *args.args]
    cmd = mpiexec_command(
        find_mpiexec(args.mpiexec), args.nproc_per_node, args.hostfile, args.iface, target
    )
    world = int(cmd[2])
    proc = subprocess.Popen(cmd, env=rank_environment(args.nproc_per_node, world))
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            # Ctrl-C reached the launcher and the ranks too (one process group): let them stop
            # and save as they choose instead of killing the launcher under them.
            continue


if __name__ == "__main__":
    raise SystemExit(main())
