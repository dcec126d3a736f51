"""A small real run of YOLO: a narrow YOLO v3 trained on the synthetic shapes of
``lucid.models.detection.shapes`` for a few minutes of CPU, then scored by COCO-style mAP.

Recipe: ``yolo_v3(num_classes=3, width_mult=0.25, depths=(1, 1, 2, 2, 1))`` (Darknet-53's
layout at a quarter of its width and a fifth of its depth, the three-output head of
``yolov3.cfg``) on 64x64 images of 1 to 3 squares, discs and triangles (13 to 29 pixels a
side), anchors scaled to those sizes (the COCO anchors of yolov3.cfg are 10 to 373 pixels), Adam
(lr 1e-3, a linear warm-up over the first 20 steps), batch 16, fresh images every step (the
dataset draws image ``i`` from its seed and ``i``). mAP@50 and mAP@[.5:.95] on 200 held-out
images at the end (and at the start, for the untrained model). Generated once for the docs,
not run in CI:

    python tools/experiments/yolo_shapes.py --minutes 8 --out docs/experiments/yolo_shapes
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
from lucid import optim
from lucid.models.detection import yolo_v3
from lucid.models.detection.shapes import SyntheticShapes, evaluate_detector

ANCHORS = (((10, 10), (14, 14), (18, 18)), ((22, 22), (26, 26), (30, 30)),
           ((36, 36), (44, 44), (52, 52)))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=8.0, help="training time budget")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--eval-images", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None, help="folder for results.json")
    args = ap.parse_args()

    lucid.manual_seed(0)
    model = yolo_v3(num_classes=3, width_mult=0.25, depths=(1, 1, 2, 2, 1), anchors=ANCHORS,
                    score_thresh=0.01)  # fmt: skip
    n_params = sum(p.numel() for p in model.parameters())
    train = SyntheticShapes(100_000, image_size=args.image_size, seed=0)
    held_out = SyntheticShapes(args.eval_images, image_size=args.image_size, seed=1)
    print(f"yolo_v3 (width 0.25, depths 1,1,2,2,1): {n_params:,} parameters", flush=True)
    before = evaluate_detector(model.predict, held_out)
    print(f"untrained: {before}", flush=True)

    opt = optim.Adam(model.parameters(), lr=args.lr)
    model.train()
    t0, step, log = time.time(), 0, []
    load0 = os.getloadavg()[0]
    while time.time() - t0 < args.minutes * 60:
        for g in opt.param_groups:
            g["lr"] = args.lr * min(1.0, (step + 1) / 20)
        x, t = train.batch(step * args.batch, args.batch)
        losses = model(x, t)
        loss = losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append({"step": step, "loss": float(loss.item()),
                    **{k: float(v.item()) for k, v in losses.items()}})  # fmt: skip
        if step % 20 == 0:
            print(f"step {step:4d}  {time.time() - t0:6.0f}s  loss {log[-1]['loss']:.3f}  "
                  + "  ".join(f"{k} {log[-1][k]:.3f}" for k in losses), flush=True)  # fmt: skip
        step += 1
    train_s = time.time() - t0
    model.eval()
    after = evaluate_detector(model.predict, held_out)
    print(f"after {step} steps ({train_s:.0f} s): {after}", flush=True)

    def window(a: int, b: int) -> float:
        return float(np.mean([r["loss"] for r in log[a:b]]))

    k = max(1, min(20, len(log) // 4))
    report = {
        "model": "yolo_v3(num_classes=3, width_mult=0.25, depths=(1, 1, 2, 2, 1))",
        "anchors": ANCHORS,
        "parameters": n_params,
        "image_size": args.image_size,
        "batch": args.batch,
        "lr": args.lr,
        "steps": step,
        "train_seconds": round(train_s, 1),
        "loss_first_window": window(0, k),
        "loss_last_window": window(len(log) - k, len(log)),
        "loss_every_20_steps": [round(window(i, i + 20), 3) for i in range(0, len(log), 20)],
        "untrained": before,
        "trained": after,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "load_average_at_start": load0,
        "load_average_at_end": os.getloadavg()[0],
        "lucid_backend": "numpy",
    }
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
