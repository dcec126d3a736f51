"""Benchmark: conv2d forward + backward in lucid vs PyTorch vs the NumPy GEMM limit.

For each layer shape this times, interleaved in one process (the machines drift 10-30% minute
to minute, so only side-by-side ratios mean anything):

- lucid: ``y = F.conv2d(x, w, b); y.backward(g)`` (input and weight gradients, bias if any);
- torch: the same with torch.nn.functional.conv2d (if torch is importable);
- gemm: the three NumPy GEMMs an im2col convolution cannot avoid, on ready contiguous operands
  of the same shapes and FLOPs: forward ``col @ W``, input gradient ``dy @ W^T``, weight
  gradient ``col^T @ dy``. That is the practical limit of any NumPy convolution.

It prints medians, GFLOP/s and the ratios ``gemm / lucid`` (share of the GEMM limit reached;
the target is >= 60% on ResNet-18's 3x3 layers at batch 128) and ``torch / lucid``.

    python tools/bench/bench_conv.py                 # LeNet-5 and ResNet-18 (CIFAR) at batch 128
    python tools/bench/bench_conv.py --batch 32      # smaller ResNet batch
    # the GEMM kernel OpenBLAS picks by itself (docs/performance.md, item 5):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python tools/bench/bench_conv.py
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

# (name, batch or None for --batch, C_in, C_out, H=W, kernel, padding, bias)
LENET = [
    ("lenet conv1 1->6 5x5 28x28 p2", 64, 1, 6, 28, 5, 2, True),
    ("lenet conv2 6->16 5x5 14x14", 64, 6, 16, 14, 5, 0, True),
]
RESNET = [
    ("resnet18 64ch 3x3 32x32", None, 64, 64, 32, 3, 1, False),
    ("resnet18 128ch 3x3 16x16", None, 128, 128, 16, 3, 1, False),
    ("resnet18 256ch 3x3 8x8", None, 256, 256, 8, 3, 1, False),
    ("resnet18 512ch 3x3 4x4", None, 512, 512, 4, 3, 1, False),
]


def _timeit(fns: dict[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    """Median seconds of each function, runs interleaved so drift hits all of them alike."""
    for f in fns.values():
        f()  # warm up
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(reps):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _case(
    batch: int, cin: int, cout: int, size: int, k: int, pad: int, bias: bool
) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, cin, size, size), dtype=np.float32)
    w = (rng.standard_normal((cout, cin, k, k), dtype=np.float32) / np.sqrt(cin * k * k)).astype(
        np.float32
    )
    b = rng.standard_normal(cout, dtype=np.float32) if bias else None
    out = size + 2 * pad - k + 1
    g = rng.standard_normal((batch, cout, out, out), dtype=np.float32)
    m, kk = batch * out * out, cin * k * k
    return {"x": x, "w": w, "b": b, "g": g, "pad": pad, "m": m, "k": kk, "n": cout}


def _lucid_fn(c: dict[str, Any]) -> Callable[[], Any]:
    x = lucid.tensor(c["x"], requires_grad=True)
    w = lucid.tensor(c["w"], requires_grad=True)
    b = lucid.tensor(c["b"], requires_grad=True) if c["b"] is not None else None
    g = lucid.tensor(c["g"])

    def step() -> None:
        x.grad = w.grad = None
        if b is not None:
            b.grad = None
        F.conv2d(x, w, b, padding=c["pad"]).backward(g)

    return step


def _torch_fn(torch: Any, c: dict[str, Any]) -> Callable[[], Any]:
    x = torch.tensor(c["x"], requires_grad=True)
    w = torch.tensor(c["w"], requires_grad=True)
    b = torch.tensor(c["b"], requires_grad=True) if c["b"] is not None else None
    g = torch.tensor(c["g"])

    def step() -> None:
        x.grad = w.grad = None
        if b is not None:
            b.grad = None
        torch.nn.functional.conv2d(x, w, b, padding=c["pad"]).backward(g)

    return step


def _gemm_fn(c: dict[str, Any]) -> Callable[[], Any]:
    rng = np.random.default_rng(1)
    m, k, n = c["m"], c["k"], c["n"]
    col = rng.standard_normal((m, k), dtype=np.float32)
    wm = rng.standard_normal((k, n), dtype=np.float32)
    dy = rng.standard_normal((m, n), dtype=np.float32)
    wt = np.ascontiguousarray(wm.T)
    colt = np.ascontiguousarray(col.T)

    def step() -> None:
        col @ wm  # forward
        dy @ wt  # input gradient (before col2im)
        colt @ dy  # weight gradient

    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--batch", type=int, default=128, help="ResNet-18 batch size (default 128)")
    ap.add_argument("--reps", type=int, default=5, help="timed repetitions (median reported)")
    ap.add_argument("--only", choices=["lenet", "resnet"], help="run one group of shapes")
    args = ap.parse_args()
    try:
        import torch

        torch.manual_seed(0)
    except ImportError:
        torch = None
    env = {k: os.environ.get(k, "(unset)") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else '-'}, "
          f"threads torch={torch.get_num_threads() if torch else '-'}, {env}")  # fmt: skip
    cases = (LENET if args.only != "resnet" else []) + (RESNET if args.only != "lenet" else [])
    head = f"{'layer':34s} {'lucid ms':>9s} {'torch ms':>9s} {'gemm ms':>8s} "
    print(head + f"{'GF/s':>6s} {'gemm/lucid':>10s} {'torch/lucid':>11s}")
    for name, batch, cin, cout, size, k, pad, bias in cases:
        bs = batch or args.batch
        c = _case(bs, cin, cout, size, k, pad, bias)
        fns = {"lucid": _lucid_fn(c), "gemm": _gemm_fn(c)}
        if torch is not None:
            fns["torch"] = _torch_fn(torch, c)
        t = _timeit(fns, args.reps)
        flops = 3 * 2 * c["m"] * c["k"] * c["n"]
        tt = t.get("torch", float("nan"))
        print(f"{name + f' b{bs}':34s} {t['lucid'] * 1e3:9.2f} {tt * 1e3:9.2f} "
              f"{t['gemm'] * 1e3:8.2f} {flops / t['lucid'] / 1e9:6.1f} "
              f"{t['gemm'] / t['lucid']:10.2f} {tt / t['lucid']:11.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
