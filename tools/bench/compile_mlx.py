"""Benchmark: lucid.compile on the MLX backend (``mx.compile``) against eager lucid on MLX.

One step is forward + loss + backward + SGD (lr 0.01, momentum 0.9) in train mode, then
``loss.item()`` (MLX is lazy: the step is measured once its values exist): LeNet-5 at batch 64,
and the GPT and LSTM workloads of ``train_step.py`` (same configurations and data). Eager and
compiled rounds alternate in one process, from the same weights; medians per step are printed
with their ratio, and the compiled model's first call (the capture, the compile and its check
against eager) separately. On Linux MLX runs on its CPU backend, whose matrix products are a
reference BLAS: a correctness path, so these numbers say what compiling saves around the
kernels, not how fast MLX is.

    python tools/bench/compile_mlx.py                       # lenet5, gpt, lstm
    python tools/bench/compile_mlx.py --models lenet5 --rounds 5
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


def _stepper(name: str, compiled: bool) -> tuple[Any, float]:
    """``(step, first)``: one training step, and the seconds of the first (the capture)."""
    lucid.manual_seed(0)
    if name == "lenet5":
        model: Any = create_model("lenet5")
        rng = np.random.default_rng(0)
        x = lucid.from_numpy(rng.standard_normal((64, 1, 28, 28)).astype(np.float32)).to(DEV)
        y = lucid.from_numpy(rng.integers(0, 10, 64).astype(np.int64)).to(DEV)
    else:
        model = (train_step._gpt if name == "gpt" else train_step._lstm)(lucid.nn, F)
        data = {k: lucid.from_numpy(v).to(DEV) for k, v in train_step._seq_data(name).items()}
    model = model.to(DEV)
    run = lucid.compile(model) if compiled else model
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    hidden: list[Any] = []

    def loss() -> Any:
        if name == "lenet5":
            return F.cross_entropy(run(x), y)
        if name == "gpt":
            return run(data["x"], data["pos"], data["y"])
        c = train_step.LSTM
        h = (
            hidden[0]
            if hidden
            else tuple(
                lucid.zeros(c["layers"], c["batch"], c["hidden"], device=DEV) for _ in range(2)
            )
        )
        out, h = run(data["x"], tuple(t.detach() for t in h))
        hidden[:] = [h]
        return F.nll_loss(out, data["y"])

    def step() -> float:
        value = loss()
        opt.zero_grad()
        value.backward()
        opt.step()
        return float(value.item())

    started = time.perf_counter()
    step()
    return step, time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", default="lenet5,gpt,lstm")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    cpu = platform.processor() or platform.machine()
    for line in (
        Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    ):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    print(f"{cpu}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"mlx {lucid.backends.mlx.create_backend(DEV).device}")  # fmt: skip
    for name in args.models.split(","):
        eager, _ = _stepper(name, False)
        comp, first = _stepper(name, True)
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(args.rounds):
            for compiled, step in ((False, eager), (True, comp)):
                t0 = time.perf_counter()
                for _ in range(STEPS[name]):
                    step()
                times[compiled].append((time.perf_counter() - t0) / STEPS[name])
        e, c = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"{name:7s} eager {e * 1e3:8.2f} ms  compiled {c * 1e3:8.2f} ms  "
            f"compiled/eager {c / e:.2f}  first compiled call {first * 1e3:.0f} ms  "
            f"(load {os.getloadavg()[0]:.2f})"
        )


if __name__ == "__main__":
    main()
