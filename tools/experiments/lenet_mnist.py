"""Reference experiment: LeNet-5 on MNIST, the same recipe in lucid and in PyTorch.

Recipe (both frameworks): batch 64, SGD lr 0.01 momentum 0.9, cross-entropy, the modern
LeNet-5 (ReLU, max-pool, padding 2), inputs normalised with mean 0.1307 / std 0.3081, shuffled
every epoch. Each framework initialises its own weights with its own default init. Writes a
markdown report with a per-epoch table, the time ratio and a plot.

    python tools/experiments/lenet_mnist.py --epochs 10 --out docs/experiments/lenet5_mnist
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def load_mnist(root: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from lucid.data.datasets import MNIST

    tr, te = MNIST(root, train=True), MNIST(root, train=False)

    def norm(x: np.ndarray) -> np.ndarray:
        return ((x.astype(np.float32) / 255.0 - 0.1307) / 0.3081)[:, None].copy()

    return norm(tr.data), tr.targets.astype(np.int64), norm(te.data), te.targets.astype(np.int64)


def batches(n: int, bs: int, rng: np.random.Generator) -> list[np.ndarray]:
    order = rng.permutation(n)
    return [order[i : i + bs] for i in range(0, n, bs)]


def train_and_evaluate(
    lib: Any, F: Any, model: Any, opt: Any, data: Any, epochs: int, seed: int, limit: int | None
) -> list[dict[str, float]]:
    """The recipe's loop, written once for both frameworks (``lib`` is ``lucid`` or ``torch``)."""
    xtr, ytr, xte, yte = data
    rng = np.random.default_rng(seed)
    rows = []
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.perf_counter()
        tot, correct, seen = 0.0, 0, 0
        for idx in batches(len(xtr), 64, rng)[:limit]:
            x, y = lib.from_numpy(xtr[idx]), lib.from_numpy(ytr[idx])
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(idx)
            correct += int((logits.argmax(1) == y).sum().item())
            seen += len(idx)
        dt = time.perf_counter() - t0
        model.eval()
        with lib.no_grad():
            te_loss, te_correct = 0.0, 0
            for i in range(0, len(xte), 1000):
                lo = model(lib.from_numpy(xte[i : i + 1000]))
                yy = lib.from_numpy(yte[i : i + 1000])
                te_loss += F.cross_entropy(lo, yy, reduction="sum").item()
                te_correct += int((lo.argmax(1) == yy).sum().item())
        rows.append(_row(epoch, tot, correct, seen, te_loss, te_correct, len(xte), dt))
        print(lib.__name__, json.dumps(rows[-1]), flush=True)
    return rows


def run_lucid(data: Any, epochs: int, seed: int, limit: int | None) -> list[dict[str, float]]:
    import lucid
    import lucid.nn.functional as F
    from lucid import optim
    from lucid.models import create_model

    lucid.manual_seed(seed)
    model = create_model("lenet5")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return train_and_evaluate(lucid, F, model, opt, data, epochs, seed, limit)


def run_torch(data: Any, epochs: int, seed: int, limit: int | None) -> list[dict[str, float]]:
    import torch
    import torch.nn as tnn
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = tnn.Sequential(
        tnn.Conv2d(1, 6, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
        tnn.Linear(400, 120), tnn.ReLU(), tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10),
    )  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return train_and_evaluate(torch, F, model, opt, data, epochs, seed, limit)


def _row(epoch: int, tot: float, correct: int, seen: int, te_loss: float, te_correct: int,
         n_test: int, dt: float) -> dict[str, float]:  # fmt: skip
    return {
        "epoch": epoch,
        "train_loss": tot / seen,
        "train_acc": correct / seen,
        "test_loss": te_loss / n_test,
        "test_acc": te_correct / n_test,
        "epoch_time_s": dt,
    }


def _shown(path: Path) -> Path:
    full = path.resolve()
    return full.relative_to(REPO) if REPO in full.parents else path


def write_report(out: Path, lucid_rows: list[Any], torch_rows: list[Any], args: Any) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# LeNet-5 on MNIST: lucid vs PyTorch",
        "",
        f"Recipe: batch 64, SGD lr 0.01 momentum 0.9, {args.epochs} epoch(s), seed {args.seed}; "
        "each framework uses its own default initialisation; the same batch order.",
        f"Machine: {os.cpu_count()} CPUs ({platform.machine()}), Python "
        f"{platform.python_version()}, numpy {np.__version__}, shared with other engineers: "
        f"`uptime` before the run: `{args.uptime}`; load averages after: "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}. Both frameworks ran with "
        f"{args.threads} thread(s), one after the other (PyTorch first).",
        "",
        f"Command: `python tools/experiments/lenet_mnist.py --epochs {args.epochs} --threads "
        f"{args.threads} --out {_shown(args.out)}`",
        "",
        "| epoch | lucid train loss | torch train loss | lucid test acc | torch test acc | "
        "lucid s/epoch | torch s/epoch | time ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for lr_, tr_ in zip(lucid_rows, torch_rows):
        ratio = lr_["epoch_time_s"] / tr_["epoch_time_s"]
        lines.append(
            f"| {lr_['epoch']} | {lr_['train_loss']:.4f} | {tr_['train_loss']:.4f} | "
            f"{lr_['test_acc']:.4f} | {tr_['test_acc']:.4f} | {lr_['epoch_time_s']:.1f} | "
            f"{tr_['epoch_time_s']:.1f} | {ratio:.2f}x |"
        )
    la, ta = lucid_rows[-1]["test_acc"], torch_rows[-1]["test_acc"]
    med = float(np.median([a["epoch_time_s"] / b["epoch_time_s"]
                           for a, b in zip(lucid_rows, torch_rows)]))  # fmt: skip
    lines += [
        "",
        f"Final test accuracy: lucid {la:.4f}, PyTorch {ta:.4f} (difference "
        f"{(la - ta) * 100:+.2f} points; target within 0.2). Median time ratio lucid/PyTorch: "
        f"{med:.2f}x (target at most 2x).",
        "",
        "![curves](curves.png)",
        "",
        "`lucid-train`'s own defaults (OneCycle, peak lr 0.05) and a profile of one training "
        "step: [main_job.md](main_job.md).",
    ]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps({"lucid": lucid_rows, "torch": torch_rows}))
    _plot(out / "curves.png", lucid_rows, torch_rows)


def _plot(path: Path, a: list[Any], b: list[Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ep = [r["epoch"] for r in a]
    for key, ax in (("train_loss", axes[0]), ("test_acc", axes[1])):
        ax.plot(ep, [r[key] for r in a], "o-", label="lucid")
        ax.plot(ep, [r[key] for r in b], "s--", label="PyTorch")
        ax.set(xlabel="epoch", title=key)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit-batches", type=int, default=None, help="batches per epoch (smoke)")
    p.add_argument("--data-root", type=Path, default=REPO / "data" / "mnist")
    p.add_argument("--out", type=Path, default=REPO / "docs" / "experiments" / "lenet5_mnist")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads for both (torch.set_num_threads; lucid's BLAS via threadpoolctl)",
    )
    args = p.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(args.threads)
    threadpool_limits(limits=args.threads, user_api="blas")
    args.uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    data = load_mnist(args.data_root)
    torch_rows = run_torch(data, args.epochs, args.seed, args.limit_batches)
    lucid_rows = run_lucid(data, args.epochs, args.seed, args.limit_batches)
    write_report(args.out, lucid_rows, torch_rows, args)
    print(f"report: {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
