"""The training loop of ``lucid-train``: epochs, evaluation, metrics, checkpoints, Ctrl-C."""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lucid
import lucid.nn.functional as F
from lucid import optim
from lucid.models import create_model
from lucid.models.train import artifacts
from lucid.models.train.data import in_channels, loaders, num_classes


@dataclass
class TrainConfig:
    model: str
    dataset: str = "mnist"
    data_root: Path | None = None
    epochs: int = 1
    batch_size: int = 64
    optimizer: str = "sgd"
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 0.0
    scheduler: str = "onecycle"
    device: str = "cpu"
    seed: int = 0
    workers: int = 0
    output: Path = Path("runs")
    resume: bool = False
    subset: int | None = None
    augment: bool = False
    no_progress: bool = False
    threads: int | None = None


def make_optimizer(cfg: TrainConfig, params: Any) -> Any:
    wd = cfg.weight_decay
    if cfg.optimizer == "sgd":
        return optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=wd)
    if cfg.optimizer == "adam":
        return optim.Adam(params, lr=cfg.lr, weight_decay=wd)
    if cfg.optimizer == "adamw":
        return optim.AdamW(params, lr=cfg.lr, weight_decay=wd or 0.01)
    if cfg.optimizer == "rmsprop":
        return optim.RMSprop(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=wd)
    return optim.Lion(params, lr=cfg.lr, weight_decay=wd)


def make_scheduler(cfg: TrainConfig, opt: Any, steps_per_epoch: int) -> Any:
    """A per-step scheduler (or None); per-step so resuming mid-run stays exact."""
    total = max(1, cfg.epochs * steps_per_epoch)
    sched = optim.lr_scheduler
    if cfg.scheduler == "step":
        return sched.StepLR(opt, step_size=max(1, total // 3), gamma=0.1)
    if cfg.scheduler == "cosine":
        return sched.CosineAnnealingLR(opt, T_max=total)
    if cfg.scheduler == "onecycle":
        return sched.OneCycleLR(opt, max_lr=cfg.lr, total_steps=total)
    if cfg.scheduler == "warmup-cosine":
        return sched.LambdaLR(opt, lambda s: _warmup_cosine(s, total))
    return None


def _warmup_cosine(step: int, total: int) -> float:
    warm = max(1, total // 20)
    if step < warm:
        return (step + 1) / warm
    return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))


def evaluate(model: Any, loader: Any, device: str) -> tuple[float, float]:
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with lucid.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += int((logits.argmax(1) == y).sum().item())
            seen += y.shape[0]
    model.train()
    return total_loss / max(seen, 1), correct / max(seen, 1)


class _Interrupt:
    """Turn the first Ctrl-C into a flag checked between steps (a second one aborts)."""

    def __init__(self) -> None:
        self.requested = False
        self._old: Any = None

    def __enter__(self) -> _Interrupt:
        self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\ninterrupt: stopping after this step and saving a checkpoint "
              "(Ctrl-C again to abort)", file=sys.stderr)  # fmt: skip

    def is_set(self) -> bool:
        """Whether Ctrl-C came (a call, so type checkers don't pin the flag between checks)."""
        return self.requested

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._old)


# Models below this many parameters train faster with one BLAS thread: their GEMMs are too
# small for a second thread to pay for its wake-ups, and on a loaded machine a descheduled
# OpenBLAS thread stalls the other (docs/performance.md, item 2; LeNet-5 runs ~1.5-3x faster).
_ONE_THREAD_BELOW = 2_000_000


@contextlib.contextmanager
def blas_threads(requested: int | None, n_params: int) -> Iterator[int | None]:
    """Limit the BLAS thread pool for the run: ``requested``, else 1 for small models."""
    limit = requested if requested is not None else (1 if n_params < _ONE_THREAD_BELOW else None)
    if limit is None:
        yield None
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # the limit is a speed hint only
        yield None
        return
    with threadpool_limits(limits=limit, user_api="blas"):
        yield limit


def train(cfg: TrainConfig) -> int:
    lucid.manual_seed(cfg.seed)
    train_loader, test_loader = loaders(cfg)
    model = create_model(cfg.model, num_classes=num_classes(cfg.dataset),
                         in_channels=in_channels(cfg.dataset)).to(cfg.device)  # fmt: skip
    opt = make_optimizer(cfg, model.parameters())
    sched = make_scheduler(cfg, opt, len(train_loader))
    cfg.output.mkdir(parents=True, exist_ok=True)
    state = artifacts.RunState(total_epochs=cfg.epochs)
    if cfg.resume:
        state = artifacts.load_checkpoint(cfg.output / "last.safetensors", model, opt, sched,
                                          cfg.device, train_loader.generator,
                                          cfg.epochs)  # fmt: skip
        print(f"resumed from epoch {state.epoch} (best test accuracy {state.best_acc:.4f})")
    n_params = sum(p.numel() for p in model.parameters())
    with blas_threads(cfg.threads, n_params) as threads:
        print(f"{cfg.model}: {n_params:,} parameters; {cfg.dataset}: "
              f"{_size(train_loader)} train / {_size(test_loader)} test images; "
              f"device {cfg.device}; BLAS threads {threads or 'as set'}")  # fmt: skip
        return _train_epochs(cfg, model, opt, sched, train_loader, test_loader, state)


def _size(loader: Any) -> int:
    return len(loader.dataset)


def _train_epochs(cfg: TrainConfig, model: Any, opt: Any, sched: Any, train_loader: Any,
                  test_loader: Any, state: artifacts.RunState) -> int:  # fmt: skip
    loader_rng = train_loader.generator
    with _Interrupt() as stop:
        for epoch in range(state.epoch + 1, cfg.epochs + 1):
            if stop.is_set():  # Ctrl-C during the last evaluation or save: epoch - 1 is saved
                print(f"stopped after epoch {epoch - 1}; saved {cfg.output / 'last.safetensors'}"
                      " (continue with --resume)")  # fmt: skip
                return 130
            # the shuffle state at the epoch's start: a run stopped mid-epoch replays its order
            epoch_rng = loader_rng.get_state()
            row = _run_epoch(cfg, epoch, model, opt, sched, train_loader, stop)
            if stop.is_set():
                artifacts.save_checkpoint(cfg.output / "last.safetensors", model, opt, sched,
                                          state, epoch_rng)  # fmt: skip
                print(f"stopped during epoch {epoch}; saved {cfg.output / 'last.safetensors'} "
                      f"(resume with --resume: epoch {epoch} restarts)")  # fmt: skip
                return 130
            row["test_loss"], row["test_acc"] = evaluate(model, test_loader, cfg.device)
            state.epoch = epoch
            is_best = row["test_acc"] > state.best_acc
            state.best_acc = max(state.best_acc, row["test_acc"])
            artifacts.append_metrics(cfg.output / "metrics.jsonl", row)
            next_rng = loader_rng.get_state()
            artifacts.save_checkpoint(cfg.output / "last.safetensors", model, opt, sched, state,
                                      next_rng)  # fmt: skip
            if is_best:
                artifacts.save_checkpoint(cfg.output / "best.safetensors", model, opt, sched,
                                          state, next_rng)  # fmt: skip
            print(f"epoch {epoch}: train loss {row['train_loss']:.4f} acc {row['train_acc']:.4f}"
                  f" | test loss {row['test_loss']:.4f} acc {row['test_acc']:.4f} | "
                  f"{row['epoch_time_s']:.1f}s, {row['images_per_s']:.0f} img/s")  # fmt: skip
    artifacts.plot_metrics(cfg.output / "metrics.jsonl", cfg.output / "curves.png")
    print(f"test accuracy: {state.best_acc if cfg.epochs else 0.0:.4f} (best); "
          f"outputs in {cfg.output}/")  # fmt: skip
    return 0


def _run_epoch(cfg: TrainConfig, epoch: int, model: Any, opt: Any, sched: Any, loader: Any,
               stop: _Interrupt) -> dict[str, Any]:  # fmt: skip
    bar = artifacts.progress(len(loader), f"epoch {epoch}/{cfg.epochs}", cfg.no_progress)
    model.train()
    start = time.perf_counter()
    loss_sum, correct, seen = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(cfg.device), y.to(cfg.device)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        n = y.shape[0]
        loss_sum += loss.item() * n
        correct += int((logits.argmax(1) == y).sum().item())
        seen += n
        elapsed = time.perf_counter() - start
        bar.update(1)
        bar.set_postfix(loss=f"{loss_sum / seen:.4f}", acc=f"{correct / seen:.4f}",
                        img_s=f"{seen / max(elapsed, 1e-9):.0f}", refresh=False)  # fmt: skip
        if stop.is_set():
            break
    bar.close()
    elapsed = time.perf_counter() - start
    return {
        "epoch": epoch,
        "train_loss": loss_sum / max(seen, 1),
        "train_acc": correct / max(seen, 1),
        "lr": opt.param_groups[0]["lr"],
        "epoch_time_s": elapsed,
        "images_per_s": seen / max(elapsed, 1e-9),
    }
