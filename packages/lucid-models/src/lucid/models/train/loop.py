"""The training loop of ``lucid-train``: epochs, evaluation, metrics, checkpoints, Ctrl-C."""

from __future__ import annotations

import contextlib
import math
import os
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
from lucid.models import create_model, model_info
from lucid.models.train import artifacts
from lucid.models.train.checkpoint import (
    EpochProgress,
    RunState,
    load_checkpoint,
    run_settings,
    save_checkpoint,
)
from lucid.models.train.data import image_size, in_channels, loaders, num_classes, start_epoch
from lucid.models.train.errors import TrainError, one_line
from lucid.models.train.parallel import Ranks, join

# A test hook (see _pause_point): tests signal a real lucid-train process at an exact point.
PAUSE_ENV = "LUCID_TRAIN_TEST_PAUSE"


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
    overwrite: bool = False
    subset: int | None = None
    augment: bool = False
    no_progress: bool = False
    threads: int | None = None
    nproc: int = 1  # ranks, each on --batch-size images a step (parallel.py)
    tensorboard: bool = False  # each epoch's metrics also as TensorBoard scalars


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


def resize(x: Any, size: int | None) -> Any:
    """The batch ``x`` resized (bilinear) to ``size`` x ``size``; unchanged for ``None``."""
    if size is None:
        return x
    return F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)


def _accepts(model: Any, channels: int, size: int) -> bool:
    try:
        model(lucid.zeros(2, channels, size, size))
    except (RuntimeError, ValueError, IndexError):
        return False
    return True


def takes_input(model: Any, channels: int, side: int) -> bool:
    """Whether ``model`` runs on ``side`` x ``side`` images (in training mode, without
    gradients, its buffers left as they were)."""
    saved = {k: v.clone() for k, v in model.named_buffers()}
    was_training = model.training
    model.train()
    try:
        with lucid.no_grad():
            return _accepts(model, channels, side)
    finally:
        model.load_state_dict(saved, strict=False)
        model.train(was_training)


def fit_input_size(model: Any, channels: int, size: int, largest: int) -> int | None:
    """``None`` when ``model`` takes ``size`` x ``size`` images; otherwise the side lucid-train
    resizes the images to: the smallest side up to ``largest`` (the registry's input side)
    that it takes (Inception v3/v4, Inception-ResNet and ZFNet take no 32x32 CIFAR image:
    their strided convs and pools leave nothing), found by bisection, or ``largest`` itself
    when it is smaller than ``size`` (the LeNets' 28x28 for CIFAR). Checked in training mode
    (so auxiliary heads count) without gradients; the model's buffers (BatchNorm statistics)
    are left as they were."""
    saved = {k: v.clone() for k, v in model.named_buffers()}
    was_training = model.training
    model.train()
    try:
        with lucid.no_grad():
            if largest == size or _accepts(model, channels, size):
                return None
            if not _accepts(model, channels, largest):
                return None  # the training step raises its own error
            if largest < size:
                return largest
            lo, hi = size, largest  # lo fails, hi works
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if _accepts(model, channels, mid) else (mid, hi)
            return hi
    finally:
        model.load_state_dict(saved, strict=False)
        model.train(was_training)


# the keywords with which the zoo's fixed-input-size models (ViT, PVT, CoAtNet, MaxViT,
# EfficientFormer, CrossViT, ...) are built for another image side
IMAGE_SIZE_KEYWORDS = ("img_size", "image_size")


def build_model(cfg: TrainConfig) -> tuple[Any, int | None]:
    """The model for ``cfg`` and the side its images are resized to (``None``: not resized).

    A model whose registered input side differs from the dataset's is first built for the
    dataset's side where its builder takes ``img_size`` or ``image_size`` (a ViT's position
    embeddings, a window or grid size); if it has no such keyword or cannot take that side, it
    is built as registered and the images are resized (:func:`fit_input_size`)."""
    kwargs = {"num_classes": num_classes(cfg.dataset), "in_channels": in_channels(cfg.dataset)}
    info = model_info(cfg.model)
    side, channels = image_size(cfg.dataset), in_channels(cfg.dataset)
    largest = info.input_size[-1] if info.input_size and len(info.input_size) == 3 else side
    if largest != side:
        for key in IMAGE_SIZE_KEYWORDS:
            lucid.manual_seed(cfg.seed)  # each build starts from the run's seed
            try:
                model = create_model(cfg.model, **kwargs, **{key: side})
            except (TypeError, ValueError):  # no such keyword, or no model of that side
                continue
            if takes_input(model, channels, side):
                print(f"lucid-train: {cfg.model} is built for {side}x{side} images "
                      f"({key}={side})")  # fmt: skip
                return model.to(cfg.device), None
    lucid.manual_seed(cfg.seed)
    model = create_model(cfg.model, **kwargs).to(cfg.device)
    size = fit_input_size(model, channels, side, largest)
    if size is not None and size > 2 * side:  # Inception v3's auxiliary head needs ~299 px
        model, size = _without_aux(cfg, model, size, largest)
    if size is not None:
        print(f"lucid-train: {cfg.model} takes no {side}x{side} image; the images are resized "
              f"(bilinear) to {size}x{size}"
              f"{', the smallest it takes' if size > side else ''}")  # fmt: skip
    return model, size


def _without_aux(cfg: TrainConfig, model: Any, size: int, largest: int) -> tuple[Any, int | None]:
    """The model built with ``aux_logits=False`` and its input size, where its builder takes
    that keyword and the model then takes smaller images; else ``model`` and ``size``."""
    try:
        lean = create_model(cfg.model, num_classes=num_classes(cfg.dataset),
                            in_channels=in_channels(cfg.dataset), aux_logits=False)  # fmt: skip
    except TypeError:
        return model, size
    lean_size = fit_input_size(lean, in_channels(cfg.dataset), image_size(cfg.dataset), largest)
    if lean_size is not None and lean_size >= size:
        return model, size
    print(f"lucid-train: {cfg.model} is built with aux_logits=False: its auxiliary classifier "
          f"needs {size}x{size} images")  # fmt: skip
    return lean.to(cfg.device), lean_size


def evaluate(model: Any, loader: Any, device: str, size: int | None = None) -> tuple[float, float]:
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with lucid.no_grad():
        for x, y in loader:
            x, y = resize(x.to(device), size), y.to(device)
            logits = model(x)
            total_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += int((logits.argmax(1) == y).sum().item())
            seen += y.shape[0]
    model.train()
    return total_loss / max(seen, 1), correct / max(seen, 1)


class _Interrupt:
    """Turn the first Ctrl-C into a flag checked between steps (a second one aborts)."""

    def __init__(self, announce: bool = True) -> None:
        self.requested = False
        self.announce = announce  # say so on stderr (rank 0 speaks for the job)
        self._old: Any = None

    def __enter__(self) -> _Interrupt:
        self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        if self.announce:
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


@dataclass
class _Run:
    """What a run trains: the model (unwrapped), its optimizer and schedule, data and state."""

    model: Any
    opt: Any
    sched: Any
    train_loader: Any
    test_loader: Any
    state: RunState
    input_size: int | None = None  # the side images are resized to (fit_input_size)


def train(cfg: TrainConfig) -> int:
    ranks = join(cfg.nproc)
    try:
        with _quiet(not ranks.is_main):
            run = prepare(cfg, ranks)
            n_params = sum(p.numel() for p in run.model.parameters())
            with blas_threads(cfg.threads, n_params) as threads:
                print(f"{cfg.model}: {n_params:,} parameters; {cfg.dataset}: "
                      f"{_size(run.train_loader)} train / {_size(run.test_loader)} test images; "
                      f"device {cfg.device}; BLAS threads {threads or 'as set'}"
                      f"{_processes(cfg, ranks)}")  # fmt: skip
                _print_resumed(cfg, run)
                code = _train_epochs(cfg, run, ranks)
        ranks.barrier()  # no rank ends the job (a non-zero exit aborts it) before rank 0 saved
        return code
    finally:
        sys.stdout.flush()  # a rank that exits non-zero ends the job (MPI_Abort) unflushed
        ranks.leave()


def prepare(cfg: TrainConfig, ranks: Ranks) -> _Run:
    """Check ``cfg``, build the model, optimizer, schedule and data of rank ``ranks.rank`` and
    load the checkpoint with --resume (raising ``TrainError`` on what does not fit).

    Only rank 0 writes (a new run's folder, a resumed run's metrics); a ``Ranks`` that has not
    joined a job checks the settings of a run of ``ranks.world`` processes before it starts.
    """
    _check_config(cfg)
    lucid.manual_seed(cfg.seed)
    train_loader, test_loader = loaders(cfg, ranks.rank, ranks.world)
    model, size = build_model(cfg)
    opt = make_optimizer(cfg, model.parameters())
    sched = make_scheduler(cfg, opt, len(train_loader))
    state = _start_state(cfg, model, opt, sched, train_loader, ranks.writes)
    return _Run(model, opt, sched, train_loader, test_loader, state, size)


@contextlib.contextmanager
def _quiet(silent: bool) -> Iterator[None]:
    """Ranks other than 0 print nothing to stdout (rank 0 speaks for the job)."""
    if not silent:
        yield
        return
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        yield


def _processes(cfg: TrainConfig, ranks: Ranks) -> str:
    if ranks.world == 1:
        return ""
    return (f"; {ranks.world} processes x {cfg.batch_size} images a step "
            f"(global batch {ranks.world * cfg.batch_size})")  # fmt: skip


def _check_config(cfg: TrainConfig) -> None:
    """Refuse what the run can't use before anything is loaded or written."""
    for flag, value in (("--epochs", cfg.epochs), ("--batch-size", cfg.batch_size),
                        ("--subset", cfg.subset or 1)):  # fmt: skip
        if value < 1:
            raise TrainError(f"{flag} must be at least 1, got {value}")
    if cfg.resume and cfg.overwrite:
        raise TrainError("--resume continues the run in --output and --overwrite replaces it; "
                         "pass one of them")  # fmt: skip
    try:
        lucid.zeros(1, device=cfg.device)
    except (RuntimeError, ValueError) as exc:  # lucid.backends.DeviceError and malformed names
        raise TrainError(f"--device {cfg.device!r}: {one_line(exc)}") from None
    artifacts.check_output(cfg.output, cfg.resume, cfg.overwrite)
    if cfg.tensorboard:
        artifacts.check_tensorboard()


def _start_state(cfg: TrainConfig, model: Any, opt: Any, sched: Any, loader: Any,
                 writes: bool) -> RunState:  # fmt: skip
    """A new run's state (a previous run's files removed), or the checkpoint's with --resume;
    ``writes``: whether this process makes the folder, or rewrites a resumed run's metrics."""
    fresh = RunState(total_epochs=cfg.epochs,
                     settings=run_settings(cfg, len(loader), _size(loader)))  # fmt: skip
    if not cfg.resume:
        if writes:
            artifacts.start_run(cfg.output)  # only --overwrite lets a previous run get this far
        return fresh
    state = load_checkpoint(cfg.output / "last.safetensors", model, opt, sched, cfg.device,
                            loader.generator, fresh)  # fmt: skip
    if writes:
        state.metrics = artifacts.restore_metrics(cfg.output / "metrics.jsonl", state.metrics,
                                                  state.epoch)  # fmt: skip
    return state


def _print_resumed(cfg: TrainConfig, run: _Run) -> None:
    state = run.state
    if not cfg.resume:
        return
    step = state.progress.step
    where = f"epoch {state.epoch + 1}, step {step} of {len(run.train_loader)}" if step else (
        f"the end of epoch {state.epoch}")  # fmt: skip
    print(f"resumed at {where} (best test accuracy {state.best_acc:.4f})")


def _size(loader: Any) -> int:
    return len(loader.dataset)


def _train_epochs(cfg: TrainConfig, run: _Run, ranks: Ranks) -> int:
    last, state, loader = cfg.output / "last.safetensors", run.state, run.train_loader
    net = ranks.wrap(run.model)
    with _Interrupt(announce=ranks.is_main) as stop:
        for epoch in range(state.epoch + 1, cfg.epochs + 1):
            if ranks.any(stop.is_set()):  # Ctrl-C during the last evaluation or save
                print(f"stopped after epoch {epoch - 1}; saved {last} (continue with --resume)")
                return 130
            state.epoch_rng = loader.generator.get_state()  # this epoch's order
            previous_best = state.best_acc
            if _run_epoch(cfg, epoch, net, run, ranks, stop):
                if ranks.writes:
                    save_checkpoint(last, run.model, run.opt, run.sched, state)
                print(
                    f"stopped during epoch {epoch} after step {state.progress.step} of "
                    f"{len(loader)}; saved {last} (--resume goes on from there)"
                )
                return 130
            row = _end_epoch(cfg, epoch, run, ranks.is_main)
            if ranks.writes:
                _commit(cfg, run, row["test_acc"] > previous_best, stop)
            _pause_point("epoch-end", epoch, stop)
    if ranks.writes:
        artifacts.plot_metrics(cfg.output / "metrics.jsonl", cfg.output / "curves.png")
    print(f"test accuracy: {state.best_acc:.4f} (best); outputs in {cfg.output}/")
    return 0


def _end_epoch(cfg: TrainConfig, epoch: int, run: _Run, evaluates: bool) -> dict[str, Any]:
    """Make ``run.state`` the finished epoch's, evaluated where ``evaluates``; return its row."""
    state = run.state
    row = _epoch_row(epoch, state.progress, run.opt)
    state.epoch = epoch
    state.progress, state.epoch_rng = EpochProgress(), run.train_loader.generator.get_state()
    if not evaluates:  # another rank: rank 0 evaluates, keeps the metrics and prints them
        return row
    row["test_loss"], row["test_acc"] = evaluate(
        run.model, run.test_loader, cfg.device, run.input_size
    )
    state.best_acc = max(state.best_acc, row["test_acc"])
    state.metrics.append(row)
    print(f"epoch {epoch}: train loss {row['train_loss']:.4f} acc {row['train_acc']:.4f}"
          f" | test loss {row['test_loss']:.4f} acc {row['test_acc']:.4f} | "
          f"{row['epoch_time_s']:.1f}s, {row['images_per_s']:.0f} img/s")  # fmt: skip
    return row


def _commit(cfg: TrainConfig, run: _Run, is_best: bool, stop: _Interrupt) -> None:
    """Save a finished epoch: best, then last (the commit point), then its metrics row.

    A kill before last is replaced redoes the epoch on --resume (the same steps, so the same
    best); a kill after it leaves the rows that --resume writes back into metrics.jsonl.
    """
    model, opt, sched, state = run.model, run.opt, run.sched, run.state
    epoch = state.epoch
    if is_best:
        save_checkpoint(cfg.output / "best.safetensors", model, opt, sched, state)
        _pause_point("saved-best", epoch, stop)
    save_checkpoint(cfg.output / "last.safetensors", model, opt, sched, state)
    _pause_point("saved-last", epoch, stop)
    artifacts.append_metrics(cfg.output / "metrics.jsonl", state.metrics[-1])
    if cfg.tensorboard:
        artifacts.log_tensorboard(cfg.output / artifacts.TENSORBOARD_DIR, state.metrics[-1])


def _run_epoch(cfg: TrainConfig, epoch: int, net: Any, run: _Run, ranks: Ranks,
               stop: _Interrupt) -> bool:  # fmt: skip
    """Train epoch ``epoch`` on from step ``progress.step`` (done before a --resume); return
    whether it stopped early on a Ctrl-C (on any rank: every rank stops after the same step)."""
    loader, progress, opt, sched = run.train_loader, run.state.progress, run.opt, run.sched
    steps = len(loader)
    bar = artifacts.progress(steps, f"epoch {epoch}/{cfg.epochs}", cfg.no_progress)
    bar.update(progress.step)
    net.train()
    start_epoch(loader, epoch)
    batches = iter(loader)
    for _ in range(progress.step):  # the loader draws the same order and per-batch seeds
        next(batches)
    start = time.perf_counter() - progress.elapsed_s
    stopped = False
    for x, y in batches:
        x, y = resize(x.to(cfg.device), run.input_size), y.to(cfg.device)
        logits = net(x)
        if isinstance(logits, tuple):  # GoogLeNet/Inception v3 in training: (main, *auxiliary)
            main, *aux = logits
            loss = F.cross_entropy(main, y)
            for a in aux:  # the auxiliary classifiers' losses, weighted 0.3 as in GoogLeNet
                loss = loss + 0.3 * F.cross_entropy(a, y) if a is not None else loss
            logits = main
        else:
            loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        n = y.shape[0]
        correct = int((logits.argmax(1) == y).sum().item())
        progress.step += 1
        _pause_point("step", (epoch - 1) * steps + progress.step, stop)
        loss_sum, correct_sum, seen, stops = ranks.sum(
            [loss.item() * n, float(correct), float(n), float(stop.is_set())]
        )  # the job's sums: every rank holds (and rank 0 saves) the whole epoch's metrics
        progress.loss_sum += loss_sum
        progress.correct += int(correct_sum)
        progress.seen += int(seen)
        progress.elapsed_s = time.perf_counter() - start
        bar.update(1)
        bar.set_postfix(loss=f"{progress.loss_sum / progress.seen:.4f}",
                        acc=f"{progress.correct / progress.seen:.4f}",
                        img_s=f"{progress.seen / max(progress.elapsed_s, 1e-9):.0f}",
                        refresh=False)  # fmt: skip
        if stops:
            stopped = True
            break
    bar.close()
    return stopped


def _epoch_row(epoch: int, progress: EpochProgress, opt: Any) -> dict[str, Any]:
    return {
        "epoch": epoch,
        "train_loss": progress.loss_sum / max(progress.seen, 1),
        "train_acc": progress.correct / max(progress.seen, 1),
        "lr": opt.param_groups[0]["lr"],
        "epoch_time_s": progress.elapsed_s,
        "images_per_s": progress.seen / max(progress.elapsed_s, 1e-9),
    }


def _pause_point(where: str, n: int, stop: _Interrupt) -> None:
    """Test hook: with ``LUCID_TRAIN_TEST_PAUSE=<where>@<n>`` set, wait here for a signal.

    The run prints ``paused at <where>@<n>`` to stderr and waits (60 s at most) until a Ctrl-C
    comes, so a test can signal a real process at an exact point: ``step@k`` after the run's
    k-th optimizer step, ``saved-best@e`` and ``saved-last@e`` inside epoch e's commit (after
    that file is saved), ``epoch-end@e`` once epoch e is committed and printed.
    """
    if os.environ.get(PAUSE_ENV) != f"{where}@{n}":
        return
    print(f"lucid-train: test hook: paused at {where}@{n}", file=sys.stderr, flush=True)
    deadline = time.monotonic() + 60
    while not stop.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
