"""Training on MLX through lucid.nn + lucid.optim: no host copies inside a step, a graph that
does not grow across steps, the same numbers as NumPy, modules and checkpoints that move."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
import lucid.backends.mlx  # noqa: E402, F401
from lucid.backends import get_backend  # noqa: E402

nn = pytest.importorskip("lucid.nn")
F = pytest.importorskip("lucid.nn.functional")
optim = pytest.importorskip("lucid.optim")


def lenet5() -> nn.Module:
    models = pytest.importorskip("lucid.models")
    return models.lenet5()


def _batch(n: int, device: str, seed: int = 0) -> tuple[lucid.Tensor, lucid.Tensor]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    return lucid.tensor(x, device=device), lucid.tensor(rng.integers(0, 10, n), device=device)


def _step(model: nn.Module, opt: optim.Optimizer, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def test_a_lenet5_training_step_makes_no_host_copy() -> None:
    be = get_backend("mlx")
    model = lenet5().to("mlx")
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = _batch(8, "mlx")
    _step(model, opt, x, y)  # first step: optimizer state appears
    before = be.host_transfers  # type: ignore[attr-defined]
    loss = _step(model, opt, x, y)
    assert be.host_transfers == before, "a device-to-host copy happened inside the step"  # type: ignore[attr-defined]
    # ...and the step really ran: the parameters are computed (evaluated) arrays
    assert np.isfinite(loss.item()) and be.host_transfers == before + 1  # type: ignore[attr-defined]


def _pending_edges(arrays: list[object]) -> int:
    """Edges of the unevaluated MLX graph behind ``arrays`` (0 once they are computed)."""
    buf = io.StringIO()
    mx.export_to_dot(buf, *arrays)
    return buf.getvalue().count("->")


def _mlp_run(steps: int, sync: bool) -> tuple[list[int], list[int]]:
    """Pending graph size and active MLX memory after each of ``steps`` SGD steps (an MLP
    with batch norm, whose running statistics are written in place every forward)."""
    lucid.manual_seed(0)
    layers = [nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10)]
    model = nn.Sequential(*layers).to("mlx")
    opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lucid.randn(16, 32, device="mlx")
    y = lucid.randint(0, 10, (16,), device="mlx")
    graph, mem = [], []
    for _ in range(steps):
        if sync:
            _step(model, opt, x, y)
        else:  # the same update with nothing evaluating it: the control
            model.zero_grad()
            F.cross_entropy(model(x), y).backward()
            with lucid.no_grad():
                for p in model.parameters():
                    p.sub_(p.grad * 0.01)
        # parameters, optimizer state and the running statistics updated in the forward
        state = [t.array for t in [*model.parameters(), *model.buffers()]]
        state += [v.array for s in opt.state.values() for v in s.values() if hasattr(v, "array")]
        graph.append(_pending_edges(state))
        mem.append(mx.get_active_memory())
    return graph, mem


def test_graph_and_memory_stay_flat_over_200_training_steps() -> None:
    graph, mem = _mlp_run(200, sync=True)
    assert max(graph) == 0, "optimizer.step() left parameters, state or buffers unevaluated"
    assert mem[-1] - mem[19] < 64 * 1024, f"active MLX memory grew: {mem[19]} -> {mem[-1]} bytes"


def test_without_the_step_end_evaluation_the_graph_would_grow() -> None:
    # The control for the test above: with nothing evaluating, each step's graph stays
    # attached to the parameters, so the measurement above can fail.
    graph, _ = _mlp_run(20, sync=False)
    assert graph[0] > 0 and graph[19] > 10 * graph[0]


def test_lenet5_forward_and_gradients_match_numpy() -> None:
    lucid.manual_seed(1)
    cpu_model = lenet5()
    mlx_model = lenet5()
    mlx_model.load_state_dict(cpu_model.state_dict())
    mlx_model.to("mlx")
    out = {}
    for device, model in (("cpu", cpu_model), ("mlx", mlx_model)):
        x, y = _batch(4, device, seed=3)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        out[device] = (loss.item(), {n: p.grad.numpy() for n, p in model.named_parameters()})
    assert out["mlx"][0] == pytest.approx(out["cpu"][0], rel=1e-5, abs=1e-12)
    for name, g in out["cpu"][1].items():
        np.testing.assert_allclose(out["mlx"][1][name], g, rtol=1e-4, atol=1e-6, err_msg=name)


def test_module_to_moves_parameters_and_buffers() -> None:
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    model.to("mlx")
    tensors = list(model.parameters()) + list(model.buffers())
    assert tensors and all(t.device == "mlx" for t in tensors)
    assert all(isinstance(t.array, mx.array) for t in tensors)
    model.train()
    model(lucid.randn(2, 1, 6, 6, device="mlx"))
    assert model[1].running_mean.device == "mlx"
    model.to("cpu")
    assert all(isinstance(t.array, np.ndarray) for t in model.parameters())


def test_save_mlx_tensors_and_load_them_back_onto_mlx(tmp_path: Path) -> None:
    model = lenet5().to("mlx")
    sd = model.state_dict()
    path = tmp_path / "lenet.safetensors"
    lucid.save(sd, path)
    back = lucid.load(path, map_location="mlx")
    assert set(back) == set(sd)
    for k, v in sd.items():
        assert back[k].device == "mlx" and back[k].dtype is v.dtype
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())
    on_cpu = lucid.load(path, map_location="cpu")
    assert all(isinstance(t.array, np.ndarray) for t in on_cpu.values())
    fresh = lenet5().to("mlx")
    fresh.load_state_dict(back)
    x, _ = _batch(2, "mlx")
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def test_bfloat16_and_float16_tensors_round_trip_a_checkpoint(tmp_path: Path) -> None:
    t = {"h": lucid.randn(3, device="mlx").half(), "b": lucid.randn(3, device="mlx").bfloat16()}
    lucid.save(t, tmp_path / "t.safetensors")
    back = lucid.load(tmp_path / "t.safetensors", map_location="mlx")
    for k in t:
        assert back[k].dtype is t[k].dtype and back[k].device == "mlx"
        assert back[k].float().tolist() == t[k].float().tolist()


def test_the_native_conv_kernel_says_it_has_no_double_backward() -> None:
    x = lucid.randn(1, 2, 5, 5, device="mlx", requires_grad=True)
    w = lucid.randn(3, 2, 3, 3, device="mlx", requires_grad=True)
    (g,) = lucid.autograd.grad(F.conv2d(x, w).sum(), [w])  # first order works
    assert g.shape == w.shape
    with pytest.raises(lucid.autograd.DoubleBackwardError, match="double backward"):
        lucid.autograd.grad(F.conv2d(x, w).square().sum(), [w], create_graph=True)


def test_attention_dropout_on_mlx_is_seeded_and_differentiable() -> None:
    q = lucid.randn(1, 2, 4, 8, device="mlx", requires_grad=True)

    def run() -> lucid.Tensor:
        lucid.manual_seed(5)
        return F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)

    a, b = run(), run()
    plain = F.scaled_dot_product_attention(q, q, q)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert not np.allclose(a.detach().numpy(), plain.detach().numpy(), rtol=1e-5, atol=1e-8)
    a.sum().backward()
    assert q.grad is not None and np.isfinite(q.grad.numpy()).all()


def test_every_nn_init_function_works_in_place_on_mlx() -> None:
    init = pytest.importorskip("lucid.nn.init")
    names = sorted(n for n in dir(init) if n.endswith("_") and not n.startswith("_"))
    for name in names:
        shape = (4, 4, 3) if name == "dirac_" else (4, 6)
        t = lucid.full(shape, 0.123, device="mlx")
        args = (0.5,) if name in ("constant_", "sparse_") else ()
        getattr(init, name)(t, *args)
        assert t.device == "mlx" and isinstance(t.array, mx.array), name
        assert not np.allclose(t.numpy(), 0.123, rtol=1e-5, atol=1e-8), (
            f"nn.init.{name} left the MLX tensor unchanged"
        )


def test_layers_built_on_mlx_are_seeded_by_manual_seed() -> None:
    def build() -> list[list[float]]:
        lucid.manual_seed(11)
        return nn.Linear(3, 2, device="mlx").weight.tolist()

    assert build() == build()
