"""Benchmark: one training step of lucid-on-MLX against the same model written in pure MLX.

Both sides run the same model (same layers, parameter shapes and initial weights) on the same
batch, with SGD (momentum 0.9), interleaved in one process (these machines drift 10-30% minute
to minute, so only the side-by-side ratio means anything):

- lucid: ``opt.zero_grad(); F.cross_entropy(model(x), y).backward(); opt.step()`` on device
  "mlx"; the optimizer evaluates the parameters at the end of ``step()``;
- mlx: ``mlx.nn.value_and_grad`` + ``mlx.optimizers.SGD.update`` + ``mx.eval`` of the
  parameters and optimizer state (the same work, MLX's own autodiff, no ``mx.compile``).

It prints the median step time of each and ``lucid / mlx`` (the cost of lucid's Python layer:
the target is <= 1.3). MLX's CPU build on Linux has a slow reference GEMM, so keep the batch
small there: the ratio, not the absolute time, is the result.

    python tools/bench/bench_mlx.py                       # LeNet-5 (batch 64), ResNet-18 (batch 4)
    python tools/bench/bench_mlx.py --resnet-batch 16 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import mlx.nn as mnn
import mlx.optimizers as mopt
import numpy as np

import lucid
import lucid.backends.mlx  # noqa: F401  (registers "mlx" when run from a source checkout)
import lucid.nn.functional as F
import lucid.optim as optim

# -- the pure-MLX models (NHWC, as MLX wants) -----------------------------------------------------


class MlxLeNet5(mnn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = mnn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = mnn.Conv2d(6, 16, 5)
        self.fc1 = mnn.Linear(16 * 5 * 5, 120)
        self.fc2 = mnn.Linear(120, 84)
        self.fc3 = mnn.Linear(84, 10)
        self.pool = mnn.MaxPool2d(2)

    def __call__(self, x: Any) -> Any:
        x = self.pool(mnn.relu(self.conv1(x)))
        x = self.pool(mnn.relu(self.conv2(x)))
        x = mx.transpose(x, (0, 3, 1, 2)).reshape(x.shape[0], -1)  # lucid's NCHW flatten order
        x = mnn.relu(self.fc1(x))
        return self.fc3(mnn.relu(self.fc2(x)))


class MlxBasicBlock(mnn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = mnn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = mnn.BatchNorm(cout)
        self.conv2 = mnn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = mnn.BatchNorm(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = [mnn.Conv2d(cin, cout, 1, stride=stride, bias=False), mnn.BatchNorm(cout)]

    def __call__(self, x: Any) -> Any:
        out = mnn.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        idn = x if self.down is None else self.down[1](self.down[0](x))
        return mnn.relu(out + idn)


class MlxResNet18Cifar(mnn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = mnn.Conv2d(3, 64, 3, padding=1, bias=False)
        self.bn1 = mnn.BatchNorm(64)
        widths = [64, 128, 256, 512]
        blocks, cin = [], 64
        for i, w in enumerate(widths):
            blocks += [MlxBasicBlock(cin, w, 1 if i == 0 else 2), MlxBasicBlock(w, w, 1)]
            cin = w
        self.blocks = blocks
        self.fc = mnn.Linear(512, num_classes)

    def __call__(self, x: Any) -> Any:
        x = mnn.relu(self.bn1(self.conv1(x)))
        for b in self.blocks:
            x = b(x)
        return self.fc(mx.mean(x, axis=(1, 2)))


# -- the lucid models -----------------------------------------------------------------------------


def lucid_lenet5() -> Any:
    from lucid.models import lenet5

    return lenet5()


def lucid_resnet18() -> Any:
    from lucid.models import resnet18_cifar

    return resnet18_cifar()


# -- timing ---------------------------------------------------------------------------------------


def lucid_step(model: Any, batch: tuple[Any, Any]) -> Callable[[], None]:
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = batch

    def step() -> None:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return step


def mlx_step(model: Any, batch: tuple[Any, Any]) -> Callable[[], None]:
    opt = mopt.SGD(learning_rate=0.01, momentum=0.9)
    x, y = batch

    def loss_fn(m: Any, xb: Any, yb: Any) -> Any:
        return mnn.losses.cross_entropy(m(xb), yb, reduction="mean")

    grad_fn = mnn.value_and_grad(model, loss_fn)

    def step() -> None:
        loss, grads = grad_fn(model, x, y)
        opt.update(model, grads)
        mx.eval(loss, model.parameters(), opt.state)

    return step


def interleaved(steps: dict[str, Callable[[], None]], repeats: int) -> dict[str, float]:
    for fn in steps.values():  # warm-up: first-call costs (allocations, optimizer state)
        fn()
        fn()
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(repeats):
        for name, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def run(name: str, lucid_model: Any, mlx_model: Any, shape: tuple[int, ...], repeats: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.integers(0, 10, shape[0])
    lucid_model.to("mlx").train()
    mlx_model.train()
    lb = (lucid.tensor(x, device="mlx"), lucid.tensor(y, device="mlx"))
    mb = (mx.array(np.ascontiguousarray(x.transpose(0, 2, 3, 1))), mx.array(y))
    med = interleaved({"lucid": lucid_step(lucid_model, lb), "mlx": mlx_step(mlx_model, mb)},
                      repeats)  # fmt: skip
    n_lucid = sum(p.numel() for p in lucid_model.parameters())
    n_mlx = sum(v.size for _, v in _flat(mlx_model.trainable_parameters()))
    ratio = med["lucid"] / med["mlx"]
    print(f"{name:<28} batch {shape[0]:>3}  params lucid {n_lucid:,} / mlx {n_mlx:,}")
    print(f"  lucid-on-MLX {med['lucid'] * 1e3:9.2f} ms   pure MLX {med['mlx'] * 1e3:9.2f} ms   "
          f"lucid / mlx = {ratio:.2f}  (target <= 1.30)")  # fmt: skip


def _flat(tree: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(tree, dict):
        return [kv for k, v in tree.items() for kv in _flat(v, f"{prefix}{k}.")]
    if isinstance(tree, list):
        return [kv for i, v in enumerate(tree) for kv in _flat(v, f"{prefix}{i}.")]
    return [(prefix, tree)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lenet-batch", type=int, default=64)
    parser.add_argument("--resnet-batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--resnet-repeats", type=int, default=5)
    parser.add_argument("--skip-resnet", action="store_true")
    args = parser.parse_args()
    print(f"mlx {mx.__version__} on {mx.default_device()}; medians of interleaved steps")
    lucid.manual_seed(0)
    run("LeNet-5 (MNIST 28x28)", lucid_lenet5(), MlxLeNet5(), (args.lenet_batch, 1, 28, 28),
        args.repeats)  # fmt: skip
    if not args.skip_resnet:
        run("ResNet-18 CIFAR (32x32)", lucid_resnet18(), MlxResNet18Cifar(),
            (args.resnet_batch, 3, 32, 32), args.resnet_repeats)  # fmt: skip


if __name__ == "__main__":
    main()
