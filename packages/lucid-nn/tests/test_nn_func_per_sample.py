"""lucid.func on real nn.Modules: per-sample gradients of a small CNN with
``vmap(grad(functional_call))`` equal a loop of single-sample backward passes (and torch.func's
from the same weights); ensembles through ``stack_module_state``; checkpointed blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.func import functional_call, grad, stack_module_state, vmap
from lucid.utils.checkpoint import checkpoint


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3)
        self.fc = nn.Linear(6 * 2 * 2, 3)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 8x8 -> 4x4
        x = F.relu(self.conv2(x))  # -> 2x2
        return self.fc(x.flatten(1))


def _data(n: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 1, 8, 8)), rng.integers(0, 3, n)


def _per_sample(model: nn.Module, x: lucid.Tensor, y: lucid.Tensor) -> dict[str, lucid.Tensor]:
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: dict[str, lucid.Tensor], xi: lucid.Tensor, yi: lucid.Tensor) -> lucid.Tensor:
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    result: dict[str, lucid.Tensor] = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    return result


def test_per_sample_gradients_of_a_cnn_equal_a_loop() -> None:
    lucid.manual_seed(0)
    model = SmallCNN().double()
    xs, ys = _data()
    x, y = lucid.tensor(xs, dtype=lucid.float64), lucid.tensor(ys)
    per = _per_sample(model, x, y)
    for i in range(len(xs)):
        model.zero_grad()
        F.cross_entropy(model(x[i : i + 1]), y[i : i + 1]).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(per[name][i].numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)
    for _, p in model.named_parameters():
        assert p.grad is not None  # the model's own parameters are untouched by functional_call


def test_ensemble_through_stack_module_state() -> None:
    lucid.manual_seed(1)
    models = [nn.Linear(4, 2) for _ in range(3)]
    params, buffers = stack_module_state(models)
    x = lucid.randn(5, 4)
    out = vmap(lambda p, b: functional_call(models[0], (p, b), (x,)))(params, buffers)
    for i, m in enumerate(models):
        np.testing.assert_allclose(
            out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6, atol=1e-6
        )


def test_checkpointed_modules_give_the_same_gradients() -> None:
    lucid.manual_seed(2)
    blocks = nn.ModuleList(
        [
            nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True), nn.Linear(8, 8), nn.GELU())
            for _ in range(4)
        ]
    )
    x = lucid.randn(3, 8)
    h = x
    for b in blocks:
        h = checkpoint(b, h, use_reentrant=False)
    h.sum().backward()
    ck = [p.grad.numpy().copy() for p in blocks.parameters()]
    blocks.zero_grad()
    h = x
    for b in blocks:
        h = b(h)
    h.sum().backward()
    for a, p in zip(ck, blocks.parameters()):
        np.testing.assert_array_equal(a, p.grad.numpy())


@pytest.mark.parity
def test_per_sample_gradients_match_torch_func() -> None:
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    lucid.manual_seed(3)
    model = SmallCNN().double()

    class TorchCNN(torch.nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(4, 6, 3)
            self.fc = torch.nn.Linear(24, 3)

        def forward(self, x: Any) -> Any:
            tnf = torch.nn.functional
            x = tnf.max_pool2d(tnf.relu(self.conv1(x)), 2)
            return self.fc(tnf.relu(self.conv2(x)).flatten(1))

    tmodel = TorchCNN().double()
    with torch.no_grad():
        for name, p in tmodel.named_parameters():
            p.copy_(torch.from_numpy(dict(model.named_parameters())[name].detach().numpy()))
    xs, ys = _data(4, seed=5)
    per = _per_sample(model, lucid.tensor(xs, dtype=lucid.float64), lucid.tensor(ys))
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}

    def tloss(p: Any, xi: Any, yi: Any) -> Any:
        out = tf.functional_call(tmodel, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    tper = tf.vmap(tf.grad(tloss), in_dims=(None, 0, 0))(
        tparams, torch.from_numpy(xs), torch.from_numpy(ys)
    )
    for name in tparams:
        np.testing.assert_allclose(per[name].numpy(), tper[name].numpy(), rtol=1e-9, atol=1e-11)


def test_checkpoint_replays_dropout_masks() -> None:
    lucid.manual_seed(4)
    drop = nn.Dropout(0.5)
    x = lucid.randn(500, requires_grad=True)
    y = checkpoint(drop, x, use_reentrant=False)
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 2.0, 0.0))
