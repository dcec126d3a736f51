"""A state dict of each zoo family written by torch.save (torch 2.x, zip format) loads with
lucid.load into the lucid model and gives the same outputs; so does a real torch module's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

# (model, constructor kwargs, input shape): one of each family, inputs as small as it allows
FAMILIES: dict[str, tuple[dict[str, Any], tuple[int, ...]]] = {
    "lenet5": ({}, (2, 1, 28, 28)),
    "alexnet": ({"num_classes": 10}, (1, 3, 64, 64)),
    "vgg11_bn": ({"num_classes": 10}, (1, 3, 32, 32)),
    "resnet18": ({"num_classes": 10}, (2, 3, 32, 32)),
    "densenet121": ({"num_classes": 10}, (1, 3, 32, 32)),
    "mobilenet_v2": ({"num_classes": 10}, (2, 3, 32, 32)),
    "vit_tiny_patch4_32": ({"num_classes": 10}, (2, 3, 32, 32)),
}


def _outputs(model: Any, x: np.ndarray) -> np.ndarray:
    model.eval()
    with lucid.no_grad():
        out: np.ndarray = model(lucid.tensor(x)).numpy()
    return out


BIG = {"alexnet", "vgg11_bn"}  # 60M and 130M parameters: tens of seconds on a shared CPU


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in BIG else n for n in FAMILIES]
)
def test_a_torch_saved_state_dict_of_each_family_loads(tmp_path: Path, name: str) -> None:
    kwargs, shape = FAMILIES[name]
    lucid.manual_seed(0)
    model = models.create_model(name, **kwargs)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    expected = _outputs(model, x)
    # the checkpoint as torch writes it: torch tensors (running statistics, int64 counters
    # included) in an OrderedDict with torch's _metadata, torch.save's zip format
    tstate = torch.nn.Module().state_dict()
    for k, v in model.state_dict().items():
        tstate[k] = torch.from_numpy(v.numpy())  # (state_dict() values are copies already)
    torch.save(tstate, tmp_path / f"{name}.pt")
    del tstate
    with lucid.no_grad():  # wipe the model, then the file must bring every value back
        for t in [*model.parameters(), *model.buffers()]:
            t.zero_()
    assert not np.array_equal(_outputs(model, x), expected)
    result = model.load_state_dict(lucid.load(tmp_path / f"{name}.pt"))
    assert not result.missing_keys and not result.unexpected_keys
    np.testing.assert_array_equal(_outputs(model, x), expected)


def test_a_real_torch_modules_state_dict_loads(tmp_path: Path, torch_resnet18: Any) -> None:
    torch.manual_seed(0)
    tmodel = torch_resnet18(num_classes=10, cifar=True).eval()
    with torch.no_grad():  # running statistics that are not the initial ones
        for m in tmodel.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
    torch.save(tmodel.state_dict(), tmp_path / "resnet18.pt")
    model = models.create_model("resnet18_cifar", num_classes=10)
    model.load_state_dict(lucid.load(tmp_path / "resnet18.pt", map_location="cpu", mmap=True))
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = tmodel(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_outputs(model, x), expected, rtol=1e-4, atol=1e-4)


def test_a_lucid_checkpoint_in_torch_format_loads_into_the_torch_module(
    tmp_path: Path, torch_resnet18: Any
) -> None:
    lucid.manual_seed(0)
    model = models.create_model("resnet18_cifar", num_classes=10)
    lucid.save(model.state_dict(), tmp_path / "resnet18.pt", format="torch")
    tmodel = torch_resnet18(num_classes=10, cifar=True).eval()
    tmodel.load_state_dict(torch.load(tmp_path / "resnet18.pt", weights_only=True))
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = tmodel(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_outputs(model, x), expected, rtol=1e-4, atol=1e-4)


def test_a_whole_lucid_model_saves_and_reloads(tmp_path: Path) -> None:
    lucid.manual_seed(0)
    model = models.create_model("resnet18_cifar", num_classes=10)
    lucid.save(model, tmp_path / "model.pt")  # as pytorch/examples' torch.save(model, f)
    with open(tmp_path / "model.pt", "rb") as f:
        back = lucid.load(f, weights_only=False)
    assert type(back) is type(model)
    assert all(type(p) is lucid.nn.Parameter for p in back.parameters())
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.testing.assert_array_equal(_outputs(back, x), _outputs(model, x))
