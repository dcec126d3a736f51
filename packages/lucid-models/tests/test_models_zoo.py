"""Every registered model builds, has the parameter count its docstring documents, and runs."""

from __future__ import annotations

import re

import pytest

import lucid
import lucid.models as models
from lucid import nn

# name -> (input shape, output classes); small inputs keep the forward pass cheap
_INPUTS = {
    "lenet1": ((2, 1, 28, 28), 10),
    "lenet4": ((2, 1, 28, 28), 10),
    "lenet5": ((2, 1, 28, 28), 10),
    "lenet5_classic": ((2, 1, 28, 28), 10),
    "alexnet": ((1, 3, 64, 64), 1000),
    "resnet18_cifar": ((2, 3, 32, 32), 10),
    "wide_resnet28_10": ((1, 3, 32, 32), 10),
    "vit_tiny_patch4_32": ((2, 3, 32, 32), 10),
}


def documented_count(name: str) -> int:
    doc = models.get_model_factory(name).__doc__ or ""
    match = re.search(r"([\d,]+) param", doc)
    assert match, f"{name}'s docstring must document its parameter count"
    return int(match.group(1).replace(",", ""))


def test_registry_lists_and_filters() -> None:
    names = models.list_models()
    assert names == sorted(names)
    assert {"lenet5", "resnet18", "resnet18_cifar", "vgg16_bn", "densenet121"} <= set(names)
    assert models.list_models("resnet*") == [n for n in names if n.startswith("resnet")]
    with pytest.raises(ValueError, match="unknown model 'resnet19'"):
        models.create_model("resnet19")


def test_register_model_decorator() -> None:
    @models.register_model(name="tiny_test_mlp")
    def tiny(num_classes: int = 3) -> nn.Module:
        return nn.Sequential(nn.Linear(4, num_classes))

    model = models.create_model("tiny_test_mlp", num_classes=5)
    assert model(lucid.zeros(2, 4)).shape == (2, 5)
    with pytest.raises(ValueError, match="already registered"):
        models.register_model(lambda: None, name="tiny_test_mlp")


@pytest.mark.parametrize("name", models.list_models())
def test_parameter_count_and_forward(name: str) -> None:
    lucid.manual_seed(0)
    model = models.create_model(name)
    count = sum(p.numel() for p in model.parameters())
    assert count == documented_count(name)
    shape, classes = _INPUTS.get(name, ((1, 3, 32, 32), 1000))
    model.eval()
    with lucid.no_grad():
        out = model(lucid.randn(*shape))
    assert out.shape == (shape[0], classes)
    assert bool(lucid.isfinite(out).all())
