"""Per-op overhead of lucid-core against raw NumPy and PyTorch (when installed), side by side.

    python tools/bench/bench_core.py [--rounds 15]

Workloads: ``a + b`` on 1 and 1,000 float32 elements, with and without a gradient being
recorded, and a 1024x1024 float32 matmul. Each framework runs the same workload in interleaved
rounds (so machine drift hits all alike); the table shows the median time per call and the
ratios lucid/NumPy and lucid/PyTorch. Targets: < 10 us per recorded op, matmul within
1.3x of NumPy.
"""

from __future__ import annotations

import argparse
import os
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
except ImportError:  # torch is optional
    torch = None


# Small ops are timed in process CPU time, so that other processes on a shared machine do not
# inflate them; the multi-threaded matmul in wall time (CPU time would sum the BLAS threads).
_CLOCK: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def _per_call(fn: Callable[[], Any], calls: int, clock: Callable[[], float]) -> float:
    start = clock()
    for _ in range(calls):
        fn()
    return (clock() - start) / calls


def _calls_for(fn: Callable[[], Any]) -> int:
    """Enough calls for ~20 ms per round."""
    t = _per_call(fn, 3, time.perf_counter)
    return max(3, min(20000, int(0.02 / max(t, 1e-9))))


Workload = tuple[str, str, dict[str, Callable[[], Any]]]


def _workloads() -> list[Workload]:
    rows: list[Workload] = []
    rng = np.random.default_rng(0)
    for n in (1, 1000):
        a_np = rng.standard_normal(n).astype(np.float32)
        b_np = rng.standard_normal(n).astype(np.float32)
        for grad in (False, True):
            a, b = lucid.tensor(a_np, requires_grad=grad), lucid.tensor(b_np)
            fns: dict[str, Callable[[], Any]] = {
                "lucid": lambda a=a, b=b: a + b,
                "numpy": lambda a=a_np, b=b_np: a + b,
            }
            if torch is not None:
                ta = torch.tensor(a_np, requires_grad=grad)
                tb = torch.tensor(b_np)
                fns["torch"] = lambda a=ta, b=tb: a + b
            rows.append((f"add n={n} {'grad' if grad else 'no grad'}", "cpu", fns))
    m_np = rng.standard_normal((1024, 1024)).astype(np.float32)
    k_np = rng.standard_normal((1024, 1024)).astype(np.float32)
    m, k = lucid.tensor(m_np), lucid.tensor(k_np)
    mg = lucid.tensor(m_np, requires_grad=True)
    fns = {
        "lucid": lambda: m @ k,
        "lucid (grad)": lambda: mg @ k,
        "numpy": lambda: m_np @ k_np,
    }
    if torch is not None:
        tm, tk = torch.tensor(m_np), torch.tensor(k_np)
        fns["torch"] = lambda: tm @ tk
    rows.append(("matmul 1024x1024 f32", "wall", fns))
    return rows


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    return f"{seconds * 1e3:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(
        f"numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'}, "
        f"lucid {lucid.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}"
    )
    if torch is not None:
        print(f"torch threads: {torch.get_num_threads()}")
    header = f"{'workload':34s} {'lucid':>11s} {'numpy':>11s} {'torch':>11s} " \
             f"{'lucid/np':>9s} {'lucid/torch':>11s}"  # fmt: skip
    print(header)
    print("-" * len(header))
    print("(add rows: process CPU time per call; matmul: wall time)")
    for name, clock_name, fns in _workloads():
        clock = _CLOCK[clock_name]
        calls = {k: _calls_for(f) for k, f in fns.items()}
        samples: dict[str, list[float]] = {k: [] for k in fns}
        keys = list(fns)
        for r in range(args.rounds):
            for k in keys[r % len(keys) :] + keys[: r % len(keys)]:  # rotate: no fixed first
                samples[k].append(_per_call(fns[k], calls[k], clock))
        med = {k: statistics.median(v) for k, v in samples.items()}
        for lk in [k for k in med if k.startswith("lucid")]:
            label = name if lk == "lucid" else f"{name} [{lk}]"
            t_np, t_torch = med.get("numpy"), med.get("torch")
            print(
                f"{label:34s} {_fmt(med[lk])} {_fmt(t_np) if t_np else '':>11s} "
                f"{_fmt(t_torch) if t_torch else '       -':>11s} "
                f"{med[lk] / t_np:8.2f}x {(med[lk] / t_torch if t_torch else float('nan')):10.2f}x"
            )


if __name__ == "__main__":
    main()
