"""The v1 transforms torchvision makes ``nn.Module``s are ``lucid.nn.Module``s (with lucid-nn
installed): vit-pytorch's Dino puts ``T.ColorJitter``, ``T.RandomGrayscale``, ... in an
``nn.Sequential``, which refused them ("... is not a Module subclass")."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import lucid
from lucid.data import transforms as T

# lucid-data alone (the iso-data environment) has no lucid.nn: the module transforms are then
# plain callables (the last test); the others need it
try:
    import lucid.nn as nn
except ImportError:
    nn = None  # type: ignore[assignment]
needs_nn = pytest.mark.skipif(nn is None, reason="lucid-nn is not installed")

# torchvision 0.28's transforms.py/autoaugment.py: the classes that subclass torch.nn.Module
MODULES = [
    "ConvertImageDtype", "Normalize", "Resize", "CenterCrop", "Pad", "RandomApply",
    "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomPerspective",
    "RandomResizedCrop", "FiveCrop", "TenCrop", "LinearTransformation", "ColorJitter",
    "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale", "RandomErasing",
    "GaussianBlur", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
    "RandomAutocontrast", "RandomEqualize", "ElasticTransform", "AutoAugment", "RandAugment",
    "TrivialAugmentWide", "AugMix",
]  # fmt: skip
PLAIN = ["Compose", "ToTensor", "PILToTensor", "ToPILImage", "Lambda", "RandomOrder",
         "RandomChoice"]  # fmt: skip


@needs_nn
def test_the_module_transforms_are_modules_and_the_others_are_not() -> None:
    for name in MODULES:
        assert issubclass(getattr(T, name), nn.Module), name
    for name in PLAIN:
        assert not issubclass(getattr(T, name), nn.Module), name


@needs_nn
def test_dinos_augmentation_runs_in_a_sequential() -> None:
    lucid.manual_seed(0)
    jitter = T.ColorJitter(0.8, 0.8, 0.8, 0.2)
    aug = nn.Sequential(
        T.RandomApply([jitter], p=0.3),
        T.RandomGrayscale(p=0.2),
        T.RandomHorizontalFlip(),
        T.GaussianBlur((3, 3), (1.0, 2.0)),
        T.Normalize(
            mean=lucid.tensor([0.485, 0.456, 0.406]), std=lucid.tensor([0.229, 0.224, 0.225])
        ),
    )
    aug.eval().train().to("cpu")
    x = lucid.rand(2, 3, 16, 16)
    out = aug(x)
    assert tuple(out.shape) == (2, 3, 16, 16) and bool(lucid.isfinite(out).all())
    assert list(dict(aug.named_modules())) == ["", "0", "1", "2", "3", "4"]
    assert list(aug.parameters()) == [] and aug.state_dict() == {}


@needs_nn
def test_module_transforms_call_forward_copy_and_pickle() -> None:
    flip = T.RandomHorizontalFlip(p=1.0)
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    np.testing.assert_array_equal(flip.forward(img), img[:, ::-1])
    np.testing.assert_array_equal(flip(img), img[:, ::-1])
    assert repr(flip) == "RandomHorizontalFlip(p=1.0)" and flip.training
    for clone in (copy.deepcopy(flip), pickle.loads(pickle.dumps(flip))):
        assert isinstance(clone, nn.Module) and clone.p == 1.0
        np.testing.assert_array_equal(clone(img), img[:, ::-1])


@needs_nn
@pytest.mark.parametrize("name", ["RandomPosterize", "RandomSolarize"])
def test_pixel_ops_keep_their_arguments(name: str) -> None:
    t = getattr(T, name)(4, p=1.0)
    assert isinstance(t, nn.Module) and t.p == 1.0


@pytest.mark.skipif(nn is not None, reason="lucid-nn is installed: the transforms are Modules")
def test_without_lucid_nn_the_module_transforms_are_plain_callables() -> None:
    jitter = T.ColorJitter(0.5)
    img = lucid.rand(3, 8, 8)
    lucid.manual_seed(0)
    a = jitter.forward(img)
    lucid.manual_seed(0)
    b = jitter(img)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=0)
    assert "Module" not in {c.__name__ for c in type(T.Normalize((0.5,), (0.5,))).__mro__}
