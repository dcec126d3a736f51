"""A small real run of DDPM: a tiny noise-prediction U-Net trained on MNIST for a few minutes of
CPU, then 64 samples drawn by the ancestral sampler and written as an 8x8 grid PNG.

Recipe: ``DDPMUNet(sample_size=28, 1 channel, widths (32, 64, 64), attention at 7x7, one
residual block per resolution)``, the paper's linear schedule over T steps, Adam (lr 1e-3 for
this short run, the paper's 2e-4 is for 800k steps), batch 64, pixels scaled to [-1, 1], an
exponential moving average of the weights (decay 0.995) used for sampling, as the paper samples
from an EMA. The docs' grid came from a shorter schedule than the paper's (T = 400 steps,
beta_end 0.04, so that ``abar_T`` is still ~3e-4) to make sampling affordable on two shared CPU
cores. Generated once for the docs, not run in CI:

    python tools/experiments/ddpm_mnist.py --minutes 55 --batch 32 --timesteps 400 \
        --beta-end 0.04 --samples 36 --out docs/experiments/ddpm_mnist
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import lucid
from lucid import nn, optim
from lucid.data.datasets import MNIST
from lucid.models.ddpm import DDPMScheduler, DDPMUNet

REPO = Path(__file__).resolve().parents[2]


def mnist_dir() -> Path:
    shared = Path(os.environ.get("LUCID_DATA_DIR", REPO.parent / "shared" / "data")) / "mnist"
    return shared if (shared / "train-images-idx3-ubyte.gz").is_file() else REPO / "data" / "mnist"


def make_model() -> DDPMUNet:
    return DDPMUNet(sample_size=28, in_channels=1, out_channels=1, block_out_channels=(32, 64, 64),
                    attention_resolutions=(7,), layers_per_block=1, dropout=0.0,
                    norm_num_groups=8)  # fmt: skip


def ema_update(ema: nn.Module, model: nn.Module, decay: float) -> None:
    with lucid.no_grad():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(decay).add_(p, alpha=1.0 - decay)


def save_grid(samples: np.ndarray, path: Path) -> None:
    from PIL import Image

    imgs = ((np.clip(samples[:, 0], -1, 1) + 1) * 127.5).round().astype(np.uint8)
    n = int(np.ceil(np.sqrt(len(imgs))))
    grid = np.zeros((n * 30, n * 30), dtype=np.uint8)
    for i, img in enumerate(imgs):
        r, c = divmod(i, n)
        grid[r * 30 + 1 : r * 30 + 29, c * 30 + 1 : c * 30 + 29] = img
    Image.fromarray(grid).resize((n * 60, n * 60), Image.Resampling.NEAREST).save(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="training time budget")
    ap.add_argument("--timesteps", type=int, default=1000)
    ap.add_argument("--beta-end", type=float, default=0.02)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "experiments" / "ddpm_mnist")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    lucid.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    data = np.asarray(MNIST(mnist_dir(), train=True).data, dtype=np.float32)[:, None] / 127.5 - 1
    model, ema = make_model(), make_model()
    ema.load_state_dict(model.state_dict())
    ema.eval()
    sched = DDPMScheduler(
        num_train_timesteps=args.timesteps, beta_end=args.beta_end, variance_type="fixed_large"
    )
    opt = optim.Adam(model.parameters(), lr=args.lr)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params:,} parameters; training for {args.minutes} min", flush=True)
    t0, step, losses = time.perf_counter(), 0, []
    while time.perf_counter() - t0 < args.minutes * 60:
        x = lucid.from_numpy(data[rng.integers(0, len(data), args.batch)])
        loss = sched.loss(model, x)
        opt.param_groups[0]["lr"] = args.lr * min(1.0, (step + 1) / 200)  # warm-up
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema_update(ema, model, 0.995 if step > 100 else 0.0)
        losses.append(float(loss.item()))
        step += 1
        if step % 100 == 0:
            print(f"step {step}  loss(avg of 100) {np.mean(losses[-100:]):.4f}  "
                  f"{time.perf_counter() - t0:.0f}s", flush=True)  # fmt: skip
    train_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    gen = lucid.Generator().manual_seed(args.seed)
    samples = sched.sample(ema, (args.samples, 1, 28, 28), generator=gen).numpy()
    sample_s = time.perf_counter() - t1
    save_grid(samples, args.out / "samples.png")
    report = {"parameters": n_params, "steps": step, "batch": args.batch, "train_s": round(train_s),
              "sample_s": round(sample_s), "timesteps": args.timesteps,
              "beta_end": args.beta_end,
              "loss_first_100": float(np.mean(losses[:100])),
              "loss_last_100": float(np.mean(losses[-100:])),
              "cpu": platform.processor() or platform.machine(),
              "load_avg": os.getloadavg()}  # fmt: skip
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
