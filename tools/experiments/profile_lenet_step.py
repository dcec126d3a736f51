"""Where one LeNet-5 training step (batch 64: forward, cross-entropy, backward, SGD) spends time.

Prints the median step time with 1 and with 2 BLAS threads (interleaved, so both see the same
machine load), then a cProfile of many steps on one thread: the functions with the most own
time, and the time per autograd op (forward ``apply`` and backward, by Function class).

    python tools/experiments/profile_lenet_step.py --steps 200
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

import numpy as np
from threadpoolctl import threadpool_limits

import lucid
import lucid.nn.functional as F
from lucid import optim
from lucid.models import create_model


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    lucid.manual_seed(0)
    model = create_model("lenet5")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = lucid.from_numpy(rng.standard_normal((args.batch, 1, 28, 28)).astype(np.float32))
    y = lucid.from_numpy(rng.integers(0, 10, args.batch))

    def step() -> None:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()

    for _ in range(10):
        step()
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.steps // 2):
        for n in (1, 2):
            with threadpool_limits(limits=n, user_api="blas"):
                t0 = time.perf_counter()
                step()
                times[n].append(time.perf_counter() - t0)
    for n, ts in times.items():
        print(f"median step, {n} BLAS thread(s): {np.median(ts) * 1e3:.2f} ms")

    with threadpool_limits(limits=1, user_api="blas"):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.steps):
            step()
        prof.disable()
    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"\ncProfile, {args.steps} steps on 1 BLAS thread: {total / args.steps * 1e3:.2f} ms "
          "per step under the profiler")  # fmt: skip
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue())


if __name__ == "__main__":
    main()
