"""Optimizers on MLX tensors: parameters stay MLX arrays in their dtype, and the updates
match the NumPy backend's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")
pytest.importorskip("lucid.backends.mlx")

import lucid  # noqa: E402
import lucid.optim as optim  # noqa: E402

NAMES = ["SGD", "ASGD", "Adagrad", "Adadelta", "RMSprop", "Rprop", "Adam", "AdamW", "Adamax"]
NAMES += ["NAdam", "RAdam", "Adafactor", "Lion"]


def _run(name: str, device: str) -> tuple[lucid.Tensor, optim.Optimizer]:
    rng = np.random.default_rng(0)
    start = rng.normal(size=(3, 4)).astype(np.float32)
    grads = [rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3)]
    p = lucid.tensor(start, device=device, requires_grad=True)
    opt = getattr(optim, name)([p], lr=0.01)
    for g in grads:
        p.grad = lucid.tensor(g, device=device)
        opt.step()
    return p, opt


@pytest.mark.parametrize("name", NAMES)
def test_mlx_parameters_stay_mlx_and_match_numpy(name: str) -> None:
    p, opt = _run(name, "mlx")
    assert p.device == "mlx" and isinstance(p.array, mx.array)
    assert p.dtype == lucid.float32
    for value in opt.state[p].values():
        if isinstance(value, lucid.Tensor):
            assert value.device == "mlx" and value.dtype == lucid.float32
    ref, _ = _run(name, "cpu")
    np.testing.assert_allclose(p.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_lbfgs_on_mlx() -> None:
    target = lucid.tensor([1.0, -2.0, 0.5], device="mlx")
    x = lucid.zeros(3, device="mlx", requires_grad=True)
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = ((x - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert isinstance(x.array, mx.array)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, -2.0, 0.5], atol=1e-4, rtol=1e-7)


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_lion_matches_mlx_optimizers(weight_decay: float) -> None:
    """PyTorch has no Lion: mlx.optimizers.Lion is the reference."""
    import mlx.optimizers

    rng = np.random.default_rng(2)
    start = rng.normal(size=(4, 3)).astype(np.float32)
    grads = [rng.normal(size=(4, 3)).astype(np.float32) for _ in range(20)]
    ref = mlx.optimizers.Lion(learning_rate=0.01, betas=[0.8, 0.95], weight_decay=weight_decay)
    params = {"w": mx.array(start)}
    p = lucid.tensor(start.copy(), requires_grad=True)
    opt = optim.Lion([p], lr=0.01, betas=(0.8, 0.95), weight_decay=weight_decay)
    for g in grads:
        params = ref.apply_gradients({"w": mx.array(g)}, params)
        p.grad = lucid.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.detach().numpy(), np.array(params["w"]), rtol=1e-5, atol=1e-6)
