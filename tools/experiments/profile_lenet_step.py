"""Where one LeNet-5 training step (batch 64: data, forward, cross-entropy, backward, SGD) spends
its time.

1. Median time of each phase of a step (next batch from a DataLoader, forward + loss,
   ``zero_grad``, backward, optimizer step), with 1 and with 2 BLAS threads, interleaved so
   both see the same machine load.
2. Time per autograd op, by Function class: forward (``Function.apply``: the kernel plus the
   recording) and backward (the class's ``backward`` as the engine calls it), each without the
   time of the ops it calls itself (a backward's own lucid ops are counted under their class).
   What is left of the step is the engine, the modules and the optimizer: the Python overhead.
3. With ``--cprofile``, the functions with the most own time under cProfile (which inflates
   Python-heavy code, so read it for *what* is called, the timers above for *how long*).

    python tools/experiments/profile_lenet_step.py --steps 200
    python tools/experiments/profile_lenet_step.py --steps 100 --cprofile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import lucid
import lucid.nn.functional as F
from lucid import optim
from lucid.autograd import engine
from lucid.autograd.function import Function
from lucid.data import DataLoader, TensorDataset
from lucid.models import create_model

PHASES = ("data", "forward", "zero_grad", "backward", "step")


class OpTimer:
    """Own time per key of nested timed calls: a call's time minus its timed callees'."""

    def __init__(self) -> None:
        self.own: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[float] = []

    def wrap(self, fn: Callable[..., Any], key: Callable[..., str]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._stack.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                inner = self._stack.pop()
                k = key(*args)
                self.own[k] += dt - inner
                self.calls[k] += 1
                if self._stack:
                    self._stack[-1] += dt

        return timed


def timed_ops(timer: OpTimer) -> Callable[[], None]:
    """Route ``Function.apply`` and the engine's backward calls through ``timer``; returns the
    function that undoes it."""
    apply, call_backward = Function.apply.__func__, engine._call_backward  # type: ignore[attr-defined]
    fwd = timer.wrap(apply, lambda cls, *a: f"{cls.__name__} fwd")
    Function.apply = classmethod(fwd)  # type: ignore[method-assign,assignment]
    engine._call_backward = timer.wrap(call_backward, lambda n, *a: f"{type(n).__name__} bwd")

    def undo() -> None:
        Function.apply = classmethod(apply)  # type: ignore[method-assign,assignment]
        engine._call_backward = call_backward

    return undo


def batches(loader: DataLoader) -> Iterator[Any]:
    while True:
        yield from loader


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--cprofile", action="store_true", help="also print a cProfile listing")
    args = p.parse_args()
    lucid.manual_seed(0)
    model = create_model("lenet5")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    images = rng.standard_normal((args.batch * 16, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, args.batch * 16)
    data = TensorDataset(lucid.from_numpy(images), lucid.from_numpy(labels))
    source = batches(DataLoader(data, batch_size=args.batch, shuffle=True))

    def step(times: dict[str, list[float]] | None = None) -> None:
        t = [time.perf_counter()]
        x, y = next(source)
        t.append(time.perf_counter())
        loss = F.cross_entropy(model(x), y)
        t.append(time.perf_counter())
        opt.zero_grad()
        t.append(time.perf_counter())
        loss.backward()
        t.append(time.perf_counter())
        opt.step()
        loss.item()
        t.append(time.perf_counter())
        if times is not None:
            for name, a, b in zip(PHASES, t, t[1:]):
                times[name].append(b - a)

    for _ in range(10):
        step()
    times: dict[int, dict[str, list[float]]] = {n: defaultdict(list) for n in (1, 2)}
    for _ in range(args.steps // 2):
        for n in (1, 2):
            with threadpool_limits(limits=n, user_api="blas"):
                step(times[n])
    print("median ms per phase    " + "".join(f"{name:>10s}" for name in (*PHASES, "total")))
    for n, by_phase in times.items():
        meds = [float(np.median(by_phase[name])) * 1e3 for name in PHASES]
        total = float(np.median([sum(s) for s in zip(*(by_phase[k] for k in PHASES))])) * 1e3
        row = "".join(f"{m:10.2f}" for m in (*meds, total))
        print(f"  {n} BLAS thread(s)     {row}")

    timer = OpTimer()
    undo = timed_ops(timer)
    with threadpool_limits(limits=1, user_api="blas"):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            step()
        wall = (time.perf_counter() - t0) / args.steps * 1e3
    undo()
    ops = sorted(timer.own.items(), key=lambda kv: -kv[1])
    in_ops = sum(timer.own.values()) / args.steps * 1e3
    print(f"\nper op, 1 BLAS thread: {wall:.2f} ms per timed step, {in_ops:.2f} ms inside "
          f"ops, {wall - in_ops:.2f} ms elsewhere (engine, modules, optimizer, data)")  # fmt: skip
    for name, own in ops:
        per_step = timer.calls[name] / args.steps
        print(f"  {name:28s} {own / args.steps * 1e3:7.3f} ms  ({per_step:g} calls/step)")

    if args.cprofile:
        with threadpool_limits(limits=1, user_api="blas"):
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.steps):
                step()
            prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        print(out.getvalue())


if __name__ == "__main__":
    main()
