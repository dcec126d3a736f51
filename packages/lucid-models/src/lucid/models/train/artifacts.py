"""What a ``lucid-train`` run leaves in ``--output``: the folder, metrics (JSON lines), a plot."""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from lucid.models.train.errors import TrainError

# The files a run writes into --output; --overwrite removes them (and nothing else).
RUN_FILES = ("metrics.jsonl", "last.safetensors", "best.safetensors", "curves.png")


TENSORBOARD_DIR = "tensorboard"  # --tensorboard's event files, in --output
# (metrics.jsonl's key -> TensorBoard tag)
TENSORBOARD_TAGS = {"train_loss": "loss/train", "test_loss": "loss/test",
                    "train_acc": "accuracy/train", "test_acc": "accuracy/test", "lr": "lr",
                    "images_per_s": "speed/images_per_s"}  # fmt: skip


def check_tensorboard() -> None:
    """Refuse --tensorboard before training when the tensorboard package is missing."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is None:
        raise TrainError(
            "--tensorboard needs the tensorboard package: pip install lucid-core[tensorboard]"
        )


def log_tensorboard(log_dir: Path, row: dict[str, Any]) -> None:
    """One epoch's metrics row as TensorBoard scalars (step: the epoch) in ``log_dir``."""
    from lucid.utils.tensorboard import SummaryWriter  # optional: only --tensorboard needs it

    with SummaryWriter(str(log_dir)) as writer:
        for key, tag in TENSORBOARD_TAGS.items():
            if key in row:
                writer.add_scalar(tag, row[key], row["epoch"])


def progress(total: int, desc: str, disabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=disabled, unit="batch", dynamic_ncols=True,
                file=sys.stdout, mininterval=0.5)  # fmt: skip


def holds_run(out: Path) -> bool:
    return any((out / name).exists() for name in RUN_FILES)


def default_output(base: Path, resume: bool) -> Path:
    """The folder a run without ``--output`` uses: ``base``, else ``base-2``, ``base-3``...

    A new run takes the first of them that holds no run (so the same command can run again
    and never replaces a run); ``--resume`` takes the last one that holds a run.
    """
    numbered = (base.with_name(f"{base.name}-{i}") for i in itertools.count(2))
    candidates = itertools.chain([base], numbered)
    if resume:  # the folders are numbered without gaps: the last is before the first free one
        last = base
        for p in candidates:
            if not holds_run(p):
                return last
            last = p
    return next(p for p in candidates if not holds_run(p))


def check_output(out: Path, resume: bool, overwrite: bool) -> None:
    """Refuse an --output the run can't use, before anything is created or changed."""
    if out.exists() and not out.is_dir():
        raise TrainError(f"--output {out} is a file, not a folder; pass a folder")
    held = [name for name in RUN_FILES if (out / name).exists()]
    if held and not (resume or overwrite):
        raise TrainError(f"--output {out} already holds a run ({', '.join(held)}); continue "
                         "it with --resume or replace it with --overwrite")  # fmt: skip
    folder = next(p for p in (out.absolute(), *out.absolute().parents) if p.exists())
    if not folder.is_dir():
        raise TrainError(f"--output {out} is not writable ({folder} is a file); pass a folder "
                         "you can write to")  # fmt: skip
    if not os.access(folder, os.W_OK | os.X_OK):
        raise TrainError(f"--output {out} is not writable (no write permission on {folder}); "
                         "pass a folder you can write to")  # fmt: skip


def start_run(out: Path) -> None:
    """Create ``out``, removing a previous run's files (what --overwrite asks for)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        (out / name).unlink(missing_ok=True)
    for events in (out / TENSORBOARD_DIR).glob("events.out.tfevents.*"):  # --tensorboard's
        events.unlink()


def append_metrics(path: Path, row: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def restore_metrics(path: Path, rows: list[dict[str, Any]], epochs: int) -> list[dict[str, Any]]:
    """Rewrite ``path`` to the rows of epochs 1..``epochs`` exactly once; return them.

    ``rows`` are the checkpoint's; for a checkpoint saved without them, the file's first row
    of each of those epochs is kept instead.
    """
    if len(rows) != epochs:
        rows = _first_rows(path, epochs)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return rows


def _first_rows(path: Path, epochs: int) -> list[dict[str, Any]]:
    by_epoch: dict[int, dict[str, Any]] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:  # a line cut short by a kill
            continue
        if isinstance(row, dict) and row.get("epoch") in range(1, epochs + 1):
            by_epoch.setdefault(row["epoch"], row)
    return [by_epoch[e] for e in sorted(by_epoch)]


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
