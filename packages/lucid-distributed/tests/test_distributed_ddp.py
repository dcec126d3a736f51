"""DistributedDataParallel on 2 ranks ends where one process on the whole batch ends."""

from __future__ import annotations

import importlib.util
import re

import pytest

Results = dict[tuple[str, int], tuple[float, int, int]]


def _has_mlx_device() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("mlx", "lucid.backends.mlx"))


@pytest.fixture(scope="module", params=["mpi", "mlx"])
def equivalence(request: pytest.FixtureRequest, mpi_job) -> Results:  # type: ignore[no-untyped-def]
    """One job for every model: {(model, rank): (excess over tolerance, buckets, started
    early)}. "mlx": the "mlx" backend (mx.distributed) with models and data on device "mlx"."""
    if request.param == "mlx" and not _has_mlx_device():
        pytest.skip("needs MLX and lucid-backend-mlx")
    job = mpi_job("ddp_equivalence.py", *(["mlx"] if request.param == "mlx" else []))
    assert job.returncode == 0, job.stderr[-3000:]
    found = re.findall(
        r"rank (\d) (\S+): excess (\S+) buckets (\d+) started-in-backward (\d+)", job.stdout
    )
    assert job.stdout.count("unused parameters: ok") == 2, job.stdout
    return {(m, int(r)): (float(e), int(b), int(s)) for r, m, e, b, s in found}


@pytest.mark.parametrize("model", ["mlp", "cnn", "mlp-no_sync"])
@pytest.mark.parametrize("rank", [0, 1])
def test_distributed_ddp_matches_one_process_on_the_whole_batch(
    equivalence: Results, model: str, rank: int
) -> None:
    # 10 SGD-momentum steps; rank 1 started from other weights (DDP broadcasts rank 0's); the
    # CNN's BatchNorms are SyncBatchNorm; no_sync: two micro-batches, the first not averaged.
    excess, buckets, started_early = equivalence[(model, rank)]
    assert excess <= 0.0, f"parameters differ beyond rtol=1e-5, atol=1e-5 by {excess}"
    assert buckets >= 2
    assert started_early == buckets  # every bucket's all-reduce began during backward
