"""Benchmark: forward + backward of lucid.nn's fused layers against PyTorch, side by side.

Times, interleaved in one process (medians of many runs; only ratios mean anything on the
shared machines), the LeNet-5 / ResNet-scale shapes of:

- cross_entropy on (64, 10) logits (the loss of a LeNet step: it is called every step);
- linear 400 -> 120 at batch 64 (LeNet's first fully connected layer);
- batch_norm (training) on (64, 16, 10, 10) and (128, 64, 32, 32);
- layer_norm over 256 features at (64, 128, 256).

It prints lucid and torch medians in microseconds and the ratio torch / lucid (1.0 = parity).

    python tools/bench/bench_nn_layers.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
import lucid.nn.functional as F

try:
    import torch
except ImportError:  # the benchmark still prints lucid's numbers
    torch = None


def _median_us(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _cases() -> list[tuple[str, Callable[[], Any], Callable[[], Any] | None, int]]:
    rng = np.random.default_rng(0)

    def pair(*shape: int) -> tuple[Any, Any]:
        a = rng.standard_normal(shape).astype(np.float32)
        t = torch.tensor(a, requires_grad=True) if torch is not None else None
        return lucid.tensor(a, requires_grad=True), t

    cases: list[tuple[str, Callable[[], Any], Callable[[], Any] | None, int]] = []
    logits, tlogits = pair(64, 10)
    target = rng.integers(0, 10, 64)
    lt = lucid.tensor(target)
    tt = torch.tensor(target) if torch is not None else None
    cases.append((
        "cross_entropy (64, 10)",
        lambda: F.cross_entropy(logits, lt).backward(),
        (lambda: torch.nn.functional.cross_entropy(tlogits, tt).backward()) if torch else None,
        400,
    ))  # fmt: skip
    x, tx = pair(64, 400)
    w, tw = pair(120, 400)
    b, tb = pair(120)
    cases.append((
        "linear 400->120 batch 64",
        lambda: F.linear(x, w, b).sum().backward(),
        (lambda: torch.nn.functional.linear(tx, tw, tb).sum().backward()) if torch else None,
        300,
    ))  # fmt: skip
    for shape, rep in (((64, 16, 10, 10), 100), ((128, 64, 32, 32), 10)):
        xb, txb = pair(*shape)
        wb, twb = pair(shape[1])
        bb, tbb = pair(shape[1])
        cases.append((
            f"batch_norm train {shape}",
            lambda xb=xb, wb=wb, bb=bb: F.batch_norm(xb, None, None, wb, bb, True).sum().backward(),
            (lambda txb=txb, twb=twb, tbb=tbb: torch.nn.functional.batch_norm(
                txb, None, None, twb, tbb, True).sum().backward()) if torch else None,
            rep,
        ))  # fmt: skip
    xl, txl = pair(64, 128, 256)
    wl, twl = pair(256)
    bl, tbl = pair(256)
    cases.append((
        "layer_norm (64, 128, 256)",
        lambda: F.layer_norm(xl, 256, wl, bl).sum().backward(),
        (lambda: torch.nn.functional.layer_norm(txl, (256,), twl, tbl).sum().backward())
        if torch else None,
        20,
    ))  # fmt: skip
    return cases


def main() -> None:
    if torch is not None:
        torch.set_num_threads(2)
    print(f"{'case':<40} {'lucid us':>10} {'torch us':>10} {'torch/lucid':>12}")
    for name, ours, theirs, repeat in _cases():
        lu = _median_us(ours, repeat)
        th = _median_us(theirs, repeat) if theirs is not None else float("nan")
        print(f"{name:<40} {lu:>10.1f} {th:>10.1f} {th / lu:>12.2f}")


if __name__ == "__main__":
    main()
