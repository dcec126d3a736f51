"""Same weights, same outputs as the torchvision architectures (rebuilt with torch alone)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.models as models

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
tnn = torch.nn


def _load_from_torch(model, tmodel) -> None:
    state = {k: lucid.tensor(v.detach().numpy().copy()) for k, v in tmodel.state_dict().items()}
    result = model.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys


@pytest.mark.parametrize("cifar", [True, False])
def test_resnet18_matches_torch_layout_and_outputs(cifar: bool, tmp_path, torch_resnet18) -> None:
    torch.manual_seed(0)
    tmodel = torch_resnet18(num_classes=10, cifar=cifar).eval()
    model = models.create_model("resnet18_cifar" if cifar else "resnet18", num_classes=10)
    assert list(model.state_dict()) == list(tmodel.state_dict())
    # through a safetensors file, as a converted torchvision checkpoint would arrive
    from safetensors.torch import save_file

    path = tmp_path / "resnet18.safetensors"
    save_file({k: v.contiguous() for k, v in tmodel.state_dict().items()}, str(path))
    model.load_state_dict(lucid.load(path))
    model.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = tmodel(torch.from_numpy(x)).numpy()
    with lucid.no_grad():
        got = model(lucid.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_lenet5_train_step_matches_torch() -> None:
    torch.manual_seed(0)
    model = models.create_model("lenet5")
    tmodel = tnn.Sequential(
        tnn.Conv2d(1, 6, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(6, 16, 5), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
        tnn.Linear(400, 120), tnn.ReLU(), tnn.Linear(120, 84), tnn.ReLU(), tnn.Linear(84, 10),
    )  # fmt: skip
    names = list(model.state_dict())
    tstate = list(tmodel.state_dict().values())
    model.load_state_dict({k: lucid.tensor(v.numpy().copy()) for k, v in zip(names, tstate)})
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 8)
    loss = lucid.nn.functional.cross_entropy(model(lucid.tensor(x)), lucid.tensor(y))
    loss.backward()
    tloss = tnn.functional.cross_entropy(tmodel(torch.from_numpy(x)), torch.from_numpy(y))
    tloss.backward()
    assert abs(loss.item() - tloss.item()) < 1e-5
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5)
