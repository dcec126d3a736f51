"""Small real run: a small DETR trained from scratch on the synthetic shapes dataset.

``lucid.models.detection.shapes.SyntheticShapes`` draws squares, discs and triangles with
exact boxes; a DETR with a small ResNet backbone (trainable batch norm: the run starts from
random weights, there is no ImageNet backbone to freeze) is trained with the set-prediction
loss (Hungarian matching, cross-entropy with ``eos_coef`` 0.1, L1 and GIoU, auxiliary losses
on every decoder layer), AdamW and gradient clipping at 0.1 as the paper's recipe, for a
wall-clock budget. The loss is logged as it falls; COCO mAP@50 (and mAP@[.5:.95]) of the
held-out images is printed before training, midway and at the end (every query is a
detection scored by its best class probability, as DETR is evaluated).

    python tools/experiments/detr_shapes.py --minutes 9 --out docs/experiments/detr_shapes

The results (loss curve, mAP, machine load, time) go to ``<out>/results.json``; the README of
that folder quotes them.
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

import lucid
import lucid.nn.utils
import lucid.optim
from lucid.data.ops import box_convert
from lucid.models.detection.detr import (
    DetrForObjectDetection,
    DetrLoss,
    DetrResNetBackbone,
    post_process_object_detection,
)
from lucid.models.detection.shapes import SyntheticShapes, mean_average_precision

REPO = Path(__file__).resolve().parents[2]


def load(ds: SyntheticShapes) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
    """All images as one array, the targets as numpy (pixels, labels 1..3)."""
    images, targets = [], []
    for i in range(len(ds)):
        img, t = ds[i]
        images.append(img.numpy())
        targets.append({"boxes": t["boxes"].numpy(), "labels": t["labels"].numpy()})
    return np.stack(images), targets


def detr_targets(targets: list[dict[str, np.ndarray]], size: int) -> list[dict[str, Any]]:
    """Pixel xyxy, labels 1..3 -> DETR's normalised cxcywh, class ids 0..2."""
    out = []
    for t in targets:
        boxes = box_convert(lucid.tensor(t["boxes"] / size), "xyxy", "cxcywh")
        out.append({"class_labels": lucid.tensor(t["labels"] - 1), "boxes": boxes})
    return out


def evaluate(model: DetrForObjectDetection, images: np.ndarray,
             targets: list[dict[str, np.ndarray]], size: int) -> dict[str, float]:  # fmt: skip
    model.eval()
    preds: list[dict[str, Any]] = []
    with lucid.no_grad():
        for i in range(0, len(images), 50):
            out = model(lucid.tensor(images[i : i + 50]))
            n = int(out["logits"].shape[0])
            for det in post_process_object_detection(out, 0.0, [(size, size)] * n):
                preds.append({"boxes": det["boxes"].numpy(), "scores": det["scores"].numpy(),
                              "labels": det["labels"].numpy() + 1})  # fmt: skip
    model.train()
    return {
        "map50": mean_average_precision(preds, targets, (0.5,)),
        "map": mean_average_precision(preds, targets, np.linspace(0.5, 0.95, 10)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=9.0, help="training wall-clock budget")
    ap.add_argument("--train-images", type=int, default=4000)
    ap.add_argument("--test-images", type=int, default=200)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "experiments" / "detr_shapes")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip

    size = args.image_size
    train_x, train_t = load(SyntheticShapes(args.train_images, size, seed=args.seed))
    test_x, test_t = load(SyntheticShapes(args.test_images, size, seed=args.seed + 1))
    lucid.manual_seed(args.seed)
    config = {"depths": (1, 1, 1), "hidden_sizes": (32, 64, 128), "embedding_size": 32,
              "layer_type": "basic", "frozen_batch_norm": False}  # fmt: skip
    detr = {"d_model": 64, "num_queries": 10, "encoder_layers": 2, "decoder_layers": 3,
            "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "encoder_attention_heads": 4,
            "decoder_attention_heads": 4, "dropout": 0.0, "auxiliary_loss": True}  # fmt: skip
    model = DetrForObjectDetection(DetrResNetBackbone(**config), num_labels=3, **detr)
    n_params = sum(p.numel() for p in model.parameters())
    criterion = DetrLoss(3, eos_coef=0.1)
    opt = lucid.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    print(f"DETR: {n_params:,} parameters; {len(train_x)} train / {len(test_x)} test images "
          f"of {size}x{size}; load {load_before}")  # fmt: skip

    before = evaluate(model, test_x, test_t, size)
    print(f"before training: mAP@50 {before['map50']:.4f}")
    rng = np.random.default_rng(args.seed)
    budget = args.minutes * 60
    start = time.perf_counter()
    log: list[dict[str, float]] = []
    midway: dict[str, float] | None = None
    step, window = 0, []
    while time.perf_counter() - start < budget:
        for idx in np.array_split(rng.permutation(len(train_x)), len(train_x) // args.batch):
            elapsed = time.perf_counter() - start
            if elapsed >= budget:
                break
            if midway is None and elapsed >= budget / 2:
                midway = {**evaluate(model, test_x, test_t, size), "step": step,
                          "seconds": elapsed}  # fmt: skip
                print(f"midway (step {step}): mAP@50 {midway['map50']:.4f}")
            out = model(lucid.tensor(train_x[idx]))
            loss, parts = criterion(out, detr_targets([train_t[i] for i in idx], size))
            opt.zero_grad()
            loss.backward()
            lucid.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            opt.step()
            step += 1
            window.append([loss.item(), parts["loss_ce"].item(), parts["loss_bbox"].item(),
                           parts["loss_giou"].item()])  # fmt: skip
            if step % 25 == 0:
                m = np.mean(window, axis=0)
                window = []
                log.append({"step": step, "seconds": round(time.perf_counter() - start, 1),
                            "loss": float(m[0]), "loss_ce": float(m[1]),
                            "loss_bbox": float(m[2]), "loss_giou": float(m[3])})  # fmt: skip
                print(f"step {step:5d} {log[-1]['seconds']:6.0f}s loss {m[0]:.3f} "
                      f"(ce {m[1]:.3f} l1 {m[2]:.3f} giou {m[3]:.3f})")  # fmt: skip
    train_s = time.perf_counter() - start
    final = evaluate(model, test_x, test_t, size)
    train_eval = evaluate(model, train_x[:200], train_t[:200], size)
    print(f"after {step} steps ({train_s:.0f} s): test mAP@50 {final['map50']:.4f}, "
          f"mAP@[.5:.95] {final['map']:.4f}; first 200 training images mAP@50 "
          f"{train_eval['map50']:.4f}")  # fmt: skip
    results = {
        "command": "python tools/experiments/detr_shapes.py " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k != "out"),
        "commit": commit, "machine": f"{os.cpu_count()} CPUs ({platform.machine()}), "
        f"Python {platform.python_version()}, numpy {np.__version__}",
        "load_before": load_before, "load_after": os.getloadavg(),
        "backbone": config, "detr": detr, "num_params": n_params, "steps": step,
        "train_seconds": round(train_s, 1), "batch": args.batch, "lr": args.lr,
        "map_before": before, "map_midway": midway, "map_final": final,
        "map_train_first200": train_eval, "log": log,
    }  # fmt: skip
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
