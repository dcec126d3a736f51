"""Benchmark: lucid.compile on the MLX backend (``mx.compile``) against eager lucid on MLX.

One step is forward + loss + backward + SGD (lr 0.01, momentum 0.9) in train mode, then
``loss.item()`` (MLX is lazy: a step is timed once its values exist), for LeNet-5 at batch 64
and the GPT and LSTM workloads of ``train_step.py`` (same configurations and data). Rows:

- ``eager``: the model as written;
- ``loss``: ``lucid.compile`` of a function returning the loss (GPT's model returns it
  itself): forward and gradients in one ``mx.compile`` call;
- ``module``: ``lucid.compile(model)`` of a Module returning logits (trains on the array
  replay: ``mx.vjp`` would compute the forward again);
- ``eval-eager`` / ``eval-module`` (``--forward``): the model's forward in eval mode under
  ``no_grad``, eager and ``lucid.compile(model)`` (``mx.compile``).

Rounds alternate in one process, from the same weights; medians per step (wall clock, and
the process's CPU time, which a loaded machine disturbs less), the ratio to the eager row,
and each compiled row's first call (capture, compile, check against eager). On
Linux MLX runs on its CPU backend, whose matrix products are a reference BLAS: a correctness
path, so these numbers say what compiling saves around the kernels, not how fast MLX is.

    python tools/bench/compile_mlx.py                       # lenet5, gpt, lstm
    python tools/bench/compile_mlx.py --models lenet5 --rounds 5 --forward
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

import lucid
import lucid.backends.mlx  # noqa: F401 - the device and its compiler
import lucid.nn.functional as F
from lucid import optim
from lucid.models import create_model

_spec = importlib.util.spec_from_file_location(
    "train_step", Path(__file__).with_name("train_step.py")
)
assert _spec is not None and _spec.loader is not None
train_step = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_step)

DEV = "mlx"
STEPS = {"lenet5": 10, "gpt": 3, "lstm": 2}  # steps per timed round


def _stepper(name: str, how: str) -> tuple[Any, float]:
    """``(step, first)``: one step of row ``how``, and the seconds of its first call."""
    lucid.manual_seed(0)
    rng = np.random.default_rng(0)
    if name == "lenet5":
        model: Any = create_model("lenet5")
        x = lucid.from_numpy(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
        args: tuple[Any, ...] = (x.to(DEV), lucid.from_numpy(rng.integers(0, 10, 64)).to(DEV))
    else:
        model = (train_step._gpt if name == "gpt" else train_step._lstm)(lucid.nn, F)
        d = {k: lucid.from_numpy(v).to(DEV) for k, v in train_step._seq_data(name).items()}
        args = (d["x"], d["pos"], d["y"]) if name == "gpt" else (d["x"], None, d["y"])
    model = model.to(DEV)
    run = lucid.compile(model) if how in ("module", "eval-module") else model
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def loss_of(*a: Any) -> Any:
        if name == "lenet5":
            return F.cross_entropy(run(a[0]), a[1])
        if name == "gpt":
            return run(*a)
        out, h = run(a[0], a[1])
        return F.nll_loss(out, a[2]), tuple(t.detach() for t in h)

    loss = lucid.compile(loss_of) if how == "loss" else loss_of
    c = train_step.LSTM
    hidden = [tuple(lucid.zeros(c["layers"], c["batch"], c["hidden"], device=DEV)
                    for _ in range(2))]  # fmt: skip

    def value() -> Any:
        if name != "lstm":
            return loss(*args)
        v, hidden[0] = loss(args[0], hidden[0], args[2])
        return v

    def step() -> float:
        if how.startswith("eval"):
            with lucid.no_grad():
                return float(value().item())
        v = value()
        opt.zero_grad()
        v.backward()
        opt.step()
        return float(v.item())

    if how.startswith("eval"):
        model.eval()
    started = time.perf_counter()
    step()
    return step, time.perf_counter() - started


def _cpu() -> str:
    info = Path("/proc/cpuinfo")
    for line in info.read_text().splitlines() if info.exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", default="lenet5,gpt,lstm")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--forward", action="store_true", help="also eval-mode no_grad forwards")
    args = ap.parse_args()
    print(f"{_cpu()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"mlx {lucid.backends.mlx.create_backend(DEV).device}")  # fmt: skip
    for name in args.models.split(","):
        hows = ["eager", "loss"] + (["module"] if name != "gpt" else [])
        hows += ["eval-eager", "eval-module"] if args.forward else []
        steps = {how: _stepper(name, how) for how in hows}
        times: dict[str, list[float]] = {how: [] for how in steps}
        cpu: dict[str, list[float]] = {how: [] for how in steps}
        for _ in range(args.rounds):
            for how, (step, _) in steps.items():
                t0, c0 = time.perf_counter(), time.process_time()
                for _ in range(STEPS[name]):
                    step()
                times[how].append((time.perf_counter() - t0) / STEPS[name])
                cpu[how].append((time.process_time() - c0) / STEPS[name])
        med = {how: statistics.median(t) for how, t in times.items()}
        mcpu = {how: statistics.median(t) for how, t in cpu.items()}
        for how in steps:
            base = "eval-eager" if how.startswith("eval") else "eager"
            first = "" if how.endswith("eager") else f"  first call {steps[how][1] * 1e3:.0f} ms"
            print(
                f"{name:7s} {how:12s} wall {med[how] * 1e3:9.2f} ms x{med[how] / med[base]:.2f}"
                f"  cpu {mcpu[how] * 1e3:9.2f} ms x{mcpu[how] / mcpu[base]:.2f}{first}"
            )
        print(f"        (load {os.getloadavg()[0]:.2f} after)")


if __name__ == "__main__":
    main()
