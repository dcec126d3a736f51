"""Files written by torch.save (zip and legacy) load in lucid with the same values, and lucid's
format="torch" files load in torch.load(weights_only=True)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _torch_state() -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    base = torch.randn(4, 6, generator=g)
    return {
        "w": torch.randn(3, 4, generator=g),
        "d": torch.randn(2, dtype=torch.float64, generator=g),
        "h": torch.randn(5, generator=g).half(),
        "bf": torch.tensor([1.0, -2.5, 3.140625, 1e-3]).bfloat16(),
        "i": torch.arange(6).reshape(2, 3),
        "i32": torch.tensor([7, -8], dtype=torch.int32),
        "i16": torch.tensor([7, -8], dtype=torch.int16),
        "i8": torch.tensor([-3, 4], dtype=torch.int8),
        "u8": torch.tensor([200, 4], dtype=torch.uint8),
        "mask": torch.tensor([True, False]),
        "c64": torch.randn(2, dtype=torch.complex64, generator=g),
        "c128": torch.randn(2, dtype=torch.complex128, generator=g),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "base": base,
        "view_t": base.t(),  # the same storage, transposed
        "view_slice": base[1:3, ::2],  # the same storage, offset and strided
        "expanded": torch.ones(3, 1).expand(3, 4),  # stride 0
        "param": torch.nn.Parameter(torch.ones(2)),
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "meta": {"step": 7, "betas": (0.9, 0.999), "s": {1, 2}, "c": 1 + 2j, "b": b"\x00\xff"},
    }


def _compare(got: Any, want: Any) -> None:
    if isinstance(want, torch.Tensor):
        assert isinstance(got, lucid.Tensor), type(got)
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert got.requires_grad == want.requires_grad
        w = want.detach()
        if w.dtype == torch.bfloat16:
            w, got = w.float(), got.detach().float()
        np.testing.assert_array_equal(got.detach().numpy(), w.numpy())
    elif isinstance(want, torch.dtype):
        assert got is getattr(lucid, str(want).split(".")[1])
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            _compare(got[k], want[k])
    else:
        assert got == want


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_torch_save_files_load_with_the_same_values(tmp_path: Path, legacy: bool) -> None:
    state = _torch_state()
    torch.save(state, tmp_path / "m.pt", _use_new_zipfile_serialization=not legacy)
    assert isinstance(torch.load(tmp_path / "m.pt"), dict)  # torch's own weights-only accepts it
    _compare(lucid.load(tmp_path / "m.pt"), state)
    if not legacy:
        _compare(lucid.load(tmp_path / "m.pt", mmap=True), state)
    with open(tmp_path / "m.pt", "rb") as f:
        _compare(lucid.load(f), state)


def test_a_state_dict_keeps_its_metadata(tmp_path: Path) -> None:
    sd = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)).state_dict()
    torch.save(sd, tmp_path / "sd.pt")
    back = lucid.load(tmp_path / "sd.pt")
    assert type(back) is OrderedDict and back._metadata == sd._metadata  # type: ignore[attr-defined]
    _compare(back, sd)


def test_what_torch_refuses_lucid_refuses(tmp_path: Path) -> None:
    class Custom:
        pass

    torch.save({"net": torch.nn.Linear(2, 2)}, tmp_path / "m.pt")
    with pytest.raises(Exception, match="Unsupported global"):
        torch.load(tmp_path / "m.pt")
    with pytest.raises(lucid.serialization.UnpicklingError, match=r"GLOBAL torch\.nn\.modules"):
        lucid.load(tmp_path / "m.pt")
    with pytest.raises(lucid.serialization.SerializationError, match="a PyTorch class lucid"):
        lucid.load(tmp_path / "m.pt", weights_only=False)


def test_lucid_torch_format_loads_in_torch_weights_only(tmp_path: Path) -> None:
    g = lucid.Generator().manual_seed(1)
    ours = OrderedDict(
        w=lucid.randn(3, 4, generator=g), d=lucid.randn(2, dtype=lucid.float64, generator=g),
        bf=lucid.tensor([1.0, -2.5, 3.140625]).bfloat16(), i=lucid.arange(6).reshape(2, 3),
        mask=lucid.tensor([True, False]), z=lucid.tensor([1 + 2j], dtype=lucid.complex128),
        g=lucid.ones(2).requires_grad_(), scalar=lucid.tensor(3.0),
    )  # fmt: skip
    lucid.save({"model": ours, "epoch": 3, "betas": (0.9, 0.99)}, tmp_path / "c.pt",
               format="torch")  # fmt: skip
    back = torch.load(tmp_path / "c.pt", weights_only=True)
    assert back["epoch"] == 3 and back["betas"] == (0.9, 0.99)
    for k, v in ours.items():
        t = back["model"][k]
        assert t.requires_grad == v.requires_grad and tuple(t.shape) == v.shape
        want = v.detach().float().numpy() if v.dtype is lucid.bfloat16 else v.detach().numpy()
        got = t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()
        np.testing.assert_array_equal(got, want)
    assert torch.load(tmp_path / "c.pt", mmap=True)["model"]["w"].shape == (3, 4)
