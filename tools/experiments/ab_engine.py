"""A/B of the autograd engine's per-node work: a git revision's ``_GraphTask`` against the
working tree's, in one process, interleaved, CPU time (``time.process_time``) of ``backward()``
or ``autograd.grad`` over a 1,000-node graph (docs/performance.md, session 7).

    python tools/experiments/ab_engine.py [REV=HEAD] [ROUNDS=300] [backward|grad]

Run from the repository root (it reads ``git show REV:...``). Checks both give the same bits.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import types
from typing import Any

import lucid
from lucid.autograd import engine

PATH = "packages/lucid-core/src/lucid/autograd/engine.py"


def _task_class(src: str, name: str) -> Any:
    mod = types.ModuleType(name)
    exec(compile(src, name, "exec"), mod.__dict__)  # noqa: S102 (the module's own source)
    return mod._GraphTask


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    mode = sys.argv[3] if len(sys.argv) > 3 else "backward"
    old = subprocess.run(["git", "show", f"{rev}:{PATH}"], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    a = _task_class(old, "engine_a")
    with open(PATH) as f:
        b = _task_class(f.read(), "engine_b")
    lucid.manual_seed(0)
    x = lucid.randn(4, requires_grad=True)
    w = lucid.randn(4, requires_grad=True)

    def one(cls: Any) -> tuple[float, list[Any]]:
        engine._GraphTask = cls
        y = x
        for _ in range(500):  # 1,000 nodes: sin, then an add with an edge to the leaf w
            y = y.sin() + w
        loss = y.sum()
        t = time.process_time()
        if mode == "grad":  # every node takes the hooked path (inputs given)
            grads = list(lucid.autograd.grad(loss, [x, w]))
        else:
            loss.backward()
            grads = [x.grad, w.grad]
            x.grad = w.grad = None
        return time.process_time() - t, [g.numpy() for g in grads]

    ga, gb = one(a)[1], one(b)[1]
    assert all((p == q).all() for p, q in zip(ga, gb)), "the two engines' gradients differ"
    ta: list[float] = []
    tb: list[float] = []
    for i in range(rounds):
        for cls, acc in ((a, ta), (b, tb)) if i % 2 else ((b, tb), (a, ta)):
            acc.append(one(cls)[0])
    ma, mb = statistics.median(ta), statistics.median(tb)
    print(f"{mode}: {rev} {ma / 1001 * 1e6:.2f} us/node, tree {mb / 1001 * 1e6:.2f} us/node, "
          f"tree/{rev} {mb / ma:.4f} (medians of {rounds})")  # fmt: skip


if __name__ == "__main__":
    main()
