"""How evenly the threads of each parallel hand-off share its work, from thread CPU time.

Runs one of ``train_step.py``'s models (lucid only) and wraps ``_parallel.run_chunks`` and
``_parallel.map_blocks`` (outermost calls of the main thread): each work item's CPU time
(``time.thread_time``) is added to the thread that ran it. Per hand-off kind and step it
prints the calls, the items per call, the CPU time of the work, the **imbalance** (per call
that ran on two threads or more, the busiest thread's CPU minus the next one's, summed) and
how many calls ran on one thread only (small work run inline, or a call whose other thread
woke too late to take an item). The
imbalance is core time the other core spent waiting at the end of the hand-off; on a loaded
machine late wake-ups inflate it, so read it on a quiet one (docs/performance.md, "The ResNet
step's serial part").

    python tools/bench/balance_threads.py resnet18 --batch 128 --steps 2
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


def _caller(skip: int) -> str:
    f: Any = sys._getframe(skip)
    names: list[str] = []
    while f is not None and len(names) < 2:
        mod = f.f_globals.get("__name__", "")
        if "_parallel" not in mod and mod != "__main__":
            names.append(f"{mod.rsplit('.', 1)[-1]}.{f.f_code.co_name}")
        f = f.f_back
    return " < ".join(names)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["gpt", "lstm", "lenet5", "resnet18", "charrnn"])
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    import train_step  # noqa: PLC0415

    from lucid.backends._numpy import _parallel  # noqa: PLC0415

    step = train_step._steppers(args.model, args.batch, ["lucid"])["lucid"]
    for _ in range(3):
        step()
    # name -> [calls, cpu s, imbalance s, items, one-thread calls]
    acc: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0, 0])
    depth = [0]

    def wrap(orig: Any) -> Any:
        def run(work: Any, items: Any, *rest: Any, **kw: Any) -> Any:
            if depth[0] or threading.current_thread() is not threading.main_thread():
                return orig(work, items, *rest, **kw)
            name = _caller(2)
            per: dict[int, float] = collections.defaultdict(float)

            def timed(item: Any) -> Any:
                c = time.thread_time()
                try:
                    return work(item)
                finally:
                    per[threading.get_ident()] += time.thread_time() - c

            depth[0] += 1
            try:
                return orig(timed, items, *rest, **kw)
            finally:
                depth[0] -= 1
                v = sorted(per.values(), reverse=True) + [0.0]
                e = acc[name]
                e[0] += 1
                e[1] += sum(v)
                e[3] += len(items)
                if len(per) < 2:  # inline (small work), or the other thread woke too late
                    e[4] += 1
                else:
                    e[2] += v[0] - v[1]

        return run

    wrapped = {id(f): wrap(f) for f in (_parallel.run_chunks, _parallel.map_blocks)}
    originals = (_parallel.run_chunks, _parallel.map_blocks)
    for name, mod in list(sys.modules.items()):
        if mod is not None and name.startswith("lucid"):
            for attr, value in list(vars(mod).items()):
                if id(value) in wrapped and value in originals:
                    setattr(mod, attr, wrapped[id(value)])
    step()
    acc.clear()
    w0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    n = args.steps
    print(
        f"{args.model} b{args.batch} threads={_parallel.workers()} "
        f"load={os.getloadavg()[0]:.2f} wall {1e3 * (time.perf_counter() - w0) / n:.0f} ms/step"
    )
    total = [0.0, 0.0]
    for k, (calls, cpu, imb, items, one) in sorted(acc.items(), key=lambda kv: -kv[1][2]):
        total[0] += cpu
        total[1] += imb
        print(
            f"  {k:58s} calls {calls / n:5.1f} items {items / calls:5.1f} cpu "
            f"{1e3 * cpu / n:7.1f} imbalance {1e3 * imb / n:6.1f} one-thread {one / n:4.1f}"
        )
    print(f"  total: work cpu {1e3 * total[0] / n:.0f}, imbalance {1e3 * total[1] / n:.0f} ms/step")


if __name__ == "__main__":
    main()
