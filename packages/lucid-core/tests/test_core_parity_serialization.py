"""Files written by safetensors.torch load in lucid, and lucid's files load in safetensors.torch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
st_torch = pytest.importorskip("safetensors.torch")


def test_torch_file_loads_into_lucid(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    tensors = {
        "linear.weight": torch.randn(4, 3, generator=g),
        "linear.bias": torch.randn(4, dtype=torch.float64, generator=g),
        "steps": torch.arange(5),
        "mask": torch.tensor([True, False]),
        "half": torch.randn(3, generator=g).half(),
        "i8": torch.tensor([-3, 4], dtype=torch.int8),
        "c": torch.randn(2, dtype=torch.complex64, generator=g),
        "scalar": torch.tensor(2.5),
    }
    st_torch.save_file(tensors, str(tmp_path / "torch.safetensors"))
    back = lucid.load(tmp_path / "torch.safetensors")
    assert set(back) == set(tensors)
    for k, v in tensors.items():
        assert back[k].shape == tuple(v.shape)
        np.testing.assert_array_equal(back[k].numpy(), v.numpy())
        assert str(back[k].dtype).split(".")[1] == str(v.dtype).split(".")[1]


def test_torch_bfloat16_loads_exactly(tmp_path: Path) -> None:
    t = torch.tensor([1.0, -2.5, 3.140625, 1e-3, 65280.0]).bfloat16()
    st_torch.save_file({"b": t}, str(tmp_path / "bf.safetensors"))
    out = lucid.load(tmp_path / "bf.safetensors")["b"]
    np.testing.assert_array_equal(out.numpy(), t.float().numpy())


def test_lucid_file_loads_into_torch(tmp_path: Path) -> None:
    ours = {
        "conv.weight": lucid.randn(2, 1, 3, 3),
        "idx": lucid.arange(6).reshape(2, 3),
        "flag": lucid.tensor([True, True, False]),
        "d": lucid.randn(2, dtype=lucid.float64),
        "h": lucid.ones(2, dtype=lucid.float16),
    }
    lucid.save(ours, tmp_path / "lucid.safetensors")
    loaded = st_torch.load_file(str(tmp_path / "lucid.safetensors"))
    assert set(loaded) == set(ours)
    for k, v in ours.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())


def test_nested_lucid_file_still_readable_by_torch(tmp_path: Path) -> None:
    state = {"state": {0: {"exp_avg": lucid.ones(2), "step": 3}}, "param_groups": [{"lr": 0.1}]}
    lucid.save(state, tmp_path / "opt.safetensors")
    loaded = st_torch.load_file(str(tmp_path / "opt.safetensors"))
    assert list(loaded) == ["state.0.exp_avg"]
    np.testing.assert_array_equal(loaded["state.0.exp_avg"].numpy(), [1.0, 1.0])
