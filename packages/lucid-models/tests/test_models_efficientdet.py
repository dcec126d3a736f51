"""EfficientDet: parameter counts (effdet's ``tf_efficientdet_d0`` .. ``d7``, and the paper's
Table 2 to its digits), the BiFPN graph, the output shapes and a backward pass of D0."""

from __future__ import annotations

import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.detection.efficientdet import bifpn_config, efficientdet_d0

# EfficientDet paper, Table 2 (millions, as printed)
PAPER = {"d0": "3.9", "d1": "6.6", "d2": "8.1", "d3": "12", "d4": "21", "d5": "34", "d6": "52",
         "d7": "52"}  # fmt: skip


@pytest.mark.parametrize("variant", sorted(PAPER))
def test_counts(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    name = f"efficientdet_{variant}"
    info = models.model_info(name)
    assert (info.task, info.family, info.reference) == ("object-detection", "efficientdet",
                                                        "paper")  # fmt: skip
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params
    stated = PAPER[variant]
    digits = len(stated.partition(".")[2])
    assert f"{info.num_params / 1e6:.{digits}f}" == stated


def test_bifpn_graph() -> None:
    nodes = bifpn_config(3, 7)
    assert [n["reduction"] for n in nodes] == [64, 32, 16, 8, 16, 32, 64, 128]
    assert [n["inputs_offsets"] for n in nodes] == [
        [3, 4], [2, 5], [1, 6], [0, 7], [1, 7, 8], [2, 6, 9], [3, 5, 10], [4, 11]]  # fmt: skip


def test_d0_outputs_and_backward() -> None:
    lucid.manual_seed(0)
    model = efficientdet_d0(num_classes=3)
    x = lucid.randn(2, 3, 72, 72)  # odd sizes on the way down: 36, 18, 9, 5, 3, 2, 1
    cls, box = model(x)
    sizes = [9, 5, 3, 2, 1]
    assert [tuple(c.shape) for c in cls] == [(2, 27, s, s) for s in sizes]
    assert [tuple(b.shape) for b in box] == [(2, 36, s, s) for s in sizes]
    (sum(c.square().mean() for c in cls) + sum(b.square().mean() for b in box)).backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():
        cls, _ = model(x)
    assert all(bool(lucid.isfinite(c).all()) for c in cls)


def test_d0_without_redundant_biases_is_effdets_pytorch_d0(monkeypatch: pytest.MonkeyPatch) -> None:
    # effdet's README: "BiFPN/Head layers without any redundant conv/BN bias layers (slightly
    # fewer params 3877763 vs 3880067)"
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = efficientdet_d0(redundant_bias=False)
    assert sum(p.numel() for p in model.parameters()) == 3_877_763
