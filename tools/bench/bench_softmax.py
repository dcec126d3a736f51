"""log_softmax / softmax forward+backward: lucid vs hand-written NumPy vs PyTorch, side by side.

    python tools/bench/bench_softmax.py [--rounds 11]

Shapes are what cross-entropy sees: (64, 10) (LeNet logits), (128, 1000) and (32, 32000).
Frameworks run in interleaved rounds; the table shows median ms per forward+backward and the
ratios lucid/NumPy and lucid/PyTorch.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "packages" / "lucid-core" / "src"))
import lucid  # noqa: E402

try:
    import torch

    torch.set_num_threads(2)
except ImportError:  # torch is optional
    torch = None


def _numpy_step(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    s = x - x.max(axis=1, keepdims=True)
    out = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
    return g - np.exp(out) * g.sum(axis=1, keepdims=True)


def _lucid_step(x: Any, g: Any) -> None:
    x.grad = None
    lucid.log_softmax(x, 1).backward(g)


def _torch_step(x: Any, g: Any) -> None:
    x.grad = None
    torch.log_softmax(x, 1).backward(g)


def _time(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"{'shape':>12} {'lucid ms':>9} {'numpy ms':>9} {'torch ms':>9} {'/numpy':>7} {'/torch':>7}"
    )
    for shape in [(64, 10), (128, 1000), (32, 32000)]:
        x_np = (rng.standard_normal(shape) * 5).astype(np.float32)
        g_np = rng.standard_normal(shape).astype(np.float32)
        lx, lg = lucid.tensor(x_np, requires_grad=True), lucid.tensor(g_np)
        fns: dict[str, Callable[[], Any]] = {
            "lucid": lambda: _lucid_step(lx, lg),
            "numpy": lambda: _numpy_step(x_np, g_np),
        }
        if torch is not None:
            tx, tg = torch.tensor(x_np, requires_grad=True), torch.tensor(g_np)
            fns["torch"] = lambda: _torch_step(tx, tg)
        calls = max(3, int(0.05 / max(_time(fns["lucid"], 3) / 1e3, 1e-7)))
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.rounds):
            for k, fn in fns.items():
                times[k].append(_time(fn, calls))
        med = {k: statistics.median(v) for k, v in times.items()}
        t_torch = med.get("torch", float("nan"))
        print(f"{str(shape):>12} {med['lucid']:9.3f} {med['numpy']:9.3f} {t_torch:9.3f} "
              f"{med['lucid'] / med['numpy']:7.2f} {med['lucid'] / t_torch:7.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
