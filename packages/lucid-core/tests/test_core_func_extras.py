"""lucid.func.rearrange (torch.func's einops-style rearrange: values, dtypes, errors and
gradients as torch's), lucid.func.debug_unwrap (the Tensor under vmap's wrappers) and
lucid.profiler.ExecutionTraceObserver (Chakra execution-trace JSON of the ops run between
start and stop, written atomically)."""

from __future__ import annotations

import gzip
import json
import os
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.func import debug_unwrap, grad, rearrange, vmap
from lucid.func._einops import DimensionBindError
from lucid.profiler import ExecutionTraceObserver, profile, record_function

ATOL, RTOL = 1e-12, 1e-12

# (shape, pattern, axes lengths): every kind of group, ellipsis and unitary axis
_CASES: list[tuple[tuple[int, ...], str, dict[str, int]]] = [
    ((2, 3, 4), "a b c -> c a b", {}),
    ((2, 3, 4), "a b c -> a (b c)", {}),
    ((2, 3, 4), "a b c -> (a b c)", {}),
    ((2, 6, 4), "a (b1 b2) c -> b1 a b2 c", {"b1": 3}),
    ((2, 6, 4), "a (b1 b2) c -> (b2 c) a b1", {"b2": 2}),
    ((2, 3, 4), "a b c -> a 1 b c ()", {}),
    ((2, 1, 3), "a 1 c -> a c", {}),
    ((2, 3, 4), "a 1 c -> a c", {}),  # torch's first-class dims sum a left `1` of any size
    ((2, 3), "a (1 b) -> (1 a) b ()", {}),
    ((2, 3, 4), "... c -> c ...", {}),
    ((2, 3, 4, 5), "a ... e -> e (...) a", {}),
    ((2, 3, 4, 5), "... c d -> ... (c d)", {}),
    ((2, 3, 4, 5), "1 1 c d -> d c", {}),
    ((12, 5), "(a b c) d -> c d b a", {"a": 2, "c": 3}),
    ((2, 0), "a (b c) -> b a c", {"b": 2}),
    ((), "... -> ...", {}),
    ((1,), "() -> ", {}),
]

_ERRORS: list[tuple[tuple[int, ...], str, dict[str, Any], type[Exception], str]] = [
    ((2, 3, 4), "a b c", {}, ValueError, "Pattern must contain a single '->' separator"),
    ((2, 3, 4), "a b c -> a b", {}, ValueError, "Identifiers only on one side"),
    ((2, 3, 4), "a b -> a b", {}, ValueError,
     r"Number of dimensions in pattern \(2\) must be equal to the number of dimensions in the "
     r"tensor \(3\)"),
    ((2, 3, 4), "a b c d ... -> a b c d ...", {}, ValueError, "must be less than or equal to"),
    ((2, 3, 4), "a b c -> a b 2 c", {}, ValueError, "only supports unnamed axes of size 1"),
    ((2, 3, 4), "a b c -> a b c", {"d": 2}, ValueError, "Identifiers not found"),
    ((2, 3, 4), "a b c -> a b c", {"a": 2.0}, TypeError, "must be integers"),
    ((2, 3, 4), "a a c -> a c", {}, ValueError, "duplicate dimension 'a'"),
    ((2, 3, 4), "a b -> ...", {}, ValueError, "Ellipsis found in right side"),
    ((2, 3, 4), "(...) -> ...", {}, ValueError, "Ellipsis is parenthesis in the left side"),
    ((2, 3, 4), "a .. c -> a c", {}, ValueError, "dots only inside ellipsis"),
    ((2, 3, 4), "a b c -> a (b (c))", {}, ValueError, "brackets inside brackets"),
    ((2, 3, 4), "a b c -> a b c)", {}, ValueError, "Brackets are not balanced"),
    ((2, 3, 4), "a b _c -> a b _c", {}, ValueError, "Invalid axis identifier: _c"),
    ((2, 3, 4), "a b c! -> a b c", {}, ValueError, "Unknown character '!'"),
    ((2, 6, 4), "a (b c) d -> a b c d", {}, DimensionBindError,
     "cannot infer the sizes of two dimensions at once d1 and d2"),
    ((2, 3, 4), "a (b c) d -> a b c d", {"b": 2}, DimensionBindError,
     r"does not evenly fit into larger dimension: 3 vs \(2, '\?'\)"),
    ((2, 3, 4), "a b c -> c b a", {"a": 3}, DimensionBindError,
     r"Dimension sizes to do not match \(2 != 3\) when matching dimension pack \(d0,\)"),
]  # fmt: skip


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# -- rearrange ----------------------------------------------------------------------------------
def test_rearrange_shapes_and_values() -> None:
    x = _data((2, 6, 4))
    out = rearrange(lucid.from_numpy(x), "a (b1 b2) c -> b1 a b2 c", b1=3)
    want = x.reshape(2, 3, 2, 4).transpose(1, 0, 2, 3)
    np.testing.assert_allclose(out.numpy(), want, atol=ATOL, rtol=RTOL)
    images = lucid.randn(4, 6, 8, 3)
    assert rearrange(images, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2).shape == (
        4, 3, 4, 12)  # fmt: skip
    parts = [lucid.ones(2, 3), lucid.zeros(2, 3)]
    out = rearrange(parts, "n a b -> a (n b)")
    np.testing.assert_allclose(out.numpy(), np.concatenate([np.ones((2, 3)), np.zeros((2, 3))], 1),
                               atol=ATOL, rtol=RTOL)  # fmt: skip


def test_rearrange_scalar_identity_returns_the_tensor() -> None:
    s = lucid.tensor(3.0)
    assert rearrange(s, " -> ") is s
    assert rearrange(s, "-> 1") is s  # torch: no axes at all is the identity


def test_rearrange_errors() -> None:
    for shape, pattern, kw, exc, match in _ERRORS:
        with pytest.raises(exc, match=match):
            rearrange(lucid.from_numpy(_data(shape)), pattern, **kw)


def test_rearrange_keyword_axis_names_warn() -> None:
    with pytest.warns(RuntimeWarning, match="keywords: lambda"):
        rearrange(lucid.ones(2, 3), "lambda b -> b lambda")


def test_rearrange_gradients_and_transforms() -> None:
    x = lucid.from_numpy(_data((2, 6, 3))).requires_grad_(True)
    w = lucid.from_numpy(_data((3, 2, 2, 3), seed=1))
    (rearrange(x, "a (h w) c -> c w a h", h=3) * w).sum().backward()
    want = _data((3, 2, 2, 3), seed=1).transpose(2, 3, 1, 0).reshape(2, 6, 3)
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), want, atol=ATOL, rtol=RTOL)
    batched = vmap(lambda t: rearrange(t, "(h w) c -> c h w", h=2))(
        lucid.from_numpy(x.detach().numpy())
    )
    want = x.detach().numpy().reshape(2, 2, 3, 3).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(batched.numpy(), want, atol=ATOL, rtol=RTOL)
    g = grad(lambda t: (rearrange(t, "a b 1 -> b a") ** 2).sum())(
        lucid.from_numpy(_data((2, 3, 1)))
    )
    np.testing.assert_allclose(g.numpy(), 2 * _data((2, 3, 1)), atol=ATOL, rtol=RTOL)


@pytest.mark.parity
def test_rearrange_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.func import rearrange as torch_rearrange

    for shape, pattern, kw in _CASES:
        x = _data(shape)
        for dt in ("float64", "int32", "bool"):
            a = x.astype(dt)
            got = rearrange(lucid.from_numpy(a.copy()), pattern, **kw)
            want = torch_rearrange(torch.from_numpy(a.copy()), pattern, **kw)
            assert tuple(got.shape) == tuple(want.shape), (pattern, dt)
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (pattern, dt)
            np.testing.assert_allclose(got.numpy(), want.numpy(), atol=ATOL, rtol=RTOL)


@pytest.mark.parity
def test_rearrange_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.func import rearrange as torch_rearrange

    for shape, pattern, kw, _, _ in _ERRORS:
        x = _data(shape)
        with pytest.raises(Exception) as want:
            torch_rearrange(torch.from_numpy(x), pattern, **kw)
        with pytest.raises(Exception) as got:
            rearrange(lucid.from_numpy(x), pattern, **kw)
        assert type(got.value).__name__ == type(want.value).__name__, pattern
        assert str(got.value) == str(want.value), pattern


@pytest.mark.parity
def test_rearrange_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.func import rearrange as torch_rearrange

    pattern, kw = "b (h1 h) w 1 -> (b h1) w h", {"h1": 2}
    x = _data((3, 4, 5, 1))
    w = _data((6, 5, 2), seed=1)
    lx = lucid.from_numpy(x).requires_grad_(True)
    (rearrange(lx, pattern, **kw).sin() * lucid.from_numpy(w)).sum().backward()
    tx = torch.from_numpy(x).requires_grad_(True)
    (torch_rearrange(tx, pattern, **kw).sin() * torch.from_numpy(w)).sum().backward()
    assert lx.grad is not None and tx.grad is not None
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=ATOL, rtol=RTOL)
    lg = grad(lambda t: rearrange(t, "... c -> c ...").cos().sum())(lucid.from_numpy(x))
    tg = torch.func.grad(lambda t: torch_rearrange(t, "... c -> c ...").cos().sum())(
        torch.from_numpy(x))  # fmt: skip
    np.testing.assert_allclose(lg.numpy(), tg.numpy(), atol=ATOL, rtol=RTOL)


# -- debug_unwrap -------------------------------------------------------------------------------
def test_debug_unwrap_outside_and_inside_transforms() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    assert debug_unwrap(x) is x
    seen: dict[str, Any] = {}

    def f(t: lucid.Tensor) -> lucid.Tensor:
        seen["all"] = debug_unwrap(t)
        seen["one"] = debug_unwrap(t, recurse=False)
        return t

    vmap(f)(x)
    assert type(seen["all"]) is lucid.Tensor and seen["all"].shape == (2, 3)
    np.testing.assert_allclose(seen["all"].numpy(), x.numpy(), atol=ATOL, rtol=RTOL)
    vmap(vmap(f))(x)
    assert type(seen["all"]) is lucid.Tensor and seen["all"].shape == (2, 3)
    assert type(seen["one"]) is not lucid.Tensor and seen["one"].shape == (3,)  # one level
    vmap(f, in_dims=1)(x)
    assert seen["all"].shape == (3, 2)  # lucid keeps the mapped dimension in front

    def g(t: lucid.Tensor) -> lucid.Tensor:
        seen["grad"] = debug_unwrap(t) is t
        return t.sum()

    grad(g)(x)
    assert seen["grad"]
    with pytest.raises(TypeError, match="expected a Tensor"):
        debug_unwrap(3)  # type: ignore[arg-type]


@pytest.mark.parity
def test_debug_unwrap_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    x = _data((2, 3))
    got: list[Any] = []
    want: list[Any] = []
    vmap(lambda t: got.append(debug_unwrap(t).numpy().copy()) or t)(lucid.from_numpy(x))
    torch.func.vmap(lambda t: want.append(torch.func.debug_unwrap(t).numpy().copy()) or t)(
        torch.from_numpy(x))  # fmt: skip
    np.testing.assert_allclose(got[0], want[0], atol=ATOL, rtol=RTOL)


# -- ExecutionTraceObserver ---------------------------------------------------------------------
def _load(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    out: dict[str, Any] = json.loads(raw)
    return out


def _names(trace: dict[str, Any]) -> list[str]:
    return [n["name"] for n in trace["nodes"]]


def test_execution_trace_records_ops_between_start_and_stop(tmp_path: Path) -> None:
    path = tmp_path / "et.json"
    et = ExecutionTraceObserver()
    assert et.get_output_file_path() is None and not et.is_registered and not et.is_running()
    assert et.register_callback(str(path)) is et
    assert et.is_registered and et.get_output_file_path() == str(path)
    et.register_callback(str(tmp_path / "other.json"))  # registered already: no change
    assert et.get_output_file_path() == str(path)
    lucid.ones(2).exp()  # before start: not recorded
    et.start()
    assert et.is_running()
    x = lucid.ones(2, 3, requires_grad=True)
    with record_function("step"):
        (x * 2).sum().backward()
    et.stop()
    lucid.ones(2).exp()  # after stop: not recorded
    assert not path.exists()  # written when unregistered
    et.unregister_callback()
    assert not et.is_registered and not et.is_running()
    trace = _load(path)
    assert list(trace) == ["schema", "pid", "time", "start_ts", "nodes", "finish_ts"]
    assert trace["pid"] == os.getpid() and trace["finish_ts"] >= trace["start_ts"]
    names = _names(trace)
    assert names[0] == "[pytorch|profiler|execution_trace|thread]"
    assert names[-1] == "[pytorch|profiler|execution_trace|process]"
    for name in ("step", "lucid::Mul", "lucid::Sum", "SumBackward0", "MulBackward0"):
        assert name in names, names
    assert "lucid::Exp" not in names
    nodes = {n["name"]: n for n in trace["nodes"]}
    ids = [n["id"] for n in trace["nodes"]]
    assert len(ids) == len(set(ids))
    for n in trace["nodes"]:
        assert set(n) == {"id", "name", "ctrl_deps", "inputs", "outputs", "attrs"}
        for side in ("inputs", "outputs"):
            assert set(n[side]) == {"values", "shapes", "types", "strides"}
    mul = next(n for n in trace["nodes"] if n["name"] == "lucid::Mul")  # the forward one
    assert mul["ctrl_deps"] == nodes["step"]["id"]
    assert mul["inputs"]["types"] == ["Tensor(float)", "Int"]
    assert mul["inputs"]["shapes"] == [[2, 3], []]
    assert mul["inputs"]["strides"][0] == [3, 1]
    assert mul["outputs"]["shapes"] == [[2, 3]] and mul["outputs"]["types"] == ["Tensor(float)"]
    tensor_id, storage_id, offset, numel, itemsize, device = mul["inputs"]["values"][0]
    assert (offset, numel, itemsize, device) == (0, 6, 4, "cpu")
    # the backward formula's ops hang under their autograd node
    back = nodes["MulBackward0"]
    assert any(n["ctrl_deps"] == back["id"] and n["name"] == "lucid::Mul" for n in trace["nodes"])


def test_execution_trace_windows_gzip_and_profile(tmp_path: Path) -> None:
    path = tmp_path / "et.json.gz"
    et = ExecutionTraceObserver().register_callback(str(path))
    et.start()
    lucid.ones(2).exp()
    et.stop()
    lucid.ones(2).log()
    et.start()
    lucid.ones(2).sin()
    et.cleanup()
    names = _names(_load(path))
    assert "lucid::Exp" in names and "lucid::Sin" in names and "lucid::Log" not in names

    path2 = tmp_path / "prof.json"
    et2 = ExecutionTraceObserver().register_callback(str(path2))
    with profile(execution_trace_observer=et2) as prof:
        lucid.ones(3).cos()
    assert not et2.is_registered  # profile's exit finalizes the observer
    assert "lucid::Cos" in _names(_load(path2))
    assert "lucid::Cos" in [e.name for e in prof.events()]


def test_execution_trace_threads_get_their_own_node(tmp_path: Path) -> None:
    path = tmp_path / "et.json"
    et = ExecutionTraceObserver().register_callback(str(path))
    et.start()
    lucid.ones(2).exp()
    t = threading.Thread(target=lambda: lucid.ones(2).sin())
    t.start()
    t.join()
    et.unregister_callback()
    trace = _load(path)
    threads = [n for n in trace["nodes"] if n["name"].endswith("execution_trace|thread]")]
    assert len(threads) == 2
    nodes = {n["name"]: n for n in trace["nodes"]}
    assert nodes["lucid::Exp"]["ctrl_deps"] == threads[0]["id"]
    assert nodes["lucid::Sin"]["ctrl_deps"] == threads[1]["id"]


def test_execution_trace_bad_paths_and_atomic_write(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ExecutionTraceObserver().register_callback(str(tmp_path / "missing" / "et.json"))
    with pytest.raises(IsADirectoryError, match="is a directory"):
        ExecutionTraceObserver().register_callback(str(tmp_path))
    with pytest.raises(TypeError, match="must be a str"):
        ExecutionTraceObserver().register_callback(3)  # type: ignore[arg-type]
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        ExecutionTraceObserver().register_callback(str(tmp_path / "file" / "et.json"))
    path = tmp_path / "et.json"
    path.write_text("old")
    et = ExecutionTraceObserver().register_callback(path)  # type: ignore[arg-type]
    et.start()
    lucid.ones(2).exp()
    et.unregister_callback()
    assert "lucid::Exp" in _names(_load(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["et.json", "file"]  # no temp left


def test_execution_trace_unregistered_is_inert_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    et = ExecutionTraceObserver()
    et.start()
    assert not et.is_running()
    et.stop()
    et.unregister_callback()
    et.cleanup()
    monkeypatch.delenv("ENABLE_PYTORCH_EXECUTION_TRACE", raising=False)
    assert ExecutionTraceObserver.build_execution_trace_obs_from_env() is None
    monkeypatch.setenv("ENABLE_PYTORCH_EXECUTION_TRACE", "1")
    env = ExecutionTraceObserver.build_execution_trace_obs_from_env()
    assert env is not None and env.is_registered
    out = env.get_output_file_path()
    assert out is not None and out.endswith(".et.json")
    env.unregister_callback()
    assert "[pytorch|profiler|execution_trace|process]" in _names(_load(Path(out)))
    os.remove(out)


@pytest.mark.parity
def test_execution_trace_layout_matches_torch(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from torch.profiler import ExecutionTraceObserver as TorchET

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tet = TorchET().register_callback(str(tmp_path / "torch.json"))
        tet.start()
        (torch.ones(2, 3) * 2).sum()
        tet.unregister_callback()
    et = ExecutionTraceObserver().register_callback(str(tmp_path / "lucid.json"))
    et.start()
    (lucid.ones(2, 3) * 2).sum()
    et.unregister_callback()
    want, got = _load(tmp_path / "torch.json"), _load(tmp_path / "lucid.json")
    assert list(got) == list(want) and got["schema"] == want["schema"]
    for w, g in ((want["nodes"][0], got["nodes"][0]), (want["nodes"][-1], got["nodes"][-1])):
        assert (g["id"], g["name"], g["ctrl_deps"]) == (w["id"], w["name"], w["ctrl_deps"])
    tmul = next(n for n in want["nodes"] if n["name"] == "aten::mul")
    lmul = next(n for n in got["nodes"] if n["name"] == "lucid::Mul")
    assert set(lmul) == set(tmul)
    assert [a["name"] for a in lmul["attrs"]] == [a["name"] for a in tmul["attrs"]]
    assert lmul["inputs"]["shapes"][0] == tmul["inputs"]["shapes"][0]
    assert lmul["inputs"]["types"][0] == tmul["inputs"]["types"][0]
    assert len(lmul["inputs"]["values"][0]) == len(tmul["inputs"]["values"][0])
