"""Tracer: which runtime runs each op's parallel work in a training step, and where each
thread's CPU time goes.

Runs one of ``train_step.py``'s models (lucid only) for a few steps and reports, per step:

- every parallel hand-off by runtime (OpenBLAS's threads, lucid's pool, numba's OpenMP
  threads), with the function that asked for it, and the runtime switches (``a -> b``);
- every ``_gemm.matmul`` product by path (tiny, one BLAS thread, OpenBLAS's threads, numba's
  split, the pool's row blocks) and its FLOPs;
- the CPU time of each of the process's threads (``/proc/self/task/*/schedstat``), by owner:
  the main thread, the pool's threads, OpenBLAS's threads (those alive right after NumPy's
  import), numba's OpenMP threads (the rest). A helper's CPU time beyond the work it was handed
  is its spin.

    python tools/bench/trace_threads.py gpt            # default threads
    python tools/bench/trace_threads.py lstm --threads 1
    OMP_WAIT_POLICY=ACTIVE python tools/bench/trace_threads.py lenet5 --steps 40
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np  # noqa: F401  (OpenBLAS starts its threads here: they are counted below)


def _tasks() -> dict[int, int]:
    """CPU nanoseconds of each of this process's threads."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[int(tid)] = int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass
    return out


_OPENBLAS_TIDS = set(_tasks()) - {threading.get_native_id()}


def _time_parallel_regions() -> dict[str, float]:
    """Wrap the functions that hand work to another thread (the pool's, numba's splits) in every
    loaded lucid module: the main thread's CPU and wall time inside them, outermost calls only."""
    from lucid.backends._numpy import _gemm, _numba, _parallel  # noqa: PLC0415

    totals = {"cpu": 0.0, "wall": 0.0}
    depth = [0]
    originals = [_parallel.run_chunks, _parallel.map_blocks, _numba.run_split, _gemm._split_matmul,
                 _gemm.matmul_pair]  # fmt: skip

    def timed(f: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            if depth[0] or threading.current_thread() is not threading.main_thread():
                return f(*args, **kwargs)
            depth[0] += 1
            c, w = time.thread_time(), time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                totals["cpu"] += time.thread_time() - c
                totals["wall"] += time.perf_counter() - w
                depth[0] -= 1

        return run

    wrapped = {id(f): timed(f) for f in originals}
    from lucid.backends import _numpy  # noqa: PLC0415

    spaces = [(name, mod) for name, mod in list(sys.modules.items())]
    for name, mod in spaces + [("lucid xp", _numpy._XP)]:  # the ``xp`` op code calls
        if mod is None or not name.startswith("lucid"):
            continue
        for attr, value in list(vars(mod).items()):
            if id(value) in wrapped and value in originals:
                setattr(mod, attr, wrapped[id(value)])
    return totals


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["gpt", "lstm", "lenet5", "resnet18", "charrnn"])
    ap.add_argument("--threads", default="def")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--events", action="store_true", help="print one step's hand-offs in order")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import train_step  # noqa: PLC0415

    import lucid
    from lucid.backends._numpy import _gemm, _parallel

    if args.threads != "def":
        lucid.set_num_threads(int(args.threads))
    bt = _parallel.blas_threads
    events: list[tuple[str, str]] = []
    products: collections.Counter[tuple[str, int]] = collections.Counter()
    product_flops: collections.Counter[str] = collections.Counter()
    depth = [0]

    def caller(skip: int) -> str:
        f = sys._getframe(skip)
        names = []
        while f is not None and len(names) < 3:
            mod = f.f_globals.get("__name__", "")
            if "_parallel" not in mod and "_numba" not in mod and mod != "__main__":
                names.append(f"{mod.rsplit('.', 1)[-1]}.{f.f_code.co_name}")
            f = f.f_back  # type: ignore[assignment]
        return " < ".join(names)

    orig_ran, orig_pool = bt.ran, bt.pool

    def ran(runtime: Any) -> None:
        events.append((runtime, caller(2)))
        orig_ran(runtime)

    def pool(workers: int) -> Any:
        events.append(("pool", caller(2)))
        return orig_pool(workers)

    bt.ran, bt.pool = ran, pool  # type: ignore[method-assign]
    orig_matmul = _gemm.matmul

    def matmul(a: Any, b: Any, out: Any = None, **kw: Any) -> Any:
        if depth[0] or a.ndim == 0 or b.ndim == 0:
            return orig_matmul(a, b, out, **kw)
        n0 = len(events)
        depth[0] += 1
        try:
            return orig_matmul(a, b, out, **kw)
        finally:
            depth[0] -= 1
            flops = _gemm._product(a, b)[2]
            new = {e[0] for e in events[n0:]}
            path = ("tiny" if flops <= _gemm._TINY_FLOPS else
                    "+".join(sorted(new)) if new else "1 thread")  # fmt: skip
            products[(path, int(flops // 1e6))] += 1
            product_flops[path] += flops

    _gemm.matmul = matmul  # type: ignore[assignment]
    for mod in list(sys.modules.values()):  # modules that imported the name itself
        if getattr(mod, "matmul", None) is orig_matmul and mod is not _gemm:
            mod.matmul = matmul  # type: ignore[attr-defined]

    step = train_step._steppers(args.model, args.batch, ["lucid"])["lucid"]
    for _ in range(3):
        step()
    inside = _time_parallel_regions()  # after the warm-up: the compiled modules are loaded
    step()
    events.clear()
    products.clear()
    product_flops.clear()
    pool_tids = {t.native_id for t in threading.enumerate() if t.name.startswith("lucid-conv")}
    inside["cpu"] = inside["wall"] = 0.0
    c0, w0, p0 = _tasks(), time.perf_counter(), time.process_time()
    for _ in range(args.steps):
        step()
    w1, p1, c1 = time.perf_counter(), time.process_time(), _tasks()
    pool_tids |= {t.native_id for t in threading.enumerate() if t.name.startswith("lucid-conv")}
    main_tid = threading.main_thread().native_id
    n = args.steps
    by: collections.Counter[str] = collections.Counter()
    for tid, ns in c1.items():
        d = ns - c0.get(tid, 0)
        owner = ("main" if tid == main_tid else "pool" if tid in pool_tids else
                 "openblas" if tid in _OPENBLAS_TIDS else "numba/omp")  # fmt: skip
        by[owner] += d
    print(
        f"{args.model} threads={lucid.get_num_threads()} "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')} load={os.getloadavg()[0]:.2f}"
    )
    print(f"  wall {1e3 * (w1 - w0) / n:.2f} ms/step, cpu {1e3 * (p1 - p0) / n:.2f} ms/step")
    for owner, ns in sorted(by.items()):
        print(f"  cpu {owner:10s} {ns / 1e6 / n:8.2f} ms/step")
    cpu_in, wall_in = inside["cpu"] / n, inside["wall"] / n
    print(f"  main thread inside parallel hand-offs: cpu {1e3 * cpu_in:.2f} ms/step, wall "
          f"{1e3 * wall_in:.2f} ms/step; outside (serial): cpu "
          f"{by['main'] / 1e6 / n - 1e3 * cpu_in:.2f} ms/step")  # fmt: skip
    per: collections.Counter[tuple[str, str]] = collections.Counter(events)
    print("  parallel hand-offs per step (runtime, asked by):")
    for (rt, who), k in per.most_common(20):
        print(f"    {k / n:7.1f}  {rt:9s} {who}")
    switches: collections.Counter[str] = collections.Counter()
    for (a, _), (b, _) in zip(events, events[1:]):
        if a != b:
            switches[f"{a}->{b}"] += 1
    print("  runtime switches per step:", {k: v / n for k, v in switches.items()})
    print("  products per step by path (MFLOP):")
    for (path, mf), k in sorted(products.items()):
        print(f"    {k / n:7.1f}  {path:18s} {mf} MFLOP")
    for path, fl in product_flops.items():
        print(f"    total {path:18s} {fl / n / 1e6:.0f} MFLOP/step")
    if args.events:
        for rt, who in events[: len(events) // n]:
            print(f"    {rt:9s} {who}")


if __name__ == "__main__":
    main()
