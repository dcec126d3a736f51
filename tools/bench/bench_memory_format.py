"""Benchmark: conv2d forward on NCHW vs channels-last input, lucid and PyTorch side by side.

Each case is timed interleaved in one process (the shared machines drift minute to minute, so
only side-by-side ratios mean anything); it prints medians in ms. The weight is laid out in the
input's format, as ``Module.to(memory_format=...)`` does.

    python tools/bench/bench_memory_format.py               # one thread each
    python tools/bench/bench_memory_format.py --threads 2 --rounds 31
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F

# (N, C_in, H=W, C_out): a first layer on RGB, two 3x3 layers of a small ResNet
CASES = [(32, 3, 32, 32), (8, 64, 32, 64), (16, 32, 56, 64)]


def _median_ms(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    for f in fns.values():
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():  # interleaved, so a load change hits every variant
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    return {k: round(statistics.median(v) * 1e3, 2) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    lucid.set_num_threads(args.threads)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    for n, c, hw, k in CASES:
        x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
        w = (rng.standard_normal((k, c, 3, 3)) * 0.1).astype(np.float32)
        lx, lw = lucid.tensor(x), lucid.tensor(w)
        cl = lucid.channels_last
        lxc, lwc = lx.to(memory_format=cl), lw.to(memory_format=cl)
        fns: dict[str, Callable[[], Any]] = {
            "lucid_nchw": lambda: F.conv2d(lx, lw, padding=1),
            "lucid_cl": lambda: F.conv2d(lxc, lwc, padding=1),
        }
        if torch is not None:
            tx, tw = torch.from_numpy(x), torch.from_numpy(w)
            tcl = torch.channels_last
            txc, twc = tx.to(memory_format=tcl), tw.to(memory_format=tcl)
            fns["torch_nchw"] = lambda: torch.nn.functional.conv2d(tx, tw, padding=1)
            fns["torch_cl"] = lambda: torch.nn.functional.conv2d(txc, twc, padding=1)
        print(f"conv2d 3x3 p1 N={n} C={c} HW={hw} K={k}:", _median_ms(fns, args.rounds))


if __name__ == "__main__":
    main()
