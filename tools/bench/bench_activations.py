"""Benchmark: activations and elementwise chains, forward and forward + backward, lucid
against PyTorch side by side in one process (rounds interleaved, medians; only ratios mean
anything on the shared machines).

- eager: ``F.sigmoid``, ``silu``, ``softplus``, ``logsigmoid``, ``mish``, ``hardswish``,
  ``gelu`` (exact and tanh) at a GPT MLP's (12, 64, 512) and a small (64, 128);
- ``--chains``: hand-written elementwise chains (minGPT's tanh GELU, swish, a hand-written
  RMSNorm's scaling) eager, through ``lucid.compile`` with and without the elementwise fuser
  (``compiler._fused_elementwise``), and PyTorch eager (``--torch-compile`` adds
  ``torch.compile``, whose first call takes ~10 s a chain).

    python tools/bench/bench_activations.py [--chains] [--threads N] [--rounds R]

It prints microseconds per call (median of the rounds' medians) and lucid / torch.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid.compiler import _fused_elementwise

try:
    import torch
except ImportError:  # the benchmark still prints lucid's numbers
    torch = None

SHAPES = [(12, 64, 512), (64, 128)]
NAMES = [("sigmoid", {}), ("silu", {}), ("softplus", {}), ("logsigmoid", {}), ("mish", {}),
         ("hardswish", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"})]  # fmt: skip


def _time(fn: Callable[[], Any], n: int) -> float:
    fn()
    s = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        s.append(time.perf_counter() - t0)
    return statistics.median(s) * 1e6


def _step(fw: Any, f: Callable[..., Any], xs: list[Any], grad: bool) -> Callable[[], Any]:
    if not grad:

        def fwd() -> Any:
            with fw.no_grad():
                return f(*xs)

        return fwd
    g = fw.ones(tuple(f(*xs).shape))

    def step() -> None:
        f(*xs).backward(g)
        for x in xs:
            x.grad = None

    return step


def _eager(rounds: int) -> None:
    for shape in SHAPES:
        x0 = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        n = 200 if math.prod(shape) < 1e5 else 30
        for name, kw in NAMES:
            row = {}
            for grad in (False, True):
                fns = {}
                for fw in (lucid, torch):
                    if fw is None:
                        continue
                    x = fw.tensor(x0, requires_grad=True)
                    fn = getattr(fw.nn.functional, name)
                    fns[fw.__name__] = _step(fw, lambda x, fn=fn: fn(x, **kw), [x], grad)
                got: dict[str, list[float]] = {k: [] for k in fns}
                for _ in range(rounds):
                    for k, f in fns.items():
                        got[k].append(_time(f, n))
                row[grad] = {k: statistics.median(v) for k, v in got.items()}
            label = name + ("(tanh)" if kw else "")
            cells = []
            for grad, what in ((False, "fwd"), (True, "fwd+bwd")):
                lu, to = row[grad]["lucid"], row[grad].get("torch")
                ratio = f" ({lu / to:4.1f}x)" if to else ""
                cells.append(f"{what} lucid {lu:8.1f} torch {to or float('nan'):8.1f}{ratio}")
            print(f"{str(shape):14s} {label:12s} " + " | ".join(cells), flush=True)


def _chains(fw: Any) -> dict[str, tuple[Callable[..., Any], int]]:
    c = math.sqrt(2.0 / math.pi)
    return {
        "minGPT GELU": (
            lambda x: 0.5 * x * (1.0 + fw.tanh(c * (x + 0.044715 * fw.pow(x, 3.0)))),
            1,
        ),
        "swish x*sigmoid(x)": (lambda x: x * fw.sigmoid(x), 1),
        "RMSNorm scaling": (lambda x, r, w: x * r * w, 3),
    }


def _chain_rows(rounds: int, torch_compile: bool) -> None:
    shape = (12, 64, 512)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32),
              rng.random((12, 64, 1)).astype(np.float32),
              rng.standard_normal(512).astype(np.float32)]  # fmt: skip
    for name in _chains(lucid):
        fns: dict[str, Callable[[], Any]] = {}
        for label in ("eager", "compiled", "compiled, unfused"):
            fn, k = _chains(lucid)[name]
            xs = [lucid.tensor(a, requires_grad=True) for a in arrays[:k]]
            if label != "eager":
                _fused_elementwise.FUSE_ELEMENTWISE = label == "compiled"
                fn = lucid.compile(fn)
                for _ in range(3):  # capture, traced backward, recorded one
                    _step(lucid, fn, xs, True)()
            fns[f"lucid {label}"] = _step(lucid, fn, xs, True)
        _fused_elementwise.FUSE_ELEMENTWISE = True
        if torch is not None:
            fn, k = _chains(torch)[name]
            xs = [torch.tensor(a, requires_grad=True) for a in arrays[:k]]
            fns["torch eager"] = _step(torch, fn, xs, True)
            if torch_compile:
                fns["torch.compile"] = _step(torch, torch.compile(fn), xs, True)
        got: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(rounds):
            for key, f in fns.items():
                got[key].append(_time(f, 30))
        print(f"{name} (12, 64, 512) fwd+bwd: " + ", ".join(
            f"{k} {statistics.median(v):.0f} us" for k, v in got.items()), flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chains", action="store_true")
    ap.add_argument("--torch-compile", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.threads:
        lucid.set_num_threads(args.threads)
        if torch is not None:
            torch.set_num_threads(args.threads)
    print(f"threads: lucid {lucid.get_num_threads()}, torch "
          f"{torch.get_num_threads() if torch is not None else '-'}")  # fmt: skip
    if args.chains:
        _chain_rows(args.rounds, args.torch_compile)
    else:
        _eager(args.rounds)


if __name__ == "__main__":
    main()
