"""Command-line parsing for ``lucid-train``; the loop itself is in ``loop.py``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from lucid.models import list_models
from lucid.models.train.artifacts import default_output
from lucid.models.train.errors import one_line
from lucid.models.train.loop import TrainConfig, prepare, train
from lucid.models.train.parallel import (
    Ranks,
    launched_rank,
    launched_world,
    relaunch,
    require_distributed,
    resolve_nproc,
)

DATASETS = ("mnist", "fashion-mnist", "cifar10", "cifar100")
OPTIMIZERS = ("sgd", "adam", "adamw", "rmsprop", "lion")
SCHEDULERS = ("none", "step", "cosine", "onecycle", "warmup-cosine")


_EPILOG = (
    "Each finished epoch saves <output>/last.safetensors (and best.safetensors when its test "
    "accuracy is the best so far), then appends its row to metrics.jsonl. Ctrl-C stops after "
    "the current step and saves last.safetensors too (exit code 130). --resume continues "
    "exactly where the run stopped, mid-epoch or between epochs: the final weights are bit "
    "for bit those of an uninterrupted run with the same settings and seed, and metrics.jsonl "
    "is rewritten to the checkpoint's epochs. --nproc N (needs lucid-distributed) trains "
    "data-parallel on N processes of this machine: each rank takes --batch-size images a step "
    "from its shard of the epoch (a DistributedSampler seeded by --seed, a new order each "
    "epoch), so a step's global batch is N x --batch-size, as with torch.distributed; "
    "gradients are averaged over the ranks (DistributedDataParallel); rank 0 alone prints, "
    "evaluates and writes the files. Resume with the same --nproc. Under lucid-run or mpiexec "
    "(several machines: see lucid-distributed's README) every rank runs lucid-train itself."
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lucid-train",
        description="Train a lucid.models model on MNIST, FashionMNIST, CIFAR-10 or CIFAR-100.",
        epilog=_EPILOG,
    )
    p.add_argument("model", help=f"registered model name, e.g. lenet5 ({len(list_models())} known;"
                   " --list-models shows them)", nargs="?")  # fmt: skip
    p.add_argument("--list-models", action="store_true", help="print the model names and exit")
    p.add_argument("--dataset", choices=DATASETS, default="mnist")
    p.add_argument("--data-root", type=Path, default=None,
                   help="folder with the dataset files (default: ./data/<dataset>, then "
                   "$LUCID_DATA_DIR/<dataset>)")  # fmt: skip
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd")
    p.add_argument("--lr", type=float, default=0.05,
                   help="learning rate; the peak one with onecycle (default 0.05)")  # fmt: skip
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--scheduler", choices=SCHEDULERS, default="onecycle",
                   help="per-step schedule (default onecycle: one LeNet-5 epoch "
                   "reaches ~98.5%%; --lr 0.01 --scheduler none is plain SGD)")  # fmt: skip
    p.add_argument("--device", default="cpu", help="cpu, mlx, mlx:cpu, mlx:gpu")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--output", type=Path, default=None,
                   help="output folder; one that already holds a run is refused unless "
                   "--resume or --overwrite is given (default: runs/<model>-<dataset>, or the "
                   "first of runs/<model>-<dataset>-2, -3... that holds no run; with --resume "
                   "the last one that does)")  # fmt: skip
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue the run in --output from its last.safetensors, with the "
                       "same settings (a different one is refused)")  # fmt: skip
    again.add_argument("--overwrite", action="store_true",
                       help="replace the run in --output (its metrics.jsonl, last/best "
                       "checkpoints and curves.png)")  # fmt: skip
    p.add_argument("--subset", type=int, default=None, help="use only the first N training images")
    p.add_argument("--augment", action="store_true", help="random crop + flip (CIFAR)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--tensorboard", action="store_true",
                   help="also log each epoch's metrics for TensorBoard, in --output/tensorboard "
                   "(needs the tensorboard package)")  # fmt: skip
    p.add_argument("--nproc", type=int, default=None, metavar="N",
                   help="train data-parallel on N processes, --batch-size images each a "
                   "step (default: as many as lucid-run or mpiexec started, else 1)")  # fmt: skip
    p.add_argument("--threads", type=int, default=None,
                   help="BLAS threads (default: 1 for models under 2M parameters, whose small "
                   "GEMMs run faster on one thread; else as the environment sets)")  # fmt: skip
    return p


def run(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_models:
        print("\n".join(list_models()))
        return 0
    if args.model is None:
        build_parser().print_usage(sys.stderr)
        print("lucid-train: error: the model name is required", file=sys.stderr)
        return 2
    if args.model not in list_models():
        print(f"lucid-train: error: unknown model {args.model!r}; known: "
              f"{', '.join(list_models())}", file=sys.stderr)  # fmt: skip
        return 2
    try:
        return _run_checked(args, argv)
    except ValueError as exc:  # a TrainError: a setting, folder or checkpoint it can't use
        _error(exc)
        return 2
    except OSError as exc:  # missing data, a full disk
        _error(exc)
        return 1
    except KeyboardInterrupt:  # a second Ctrl-C, or one before training started
        print("lucid-train: aborted (saved checkpoints are whole: lucid.save is atomic)",
              file=sys.stderr)  # fmt: skip
        return 130


def _run_checked(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    nproc = resolve_nproc(args.nproc)
    if nproc > 1:
        require_distributed()
    if args.output is None:
        args.output = default_output(Path("runs") / f"{args.model}-{args.dataset}", args.resume)
        if launched_rank() == 0:
            print(f"lucid-train: writing to {args.output} (--output chooses the folder)")
    fields = {k: v for k, v in vars(args).items() if k != "list_models"}
    config = TrainConfig(**{**fields, "nproc": nproc})
    if nproc > 1 and launched_world() == 1:  # start the ranks, once the settings are checked
        prepare(config, Ranks(rank=0, world=nproc))
        given = list(sys.argv[1:] if argv is None else argv)
        return relaunch([*given, "--output", str(args.output), "--nproc", str(nproc)], nproc)
    return train(config)


def _error(exc: BaseException) -> None:
    """The one line an error prints: by rank 0 of a job, where every rank meets it."""
    if launched_rank() == 0:
        print(f"lucid-train: error: {one_line(exc)}", file=sys.stderr)
