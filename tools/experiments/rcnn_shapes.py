"""A small real run of Faster R-CNN: a ResNet-18 + FPN Faster R-CNN trained from scratch on the
synthetic shapes of ``lucid.models.detection.shapes`` for a few minutes of CPU, then scored by
COCO-style mAP.

Recipe: torchvision's ``FasterRCNN`` with ``resnet_fpn_backbone("resnet18", out_channels=64)``
(batch norms training), anchors of 8 to 48 pixels (one size per FPN level, ratios 0.5, 1, 2;
torchvision's 32 to 512 are for 800-pixel COCO images), a 256-wide two-layer box head, 64x64
images (``min_size = max_size = 64``, so the transform does not resize), 200 / 100 RPN
proposals before / after NMS, 64 sampled anchors and 64 sampled proposals per image; the loss
is the sum of torchvision's four (``loss_objectness``, ``loss_rpn_box_reg``,
``loss_classifier``, ``loss_box_reg``); Adam (lr 1e-3, a linear warm-up over 20 steps), batch
8, fresh images every step. mAP@50 and mAP@[.5:.95] on 100 held-out images at the start and at
the end. Generated once for the docs, not run in CI:

    python tools/experiments/rcnn_shapes.py --minutes 8 --out docs/experiments/rcnn_shapes
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

import lucid
from lucid import optim
from lucid.models.detection import AnchorGenerator, resnet_fpn_backbone
from lucid.models.detection.faster_rcnn import FasterRCNN
from lucid.models.detection.roi_heads import FastRCNNPredictor, TwoMLPHead
from lucid.models.detection.shapes import SyntheticShapes, mean_average_precision

SIZES = ((8,), (16,), (24,), (32,), (48,))


def build() -> FasterRCNN:
    backbone = resnet_fpn_backbone("resnet18", out_channels=64)
    return FasterRCNN(
        backbone, num_classes=4, min_size=64, max_size=64,
        anchor_generator=AnchorGenerator(SIZES, ((0.5, 1.0, 2.0),) * 5),
        box_head=TwoMLPHead(64 * 7 * 7, 256), box_predictor=FastRCNNPredictor(256, 4),
        rpn_pre_nms_top_n_train=200, rpn_post_nms_top_n_train=100,
        rpn_pre_nms_top_n_test=200, rpn_post_nms_top_n_test=100,
        rpn_batch_size_per_image=64, box_batch_size_per_image=64,
        box_score_thresh=0.01,
    )  # fmt: skip


def evaluate(model: Any, ds: SyntheticShapes) -> dict[str, float]:
    preds: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    with lucid.no_grad():
        for start in range(0, len(ds), 10):
            items = [ds[i] for i in range(start, min(start + 10, len(ds)))]
            preds += model([im for im, _ in items])
            targets += [t for _, t in items]
    thresholds = [0.5 + 0.05 * i for i in range(10)]
    return {
        "map_50": float(mean_average_precision(preds, targets, (0.5,))),
        "map_50_95": float(mean_average_precision(preds, targets, thresholds)),
        "detections_per_image": float(np.mean([p["boxes"].shape[0] for p in preds])),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=8.0, help="training time budget")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--eval-images", type=int, default=100)
    ap.add_argument("--out", type=Path, default=None, help="folder for results.json")
    args = ap.parse_args()

    lucid.manual_seed(0)
    model = build()
    n_params = sum(p.numel() for p in model.parameters())
    train = SyntheticShapes(100_000, image_size=64, seed=0)
    held_out = SyntheticShapes(args.eval_images, image_size=64, seed=1)
    print(f"Faster R-CNN (ResNet-18 + FPN, 64 channels): {n_params:,} parameters", flush=True)
    t_eval = time.time()
    model.eval()
    before = evaluate(model, held_out)
    print(f"untrained: {before} ({time.time() - t_eval:.0f} s)", flush=True)

    opt = optim.Adam([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    model.train()
    t0, step, log = time.time(), 0, []
    load0 = os.getloadavg()[0]
    while time.time() - t0 < args.minutes * 60:
        for g in opt.param_groups:
            g["lr"] = args.lr * min(1.0, (step + 1) / 20)
        items = [train[(step * args.batch + i) % len(train)] for i in range(args.batch)]
        losses = model([im for im, _ in items], [t for _, t in items])
        loss = sum(losses.values())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append({"step": step, "loss": float(loss.item()),
                    **{k: float(v.item()) for k, v in losses.items()}})  # fmt: skip
        if step % 10 == 0:
            print(f"step {step:4d}  {time.time() - t0:6.0f}s  loss {log[-1]['loss']:.3f}  "
                  + "  ".join(f"{k} {log[-1][k]:.3f}" for k in losses), flush=True)  # fmt: skip
        step += 1
    train_s = time.time() - t0
    load1 = os.getloadavg()[0]
    model.eval()
    after = evaluate(model, held_out)
    print(f"after {step} steps ({train_s:.0f} s): {after}", flush=True)

    def window(a: int, b: int, key: str = "loss") -> float:
        return float(np.mean([r[key] for r in log[a:b]]))

    k = max(1, min(10, len(log) // 4))
    report = {
        "model": "FasterRCNN(resnet_fpn_backbone('resnet18', out_channels=64), num_classes=4)",
        "anchor_sizes": SIZES,
        "parameters": n_params,
        "image_size": 64,
        "batch": args.batch,
        "lr": args.lr,
        "steps": step,
        "train_seconds": round(train_s, 1),
        "loss_first_window": window(0, k),
        "loss_last_window": window(len(log) - k, len(log)),
        "parts_first_window": {key: window(0, k, key) for key in log[0] if key.startswith("loss_")},
        "parts_last_window": {
            key: window(len(log) - k, len(log), key) for key in log[0] if key.startswith("loss_")
        },  # fmt: skip
        "loss_every_10_steps": [round(window(i, i + 10), 3) for i in range(0, len(log), 10)],
        "untrained": before,
        "trained": after,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "load_average_at_start": load0,
        "load_average_at_end": load1,
        "lucid_backend": "numpy",
    }
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
