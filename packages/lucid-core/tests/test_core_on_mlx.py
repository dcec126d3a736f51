"""lucid-core on the MLX backend gives the CPU results: inputs the op-table samples do not
reach (large logits, sorted boundaries, the nuclear norm), sampling and serialization. The op
tables' samples themselves run on MLX in tests-integration/test_integration_mlx_parity.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.linalg as LA

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")
pytest.importorskip("lucid.backends.mlx")


def _both(a: np.ndarray) -> tuple[Any, Any]:
    a = a.astype(np.float32)
    return lucid.tensor(a), lucid.tensor(a, device="mlx")


def _flat(res: Any) -> list[Any]:
    if isinstance(res, (tuple, list)):
        return [r for item in res for r in _flat(item)]
    return [res]


X = np.random.default_rng(0).permutation(20).reshape(4, 5) * 0.25 - 2.0
SQ = np.random.default_rng(1).standard_normal((4, 4)) + 4 * np.eye(4)

CASES = {
    "log_softmax": (lambda x: lucid.log_softmax(x * 1e3, 0), X),
    "erfinv": (lambda x: lucid.erfinv(x * 0.4), X),
    "gelu": (lucid.special.gelu, X),
    "searchsorted": (lambda x: lucid.searchsorted(x.sort(1).values, x[:, :2]), X),
    "matrix_norm": (lambda a: LA.matrix_norm(a, "nuc"), X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_results_as_cpu(name: str) -> None:
    fn, data = CASES[name]
    cpu, gpu = _both(data)
    for a, b in zip(_flat(fn(cpu)), _flat(fn(gpu))):
        assert str(b.device).startswith("mlx")
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=2e-4, atol=2e-5)


def test_gradients_match_cpu() -> None:
    cpu, gpu = _both(SQ)
    for t in (cpu, gpu):
        t.requires_grad_()
        (LA.det(t) + lucid.log_softmax(t, 1).sum() + t.sort(0).values[0].sum()).backward()
    np.testing.assert_allclose(gpu.grad.numpy(), cpu.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_sampling_on_mlx() -> None:
    lucid.manual_seed(0)
    p = lucid.full((2000,), 0.3, device="mlx")
    s = lucid.bernoulli(p)
    assert str(s.device).startswith("mlx") and abs(s.numpy().mean() - 0.3) < 0.05
    w = lucid.tensor([1.0, 0.0, 3.0], device="mlx")
    draws = lucid.multinomial(w, 2000, replacement=True).numpy()
    assert (draws != 1).all() and abs((draws == 2).mean() - 0.75) < 0.05
    assert sorted(lucid.multinomial(w, 2).tolist()) == [0, 2]


def test_save_load_map_location_and_bfloat16(tmp_path: Path) -> None:
    x = lucid.tensor([1.0, -2.5, 3.140625], device="mlx")
    lucid.save({"x": x, "b": x.to(lucid.bfloat16)}, tmp_path / "m.safetensors")
    back = lucid.load(tmp_path / "m.safetensors")
    assert str(back["x"].device).startswith("mlx") and back["b"].dtype is lucid.bfloat16
    np.testing.assert_array_equal(back["b"].float().numpy(), x.numpy())
    on_cpu = lucid.load(tmp_path / "m.safetensors", map_location="cpu")
    assert on_cpu["x"].device == "cpu" and on_cpu["b"].dtype is lucid.bfloat16  # ml_dtypes
    moved = lucid.load(tmp_path / "m.safetensors", map_location={"mlx": "cpu"})
    assert moved["x"].device == "cpu"
    cpu_file = tmp_path / "c.safetensors"
    lucid.save({"y": lucid.ones(2)}, cpu_file)
    assert str(lucid.load(cpu_file, map_location="mlx")["y"].device).startswith("mlx")


def test_bfloat16_keeps_its_dtype_across_devices() -> None:
    x = lucid.tensor([1.0, -2.5, 3.140625]).bfloat16()
    there = x.to("mlx")
    back = there.to("cpu")
    assert there.dtype is lucid.bfloat16 and back.dtype is lucid.bfloat16
    np.testing.assert_array_equal(back.float().numpy(), x.float().numpy())


def test_autocast_on_mlx_computes_in_float16_and_leaves_cpu_alone() -> None:
    a = lucid.randn(3, 4, device="mlx", requires_grad=True)
    b = lucid.randn(4, 2, device="mlx", requires_grad=True)
    with lucid.autocast("mlx"):
        y = a @ b
        on_cpu = lucid.randn(3, 4) @ lucid.randn(4, 2)
    assert y.dtype is lucid.float16 and on_cpu.dtype is lucid.float32
    y.float().sum().backward()
    assert a.grad.dtype is lucid.float32 and b.grad.dtype is lucid.float32
