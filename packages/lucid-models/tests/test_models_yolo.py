"""YOLO v1 to v4 and v3-tiny (lucid.models.detection.yolo): registry and parameter counts,
forward and backward, the losses (finite differences in float64, an overfit of two images),
target assignment, decoding and NMS in torchvision's output format.

The counts are those of the Darknet cfgs for 80 COCO classes as ports of them report:
yolov2.cfg 50,962,889 trainable parameters (YAD2K's Keras model summary), yolov3.cfg
61,949,149 (ultralytics/yolov3's model summary: "333 layers, 61949149 parameters"),
yolov3-tiny.cfg 8,852,366 (eriklindernoren/PyTorch-YOLOv3's build of it), yolov4.cfg
64,363,101 (WongKinYiu/PyTorch_YOLOv4's: "488 layers, 64363101 parameters"). YOLO v1's paper
states none: its Figure 3's network is counted here from its layers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.data.ops import box_iou, complete_box_iou
from lucid.models.detection import YOLOv1, YOLOv2, YOLOv3, YOLOv3Tiny, YOLOv4, yolo_v3
from lucid.models.detection.darknet import YOLOv1Backbone
from lucid.models.detection.yolo import _ciou

COUNTS = {"yolo_v2": 50_962_889, "yolo_v3": 61_949_149, "yolo_v3_tiny": 8_852_366,
          "yolo_v4": 64_363_101}  # fmt: skip

SMALL: dict[str, Any] = {"num_classes": 3, "width_mult": 0.0625}


def _small(version: int | str) -> Any:
    if version == "3t":
        return YOLOv3Tiny(**SMALL)
    if version == 1:
        return YOLOv1(image_size=64, hidden_dim=32, dropout=0.0, **SMALL)
    if version == 2:
        return YOLOv2(**SMALL)
    cls = YOLOv3 if version == 3 else YOLOv4
    return cls(depths=(1, 1, 1, 1, 1), **SMALL)


def _targets() -> list[dict[str, lucid.Tensor]]:
    return [
        {"boxes": lucid.tensor([[8.0, 8.0, 40.0, 40.0], [30.0, 20.0, 60.0, 50.0]]),
         "labels": lucid.tensor([1, 3])},
        {"boxes": lucid.tensor([[2.0, 30.0, 20.0, 60.0]]), "labels": lucid.tensor([2])},
    ]  # fmt: skip


def _skip_init(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_parameter_counts_are_the_darknet_cfgs(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info(name)
    assert (info.task, info.family, info.reference) == ("object-detection", "yolo", "darknet")
    assert info.num_params == COUNTS[name]
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    _skip_init(monkeypatch)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == COUNTS[name]


def test_yolo_v1_count_is_figure_3(monkeypatch: pytest.MonkeyPatch) -> None:
    # Built without the 205M-parameter fully connected layer: the 24 convolutions, then the
    # two linear layers by their shapes (7x7x1024 -> 4096 -> 7x7x30).
    info = models.model_info("yolo_v1")
    assert (info.task, info.reference, info.input_size) == ("object-detection", "paper",
                                                            (3, 448, 448))  # fmt: skip
    _skip_init(monkeypatch)
    convs = YOLOv1Backbone()
    assert sum(isinstance(m, nn.Conv2d) for m in convs.modules()) == 24
    n_conv = sum(p.numel() for p in convs.parameters())
    n_fc = (7 * 7 * 1024 + 1) * 4096 + (4096 + 1) * 7 * 7 * 30
    assert n_conv + n_fc == info.num_params == 271_703_550
    assert f"{info.num_params:,}" in (models.get_model_factory("yolo_v1").__doc__ or "")
    bn = YOLOv1Backbone(batch_norm=True)
    assert sum(p.numel() for p in bn.parameters()) + n_fc == 271_716_734


@pytest.mark.slow
def test_yolo_v1_full_build(monkeypatch: pytest.MonkeyPatch) -> None:
    _skip_init(monkeypatch)
    model = models.create_model("yolo_v1")
    assert sum(p.numel() for p in model.parameters()) == 271_703_550


@pytest.mark.parametrize("version", [1, 2, 3, "3t", 4])
def test_forward_backward_and_eval_format(version: int | str) -> None:
    lucid.manual_seed(0)
    model = _small(version)
    x = lucid.rand(2, 3, 64, 64, requires_grad=True)
    model.train()
    losses = model(x, _targets())
    assert sorted(losses) == ["loss_box", "loss_cls", "loss_obj"]
    assert all(v.shape == () and bool(lucid.isfinite(v)) for v in losses.values())
    (losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]).backward()
    assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
    for name, p in model.named_parameters():
        assert p.grad is not None and bool(lucid.isfinite(p.grad).all()), name
    model.eval()
    model.score_thresh = 0.0  # every (box, class) pair is a candidate: NMS has work to do
    model.detections_per_img = 30
    dets = model(x.detach())
    assert len(dets) == 2
    for d in dets:
        k = d["boxes"].shape[0]
        assert 0 < k <= 30
        assert d["boxes"].shape == (k, 4) and d["scores"].shape == d["labels"].shape == (k,)
        assert d["boxes"].dtype == d["scores"].dtype == lucid.float32
        assert d["labels"].dtype == lucid.int64
        b, s, lab = d["boxes"].numpy(), d["scores"].numpy(), d["labels"].numpy()
        assert ((lab >= 1) & (lab <= 3)).all()
        assert (b >= 0).all() and (b <= 64).all() and (b[:, 2:] > b[:, :2]).all()
        assert (np.diff(s) <= 0).all()  # best first
        iou = box_iou(d["boxes"], d["boxes"]).numpy()
        same = lab[:, None] == lab[None, :]
        assert (iou[same & ~np.eye(k, dtype=bool)] <= model.nms_thresh + 1e-6).all()


@pytest.mark.parametrize("version", [1, 2, 3, "3t", 4])
def test_loss_falls_when_overfitting_two_images(version: int | str) -> None:
    lucid.manual_seed(0)
    model = _small(version)
    x = lucid.rand(2, 3, 64, 64)
    opt = lucid.optim.Adam(model.parameters(), lr=5e-3)
    model.train()
    totals = []
    for _ in range(12):
        losses = model(x, _targets())
        loss = losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        totals.append(float(loss.item()))
    assert totals[-1] < 0.5 * totals[0], totals


def _fd_check(fn: Any, raw: lucid.Tensor, picks: list[tuple[int, ...]], eps: float = 1e-6) -> None:
    loss = fn(raw)
    loss.backward()
    grad = raw.grad.numpy()
    base = raw.detach().numpy()
    for idx in picks:
        plus, minus = base.copy(), base.copy()
        plus[idx] += eps
        minus[idx] -= eps
        num = float(fn(lucid.tensor(plus)).item()) - float(fn(lucid.tensor(minus)).item())
        np.testing.assert_allclose(grad[idx], num / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("version", [2, 3])
def test_anchor_loss_gradient_by_finite_differences(version: int) -> None:
    # The loss as a function of the raw outputs, in float64; the target assignment and the
    # ignore mask are piecewise constant in them.
    model = _small(version)
    tg = [(t["boxes"].numpy().astype(np.float64), t["labels"].numpy() - 1) for t in _targets()]
    rng = np.random.default_rng(0)
    shapes = [(2, 3 * 8, 8, 8), (2, 3 * 8, 4, 4), (2, 3 * 8, 2, 2)] if version == 3 else \
        [(2, 5 * 8, 2, 2)]  # fmt: skip
    raws = [lucid.tensor(rng.normal(size=s), requires_grad=True) for s in shapes]

    for level, raw in enumerate(raws):

        def fn(r: lucid.Tensor, level: int = level) -> lucid.Tensor:
            out = [r if i == level else raws[i].detach() for i in range(len(raws))]
            losses = model.compute_loss(out, tg, (64, 64))
            return losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]

        picks = [tuple(int(rng.integers(0, d)) for d in raw.shape) for _ in range(6)]
        _fd_check(fn, raw, picks)


def test_yolo_v1_loss_gradient_by_finite_differences() -> None:
    model = _small(1)
    tg = [(t["boxes"].numpy().astype(np.float64), t["labels"].numpy() - 1) for t in _targets()]
    rng = np.random.default_rng(1)
    raw = lucid.tensor(rng.uniform(0.1, 0.9, size=(2, 7 * 7 * 13)), requires_grad=True)

    def fn(r: lucid.Tensor) -> lucid.Tensor:
        losses = model.compute_loss(r, tg, (64, 64))
        return losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]

    # the cells of the objects' centres: (0, 3, 3), (0, 3, 5), (1, 5, 1); class, conf, coords
    s, c, b = 7, 3, 2
    picks = [(0, (3 * s + 3) * c + 0), (1, (5 * s + 1) * c + 1), (0, s * s * c + (3 * s + 5) * b),
             (0, s * s * (c + b) + ((3 * s + 3) * b) * 4 + 2), (1, 5), (1, 600)]  # fmt: skip
    _fd_check(fn, raw, picks)


def test_ciou_is_lucid_data_ops_complete_box_iou() -> None:
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, size=(2, 6, 2))
    wh = rng.uniform(2, 30, size=(2, 6, 2))
    boxes = np.concatenate([xy, xy + wh], -1)
    p, t = lucid.tensor(boxes[0]), lucid.tensor(boxes[1])
    expected = np.diag(complete_box_iou(p, t).numpy())
    np.testing.assert_allclose(_ciou(p, t).numpy(), expected, rtol=1e-6, atol=1e-6)


def test_yolo_v3_assigns_each_object_to_its_best_anchor() -> None:
    model = yolo_v3(num_classes=3, width_mult=0.0625, depths=(1, 1, 1, 1, 1))
    raw = model.forward_raw(lucid.zeros(1, 3, 416, 416))
    levels = model._levels(raw)
    # a 120x95 box centred at (200, 150): the best anchor is (116, 90), the first of stride 32
    boxes = np.array([[140.0, 102.5, 260.0, 197.5]])
    tg = model._build_targets(levels, [(boxes, np.array([2]))], (416, 416))
    assert tg[2]["pos"].sum() == 1 and tg[0]["pos"].sum() == tg[1]["pos"].sum() == 0
    assert tg[2]["pos"][0, 0, 150 // 32, 200 // 32] == 1
    np.testing.assert_allclose(
        tg[2]["txy"][0, 0, 4, 6], [200 / 32 - 6, 150 / 32 - 4], rtol=1e-7, atol=0
    )
    np.testing.assert_allclose(
        tg[2]["twh"][0, 0, 4, 6], np.log([120 / 116, 95 / 90]), rtol=1e-7, atol=0
    )
    np.testing.assert_array_equal(tg[2]["cls"][0, 0, 4, 6], [0, 0, 1])
    # v4 also assigns every anchor whose shape IoU with the object is over 0.213
    v4 = YOLOv4(num_classes=3, width_mult=0.0625, depths=(1, 1, 1, 1, 1))
    tg4 = v4._build_targets(v4._levels(v4.forward_raw(lucid.zeros(1, 3, 416, 416))),
                            [(boxes, np.array([2]))], (416, 416))  # fmt: skip
    assert sum(t["pos"].sum() for t in tg4) > 1


def test_decoding_puts_a_box_where_the_outputs_say() -> None:
    model = yolo_v3(num_classes=3, width_mult=0.0625, depths=(1, 1, 1, 1, 1)).eval()
    raw = [lucid.full((1, 3 * 8, s, s), -20.0) for s in (8, 4, 2)]
    r = raw[1].numpy().copy().reshape(1, 3, 8, 4, 4)
    r[0, 2, 0:4, 1, 3] = 0.0  # anchor (59, 119) at cell (x 3, y 1) of stride 16: t = 0
    r[0, 2, 4, 1, 3] = 5.0  # objectness
    r[0, 2, 5 + 1, 1, 3] = 5.0  # class 2
    raw[1] = lucid.tensor(r.reshape(1, 24, 4, 4))
    det = model.postprocess(raw, (64, 64))[0]
    assert det["labels"].numpy().tolist() == [2]
    cx, cy = 3.5 * 16, 1.5 * 16
    expected = [cx - 59 / 2, cy - 119 / 2, cx + 59 / 2, cy + 119 / 2]
    expected = np.clip(expected, 0, 64)
    np.testing.assert_allclose(det["boxes"].numpy()[0], expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(
        det["scores"].numpy(), [1 / (1 + np.exp(-5.0)) ** 2], rtol=1e-5, atol=0
    )


def test_bad_input_gets_a_clear_error() -> None:
    model = _small(3)
    x = lucid.rand(2, 3, 64, 64)
    with pytest.raises(ValueError, match="targets should not be None"):
        model(x)
    with pytest.raises(ValueError, match=r"labels must lie in 1\.\.3"):
        model(x, [{"boxes": lucid.tensor([[0.0, 0.0, 9.0, 9.0]]), "labels": lucid.tensor([0])}] * 2)
    with pytest.raises(ValueError, match="multiples of 32"):
        model(lucid.rand(1, 3, 50, 64), None)
    with pytest.raises(ValueError, match="expected 64x64 images"):
        _small(1)(lucid.rand(1, 3, 96, 96), None)
    with pytest.raises(ValueError, match="list of 2 target dicts"):
        model(x, _targets()[:1])


# ----------------------------------------------------------------------------- against ports
# Pure-PyTorch ports of the Darknet cfgs, imported from a checkout (never vendored): the
# parameter count, the state dict entry by entry (same order and shapes) and the eval outputs.
# eriklindernoren/PyTorch-YOLOv3 builds yolov3.cfg (config/yolov3.cfg) with its cfg parser;
# Tianxiaomo/pytorch-YOLOv4's models.py writes yolov4.cfg out as modules. Skipped, saying so,
# unless LUCID_PYTORCH_YOLOV3_SRC / LUCID_PYTORCH_YOLOV4_SRC name the checkouts (checked with
# commits 1d621c8 and a65d219).


def _port(env: str) -> Any:
    import os
    from pathlib import Path

    src = os.environ.get(env)
    if not src or not Path(src).is_dir():
        pytest.skip(f"{env} does not name a checkout of the port")
    return Path(src)


def _load_in_order(ours: Any, ref_items: list[tuple[str, Any]]) -> None:
    mine = list(ours.state_dict().items())
    assert len(mine) == len(ref_items)
    for (rk, rv), (k, v) in zip(ref_items, mine):
        assert tuple(rv.shape) == tuple(v.shape), (rk, k)
    ours.load_state_dict({k: lucid.tensor(rv.numpy().copy()) for (_, rv), (k, _) in
                          zip(ref_items, mine)})  # fmt: skip


def _randomise(torch: Any, model: Any) -> None:
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                m.weight.normal_(0.0, 0.02, generator=gen)
                if m.bias is not None:
                    m.bias.uniform_(-0.5, 0.5, generator=gen)
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1, generator=gen)
                m.running_var.uniform_(0.5, 1.5, generator=gen)
                m.weight.uniform_(0.5, 1.5, generator=gen)
                m.bias.uniform_(-0.1, 0.1, generator=gen)


@pytest.mark.parity
@pytest.mark.parametrize("cfg", ["yolov3", "yolov3-tiny"])
def test_yolo_v3_matches_pytorch_yolov3(cfg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys
    import types

    src = _port("LUCID_PYTORCH_YOLOV3_SRC")
    torch = pytest.importorskip("torch")
    stub = types.ModuleType("pytorchyolo.utils.utils")  # its utils import torchvision
    stub.weights_init_normal = lambda m: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pytorchyolo.utils.utils", stub)
    monkeypatch.syspath_prepend(str(src))
    darknet = importlib.import_module("pytorchyolo.models").Darknet
    ref = darknet(str(src / "config" / f"{cfg}.cfg"))
    name = cfg.replace("yolov", "yolo_v").replace("-", "_")
    assert sum(p.numel() for p in ref.parameters()) == COUNTS[name]
    for seq in ref.module_list:  # the port pads its stride-1 max-pool with zeros, Darknet
        for key, m in list(seq.named_children()):  # covers the valid cells only
            if isinstance(m, torch.nn.ZeroPad2d):
                setattr(seq, key, torch.nn.ReplicationPad2d((0, 1, 0, 1)))
    _randomise(torch, ref)
    ref.eval()
    ours = (YOLOv3 if cfg == "yolov3" else YOLOv3Tiny)().eval()
    _load_in_order(ours, [kv for kv in ref.state_dict().items() if ".yolo_" not in kv[0]])
    x = np.random.default_rng(0).uniform(0, 1, (1, 3, 96, 96)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()  # decoded, coarsest output first
    levels = ours._levels(ours.forward_raw(lucid.tensor(x)))
    got = []
    for li in reversed(range(len(levels))):
        xy, wh = ours._decode(levels[li], li)
        rows = lucid.cat([xy, wh, levels[li][..., 4:].sigmoid()], dim=-1)
        got.append(rows.detach().numpy().reshape(1, -1, 85))
    np.testing.assert_allclose(np.concatenate(got, 1), expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parity
def test_yolo_v4_matches_pytorch_yolov4(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys
    import types

    src = _port("LUCID_PYTORCH_YOLOV4_SRC")
    torch = pytest.importorskip("torch")
    # models.py imports its tool package (OpenCV and more) for the inference layers only
    layer = types.ModuleType("tool.yolo_layer")
    layer.YoloLayer = lambda *a, **k: torch.nn.Identity()  # type: ignore[attr-defined]
    for name, mod in [("tool", types.ModuleType("tool")),
                      ("tool.torch_utils", types.ModuleType("tool.torch_utils")),
                      ("tool.yolo_layer", layer)]:  # fmt: skip
        monkeypatch.setitem(sys.modules, name, mod)
    spec = importlib.util.spec_from_file_location("tx_yolov4_models", src / "models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ref = module.Yolov4(n_classes=80)
    assert sum(p.numel() for p in ref.parameters()) == COUNTS["yolo_v4"]
    _randomise(torch, ref)
    ref.eval()
    ours = YOLOv4().eval()
    _load_in_order(ours, list(ref.state_dict().items()))
    x = np.random.default_rng(0).uniform(0, 1, (1, 3, 96, 96)).astype(np.float32)
    with torch.no_grad():
        expected = [t.numpy() for t in ref(torch.from_numpy(x))]  # raw, strides 8, 16, 32
    got = [t.detach().numpy() for t in ours.forward_raw(lucid.tensor(x))]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_images_without_objects_train_the_objectness_only() -> None:
    empty = {"boxes": lucid.zeros(0, 4), "labels": lucid.zeros(0, dtype=lucid.int64)}
    for version in (1, 2, 3, "3t", 4):
        lucid.manual_seed(0)
        losses = _small(version)(lucid.rand(2, 3, 64, 64), [empty, empty])
        assert float(losses["loss_box"].item()) == float(losses["loss_cls"].item()) == 0.0
        assert float(losses["loss_obj"].item()) > 0.0
        (losses["loss_box"] + losses["loss_obj"] + losses["loss_cls"]).backward()
