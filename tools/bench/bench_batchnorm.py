"""Batch norm forward+backward and big elementwise ops: the NumPy kernels against the reference.

    python tools/bench/bench_batchnorm.py [--rounds 7] [--batch 128]

Batch norm runs at the four ResNet-18-CIFAR shapes, channels-last as convolutions hand them
over, in three configurations taken in interleaved rounds: lucid.nn's reference Function, the
NumPy backend's kernel on one thread, and the kernel on the thread budget as set. The second
table times ``add``/``multiply``/``maximum`` on one thread and split across the threads, at
sizes around ``_parallel.PARALLEL_ELEMENTS``. Medians (wall and CPU time) and the load average
are printed: on a loaded machine the threaded columns mean little.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F
from lucid import kernels
from lucid.backends import get_backend
from lucid.backends._numpy import _parallel

SHAPES = [(64, 32), (128, 16), (256, 8), (512, 4)]  # (channels, side) per ResNet stage
CONFIGS = ("reference", "kernel, 1 thread", "kernel, threads")
_OFF = 1 << 62


def _configure(name: str, impl: Any, threshold: int) -> None:
    table = get_backend("cpu").kernels
    table.pop(kernels.BATCH_NORM, None)
    if name != "reference":
        table[kernels.BATCH_NORM] = impl
    _parallel.PARALLEL_ELEMENTS = threshold if name.endswith("threads") else _OFF


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def _bn_case(batch: int, c: int, side: int) -> Callable[[], Any]:
    rng = np.random.default_rng(c)
    stored = rng.standard_normal((batch, side, side, c)).astype(np.float32)
    x = lucid.from_numpy(stored.transpose(0, 3, 1, 2)).requires_grad_(True)
    w, b = lucid.ones(c, requires_grad=True), lucid.zeros(c, requires_grad=True)
    rm, rv = lucid.zeros(c), lucid.ones(c)
    grad = rng.standard_normal(stored.shape).astype(np.float32)
    dy = lucid.from_numpy(grad.transpose(0, 3, 1, 2))
    return lambda: lucid.autograd.grad(F.batch_norm(x, rm, rv, w, b, True), (x, w, b), dy)


def bench_batch_norm(rounds: int, batch: int) -> None:
    impl, threshold = get_backend("cpu").kernels[kernels.BATCH_NORM], _parallel.PARALLEL_ELEMENTS
    print(f"batch norm fwd+bwd, batch {batch}, channels-last: median wall / CPU ms")
    print(f"{'shape':>18} " + " ".join(f"{c:>22}" for c in CONFIGS) + "  ref/threads")
    for c, side in SHAPES:
        step = _bn_case(batch, c, side)
        times: dict[str, list[tuple[float, float]]] = {n: [] for n in CONFIGS}
        for _ in range(rounds):
            for name in CONFIGS:
                _configure(name, impl, threshold)
                times[name].append(_timed(step))
        med = {n: (statistics.median(w for w, _ in v), statistics.median(cpu for _, cpu in v))
               for n, v in times.items()}  # fmt: skip
        cells = " ".join(f"{med[n][0]:>12.1f} / {med[n][1]:>7.1f}" for n in CONFIGS)
        ratio = med["reference"][0] / med["kernel, threads"][0]
        print(f"{str((batch, c, side, side)):>18} {cells}  {ratio:>10.2f}x")
    _configure("kernel, threads", impl, threshold)


def bench_elementwise(rounds: int) -> None:
    threshold = _parallel.PARALLEL_ELEMENTS
    xp = get_backend("cpu").xp
    print(f"\nadd + multiply + maximum, float32, median wall us per op (threshold {threshold:,})")
    for size in (1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23):
        a = np.ones((128, size // 128), np.float32)
        b = a + 1.0
        res: dict[int, list[float]] = {_OFF: [], 0: []}
        for _ in range(rounds):
            for limit in res:
                _parallel.PARALLEL_ELEMENTS = limit
                res[limit].append(_timed(lambda: (xp.add(a, b), xp.multiply(a, b),
                                                  xp.maximum(a, 0)))[0] / 3e-3)  # fmt: skip
        one, split = statistics.median(res[_OFF]), statistics.median(res[0])
        print(f"{size:>12,} elements: 1 thread {one:>8.0f}  split {split:>8.0f}  "
              f"speed-up {one / split:.2f}x")  # fmt: skip
    _parallel.PARALLEL_ELEMENTS = threshold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    print(f"threads {lucid.get_num_threads()}, load average {os.getloadavg()[0]:.2f}")
    bench_batch_norm(args.rounds, args.batch)
    bench_elementwise(args.rounds)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
