"""Optimizer step time: lucid.optim vs torch.optim (single-tensor and foreach) vs NumPy.

Median milliseconds of one ``step()`` over LeNet-5's parameter shapes (61,706 float32
values in 10 tensors; ``--shapes resnet18``: ResNet-18-CIFAR's, 11,173,962 values in 62
tensors), with gradients already in place, and the ratio to a hand-written NumPy version of
the same update (in-place ufuncs). Torch runs with 2 threads.

    PYTHONPATH=packages/lucid-core/src:packages/lucid-optim/src python tools/bench/bench_optim.py

``--lucid-only`` times lucid alone and prints one line per optimizer (``name ms``), for
before/after comparisons of lucid's own code: run it alternately against two source trees
(``PYTHONPATH`` of each) and take the medians (docs/performance.md). ``--foreach``
passes ``foreach=`` to lucid's optimizers (default: leave it unset).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
import lucid.optim as optim

SHAPES = [(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,), (120, 400), (120,), (84, 120), (84,)]
SHAPES += [(10, 84), (10,)]


def resnet18_shapes(num_classes: int = 10) -> list[tuple[int, ...]]:
    """The parameter shapes of ResNet-18 for CIFAR (3x3 stem, no max-pool), in module order."""
    shapes: list[tuple[int, ...]] = [(64, 3, 3, 3), (64,), (64,)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for block in range(2):
            first_in = cin if block == 0 else cout
            shapes += [(cout, first_in, 3, 3), (cout,), (cout,), (cout, cout, 3, 3), (cout,)]
            shapes += [(cout,)]
            if block == 0 and (stride != 1 or cin != cout):
                shapes += [(cout, cin, 1, 1), (cout,), (cout,)]
        cin = cout
    return shapes + [(num_classes, 512), (num_classes,)]


CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("Adam", dict(lr=1e-3)),
    ("AdamW", dict(lr=1e-3, weight_decay=1e-2)),
]


def _median_ms(step: Callable[[], Any], repeats: int) -> float:
    for _ in range(5):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _numpy_step(name: str, params: list[np.ndarray], grads: list[np.ndarray]) -> Callable[[], None]:
    """The same update written directly in NumPy (the floor an eager framework can reach)."""
    bufs = [np.zeros_like(p) for p in params]
    sqs = [np.zeros_like(p) for p in params]
    tmps = [np.empty_like(p) for p in params]
    count = [0]

    def sgd() -> None:
        for p, g, b in zip(params, grads, bufs):
            b *= 0.9
            b += g
            p -= 0.01 * b

    def adam() -> None:
        count[0] += 1
        t = count[0]
        step_size = 1e-3 / (1 - 0.9**t)
        bc2 = (1 - 0.999**t) ** 0.5
        for p, g, m, v, tmp in zip(params, grads, bufs, sqs, tmps):
            if name == "AdamW":
                p *= 1 - 1e-3 * 1e-2
            m += (g - m) * 0.1
            v *= 0.999
            np.multiply(g, g, out=tmp)
            tmp *= 0.001
            v += tmp
            np.sqrt(v, out=tmp)
            tmp /= bc2
            tmp += 1e-8
            np.divide(m, tmp, out=tmp)
            tmp *= step_size
            p -= tmp

    return sgd if name == "SGD" else adam


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--shapes", choices=("lenet5", "resnet18"), default="lenet5")
    parser.add_argument("--optimizers", default="SGD,Adam,AdamW", help="comma list of CASES")
    parser.add_argument("--lucid-only", action="store_true", help="time lucid alone")
    parser.add_argument("--foreach", choices=("unset", "true", "false"), default="unset")
    args = parser.parse_args()
    shapes = SHAPES if args.shapes == "lenet5" else resnet18_shapes()
    wanted = args.optimizers.split(",")
    cases = [(name, options) for name, options in CASES if name in wanted]
    lucid_foreach = {"unset": {}, "true": {"foreach": True}, "false": {"foreach": False}}[
        args.foreach
    ]
    rng = np.random.default_rng(0)
    init = [rng.normal(size=s).astype(np.float32) for s in shapes]
    grads = [rng.normal(size=s).astype(np.float32) for s in shapes]
    if args.lucid_only:
        for name, options in cases:
            params = [lucid.tensor(a.copy(), requires_grad=True) for a in init]
            for p, g in zip(params, grads):
                p.grad = lucid.tensor(g)
            opt = getattr(optim, name)(params, **options, **lucid_foreach)
            print(f"{name} {_median_ms(opt.step, args.repeats):.3f}")
        return
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None
    print(f"{'optimizer':10} {'numpy':>8} {'lucid':>8} {'torch':>8} {'foreach':>8}  lucid/numpy")
    for name, options in cases:
        np_ms = _median_ms(_numpy_step(name, [a.copy() for a in init], grads), args.repeats)
        params = [lucid.tensor(a.copy(), requires_grad=True) for a in init]
        for p, g in zip(params, grads):
            p.grad = lucid.tensor(g)
        lucid_opt = getattr(optim, name)(params, **options, **lucid_foreach)
        lucid_ms = _median_ms(lucid_opt.step, args.repeats)
        row = f"{name:10} {np_ms:8.3f} {lucid_ms:8.3f}"
        if torch is not None:
            for foreach in (False, True):
                tp = [torch.tensor(a.copy(), requires_grad=True) for a in init]
                for p, g in zip(tp, grads):
                    p.grad = torch.tensor(g)
                opt = getattr(torch.optim, name)(tp, foreach=foreach, **options)
                row += f" {_median_ms(opt.step, args.repeats):8.3f}"
        print(f"{row}  {lucid_ms / np_ms:6.1f}x")


if __name__ == "__main__":
    main()
