"""``lucid-train`` checkpoints: what a run saves, and what ``--resume`` checks before continuing.

A checkpoint holds everything the rest of the run depends on: the weights, optimizer and
scheduler state, every RNG, the position inside the epoch (steps done, the loader's shuffle
state at the epoch's start, the epoch's loss and accuracy sums so far), the metrics rows of the
finished epochs and the settings it was trained with. A resumed run replays the interrupted
epoch's order, skips the steps already done and so ends with the same weights, bit for bit,
as a run that was never interrupted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import lucid
from lucid.models.train.errors import TrainError, one_line

# How each setting reads in a message: the flag that sets it, with its value.
_SETTING_LABELS = {
    "model": "model {}",
    "dataset": "--dataset {}",
    "nproc": "--nproc {}",
    "train_images": "{} training images (--subset)",
    "batch_size": "--batch-size {}",
    "steps_per_epoch": "{} steps per epoch",
    "optimizer": "--optimizer {}",
    "lr": "--lr {}",
    "momentum": "--momentum {}",
    "weight_decay": "--weight-decay {}",
    "scheduler": "--scheduler {}",
    "augment": "--augment {}",
    "seed": "--seed {}",
}
_USES_MOMENTUM = ("sgd", "rmsprop")
_REQUIRED = ("model", "optimizer", "epoch", "best_acc")
_START_OVER = "start a new run with --overwrite or another --output"


@dataclass
class EpochProgress:
    """How far the current epoch got: steps done and the sums its metrics row is made of."""

    step: int = 0
    loss_sum: float = 0.0
    correct: int = 0
    seen: int = 0
    elapsed_s: float = 0.0


@dataclass
class RunState:
    epoch: int = 0  # epochs finished (evaluated and committed)
    best_acc: float = 0.0
    total_epochs: int = 0  # the run's --epochs: a per-step schedule's length depends on it
    progress: EpochProgress = field(default_factory=EpochProgress)  # inside epoch `epoch + 1`
    epoch_rng: Any = None  # the loader's shuffle state at the start of epoch `epoch + 1`
    metrics: list[dict[str, Any]] = field(default_factory=list)  # the finished epochs' rows
    settings: dict[str, Any] = field(default_factory=dict)


def run_settings(cfg: Any, steps_per_epoch: int, train_images: int) -> dict[str, Any]:
    """The settings a checkpoint depends on: a resumed run must use the same ones."""
    settings = {
        "model": cfg.model,
        "dataset": cfg.dataset,
        "nproc": cfg.nproc,
        "train_images": train_images,
        "batch_size": cfg.batch_size,
        "steps_per_epoch": steps_per_epoch,
        "optimizer": cfg.optimizer,
        "lr": cfg.lr,
        "weight_decay": cfg.weight_decay,
        "scheduler": cfg.scheduler,
        "augment": cfg.augment,
        "seed": cfg.seed,
    }
    if cfg.optimizer in _USES_MOMENTUM:
        settings["momentum"] = cfg.momentum
    return settings


def save_checkpoint(path: Path, model: Any, opt: Any, sched: Any, state: RunState) -> None:
    """Model, optimizer, scheduler and run state in one safetensors file (written atomically)."""
    payload = {
        "settings": state.settings,
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": _scheduler_state(sched),
        "epoch": state.epoch,
        "best_acc": state.best_acc,
        "total_epochs": state.total_epochs,
        "progress": dataclasses.asdict(state.progress),
        "rng_state": lucid.random.get_rng_state(),
        "loader_rng": state.epoch_rng,
        "metrics": state.metrics,
    }
    payload["checksum"] = _checksum(payload)
    lucid.save(payload, path)


def _checksum(payload: dict[str, Any]) -> str:
    """SHA-256 over every value but the checksum: a flipped byte anywhere is caught on load."""
    digest = hashlib.sha256()
    _digest({k: v for k, v in payload.items() if k != "checksum"}, digest)
    return digest.hexdigest()


def _digest(obj: Any, digest: Any) -> None:
    """Feed ``obj`` to ``digest`` as it reads after a save and a load (tuples and lists alike,
    numpy scalars as Python ones, arrays by dtype, shape and bytes)."""
    if isinstance(obj, (lucid.Tensor, np.ndarray)):
        arr = np.ascontiguousarray(obj.numpy() if isinstance(obj, lucid.Tensor) else obj)
        digest.update(f"array {arr.dtype} {arr.shape}".encode())
        digest.update(arr.tobytes())
    elif isinstance(obj, dict):
        digest.update(f"dict {len(obj)}".encode())
        for key, value in obj.items():
            _digest(key, digest)
            _digest(value, digest)
    elif isinstance(obj, (list, tuple)):
        digest.update(f"list {len(obj)}".encode())
        for value in obj:
            _digest(value, digest)
    else:
        value = obj.item() if isinstance(obj, np.generic) else obj
        digest.update(json.dumps(value, default=str).encode())


def _scheduler_state(sched: Any) -> Any:
    if sched is None:
        return None
    return {k: v for k, v in sched.state_dict().items() if not callable(v)}


def load_checkpoint(path: Path, model: Any, opt: Any, sched: Any, device: str,
                    loader_rng: Any, expected: RunState) -> RunState:  # fmt: skip
    """Restore a run from ``path`` after checking it was trained with ``expected.settings``.

    Raises ``TrainError`` (before anything is written) when the file is not a readable
    lucid-train checkpoint or a setting differs; ``FileNotFoundError`` when there is none.
    """
    payload = _read(path, device)
    _check_settings(path, payload.get("settings"), expected.settings)
    _check_epochs(path, payload, sched, expected.total_epochs)
    try:
        model.load_state_dict(payload["model"])
        opt.load_state_dict(payload["optimizer"])
        if sched is not None and payload.get("scheduler") is not None:
            sched.load_state_dict(payload["scheduler"])
    except (RuntimeError, KeyError, ValueError, TypeError) as exc:
        raise TrainError(f"--resume: {path} does not fit this run ({one_line(exc, 240)}); "
                         f"{_START_OVER}") from None  # fmt: skip
    if payload.get("rng_state") is not None:
        lucid.random.set_rng_state(payload["rng_state"])
    if payload.get("loader_rng") is not None:
        loader_rng.set_state(payload["loader_rng"])
    return _run_state(payload, expected)


def _read(path: Path, device: str) -> dict[str, Any]:
    if not path.exists():
        raise FileNotFoundError(f"--resume: no checkpoint at {path}")
    try:
        payload = lucid.load(path, map_location=device)
    except (lucid.serialization.SerializationError, OSError, ValueError, TypeError, KeyError,
            RecursionError) as exc:  # fmt: skip
        raise TrainError(f"--resume: {path} is not a readable checkpoint ({one_line(exc, 240)}); "
                         f"{_START_OVER}") from None  # fmt: skip
    missing = [k for k in _REQUIRED if not isinstance(payload, dict) or k not in payload]
    if missing or not isinstance(payload, dict):
        raise TrainError(f"--resume: {path} is not a lucid-train checkpoint (no "
                         f"{', '.join(missing)}); {_START_OVER}")  # fmt: skip
    if "checksum" in payload and payload["checksum"] != _checksum(payload):
        raise TrainError(f"--resume: {path} is corrupt (its contents do not match the "
                         f"checksum saved with them); {_START_OVER}")  # fmt: skip
    return payload


def _check_settings(path: Path, saved: Any, given: dict[str, Any]) -> None:
    """Refuse the first setting that differs (a checkpoint without settings checks none)."""
    if not isinstance(saved, dict):
        return
    for key, label in _SETTING_LABELS.items():
        if key in saved and saved[key] != given.get(key):
            raise TrainError(
                f"--resume: {path} was trained with {label.format(saved[key])}, not "
                f"{label.format(given.get(key))}; resume with the checkpoint's settings, or "
                f"{_START_OVER}"
            )


def _check_epochs(path: Path, payload: dict[str, Any], sched: Any, total_epochs: int) -> None:
    planned = payload.get("total_epochs") or 0
    if sched is not None and planned and planned != total_epochs:
        raise TrainError(
            f"--resume: the checkpoint's learning-rate schedule spans {planned} epochs, not "
            f"{total_epochs}; resume with --epochs {planned} (or start a new run in another "
            "--output folder)"
        )
    done = int(payload["epoch"])
    if done > total_epochs:
        raise TrainError(f"--resume: {path} has {done} epochs done, more than --epochs "
                         f"{total_epochs}; resume with --epochs {done} or more")  # fmt: skip


def _run_state(payload: dict[str, Any], expected: RunState) -> RunState:
    progress = payload.get("progress") or {}
    return RunState(
        epoch=int(payload["epoch"]),
        best_acc=float(payload["best_acc"]),
        total_epochs=expected.total_epochs,
        progress=EpochProgress(**progress),
        epoch_rng=payload.get("loader_rng"),
        metrics=list(payload.get("metrics") or []),
        settings=expected.settings,
    )
