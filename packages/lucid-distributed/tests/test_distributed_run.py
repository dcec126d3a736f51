"""lucid-run: the launcher's command line, and nanoGPT-style code run under it."""

from __future__ import annotations

import re
from pathlib import Path

from lucid.distributed.launch import rank_from_launcher
from lucid.distributed.run import mpiexec_command, rank_environment

WORKERS = Path(__file__).parent / "workers"


def test_distributed_run_trains_nanogpt_style_code(lucid_run) -> None:  # type: ignore[no-untyped-def]
    job = lucid_run("--nproc-per-node", "2", str(WORKERS / "nanogpt_style.py"))
    assert job.returncode == 0, job.stderr[-3000:]
    ranks = re.findall(r"rank (\d) local (\d) of (\d) threads (\d+) weights (.*)", job.stdout)
    assert sorted((r, lr, w) for r, lr, w, _, _ in ranks) == [("0", "0", "2"), ("1", "1", "2")]
    assert ranks[0][4] == ranks[1][4]  # DDP kept the replicas identical
    assert "master done" in job.stdout


def test_distributed_run_command_line(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("# two machines\nnode1:4\nnode2:4\n\n")
    cmd = mpiexec_command("mpiexec", 4, hosts, "eth1", ["train.py", "--lr", "0.1"])
    assert cmd[:9] == ["mpiexec", "-n", "8", "-f", str(hosts), "-ppn", "4", "-iface", "eth1"]
    assert cmd[-4:] == ["lucid.distributed.launch", "train.py", "--lr", "0.1"]


def test_distributed_run_environment_splits_the_cores(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    env = rank_environment(nproc_per_node=2, world_size=4)
    assert (env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"], env["OMP_NUM_THREADS"]) == ("4", "2", "4")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert "OPENBLAS_NUM_THREADS" not in rank_environment(2, 4)  # the user's choice stands


def test_distributed_launch_reads_mpich_and_open_mpi_variables() -> None:
    mpich = {"PMI_RANK": "3", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"}
    assert rank_from_launcher(mpich) == {"RANK": "3", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    ompi = {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "0"}
    assert rank_from_launcher(ompi) == {"RANK": "5", "LOCAL_RANK": "0"}


def test_distributed_run_leaves_the_scripts_options_to_the_script(tmp_path: Path) -> None:
    # --nproc is a prefix of lucid-run's --nproc-per-node: argparse must not take it as that.
    from lucid.distributed.run import _parser

    script_args = ["--nproc", "2", "--lr", "1"]
    args = _parser().parse_args(["--nproc-per-node", "2", "train.py", *script_args])
    assert (args.nproc_per_node, args.script, args.args) == (2, "train.py", script_args)
