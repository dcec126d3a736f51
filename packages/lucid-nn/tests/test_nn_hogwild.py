"""Hogwild: processes started with lucid.multiprocessing (forked, or spawned as in
pytorch/examples' mnist_hogwild) train one model whose parameters are in shared memory
(Module.share_memory); the parent then holds the trained weights, and its test accuracy shows
it."""

from __future__ import annotations

import multiprocessing as std_mp
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.multiprocessing as mp
import lucid.nn as nn
import lucid.nn.functional as F

METHODS = [m for m in ("fork", "spawn") if m in std_mp.get_all_start_methods()]


def _data(seed: int, n: int) -> tuple[lucid.Tensor, lucid.Tensor]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2)).astype(np.float32)
    y = (x[:, 0] + 2 * x[:, 1] > 0).astype(np.int64)  # linearly separable
    return lucid.tensor(x), lucid.tensor(y)


def _train(rank: int, model: nn.Module, steps: int) -> None:
    x, y = _data(100 + rank, 256)
    for _ in range(steps):  # plain SGD in place (lucid-nn's tests run without lucid-optim)
        F.cross_entropy(model(x), y).backward()
        with lucid.no_grad():
            for p in model.parameters():
                p.sub_(0.5 * p.grad)
                p.grad = None


def _accuracy(model: nn.Module) -> float:
    x, y = _data(0, 500)
    with lucid.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean().item())


@pytest.mark.parametrize("method", [m for m in METHODS if m == "fork"])
def test_workers_train_the_shared_model(method: str) -> None:
    lucid.manual_seed(0)
    model = nn.Linear(2, 2)
    with lucid.no_grad():
        model.weight.copy_(lucid.tensor([[1.0, 1.0], [1.0, 1.0]]))  # predicts one class
        model.bias.zero_()
    model.share_memory()
    assert all(p.is_shared() for p in model.parameters())
    before = _accuracy(model)
    mp.spawn(_train, args=(model, 30), nprocs=2, start_method=method)
    after = _accuracy(model)
    assert before < 0.7 and after > 0.95, (before, after)
    private = nn.Linear(2, 2)  # not shared: the workers train their own copies
    start = private.weight.detach().clone()
    mp.spawn(_train, args=(private, 5), nprocs=1, start_method=method)
    assert lucid.equal(private.weight.detach(), start)


# Under "spawn" the children import the worker functions by module name, which a test module
# collected by pytest may not have in a fresh interpreter: the spawn checks run as a script.
_SPAWN_SCRIPT = """
import sys
import numpy as np
import lucid
import lucid.multiprocessing as mp
import lucid.nn as nn
import lucid.nn.functional as F


def data(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2)).astype(np.float32)
    return lucid.tensor(x), lucid.tensor((x[:, 0] + 2 * x[:, 1] > 0).astype(np.int64))


def train(rank, model, steps):
    x, y = data(100 + rank, 256)
    for _ in range(steps):
        F.cross_entropy(model(x), y).backward()
        with lucid.no_grad():
            for p in model.parameters():
                p.sub_(0.5 * p.grad)
                p.grad = None


def accuracy(model):
    x, y = data(0, 500)
    with lucid.no_grad():
        return float((model(x).argmax(dim=1) == y).float().mean().item())


def through_queue(q, done):
    t = q.get()
    t.add_(1.0)
    done.put(t.is_shared())


if __name__ == "__main__":
    lucid.manual_seed(0)
    model = nn.Linear(2, 2)
    with lucid.no_grad():
        model.weight.copy_(lucid.tensor([[1.0, 1.0], [1.0, 1.0]]))
        model.bias.zero_()
    model.share_memory()
    before = accuracy(model)
    mp.spawn(train, args=(model, 30), nprocs=2, start_method="spawn")
    after = accuracy(model)
    assert before < 0.7 and after > 0.95, (before, after)
    ctx = mp.get_context("spawn")
    base = lucid.zeros(3, 4).share_memory_()
    q, done = ctx.Queue(), ctx.Queue()
    q.put(base[1:, 2])  # a strided view at an offset travels as a handle
    p = ctx.Process(target=through_queue, args=(q, done))
    p.start()
    assert done.get(timeout=120) is True
    p.join(timeout=120)
    expected = np.zeros((3, 4), dtype=np.float32)
    expected[1:, 2] = 1.0
    np.testing.assert_array_equal(base.numpy(), expected)
    plain = lucid.zeros(2)  # not shared: the receiver gets a copy
    q.put(plain)
    got = q.get(timeout=120)
    assert got is not plain and not got.is_shared()
    print("ok")
"""


@pytest.mark.skipif("spawn" not in METHODS, reason="needs the spawn start method")
def test_spawned_workers_and_queues_share_the_memory(tmp_path: Path) -> None:
    # pytorch/examples' mnist_hogwild starts its workers with "spawn": the shared parameters
    # (and a shared view sent through a queue) are mapped by the children, not copied
    script = tmp_path / "hogwild_spawn.py"
    script.write_text(_SPAWN_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.skipif("fork" not in METHODS, reason="needs the fork start method")
def test_a_failing_worker_raises_in_the_parent() -> None:
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom"):
        mp.spawn(_fail, nprocs=2, start_method="fork")


def _fail(rank: int) -> None:
    if rank == 1:
        raise ValueError("boom")
