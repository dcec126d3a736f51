"""What a ``lucid-train`` run leaves behind: metrics (JSON lines), checkpoints, a plot."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lucid


@dataclass
class RunState:
    epoch: int = 0
    best_acc: float = 0.0
    total_epochs: int = 0  # the run's --epochs: a per-step schedule's length depends on it


def progress(total: int, desc: str, disabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=disabled, unit="batch", dynamic_ncols=True,
                file=sys.stdout, mininterval=0.5)  # fmt: skip


def append_metrics(path: Path, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def save_checkpoint(path: Path, model: Any, opt: Any, sched: Any, state: RunState,
                    loader_rng: Any = None) -> None:  # fmt: skip
    """Model, optimizer and scheduler state in one safetensors file (written atomically).

    ``loader_rng`` is the training loader's shuffle state where the next epoch starts, so a
    resumed run sees the same batches as an uninterrupted one.
    """
    payload = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": _scheduler_state(sched),
        "epoch": state.epoch,
        "best_acc": state.best_acc,
        "total_epochs": state.total_epochs,
        "rng_state": lucid.random.get_rng_state(),
        "loader_rng": loader_rng,
    }
    lucid.save(payload, path)


def _scheduler_state(sched: Any) -> Any:
    if sched is None:
        return None
    return {k: v for k, v in sched.state_dict().items() if not callable(v)}


def load_checkpoint(path: Path, model: Any, opt: Any, sched: Any, device: str,
                    loader_rng: Any = None, total_epochs: int = 0) -> RunState:  # fmt: skip
    if not path.exists():
        raise FileNotFoundError(f"--resume: no checkpoint at {path}")
    payload = lucid.load(path, map_location=device)
    planned = payload.get("total_epochs") or 0
    if sched is not None and planned and planned != total_epochs:
        raise ValueError(
            f"--resume: the checkpoint's learning-rate schedule spans {planned} epochs, not "
            f"{total_epochs}; resume with --epochs {planned} (or start a new run in another "
            "--output folder)"
        )
    model.load_state_dict(payload["model"])
    opt.load_state_dict(payload["optimizer"])
    if sched is not None and payload.get("scheduler") is not None:
        sched.load_state_dict(payload["scheduler"])
    if payload.get("rng_state") is not None:
        lucid.random.set_rng_state(payload["rng_state"])
    if loader_rng is not None and payload.get("loader_rng") is not None:
        loader_rng.set_state(payload["loader_rng"])
    return RunState(epoch=int(payload["epoch"]), best_acc=float(payload["best_acc"]),
                    total_epochs=total_epochs)  # fmt: skip


def plot_metrics(metrics: Path, out: Path) -> bool:
    """Loss and accuracy curves as PNG (needs matplotlib: ``lucid-models[plot]``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: pip install 'lucid-models[plot]' for matplotlib)")
        return False
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    if not rows:
        return False
    epochs = [r["epoch"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, [r["train_loss"] for r in rows], "o-", label="train")
    ax1.plot(epochs, [r["test_loss"] for r in rows], "o-", label="test")
    ax1.set(xlabel="epoch", ylabel="loss", title="loss")
    ax2.plot(epochs, [r["train_acc"] for r in rows], "o-", label="train")
    ax2.plot(epochs, [r["test_acc"] for r in rows], "o-", label="test")
    ax2.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".png")
    os.close(fd)
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, out)
    return True
