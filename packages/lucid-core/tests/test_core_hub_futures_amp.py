"""lucid.hub (checkpoints by url without an implicit download, download_url_to_file's atomic
write and hash check, hubconf entrypoints from a folder), lucid.futures, and torch.amp's
custom_fwd/custom_bwd for custom Functions."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import hub


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("LUCID_HOME", str(tmp_path / "lucid"))
    monkeypatch.setattr(hub, "_hub_dir", None)
    return tmp_path


def _checkpoint(path: Path) -> dict[str, Any]:
    state = {"w": lucid.arange(6.0).reshape(2, 3), "b": lucid.ones(2)}
    path.parent.mkdir(parents=True, exist_ok=True)
    lucid.save(state, path)
    return state


def test_get_dir_follows_torch_home_and_set_dir(homes: Path) -> None:
    assert hub.get_dir() == str(homes / "torch" / "hub")
    assert hub.checkpoint_dirs() == [homes / "torch" / "hub" / "checkpoints",
                                     homes / "lucid" / "hub" / "checkpoints"]  # fmt: skip
    hub.set_dir(homes / "elsewhere")
    assert hub.get_dir() == str(homes / "elsewhere")
    assert hub.checkpoint_dirs()[0] == homes / "elsewhere" / "checkpoints"


def test_load_state_dict_from_url_reads_the_cache_and_names_the_download(homes: Path) -> None:
    url = "https://example.org/models/net-0123abcd.pth"
    with pytest.raises(FileNotFoundError, match="net-0123abcd.pth") as err:
        hub.load_state_dict_from_url(url)
    assert "lucid.hub.download_url_to_file(url, " in str(err.value)
    assert not (homes / "torch").exists()  # nothing made on the way
    state = _checkpoint(homes / "lucid" / "hub" / "checkpoints" / "net-0123abcd.pth")
    got = hub.load_state_dict_from_url(url)
    np.testing.assert_array_equal(got["w"].numpy(), state["w"].numpy())
    named = _checkpoint(homes / "mine" / "other.pth")
    got = hub.load_state_dict_from_url(url, model_dir=homes / "mine", file_name="other.pth")
    np.testing.assert_array_equal(got["b"].numpy(), named["b"].numpy())


def test_download_url_to_file_is_atomic_and_checks_the_hash(homes: Path) -> None:
    src = homes / "served.bin"
    payload = bytes(range(256)) * 1000
    src.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    out = homes / "dl" / "weights.bin"
    out.parent.mkdir()
    hub.download_url_to_file(src.as_uri(), str(out), hash_prefix=digest[:8])
    assert out.read_bytes() == payload
    bad = homes / "dl" / "bad.bin"
    with pytest.raises(RuntimeError, match=rf'^invalid hash value \(expected "00000000", got '
                       rf'"{digest}"\)$'):  # fmt: skip
        hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="00000000")
    assert sorted(p.name for p in out.parent.iterdir()) == ["weights.bin"]  # nothing partial
    with pytest.raises(OSError):
        hub.download_url_to_file((homes / "absent.bin").as_uri(), str(bad))
    assert sorted(p.name for p in out.parent.iterdir()) == ["weights.bin"]


def test_hubconf_entrypoints_from_a_folder(homes: Path) -> None:
    repo = homes / "repo"
    repo.mkdir()
    (repo / "helper.py").write_text("SCALE = 3\n")
    (repo / "hubconf.py").write_text(
        "import lucid\nfrom helper import SCALE\ndependencies = ['numpy']\n\n"
        "def scaled(n=2):\n    '''A vector of n threes.'''\n"
        "    return lucid.full((n,), float(SCALE))\n\n"
        "def _private():\n    return None\n"
    )  # fmt: skip
    out = hub.load(str(repo), "scaled", n=4, source="local")
    np.testing.assert_array_equal(out.numpy(), [3.0] * 4)
    assert hub.list(str(repo)) == ["scaled"]
    assert hub.help(str(repo), "scaled") == "A vector of n threes."
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        hub.load(str(repo), "missing", source="local")
    (repo / "hubconf.py").write_text("dependencies = ['no_such_package_here']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_here"):
        hub.load(str(repo), "scaled", source="local")
    with pytest.raises(NotImplementedError, match="lucid fetches no repositories"):
        hub.load("pytorch/vision", "resnet18")
    with pytest.raises(ValueError, match='Unknown source: "web"'):
        hub.load(str(repo), "scaled", source="web")


def test_futures_collect_and_wait() -> None:
    a, b = lucid.futures.Future(), lucid.futures.Future()
    both = lucid.futures.collect_all([a, b])
    assert not both.done()
    a.set_result(1)
    b.set_result(2)
    assert both.done() and [f.wait() for f in both.wait()] == [1, 2]
    assert lucid.futures.wait_all([a, b]) == [1, 2]
    assert lucid.futures.collect_all([]).wait() == []


class _Scale(lucid.autograd.Function):
    seen: list[tuple[str, Any, bool]] = []

    @staticmethod
    @lucid.amp.custom_fwd(device_type="cpu", cast_inputs=lucid.float32)
    def forward(ctx: Any, x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
        _Scale.seen.append(("fwd", x.dtype, lucid.amp.autocast_mode.is_autocast_enabled("cpu")))
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    @lucid.amp.custom_bwd(device_type="cpu")
    def backward(ctx: Any, g: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
        _Scale.seen.append(("bwd", g.dtype, lucid.amp.autocast_mode.is_autocast_enabled("cpu")))
        x, w = ctx.saved_tensors
        return g * w, g * x


def test_custom_fwd_casts_inputs_and_custom_bwd_keeps_the_forwards_autocast_state() -> None:
    _Scale.seen.clear()
    x = lucid.ones(3, dtype=lucid.bfloat16, requires_grad=True)
    w = lucid.full((3,), 2.0, requires_grad=True)
    with lucid.amp.autocast("cpu", dtype=lucid.bfloat16):
        y = _Scale.apply(x, w)
    assert y.dtype == lucid.float32  # cast to float32, run with autocast off
    y.sum().backward()
    assert _Scale.seen == [("fwd", lucid.float32, False), ("bwd", lucid.float32, False)]
    assert x.grad is not None and x.grad.dtype == lucid.bfloat16
    _Scale.seen.clear()
    _Scale.apply(lucid.ones(2), lucid.ones(2))  # outside autocast: no cast, nothing changes
    assert _Scale.seen == [("fwd", lucid.float32, False)]
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        lucid.amp.custom_fwd(device_type=None)  # type: ignore[arg-type]


@pytest.mark.parity
def test_torch_hub_agrees(homes: Path) -> None:
    torch = pytest.importorskip("torch")
    assert hub.get_dir() == torch.hub.get_dir()
    src = homes / "served.bin"
    src.write_bytes(b"lucid" * 100)
    with pytest.raises(RuntimeError) as theirs:
        torch.hub.download_url_to_file(src.as_uri(), str(homes / "t.bin"), hash_prefix="ff")
    with pytest.raises(RuntimeError) as ours:
        hub.download_url_to_file(src.as_uri(), str(homes / "l.bin"), hash_prefix="ff")
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        torch.hub.load(str(homes), "x", source="web")
    with pytest.raises(ValueError) as ours:
        hub.load(str(homes), "x", source="web")
    assert str(ours.value) == str(theirs.value)
