"""Collectives on 2 real MPI ranks, and what works in one process without a launcher."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import lucid
import lucid.distributed as dist

CHECKS = [
    "all_reduce SUM", "all_reduce AVG", "all_reduce MAX", "all_reduce MIN",
    "all_reduce PRODUCT", "all_reduce async", "all_reduce strided", "reduce", "broadcast",
    "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
    "scatter", "objects", "new_group", "mismatched shapes",
]  # fmt: skip
ONE_RANK_CHECKS = ["gather", "send/recv"]  # checked where the data arrives


def test_distributed_every_collective_on_two_ranks(mpi_job) -> None:  # type: ignore[no-untyped-def]
    job = mpi_job("collectives.py")
    assert job.returncode == 0, job.stderr[-3000:]
    lines = job.stdout.splitlines()
    for check in CHECKS:
        assert lines.count(f"ok {check}") == 2, (check, job.stdout)
    for check in ONE_RANK_CHECKS:
        assert lines.count(f"ok {check}") == 1, (check, job.stdout)


def test_distributed_queries_before_init_say_what_to_do() -> None:
    assert dist.is_available() and dist.is_mpi_available()
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.all_reduce(lucid.ones(2))


ONE_PROCESS = """
import os
import lucid, lucid.distributed as dist, lucid.nn as nn
dist.init_process_group()
t = lucid.ones(2)
dist.all_reduce(t, op=dist.ReduceOp.AVG)
ddp = dist.DistributedDataParallel(nn.Linear(2, 1))
ddp(lucid.ones(3, 2)).sum().backward()
print(dist.get_rank(), dist.get_world_size(), t.tolist(), ddp.module.weight.grad.tolist())
assert os.environ["RANK"] == "0"
dist.destroy_process_group()
assert "RANK" not in os.environ  # what init_process_group exported goes with the group
"""


def test_distributed_one_process_without_a_launcher_is_a_world_of_one() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE")}
    job = subprocess.run([sys.executable, "-c", ONE_PROCESS], capture_output=True, text=True,
                         timeout=60, env=env)  # fmt: skip
    assert job.returncode == 0, job.stderr
    assert job.stdout.strip() == "0 1 [1.0, 1.0] [[3.0, 3.0]]"


def test_distributed_unknown_backend_is_named() -> None:
    with pytest.raises(ValueError, match="'mpi', 'mlx'.*got 'tcp'"):
        dist.init_process_group(backend="tcp")
    assert not dist.is_initialized()


def test_distributed_nn_parallel_gives_the_real_class() -> None:
    import lucid.nn as nn

    assert nn.parallel.DistributedDataParallel is dist.DistributedDataParallel
    assert nn.SyncBatchNorm is dist.SyncBatchNorm  # torch.nn.SyncBatchNorm's path
    assert lucid.distributed is dist
