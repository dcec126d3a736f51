"""Run by the tests on 2 ranks: DDP on half a batch per rank must end where one process on the
whole batch ends (10 SGD-momentum steps), although rank 1 builds different initial weights.
With the argument ``mlx``: on the "mlx" backend, models and data on device "mlx"."""

from __future__ import annotations

import sys

import numpy as np
from common import SGD, say  # tests/workers/common.py: this folder is on sys.path

import lucid
import lucid.distributed as dist
import lucid.nn as nn
from lucid.nn.parallel import DistributedDataParallel as DDP

STEPS, BATCH = 10, 8
DEVICE = "mlx" if sys.argv[1:] == ["mlx"] else "cpu"


def mlp(seed: int) -> nn.Module:
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).to(DEVICE)


def cnn(seed: int) -> nn.Module:
    lucid.manual_seed(seed)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Conv2d(4, 4, 3, stride=2), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Flatten(), nn.Linear(4 * 3 * 3, 3),
    ).to(DEVICE)  # fmt: skip


def batches(shape: tuple[int, ...]) -> list[tuple[lucid.Tensor, lucid.Tensor]]:
    rng = np.random.default_rng(0)
    return [
        (lucid.tensor(rng.standard_normal((BATCH, *shape)).astype(np.float32), device=DEVICE),
         lucid.tensor(rng.standard_normal((BATCH, 3)).astype(np.float32), device=DEVICE))
        for _ in range(STEPS)
    ]  # fmt: skip


def loss_of(model: nn.Module, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
    return ((model(x) - y) ** 2).mean()


def train(model: nn.Module, data: list[tuple[lucid.Tensor, lucid.Tensor]], part: slice) -> None:
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in data:
        opt.zero_grad()
        if isinstance(model, DDP):  # an evaluation with grad on: a forward with no backward
            model.eval()
            model(x[part])
            model.train()
        loss_of(model, x[part], y[part]).backward()
        opt.step()


Batches = list[tuple[lucid.Tensor, lucid.Tensor]]


def train_accumulating(ddp: DDP, data: Batches, part: slice) -> None:
    """Each step in two micro-batches: the first under no_sync, the second averaged."""
    opt = SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    start, stop = part.start, part.stop
    mid = (start + stop) // 2
    for x, y in data:
        opt.zero_grad()
        with ddp.no_sync():
            (loss_of(ddp, x[start:mid], y[start:mid]) / 2).backward()
        (loss_of(ddp, x[mid:stop], y[mid:stop]) / 2).backward()
        opt.step()


def max_error(a: nn.Module, b: nn.Module) -> float:
    worst = 0.0
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        x, y = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
        # within rtol=1e-5 and atol=1e-5: the excess over the tolerance, 0 when inside
        worst = max(worst, float((np.abs(x - y) - (1e-5 + 1e-5 * np.abs(y))).max()))
    return worst


def check(name: str, build: object, shape: tuple[int, ...], accumulate: bool = False) -> None:
    rank, world = dist.get_rank(), dist.get_world_size()
    data = batches(shape)
    reference = build(0)  # type: ignore[operator]
    train(reference, data, slice(0, BATCH))
    model = dist.SyncBatchNorm.convert_sync_batchnorm(build(rank))  # type: ignore[operator]
    ddp = DDP(model, device_ids=None, bucket_cap_mb=0.0002)
    assert all(k.startswith("module.") for k in ddp.state_dict()), list(ddp.state_dict())
    part = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    (train_accumulating if accumulate else train)(ddp, data, part)
    early = ddp.reducer.last.started_in_backward if ddp.reducer.last else 0
    say(
        f"rank {rank} {name}: excess {max_error(reference, ddp.module):.3g} "
        f"buckets {len(ddp.reducer.buckets)} started-in-backward {early}"
    )


class TwoHeads(nn.Module):
    """Head ``b`` is used on the ranks in ``uses_b`` only; head ``c`` never."""

    def __init__(self, uses_b: bool) -> None:
        super().__init__()
        self.a, self.b, self.c = nn.Linear(4, 2), nn.Linear(4, 2), nn.Linear(4, 2)
        self.uses_b = uses_b

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return self.a(x) + self.b(x) if self.uses_b else self.a(x)


def check_unused_parameters() -> None:
    rank = dist.get_rank()
    x = lucid.ones(3, 4, device=DEVICE)
    try:
        DDP(TwoHeads(uses_b=True).to(DEVICE))(x)
    except RuntimeError as e:
        assert "c.weight, c.bias" in str(e) and "find_unused_parameters=True" in str(e), e
    else:
        raise AssertionError("an unused parameter went unnoticed")
    ddp = DDP(TwoHeads(uses_b=rank == 1).to(DEVICE), find_unused_parameters=True)
    ddp(x).sum().backward()
    model = ddp.module
    assert model.c.weight.grad is None  # used by no rank: no gradient, as in one process
    assert model.b.weight.grad is not None  # used by rank 1 only: averaged with rank 0's zeros
    got = [lucid.zeros(2, 4, device=DEVICE) for _ in range(2)]
    dist.all_gather(got, model.b.weight.grad)
    assert (got[0] - got[1]).abs().max().item() == 0.0
    assert abs(model.b.weight.grad.sum().item() - 3 * 2 * 4 / 2) < 1e-5
    say(f"rank {rank} unused parameters: ok")


def main() -> None:
    dist.init_process_group(backend="mlx" if DEVICE == "mlx" else "mpi")
    check("mlp", mlp, (6,))
    check("cnn", cnn, (3, 8, 8))
    check("mlp-no_sync", mlp, (6,), accumulate=True)
    check_unused_parameters()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
