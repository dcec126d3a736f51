"""Every registered model builds with the parameter count its registry entry documents; the
smallest variant of each family runs forward and backward on a small input.

The counts themselves are checked against torchvision's builders in
test_models_torchvision.py (parity env) and cited from the papers otherwise. Counting skips the
weight initialisers (most of the build time of a 100M-parameter model).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import lucid
import lucid.models as models
from lucid import nn

CLASSIFIER = "image-classification"

# name -> (input shape, kwargs): the smallest variant of each family, on a small input
FORWARD: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {
    "lenet1": ((2, 1, 28, 28), {}),
    "lenet4": ((2, 1, 28, 28), {}),
    "lenet5": ((2, 1, 28, 28), {}),
    "lenet5_classic": ((2, 1, 28, 28), {}),
    "alexnet": ((2, 3, 64, 64), {"num_classes": 10}),
    "vgg11_bn": ((2, 3, 32, 32), {"num_classes": 10}),
    "resnet18": ((2, 3, 32, 32), {"num_classes": 10}),
    "resnet18_cifar": ((2, 3, 32, 32), {}),
    "resnext50_32x4d": ((2, 3, 32, 32), {"num_classes": 10}),
    "wide_resnet28_10": ((2, 3, 32, 32), {}),
    "densenet121": ((2, 3, 32, 32), {"num_classes": 10}),
    "mobilenet_v2": ((2, 3, 32, 32), {"num_classes": 10}),
    "mobilenet_v3_small": ((2, 3, 32, 32), {"num_classes": 10}),
    "vit_tiny_patch4_32": ((2, 3, 32, 32), {}),
    "vit_b_32": ((2, 3, 32, 32), {"num_classes": 10, "image_size": 32}),
    "squeezenet1_1": ((2, 3, 48, 48), {"num_classes": 10}),
    "shufflenet_v2_x0_5": ((2, 3, 32, 32), {"num_classes": 10}),
    "mnasnet0_5": ((2, 3, 32, 32), {"num_classes": 10}),
    "efficientnet_b0": ((2, 3, 32, 32), {"num_classes": 10}),
    "efficientnet_v2_s": ((2, 3, 32, 32), {"num_classes": 10}),
    "googlenet": ((2, 3, 64, 64), {"num_classes": 10}),
    "inception_v3": ((2, 3, 75, 75), {"num_classes": 10, "aux_logits": False}),
    "regnet_x_400mf": ((2, 3, 32, 32), {"num_classes": 10}),
    "regnet_y_400mf": ((2, 3, 32, 32), {"num_classes": 10}),
    "convnext_tiny": ((2, 3, 32, 32), {"num_classes": 10}),
    "swin_t": ((2, 3, 32, 32), {"num_classes": 10}),
    "mobilenet_v1_025": ((2, 3, 32, 32), {"num_classes": 10}),
    "seresnet18": ((2, 3, 32, 32), {"num_classes": 10}),
    "xception": ((2, 3, 71, 71), {"num_classes": 10}),
    "zfnet": ((1, 3, 224, 224), {"num_classes": 10}),
    "swin_v2_t": ((2, 3, 32, 32), {"num_classes": 10}),
    "pvt_v2_b0": ((2, 3, 32, 32), {"num_classes": 10}),
    "crossvit_tiny_240": ((2, 3, 48, 48), {"num_classes": 10, "img_size": 48}),
    "efficientformer_l1": ((2, 3, 64, 64), {"num_classes": 10, "img_size": 64}),
    "maxvit_tiny_tf_224": ((2, 3, 64, 64), {"num_classes": 10, "img_size": 64}),
    "coatnet_0_224": ((2, 3, 64, 64), {"num_classes": 10, "img_size": 64}),
    "cvt_13": ((2, 3, 32, 32), {"num_classes": 10}),
    "resnest14d": ((2, 3, 32, 32), {"num_classes": 10}),
    "skresnet18": ((2, 3, 32, 32), {"num_classes": 10}),
    "cspresnext50": ((2, 3, 32, 32), {"num_classes": 10}),
    "convnextv2_atto": ((2, 3, 32, 32), {"num_classes": 10}),
    "inception_next_tiny": ((2, 3, 32, 32), {"num_classes": 10}),
    "pvt_tiny": ((2, 3, 64, 64), {"num_classes": 10, "image_size": 64}),
    "inception_v4": ((2, 3, 75, 75), {"num_classes": 10}),
    "inception_resnet_v2": ((2, 3, 75, 75), {"num_classes": 10}),
    "inception_resnet_v1": ((2, 3, 75, 75), {"num_classes": 10}),
    "mobilenetv4_conv_small": ((4, 3, 32, 32), {"num_classes": 10}),
    "mobilenetv4_hybrid_medium": ((4, 3, 64, 64), {"num_classes": 10}),
}
# 100M+ parameters in their classifiers: the eval forward only (their gradients alone are 0.5 GB)
FORWARD_ONLY = {"alexnet", "vgg11_bn", "zfnet"}

# Counts the papers state (in millions, to the digits they give) for the families torchvision
# lacks: MobileNet v1's Table 6, SENet's SE-ResNet-50, Xception's Table 3 (exact), DeiT's
# Table 1 (ViT-S; it gives ViT-Ti's 5.7M as "5M").
PAPER_COUNTS = {
    "mobilenet_v1": "4.2",
    "mobilenet_v1_075": "2.6",
    "mobilenet_v1_050": "1.3",
    "mobilenet_v1_025": "0.5",
    "seresnet50": "28.1",
    "xception": "22.855952",
    "vit_s_16": "22",
}


def test_registry_lists_and_filters() -> None:
    names = models.list_models()
    assert names == sorted(names)
    assert {"lenet5", "resnet18", "resnet18_cifar", "vgg16_bn", "densenet121"} <= set(names)
    assert models.list_models("resnet*") == [n for n in names if n.startswith("resnet")]
    assert models.list_models("resnet*", task=CLASSIFIER) == models.list_models("resnet*")
    assert models.list_models(task="no-such-task") == []
    with pytest.raises(ValueError, match="unknown model 'resnet19'"):
        models.create_model("resnet19")
    with pytest.raises(ValueError, match="unknown model 'resnet19'"):
        models.model_info("resnet19")


def test_register_model_decorator() -> None:
    @models.register_model(name="tiny_test_mlp")
    def tiny(num_classes: int = 3) -> nn.Module:
        return nn.Sequential(nn.Linear(4, num_classes))

    model = models.create_model("tiny_test_mlp", num_classes=5)
    assert model(lucid.zeros(2, 4)).shape == (2, 5)
    assert models.model_info("tiny_test_mlp").num_params is None
    with pytest.raises(ValueError, match="already registered"):
        models.register_model(lambda: None, name="tiny_test_mlp")

    @models.register_model(task="toy", num_params=8, input_size=(4,), paper="none")
    def tiny_test_linear() -> nn.Module:
        return nn.Linear(4, 1, bias=False)

    info = models.model_info("tiny_test_linear")
    assert (info.task, info.num_params, info.input_size) == ("toy", 8, (4,))
    assert "tiny_test_linear" in models.list_models(task="toy")


# the classifiers (the language and generative families are tested in test_models_language.py)
ZOO = [n for n in models.list_models(task=CLASSIFIER)
       if models.get_model_factory(n).__module__.startswith("lucid.models.")]  # fmt: skip


def test_zoo_size_and_metadata() -> None:
    assert len(ZOO) >= 75
    for name in ZOO:
        info = models.model_info(name)
        assert info.task == CLASSIFIER, name
        assert info.paper and re.search(r"(19|20)\d\d", info.paper), name
        assert info.num_params and info.num_params > 0, name
        assert info.input_size and len(info.input_size) == 3, name
        assert info.reference in (
            "torchvision",
            "timm",
            "transformers",
            "diffusers",
            "paper",
            "facenet-pytorch",
        ), name
        doc = models.get_model_factory(name).__doc__ or ""
        assert f"{info.num_params:,}" in doc, f"{name}'s docstring must state its count"


# Over 250M parameters (ViT-L, ViT-H, RegNetY-128GF): 1.2-2.6 GB of float32 weights that the
# constructors write (5 GB peak for RegNetY-128GF), ~2 s of CPU each: marked slow.
HUGE = 250_000_000


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if (models.model_info(n).num_params or 0) > HUGE
     else n for n in ZOO],
)  # fmt: skip
def test_parameter_count(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Counting needs the shapes, not the values: the initialisers (most of the build time of a
    # 100M-parameter model) are skipped.
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == models.model_info(name).num_params


@pytest.mark.parametrize("name", sorted(PAPER_COUNTS))
def test_parameter_count_matches_the_paper(name: str) -> None:
    stated = PAPER_COUNTS[name]
    digits = len(stated.partition(".")[2])
    assert f"{models.model_info(name).num_params / 1e6:.{digits}f}" == stated


def test_forward_list_covers_every_family() -> None:
    families = {models.model_info(n).family for n in ZOO}
    assert families == {models.model_info(n).family for n in FORWARD}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_and_backward(name: str) -> None:
    shape, kwargs = FORWARD[name]
    lucid.manual_seed(0)
    model = models.create_model(name, **kwargs)
    classes = kwargs.get("num_classes", 10)
    x = lucid.randn(*shape, requires_grad=True)
    if name not in FORWARD_ONLY:
        model.train()
        outs = model(x)
        outs = list(outs) if isinstance(outs, tuple) else [outs]  # with auxiliary heads
        assert all(o.shape == (shape[0], classes) for o in outs)
        sum(o.square().mean() for o in outs).backward()
        assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
        grads = [p.grad for p in model.parameters()]
        assert all(g is not None and bool(lucid.isfinite(g).all()) for g in grads)
    model.eval()
    with lucid.no_grad():
        out = model(x.detach())
    assert out.shape == (shape[0], classes) and bool(lucid.isfinite(out).all())
