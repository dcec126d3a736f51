"""DETR: the assignment solver, the model, its set-prediction loss.

``linear_sum_assignment`` against brute force over every assignment of small matrices; the
registry and parameter counts; a tiny DETR's forward, loss and backward; in the parity
environment, against transformers' ``DetrForObjectDetection`` built from a config (no
download): the same state-dict keys, the same outputs (eval, with and without a pixel mask;
train with dropout 0), the same loss parts (transformers' matcher given lucid's solver, since
SciPy is not installed) and the same gradients.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection.detr import (
    DetrForObjectDetection,
    DetrLoss,
    DetrResNetBackbone,
    post_process_object_detection,
)
from lucid.models.detection.matcher import HungarianMatcher, linear_sum_assignment

TINY: dict[str, Any] = {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2,
                        "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
                        "encoder_attention_heads": 4, "decoder_attention_heads": 4,
                        "num_queries": 6}  # fmt: skip
BACKBONE: dict[str, Any] = {"depths": [1, 2, 1, 1], "hidden_sizes": [32, 64, 128, 256],
                            "embedding_size": 16}  # fmt: skip


def _tiny(layer_type: str = "basic", **kwargs: Any) -> DetrForObjectDetection:
    return DetrForObjectDetection(DetrResNetBackbone(**BACKBONE, layer_type=layer_type),
                                  num_labels=3, **{**TINY, **kwargs})  # fmt: skip


def _brute_force(c: np.ndarray) -> float:
    n, m = c.shape
    if n <= m:
        return min(c[np.arange(n), list(p)].sum() for p in itertools.permutations(range(m), n))
    return min(c[list(p), np.arange(m)].sum() for p in itertools.permutations(range(n), m))


def test_linear_sum_assignment_matches_brute_force() -> None:
    rng = np.random.default_rng(0)
    for trial in range(200):
        n, m = (int(v) for v in rng.integers(1, 6, 2))
        # integer costs (many ties) and real costs
        c = rng.integers(0, 4, (n, m)).astype(float) if trial % 2 else rng.standard_normal((n, m))
        rows, cols = linear_sum_assignment(c)
        assert len(rows) == len(cols) == min(n, m)
        assert (np.diff(rows) > 0).all() and len(set(cols.tolist())) == len(cols)
        np.testing.assert_allclose(c[rows, cols].sum(), _brute_force(c), rtol=1e-12, atol=1e-12)


def test_linear_sum_assignment_options_and_errors() -> None:
    c = np.array([[4.0, 1.0, 3.0], [2.0, 0.0, 5.0], [3.0, 2.0, 2.0]])
    rows, cols = linear_sum_assignment(c)
    assert rows.tolist() == [0, 1, 2] and cols.tolist() == [1, 0, 2]
    rows, cols = linear_sum_assignment(c, maximize=True)
    assert c[rows, cols].sum() == 11.0  # 4 + 5 + 2
    inf = np.array([[np.inf, 1.0], [2.0, np.inf]])
    assert linear_sum_assignment(inf)[1].tolist() == [1, 0]
    tall = np.arange(12.0).reshape(4, 3)[::-1]  # more rows than columns: every column once
    rows, cols = linear_sum_assignment(tall)
    assert sorted(cols.tolist()) == [0, 1, 2] and tall[rows, cols].sum() == _brute_force(tall)
    assert linear_sum_assignment(np.zeros((0, 3)))[0].shape == (0,)
    with pytest.raises(ValueError, match="2-D"):
        linear_sum_assignment(np.zeros(3))
    with pytest.raises(ValueError, match="invalid numeric entries"):
        linear_sum_assignment(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="infeasible"):
        linear_sum_assignment(np.array([[np.inf, np.inf], [1.0, 2.0]]))


def test_registry_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    for name in ("detr_resnet50", "detr_resnet101"):
        info = models.model_info(name)
        assert (info.task, info.reference, info.family) == ("object-detection", "transformers",
                                                            "detr")  # fmt: skip
        assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
        model = models.create_model(name)
        assert sum(p.numel() for p in model.parameters()) == info.num_params


def _targets() -> list[dict[str, lucid.Tensor]]:
    return [
        {"class_labels": lucid.tensor([0, 2]),
         "boxes": lucid.tensor([[0.3, 0.3, 0.2, 0.3], [0.7, 0.6, 0.3, 0.2]])},
        {"class_labels": lucid.tensor([1]), "boxes": lucid.tensor([[0.5, 0.5, 0.4, 0.4]])},
    ]  # fmt: skip


def test_forward_loss_backward_and_postprocess() -> None:
    lucid.manual_seed(0)
    model = _tiny(auxiliary_loss=True, dropout=0.0)
    x = lucid.randn(2, 3, 64, 64)
    out = model(x)
    assert out["logits"].shape == (2, 6, 4) and out["pred_boxes"].shape == (2, 6, 4)
    assert len(out["auxiliary_outputs"]) == 1
    total, parts = DetrLoss(3)(out, _targets())
    assert set(parts) == {"loss_ce", "loss_bbox", "loss_giou",
                          "loss_ce_0", "loss_bbox_0", "loss_giou_0"}  # fmt: skip
    expected = sum(w * (parts[k].item() + parts[k + "_0"].item())
                   for k, w in (("loss_ce", 1), ("loss_bbox", 5), ("loss_giou", 2)))  # fmt: skip
    np.testing.assert_allclose(total.item(), expected, rtol=1e-5, atol=1e-6)
    total.backward()
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all()) for _, p in trainable)
    model.eval()
    with lucid.no_grad():
        dets = post_process_object_detection(model(x), threshold=0.0, target_sizes=[(64, 64)] * 2)
    assert len(dets) == 2 and dets[0]["boxes"].shape == (6, 4)
    assert bool((dets[0]["labels"] < 3).all())
    with pytest.raises(ValueError, match="one target per image"):
        DetrLoss(3)(out, _targets()[:1])


def test_matcher_is_optimal_on_an_easy_case() -> None:
    # query 2 predicts target 0's box and class, query 0 target 1's
    logits = lucid.full((1, 3, 3), -5.0)
    logits[0, 2, 0] = 5.0
    logits[0, 0, 1] = 5.0
    boxes = lucid.tensor([[[0.7, 0.6, 0.3, 0.2], [0.5, 0.5, 0.9, 0.9], [0.3, 0.3, 0.2, 0.3]]])
    tgt = [{"class_labels": lucid.tensor([0, 1]),
            "boxes": lucid.tensor([[0.3, 0.3, 0.2, 0.3], [0.7, 0.6, 0.3, 0.2]])}]  # fmt: skip
    ((q, t),) = HungarianMatcher()(logits, boxes, tgt)
    assert dict(zip(q.tolist(), t.tolist())) == {0: 1, 2: 0}


# --- against transformers (parity env) ---------------------------------------------------------


def _hf(layer_type: str, **kwargs: Any) -> Any:
    tr = pytest.importorskip("transformers")
    cfg = tr.DetrConfig(
        use_timm_backbone=False,
        backbone_config=tr.ResNetConfig(**BACKBONE, layer_type=layer_type,
                                        out_features=["stage4"]),  # fmt: skip
        num_labels=3, **{**TINY, **kwargs})  # fmt: skip
    return tr.DetrForObjectDetection(cfg)


def _pair(layer_type: str, **kwargs: Any) -> tuple[Any, DetrForObjectDetection]:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = _hf(layer_type, **kwargs)
    with torch.no_grad():  # batch-norm statistics that are not the identity
        for k, v in ref.state_dict().items():
            if "normalization" in k:
                v.copy_(torch.rand_like(v) + 0.5 if k.endswith(("var", "weight"))
                        else 0.1 * torch.randn_like(v))  # fmt: skip
    model = _tiny(layer_type, **kwargs)
    assert list(model.state_dict()) == list(ref.state_dict())
    state = {k: lucid.tensor(v.detach().numpy().copy()) for k, v in ref.state_dict().items()}
    result = model.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    return ref, model


@pytest.mark.parity
@pytest.mark.parametrize("layer_type", ["basic", "bottleneck"])
def test_outputs_match_transformers(layer_type: str) -> None:
    torch = pytest.importorskip("torch")
    ref, model = _pair(layer_type)
    ref.eval()
    model.eval()
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in ref.parameters())
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 96)).astype(np.float32)
    mask = np.ones((2, 64, 96), np.int64)
    mask[1, :, 60:] = 0  # the second image is 40 x 60, padded
    mask[1, 40:, :] = 0
    for pm in (None, mask):
        with torch.no_grad():
            want = ref(torch.from_numpy(x), pixel_mask=None if pm is None else torch.from_numpy(pm))
        with lucid.no_grad():
            got = model(lucid.tensor(x), None if pm is None else lucid.tensor(pm))
        for key in ("logits", "pred_boxes"):
            np.testing.assert_allclose(got[key].numpy(), getattr(want, key).numpy(),
                                       rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parity
def test_train_loss_and_gradients_match_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    loss_mod = pytest.importorskip("transformers.loss.loss_for_object_detection")
    # transformers' matcher calls SciPy's solver; SciPy is not installed: it gets lucid's
    monkeypatch.setattr(loss_mod, "requires_backends", lambda *a, **k: None)
    monkeypatch.setattr(loss_mod, "linear_sum_assignment",
                        lambda c: linear_sum_assignment(c.numpy()), raising=False)  # fmt: skip
    ref, model = _pair("bottleneck", dropout=0.0, auxiliary_loss=True)
    # float64 on both sides: some gradients (the object queries' embeddings) are sums that
    # cancel to ~1e-5, under float32's rounding noise
    ref.double().train()
    model.double().train()
    x = np.random.default_rng(1).standard_normal((2, 3, 64, 64))
    targets = [{k: v.to(lucid.float64) if k == "boxes" else v for k, v in t.items()}
               for t in _targets()]  # fmt: skip
    labels = [{k: torch.from_numpy(v.numpy().copy()) for k, v in t.items()} for t in targets]
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # transformers' loss makes its class weights so
    try:
        want = ref(torch.from_numpy(x), labels=labels)
    finally:
        torch.set_default_dtype(default)
    want.loss.backward()
    out = model(lucid.tensor(x))
    total, parts = DetrLoss(3).double()(out, targets)
    total.backward()
    np.testing.assert_allclose(total.item(), want.loss.item(), rtol=1e-9, atol=1e-9)
    for k, v in parts.items():
        np.testing.assert_allclose(v.item(), want.loss_dict[k].item(), rtol=1e-9, atol=1e-9)
    grads = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        if p.requires_grad and grads[name].grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(),
                                       rtol=1e-5, atol=1e-8, err_msg=name)  # fmt: skip


@pytest.mark.parity
def test_counts_match_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    tr = pytest.importorskip("transformers")
    for name, depths in (("detr_resnet50", [3, 4, 6, 3]), ("detr_resnet101", [3, 4, 23, 3])):
        cfg = tr.DetrConfig(use_timm_backbone=False, backbone_config=tr.ResNetConfig(
            depths=depths, out_features=["stage4"]), num_labels=91)  # fmt: skip
        ref = tr.DetrForObjectDetection(cfg)
        assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params
