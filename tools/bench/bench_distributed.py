"""Benchmark: data-parallel training steps, 2 ranks x 1 thread vs 1 rank x 2 threads.

ResNet-18-CIFAR (``--model``), global batch 128 (``--batch``): with 2 ranks each rank runs 64
samples under DistributedDataParallel (launched by ``lucid-run``), with 1 rank the one process
runs all 128 on 2 BLAS threads. One step is forward + cross-entropy + backward + SGD momentum.
The configurations alternate (``--rounds`` of each, a fresh job per round) and the medians are
printed, with, for the 2-rank runs: the gradient bytes each rank all-reduces per step, the
buckets, the share of those bytes already reduced when backward ended (overlapped with it),
the time the end of backward then waited (for the rest, and for the other rank to get there),
and the time the same all-reduces take alone, after training (blocking, idle).

    python tools/bench/bench_distributed.py                 # ResNet-18-CIFAR, 3 rounds x 3 steps
    python tools/bench/bench_distributed.py --model lenet5 --batch 64 --steps 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any


def worker(args: argparse.Namespace) -> None:
    import numpy as np

    import lucid
    import lucid.distributed as dist
    import lucid.nn.functional as F
    import lucid.optim as optim
    from lucid.models import create_model

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    lucid.manual_seed(0)
    model = create_model(args.model)
    ddp = dist.DistributedDataParallel(model) if world > 1 else model
    opt = optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    per_rank = args.batch // world
    shape = (per_rank, 1, 28, 28) if args.model == "lenet5" else (per_rank, 3, 32, 32)
    rng = np.random.default_rng(rank)
    x = lucid.tensor(rng.standard_normal(shape).astype(np.float32))
    y = lucid.tensor(rng.integers(0, 10, per_rank))
    steps, waits, early = [], [], []
    for i in range(args.steps + 1):  # the first step warms up
        start = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
        if i:
            steps.append(time.perf_counter() - start)
            reducer = getattr(ddp, "reducer", None)
            if reducer is not None and reducer.last is not None:
                waits.append(reducer.last.wait_s)
                early.append(reducer.last.bytes_done_early)
    result: dict[str, Any] = {"world": world, "threads": lucid.get_num_threads(),
                              "step_s": statistics.median(steps)}  # fmt: skip
    if world > 1:
        result.update(_allreduce_alone(ddp, dist))
        result["exposed_wait_s"] = statistics.median(waits)
        result["bytes_done_early"] = statistics.median(early)
    if rank == 0:
        sys.stdout.write("RESULT " + json.dumps(result) + "\n")
    dist.destroy_process_group()


def _allreduce_alone(ddp: Any, dist: Any) -> dict[str, Any]:
    """The buckets' all-reduces one after another, blocking, with nothing else running."""
    import lucid

    buckets = ddp.reducer.buckets
    flats = [lucid.from_numpy(b.buffer) for b in buckets]
    times = []
    for _ in range(5):
        dist.barrier()
        start = time.perf_counter()
        for t in flats:
            dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    nbytes = sum(b.buffer.nbytes for b in buckets)
    return {"buckets": len(buckets), "bytes": nbytes, "allreduce_alone_s": statistics.median(times)}


def run(config: str, args: argparse.Namespace) -> dict[str, Any]:
    me = [__file__, "--worker", "--model", args.model, "--batch", str(args.batch),
          "--steps", str(args.steps)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    if config == "2x1":
        cmd = [sys.executable, "-m", "lucid.distributed.run", "--nproc-per-node", "2", *me]
        env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    else:
        cmd = [sys.executable, *me]
        env.update(OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        raise SystemExit(f"{config} failed:\n{out.stderr[-3000:]}")
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT ") :]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18_cifar")
    ap.add_argument("--batch", type=int, default=128, help="global batch (split over the ranks)")
    ap.add_argument("--steps", type=int, default=3, help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each configuration")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    results: dict[str, list[dict[str, Any]]] = {"2x1": [], "1x2": []}
    for _ in range(args.rounds):
        for config in results:
            results[config].append(run(config, args))
    load = os.getloadavg()[0]
    print(f"{args.model}, global batch {args.batch}, {args.rounds} rounds x {args.steps} steps, "
          f"load {load:.1f} on {os.cpu_count()} cores")  # fmt: skip
    med = {c: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for c, rs in results.items()}
    for config, m in med.items():
        print(f"  {config} (ranks x threads): {m['step_s'] * 1e3:8.0f} ms/step")
    two = med["2x1"]
    alone, exposed = two["allreduce_alone_s"], two["exposed_wait_s"]
    print(f"  2x1 / 1x2 step time: {two['step_s'] / med['1x2']['step_s']:.2f}")
    print(f"  all-reduce per step: {two['bytes'] / 1e6:.1f} MB in {two['buckets']:.0f} buckets, "
          f"{alone * 1e3:.1f} ms alone; {two['bytes_done_early'] / two['bytes']:.0%} of the bytes "
          f"were reduced before backward ended, which then waited {exposed * 1e3:.1f} ms "
          "(for the rest, and for the other rank)")  # fmt: skip


if __name__ == "__main__":
    main()
