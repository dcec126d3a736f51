"""Per-sample gradients: ``vmap(grad(loss))`` through batching rules vs a loop of single-sample
``grad`` calls (lucid), and torch.func's ``vmap(grad)`` where torch is importable.

    python tools/bench/bench_vmap.py [--rounds 5] [--batch 64]

Models: a 3-layer MLP (784-128-64-10) and a small CNN (conv 1->8 3x3, relu, maxpool 2,
conv 8->16 3x3, relu, linear 16*5*5 -> 10) on 28x28 inputs, cross-entropy loss, float32.
Methods run in interleaved rounds; the table shows median ms per batch of per-sample gradients.
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

root = Path(__file__).resolve().parents[2] / "packages"
for pkg in ("lucid-core", "lucid-nn"):
    sys.path.insert(0, str(root / pkg / "src"))
import lucid  # noqa: E402
import lucid.nn.functional as F  # noqa: E402
from lucid.func import grad, vmap  # noqa: E402

try:
    import torch
    import torch.func as tf

    torch.set_num_threads(2)
except ImportError:  # torch is optional
    torch = None


def _mlp_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    sizes = [(128, 784), (64, 128), (10, 64)]
    p = {}
    for i, (o, n) in enumerate(sizes):
        p[f"w{i}"] = (rng.standard_normal((o, n)) / np.sqrt(n)).astype(np.float32)
        p[f"b{i}"] = np.zeros(o, np.float32)
    return p


def _cnn_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def r(*s: int) -> np.ndarray:
        return (rng.standard_normal(s) * 0.1).astype(np.float32)

    return {"c1": r(8, 1, 3, 3), "c2": r(16, 8, 3, 3), "w": r(10, 400), "b": r(10)}


def _mlp_loss(nnf: Any) -> Callable[..., Any]:
    def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
        h = x.reshape(1, -1)
        for i in range(3):
            h = nnf.linear(h, p[f"w{i}"], p[f"b{i}"])
            h = nnf.relu(h) if i < 2 else h
        return nnf.cross_entropy(h, y.unsqueeze(0))

    return loss


def _cnn_loss(nnf: Any) -> Callable[..., Any]:
    def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
        h = nnf.max_pool2d(nnf.relu(nnf.conv2d(x.unsqueeze(0), p["c1"])), 2)
        h = nnf.max_pool2d(nnf.relu(nnf.conv2d(h, p["c2"])), 2)
        return nnf.cross_entropy(nnf.linear(h.flatten(1), p["w"], p["b"]), y.unsqueeze(0))

    return loss


def _time(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.batch
    xs = rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    ys = rng.integers(0, 10, n)
    print(f"per-sample gradients, batch {n}, median of {args.rounds} rounds (ms)")
    print(f"{'model':6} {'vmap':>9} {'loop':>9} {'loop/vmap':>10} {'torch.func':>11}")
    for name, make_p, make_loss in (("MLP", _mlp_params, _mlp_loss), ("CNN", _cnn_params,
                                                                     _cnn_loss)):  # fmt: skip
        p = make_p(rng)
        lp = {k: lucid.tensor(v) for k, v in p.items()}
        lx, ly = lucid.tensor(xs), lucid.tensor(ys)
        loss = make_loss(F)
        runs: dict[str, Callable[[], Any]] = {
            "vmap": lambda: vmap(grad(loss), in_dims=(None, 0, 0))(lp, lx, ly),  # noqa: B023
            "loop": lambda: [grad(loss)(lp, lx[i], ly[i]) for i in range(n)],  # noqa: B023
        }
        if torch is not None:
            tp = {k: torch.from_numpy(v) for k, v in p.items()}
            tx, ty = torch.from_numpy(xs), torch.from_numpy(ys)
            tloss = make_loss(torch.nn.functional)
            runs["torch"] = lambda: tf.vmap(tf.grad(tloss), in_dims=(None, 0, 0))(  # noqa: B023
                tp, tx, ty  # noqa: B023
            )
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(args.rounds):
            for k, fn in runs.items():
                times[k].append(_time(fn))
        med = {k: statistics.median(v) for k, v in times.items()}
        tt = f"{med['torch']:11.1f}" if "torch" in med else f"{'-':>11}"
        print(f"{name:6} {med['vmap']:9.1f} {med['loop']:9.1f} "
              f"{med['loop'] / med['vmap']:9.1f}x {tt}")  # fmt: skip


if __name__ == "__main__":
    main()
