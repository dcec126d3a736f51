"""Reference experiment: ResNet-18 (CIFAR variant) on CIFAR-10, lucid vs PyTorch.

Two phases, each run on its own (``--phase train``, ``--phase parity`` or ``all``); each merges
its section into ``<out>/results.json`` and the report is rewritten from whatever is there.

* ``train``: the real training run. PyTorch initialises the model (torchvision's ResNet-18
  layout with the CIFAR stem, rebuilt with torch alone); the weights, BatchNorm buffers
  included, are exported into ``lucid.models.resnet18_cifar``. Both frameworks then train on the
  full 50,000-image training set for ``--epochs`` epochs at batch 128: SGD momentum 0.9, weight
  decay 5e-4, OneCycle (max lr ``--max-lr``), random crop (4-pixel zero padding) and horizontal
  flip. The batch order, the crop offsets and the flips are drawn once by this process, so both
  frameworks see the very same images in the same order. After each epoch both evaluate on the
  10,000 test images.
  The two frameworks run in two worker processes kept alive side by side and driven in lock
  step: PyTorch takes step k, then lucid takes step k, then PyTorch step k+1... Only one computes
  at a time, each at its defaults (PyTorch's intra-op threads = cores; lucid's BLAS and kernel
  threads = cores), and on a shared machine both see the same load. A step is timed from the
  batch's tensor creation to the end of ``optimizer.step()`` (the NumPy augmentation, identical
  in both, is outside the timing); an epoch's time is the sum of its steps.
* ``parity``: the first ``--parity-steps`` SGD steps (no augmentation, constant lr) from the same
  weights on the same batches at ``--parity-batch``: PyTorch float32, PyTorch float64 (the
  reference) and lucid float32, each run in its own process.

    python tools/experiments/resnet_cifar.py --out docs/experiments/resnet18_cifar10

``--src`` runs the workers on another checkout's packages (a frozen copy of the code while
the working tree changes). Peak memory is each worker's VmHWM.
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
RECIPE = {"momentum": 0.9, "weight_decay": 5e-4}
PAD = 4


# -- helpers shared by the workers --------------------------------------------------------------
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


def augment(x: np.ndarray, dy: np.ndarray, dx: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """Random crop of the zero-padded images at offsets (dy, dx) in [0, 2*PAD], then flips."""
    n, _, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (PAD, PAD), (PAD, PAD)))
    out = np.empty_like(x)
    for i in range(n):
        out[i] = padded[i, :, dy[i] : dy[i] + h, dx[i] : dx[i] + w]
    out[flip] = out[flip, :, :, ::-1]
    return np.ascontiguousarray(out)


class _Framework:
    """One framework's model, optimiser and scheduler behind the worker's commands."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        self.lib: Any = None
        self.F: Any = None
        self.model: Any = None
        self.opt: Any = None
        self.sched: Any = None
        self.cast = lambda a: a

    def step(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
        lib, F = self.lib, self.F
        t0, c0 = time.perf_counter(), time.process_time()
        loss = F.cross_entropy(self.model(self.cast(lib.from_numpy(x))), lib.from_numpy(y))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
        value = float(loss.item())
        return value, time.perf_counter() - t0, time.process_time() - c0

    def evaluate(self, x: np.ndarray, y: np.ndarray, batch: int = 500) -> dict[str, float]:
        lib, F = self.lib, self.F
        self.model.eval()
        correct, total_loss = 0, 0.0
        t0 = time.perf_counter()
        with lib.no_grad():
            for i in range(0, len(y), batch):
                xb = self.cast(lib.from_numpy(np.ascontiguousarray(x[i : i + batch])))
                yb = lib.from_numpy(y[i : i + batch])
                logits = self.model(xb)
                total_loss += float(F.cross_entropy(logits, yb, reduction="sum").item())
                correct += int((logits.argmax(1).numpy() == y[i : i + batch]).sum())
        self.model.train()
        return {"acc": correct / len(y), "loss": total_loss / len(y),
                "eval_s": time.perf_counter() - t0}  # fmt: skip


def framework_torch(job: dict[str, Any]) -> _Framework:
    import torch
    import torch.nn.functional as F

    if job.get("threads"):
        torch.set_num_threads(job["threads"])
    fw = _Framework(job)
    dtype = torch.float64 if job.get("float64") else torch.float32
    torch.manual_seed(job["seed"])
    model = torch_resnet18(cifar=True)
    if job.get("save_init"):
        from safetensors.torch import save_file

        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, job["save_init"])
    fw.lib, fw.F, fw.model = torch, F, model.to(dtype).train()
    fw.cast = lambda a: a.to(dtype)
    fw.opt = torch.optim.SGD(model.parameters(), lr=job["lr"], **RECIPE)
    if job.get("total_steps"):
        fw.sched = torch.optim.lr_scheduler.OneCycleLR(
            fw.opt, max_lr=job["lr"], total_steps=job["total_steps"]
        )
    return fw


def framework_lucid(job: dict[str, Any]) -> _Framework:
    import lucid
    import lucid.nn.functional as F
    from lucid import optim
    from lucid.models import create_model

    if job.get("threads"):
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=job["threads"], user_api="blas")
        lucid.set_num_threads(job["threads"])
    fw = _Framework(job)
    model = create_model("resnet18_cifar", num_classes=10)
    model.load_state_dict(lucid.load(job["init"]))
    fw.lib, fw.F, fw.model = lucid, F, model.train()
    fw.opt = optim.SGD(model.parameters(), lr=job["lr"], **RECIPE)
    if job.get("total_steps"):
        fw.sched = optim.lr_scheduler.OneCycleLR(
            fw.opt, max_lr=job["lr"], total_steps=job["total_steps"]
        )
    return fw


def serve(job: dict[str, Any]) -> None:
    """A worker: build the framework, then answer one JSON command per stdin line.

    Replies go to the original stdout; anything a library prints goes to stderr.
    """
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    fw = framework_torch(job) if job["framework"] == "torch" else framework_lucid(job)
    data = dict(np.load(job["data"]))
    reply.write(json.dumps({"ready": True}) + "\n")
    reply.flush()
    batch = job["batch"]
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "step":
            rows = slice(cmd["k"] * batch, (cmd["k"] + 1) * batch)
            idx = data["order"][rows]
            x = data["x"][idx]
            if "dy" in data:
                x = augment(x, data["dy"][rows], data["dx"][rows], data["flip"][rows])
            loss, secs, cpu = fw.step(np.ascontiguousarray(x), data["y"][idx])
            out: dict[str, Any] = {"loss": loss, "s": secs, "cpu_s": cpu}
        elif cmd["cmd"] == "eval":
            out = fw.evaluate(data["x_test"], data["y_test"])
        else:  # "done"
            out = {"peak_mib": _peak_mib()}
        reply.write(json.dumps(out) + "\n")
        reply.flush()
        if cmd["cmd"] == "done":
            return


class Worker:
    """A framework's worker process, driven one command at a time."""

    def __init__(self, job: dict[str, Any], src: Path, log: Path) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(job, f)
        env = dict(os.environ)
        paths = [str(p) for p in sorted((src / "packages").glob("*/src"))]
        env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")])
        self.name = job["framework"] + (" float64" if job.get("float64") else "")
        self.stderr = open(log, "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", f.name], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
        )  # fmt: skip
        self._job_file = f.name
        self._read()  # {"ready": true}

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.stderr.flush()
            tail = Path(self.stderr.name).read_text()[-4000:]
            raise RuntimeError(f"{self.name} worker died:\n{tail}")
        out: dict[str, Any] = json.loads(line)
        return out

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> dict[str, Any]:
        out = self.ask(cmd="done")
        self.proc.wait()
        self.stderr.close()
        os.unlink(self._job_file)
        return out


# -- the phases ----------------------------------------------------------------------------------
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


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def phase_train(args: argparse.Namespace, tmp: Path, save: Any) -> dict[str, Any]:
    xtr, ytr, xte, yte = load_cifar(args.archive)
    n = args.train_subset
    rng = np.random.default_rng(args.seed)
    steps = n // args.batch_size
    rows = steps * args.batch_size
    order = np.concatenate([rng.permutation(n)[:rows] for _ in range(args.epochs)])
    total = len(order)
    np.savez(tmp / "train.npz", x=xtr[:n], y=ytr[:n], order=order,
             dy=rng.integers(0, 2 * PAD + 1, total), dx=rng.integers(0, 2 * PAD + 1, total),
             flip=rng.random(total) < 0.5, x_test=xte[: args.test_subset],
             y_test=yte[: args.test_subset])  # fmt: skip
    init = str(tmp / "init.safetensors")
    job = {"seed": args.seed, "threads": args.threads, "lr": args.max_lr, "batch": args.batch_size,
           "data": str(tmp / "train.npz"), "total_steps": steps * args.epochs}  # fmt: skip
    res: dict[str, Any] = {
        "train_images": rows, "epochs": 0, "epochs_planned": args.epochs,
        "steps_per_epoch": steps, "batch_size": args.batch_size, "max_lr": args.max_lr,
        "test_images": len(yte[: args.test_subset]), "load_before": _load(),
        "per_epoch": [],
        "torch": {"losses": [], "step_s": [], "step_cpu_s": []},
        "lucid": {"losses": [], "step_s": [], "step_cpu_s": []},
    }  # fmt: skip
    workers = {"torch": Worker({**job, "framework": "torch", "save_init": init}, args.src,
                               tmp / "torch.log")}  # fmt: skip
    workers["lucid"] = Worker({**job, "framework": "lucid", "init": init}, args.src,
                              tmp / "lucid.log")  # fmt: skip
    print(f"training: {args.epochs} epoch(s) x {steps} steps of {args.batch_size} "
          f"({rows} images), logs in {tmp}", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        for k in range(epoch * steps, (epoch + 1) * steps):
            for name, w in workers.items():
                r = w.ask(cmd="step", k=k)
                res[name]["losses"].append(r["loss"])
                res[name]["step_s"].append(r["s"])
                res[name]["step_cpu_s"].append(r["cpu_s"])
            if (k + 1) % 50 == 0:
                save(res)  # an interrupted run keeps its steps
            if (k + 1) % 25 == 0:
                print(f"  step {k + 1}: loss lucid {res['lucid']['losses'][-1]:.4f} torch "
                      f"{res['torch']['losses'][-1]:.4f}; step s lucid "
                      f"{res['lucid']['step_s'][-1]:.2f} torch {res['torch']['step_s'][-1]:.2f}; "
                      f"load {_load()[0]}; {(time.perf_counter() - t0) / 60:.1f} min",
                      flush=True)  # fmt: skip
        row: dict[str, Any] = {"epoch": epoch + 1, "load": _load()}
        for name, w in workers.items():
            ev = w.ask(cmd="eval")
            sl = slice(epoch * steps, (epoch + 1) * steps)
            row[name] = {"test_acc": ev["acc"], "test_loss": ev["loss"], "eval_s": ev["eval_s"],
                         "train_loss": float(np.mean(res[name]["losses"][sl])),
                         "epoch_s": float(np.sum(res[name]["step_s"][sl])),
                         "median_step_s": float(np.median(res[name]["step_s"][sl])),
                         "epoch_cpu_s": float(np.sum(res[name]["step_cpu_s"][sl]))}  # fmt: skip
        row["time_ratio"] = row["lucid"]["epoch_s"] / row["torch"]["epoch_s"]
        res["per_epoch"].append(row)
        res["epochs"] = epoch + 1
        print(f"epoch {epoch + 1}: test acc lucid {row['lucid']['test_acc']:.4f} torch "
              f"{row['torch']['test_acc']:.4f}; epoch s lucid {row['lucid']['epoch_s']:.0f} torch "
              f"{row['torch']['epoch_s']:.0f} (ratio {row['time_ratio']:.2f}); load {row['load']}",
              flush=True)  # fmt: skip
        save(res)
    for name, w in workers.items():
        res[name]["peak_mib"] = w.close()["peak_mib"]
    res["wall_s"] = time.perf_counter() - t0
    res["load_after"] = _load()
    return res


def phase_parity(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    xtr, ytr, _, _ = load_cifar(args.archive)
    n = args.parity_steps * args.parity_batch
    order = np.random.default_rng(args.seed + 1).permutation(len(xtr))[:n]
    np.savez(tmp / "parity.npz", x=xtr[order], y=ytr[order], order=np.arange(n))
    init = str(tmp / "parity_init.safetensors")
    job = {"seed": args.seed, "threads": args.threads, "lr": args.parity_lr,
           "batch": args.parity_batch, "data": str(tmp / "parity.npz")}  # fmt: skip
    out: dict[str, Any] = {"steps": args.parity_steps, "batch": args.parity_batch,
                           "lr": args.parity_lr, "load_before": _load()}  # fmt: skip
    print(f"parity: {args.parity_steps} steps at batch {args.parity_batch}", flush=True)
    for key, extra in (("torch32", {"framework": "torch", "save_init": init}),
                       ("torch64", {"framework": "torch", "float64": True}),
                       ("lucid", {"framework": "lucid", "init": init})):  # fmt: skip
        t0 = time.perf_counter()
        w = Worker({**job, **extra}, args.src, tmp / f"parity_{key}.log")
        losses = [w.ask(cmd="step", k=k)["loss"] for k in range(args.parity_steps)]
        out[key] = {"losses": losses, "peak_mib": w.close()["peak_mib"]}
        print(f"  {key}: {time.perf_counter() - t0:.0f}s", flush=True)
    out["load_after"] = _load()
    return out


# -- the report ----------------------------------------------------------------------------------
def _rel(a: list[float], b: list[float]) -> list[float]:
    return [abs(x - y) / abs(y) for x, y in zip(a, b)]


def _commit(src: Path) -> str:
    done = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or "unknown"


def _train_section(res: dict[str, Any]) -> list[str]:
    tr = res["train"]
    cfg = res["config"]
    lines = [
        f"## 1. Training: {tr['epochs']} epoch(s) on all {tr['train_images']} training images",
        "",
        f"Recipe: batch {tr['batch_size']}, SGD momentum {RECIPE['momentum']}, weight decay "
        f"{RECIPE['weight_decay']}, OneCycle (max lr {tr['max_lr']}, PyTorch's defaults: 30% "
        f"warm-up, cosine, momentum cycled 0.85-0.95) over {tr['epochs_planned']} epochs of "
        f"{tr['steps_per_epoch']} steps; random crop (zero padding {PAD}) and horizontal flip, "
        "drawn once for both frameworks; inputs normalised per channel. PyTorch initialises the "
        "weights; lucid loads them. Test accuracy on all "
        f"{tr['test_images']} test images after each epoch (eval mode, batch 500).",
        "",
        f"Both at their defaults (`--threads {cfg['threads']}`: 0 means each framework's own "
        "default, every core), driven in lock step (one step of PyTorch, then the same step "
        "of lucid), so the load of the shared machine falls on both alike. Code measured: "
        f"commit `{res['train'].get('code_commit', res['code_commit'])}`.",
        "",
        "| epoch | lucid test acc | PyTorch test acc | lucid train loss | PyTorch train loss | "
        "lucid epoch s | PyTorch epoch s | time ratio | median step s lucid / PyTorch (ratio) "
        "| load (1/5/15 min) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in tr["per_epoch"]:
        lu, to = row["lucid"], row["torch"]
        lines.append(
            f"| {row['epoch']} | {lu['test_acc']:.4f} | {to['test_acc']:.4f} | "
            f"{lu['train_loss']:.4f} | {to['train_loss']:.4f} | {lu['epoch_s']:.0f} | "
            f"{to['epoch_s']:.0f} | {row['time_ratio']:.2f}x | {lu['median_step_s']:.2f} / "
            f"{to['median_step_s']:.2f} ({lu['median_step_s'] / to['median_step_s']:.2f}x) | "
            f"{', '.join(f'{x:.1f}' for x in row['load'])} |"
        )
    if tr["per_epoch"]:
        last = tr["per_epoch"][-1]
        gap = 100 * (last["lucid"]["test_acc"] - last["torch"]["test_acc"])
        lines += ["", f"Final test accuracy: lucid {100 * last['lucid']['test_acc']:.2f}%, "
                  f"PyTorch {100 * last['torch']['test_acc']:.2f}% (difference {gap:+.2f} "
                  f"points). Time ratio lucid/PyTorch over all epochs: "
                  f"{res['results']['time_ratio']:.2f}x."]  # fmt: skip
        if "cpu_time_ratio" in res["results"]:
            sl, st = tr["lucid"]["step_s"], tr["torch"]["step_s"]
            lines += ["", "Each step's process CPU time (all threads) was recorded too: "
                      f"lucid/PyTorch {res['results']['cpu_time_ratio']:.2f}x over all epochs "
                      f"(lucid {res['results']['lucid_epoch_cpu_s']:.0f} s, PyTorch "
                      f"{res['results']['torch_epoch_cpu_s']:.0f} s per epoch). Median step "
                      f"over the run: lucid {np.median(sl):.2f} s, PyTorch {np.median(st):.2f} s "
                      f"({np.median(sl) / np.median(st):.2f}x)."]  # fmt: skip
    if "peak_mib" in tr["lucid"]:
        lines += ["", f"Peak memory (VmHWM): lucid {tr['lucid']['peak_mib']:.0f} MiB, PyTorch "
                  f"{tr['torch']['peak_mib']:.0f} MiB (each holds the 50,000 training images, "
                  "614 MiB). Wall time of the phase "
                  f"{tr['wall_s'] / 60:.1f} min."]  # fmt: skip
    lu, to = tr["lucid"]["losses"][:50], tr["torch"]["losses"][:50]
    if len(lu) >= 50:
        rel = _rel(lu, to)
        lines += [
            "",
            "The first 50 steps of this run (same weights, same augmented batches, batch "
            f"{tr['batch_size']}, OneCycle warm-up): the largest relative difference between "
            f"lucid's and PyTorch's float32 losses is {max(rel):.2e} (step "
            f"{int(np.argmax(rel)) + 1}); at step 1 {rel[0]:.2e}, step 10 {rel[9]:.2e}, step 50 "
            f"{rel[49]:.2e}.",
        ]
    return lines


def _parity_section(par: dict[str, Any]) -> list[str]:
    luc, t32, t64 = par["lucid"]["losses"], par["torch32"]["losses"], par["torch64"]["losses"]
    r_l64, r_t64, r_lt = max(_rel(luc, t64)), max(_rel(t32, t64)), max(_rel(luc, t32))
    lines = [
        f"## 2. The first {par['steps']} steps at batch {par['batch']}, three ways",
        "",
        f"Constant lr {par['lr']}, no augmentation, train-mode BatchNorm, same weights and "
        "batches. PyTorch float64 starts from the same float32 weights and is the reference: it "
        "shows how far two float32 computations of the same steps drift apart on their own. "
        f"Load before/after: {par['load_before']} / {par['load_after']}. Code measured: commit "
        f"`{par.get('code_commit', '?')}`.",
        "",
        "| comparison | max relative loss difference over the steps |",
        "|---|---:|",
        f"| lucid float32 vs PyTorch float64 (reference) | {r_l64:.2e} |",
        f"| PyTorch float32 vs PyTorch float64 | {r_t64:.2e} |",
        f"| lucid float32 vs PyTorch float32 | {r_lt:.2e} |",
        "",
        "| step | lucid f32 | PyTorch f32 | PyTorch f64 |",
        "|---:|---:|---:|---:|",
    ]
    for i in sorted({0, 1, 2, 4, 9, 19, 29, 39, len(luc) - 1}):
        if i < len(luc):
            lines.append(f"| {i + 1} | {luc[i]:.6f} | {t32[i]:.6f} | {t64[i]:.6f} |")
    return lines


def write_report(out: Path, res: dict[str, Any]) -> None:
    cfg = res["config"]
    lines = [
        "# ResNet-18 (CIFAR variant) on CIFAR-10: lucid vs PyTorch",
        "",
        f"Machine: {os.cpu_count()} CPUs ({platform.machine()}), Python "
        f"{platform.python_version()}, numpy {np.__version__}; shared with other engineers "
        "while it ran (the load averages are in the tables).",
        "",
        f"Command: `python tools/experiments/resnet_cifar.py --epochs {cfg['epochs']} "
        f"--max-lr {cfg['max_lr']} --threads {cfg['threads']} --out "
        f"docs/experiments/resnet18_cifar10` (`--phase train` / `--phase parity` run one part "
        "and merge it into results.json).",
        "",
    ]
    if "train" in res:
        lines += _train_section(res) + ["", "![curves](curves.png)", ""]
    notes = out / "run_notes.md"
    if notes.is_file():
        lines += ["What this run does and does not show: [run_notes.md](run_notes.md).", ""]
    if "parity" in res:
        lines += _parity_section(res["parity"]) + [""]
    (out / "README.md").write_text("\n".join(lines))
    _plot(out / "curves.png", res)


def _smooth(v: list[float], k: int = 20) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    if len(a) < k:
        return a
    return np.convolve(a, np.ones(k) / k, mode="valid")


def _plot(path: Path, res: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    if "train" in res:
        tr = res["train"]
        for name, style in (("lucid", "-"), ("torch", "--")):
            axes[0].plot(_smooth(tr[name]["losses"]), style, label=name)
            ep = [r["epoch"] for r in tr["per_epoch"]]
            axes[1].plot(ep, [r[name]["test_acc"] for r in tr["per_epoch"]], "o" + style,
                         label=name)  # fmt: skip
        axes[0].set(xlabel="step", ylabel="train loss (20-step mean)", title="training loss")
        axes[1].set(xlabel="epoch", ylabel="test accuracy", title="test accuracy (10,000 images)")
    if "parity" in res:
        par = res["parity"]
        ref = np.asarray(par["torch64"]["losses"])
        steps = np.arange(1, len(ref) + 1)
        for key, style in (("lucid", "o-"), ("torch32", "s--")):
            rel = np.abs(np.asarray(par[key]["losses"]) - ref) / np.abs(ref)
            axes[2].semilogy(steps, np.maximum(rel, 1e-9), style, ms=3, label=f"{key} vs f64")
        axes[2].set(xlabel="step", title="parity: relative loss difference")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def _summary(res: dict[str, Any]) -> dict[str, Any]:
    """The headline figures, at the top level of results.json."""
    tr = res.get("train")
    if not tr or not tr["per_epoch"]:
        return {}
    last = tr["per_epoch"][-1]
    lu = sum(r["lucid"]["epoch_s"] for r in tr["per_epoch"])
    to = sum(r["torch"]["epoch_s"] for r in tr["per_epoch"])
    out = {"train_images": tr["train_images"], "epochs": tr["epochs"],
           "lucid_test_acc": last["lucid"]["test_acc"],
           "torch_test_acc": last["torch"]["test_acc"],
           "time_ratio": lu / to, "lucid_epoch_s": lu / tr["epochs"],
           "torch_epoch_s": to / tr["epochs"]}  # fmt: skip
    if all("epoch_cpu_s" in r["lucid"] for r in tr["per_epoch"]):
        lc = sum(r["lucid"]["epoch_cpu_s"] for r in tr["per_epoch"])
        tc = sum(r["torch"]["epoch_cpu_s"] for r in tr["per_epoch"])
        out.update(cpu_time_ratio=lc / tc, lucid_epoch_cpu_s=lc / tr["epochs"],
                   torch_epoch_cpu_s=tc / tr["epochs"])  # fmt: skip
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--serve", help=argparse.SUPPRESS)
    data = Path(os.environ.get("LUCID_DATA_DIR", REPO.parent / "shared" / "data"))
    p.add_argument("--archive", type=Path, default=data / "cifar10" / "cifar-10-python.tar.gz")
    p.add_argument("--phase", choices=("all", "train", "parity", "report"), default="all",
                   help="report: rewrite README.md and curves.png from results.json")  # fmt: skip
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--max-lr", type=float, default=0.1, help="OneCycle's peak learning rate")
    p.add_argument("--train-subset", type=int, default=50000, help="training images used")
    p.add_argument("--test-subset", type=int, default=10000)
    p.add_argument("--parity-steps", type=int, default=50)
    p.add_argument("--parity-batch", type=int, default=128)
    p.add_argument("--parity-lr", type=float, default=0.002)
    p.add_argument("--threads", type=int, default=0,
                   help="threads per framework; 0: each one's default (every core)")  # fmt: skip
    p.add_argument("--src", type=Path, default=REPO, help="checkout whose packages the workers run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=REPO / "docs" / "experiments" / "resnet18_cifar10")
    args = p.parse_args()
    if args.serve:
        serve(json.loads(Path(args.serve).read_text()))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    res: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    if args.phase == "report":
        res["results"] = _summary(res)
        res.update(res["results"])
        path.write_text(json.dumps(res, indent=1))
        write_report(args.out, res)
        print(f"report: {args.out / 'README.md'}")
        return
    res = {k: v for k, v in res.items() if k in ("train", "parity", "code_commit")}
    for section in ("train", "parity"):  # each phase keeps the commit it measured
        if section in res and "code_commit" not in res[section]:
            res[section]["code_commit"] = res.get("code_commit", "unknown")
    res["config"] = {k: str(v) for k, v in vars(args).items() if k != "serve"}
    res["code_commit"] = _commit(args.src)
    tmp = Path(tempfile.mkdtemp(prefix="resnet_cifar."))

    def save(section: str, value: dict[str, Any]) -> None:
        res[section] = value
        res["results"] = _summary(res)
        res.update(res["results"])  # the headline keys at the top level too
        path.write_text(json.dumps(res, indent=1))
        write_report(args.out, res)

    commit = {"code_commit": res["code_commit"]}
    if args.phase in ("all", "train"):
        res.pop("train", None)
        save("train", {**phase_train(args, tmp, lambda r: save("train", {**r, **commit})),
                       **commit})  # fmt: skip
    if args.phase in ("all", "parity"):
        save("parity", {**phase_parity(args, tmp), **commit})
    print(f"report: {args.out / 'README.md'}")


if __name__ == "__main__":
    main()
