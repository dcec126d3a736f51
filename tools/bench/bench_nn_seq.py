"""Benchmark: forward + backward of lucid.nn's sequence layers against PyTorch, side by side.

Same weights, same inputs, float32, in one process (medians; only ratios mean anything on the
shared machines):

- LSTM and GRU, 2 layers, 200 -> 200, 35 steps, batch 20 (the PTB "small" language model);
- scaled_dot_product_attention (32, 4, 64, 32), causal;
- MultiheadAttention 128 / 4 heads on (32, 64, 128), need_weights=False and True;
- TransformerEncoderLayer d_model 128, 4 heads, feed-forward 512, on (32, 64, 128).

Recurrent layers step through time in Python (one recurrent GEMM and a few elementwise ops per
step, the input projection as one GEMM over all steps), so their ratio shows the per-op cost.

    python tools/bench/bench_nn_seq.py
    OPENBLAS_NUM_THREADS=1 python tools/bench/bench_nn_seq.py --threads 1   # per-op overhead

On a loaded 2-core machine two OpenBLAS threads make these small GEMMs ~10x slower than one
(docs/performance.md, item 2), which dominates the recurrent layers' time; compare both settings.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

torch: Any
try:
    import torch as _torch

    torch = _torch
except ImportError:  # the benchmark still prints lucid's numbers
    torch = None

Case = tuple[str, Callable[[], Any], Callable[[], Any] | None, int]


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _pair(rng: np.random.Generator, *shape: int) -> tuple[Any, Any]:
    a = rng.standard_normal(shape).astype(np.float32)
    t = torch.tensor(a, requires_grad=True) if torch is not None else None
    return lucid.tensor(a, requires_grad=True), t


def _twins(mine: Any, theirs_cls: str, *args: Any, **kwargs: Any) -> Any:
    """The torch module with the same weights as ``mine`` (None without torch)."""
    if torch is None:
        return None
    theirs = getattr(torch.nn, theirs_cls)(*args, **kwargs)
    state = {k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()}
    theirs.load_state_dict(state)
    return theirs


def _module_case(name: str, mine: Any, theirs: Any, x: Any, tx: Any, repeat: int,
                 call: Callable[[Any, Any], Any]) -> Case:  # fmt: skip
    def ours() -> None:
        call(mine, x).sum().backward()

    def torch_side() -> None:
        call(theirs, tx).sum().backward()

    return name, ours, (torch_side if theirs is not None else None), repeat


def _cases() -> list[Case]:
    rng = np.random.default_rng(0)
    cases: list[Case] = []
    x, tx = _pair(rng, 35, 20, 200)
    for cls in ("LSTM", "GRU"):
        mine = getattr(nn, cls)(200, 200, num_layers=2)
        theirs = _twins(mine, cls, 200, 200, num_layers=2)
        cases.append(_module_case(f"{cls} 2x200, 35 steps, batch 20", mine, theirs, x, tx, 10,
                                  lambda m, v: m(v)[0]))  # fmt: skip
    q, tq = _pair(rng, 32, 4, 64, 32)
    cases.append((
        "sdpa (32, 4, 64, 32) causal",
        lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward(),
        (lambda: torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, is_causal=True)
         .sum().backward()) if torch else None,
        30,
    ))  # fmt: skip
    s, ts = _pair(rng, 32, 64, 128)
    mha = nn.MultiheadAttention(128, 4, batch_first=True)
    tmha = _twins(mha, "MultiheadAttention", 128, 4, batch_first=True)
    for need in (False, True):

        def call(m: Any, v: Any, need: bool = need) -> Any:
            return m(v, v, v, need_weights=need)[0]

        cases.append(_module_case(f"MHA 128/4 (32, 64) need_weights={need}", mha, tmha, s, ts,
                                  20, call))  # fmt: skip
    enc = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
    tenc = _twins(enc, "TransformerEncoderLayer", 128, 4, 512, dropout=0.0, batch_first=True)
    cases.append(_module_case("TransformerEncoderLayer 128/4/512", enc, tenc, s, ts, 20,
                              lambda m, v: m(v)))  # fmt: skip
    return cases


def main() -> None:
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    if torch is not None:
        torch.set_num_threads(threads)
    print(f"{'case':<42} {'lucid ms':>10} {'torch ms':>10} {'torch/lucid':>12}")
    for name, ours, theirs, repeat in _cases():
        lu = _median_ms(ours, repeat)
        th = _median_ms(theirs, repeat) if theirs is not None else float("nan")
        print(f"{name:<42} {lu:>10.2f} {th:>10.2f} {th / lu:>12.2f}")


if __name__ == "__main__":
    main()
