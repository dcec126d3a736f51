"""torch's five float8 dtypes on the NumPy backend (ml_dtypes' types): storage and conversion
with torch's CPU bits, finfo, promotion errors, printing, safetensors, and torch's
NotImplementedError for the arithmetic its CPU lacks."""

from __future__ import annotations

import io
import math
import warnings
from typing import Any

import numpy as np
import pytest

import lucid

pytest.importorskip("ml_dtypes")

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
# The values each conversion test sends through: specials, overflow, the subnormal ranges of
# every format, halfway cases, and random values over 14 decades.
_RNG = np.random.default_rng(0)
GRID = np.concatenate([
    np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e30, -1e30, 448, 449, 464, 465, 480,
              500, -500, 57344, 57345, 61440, 61441, 65536, 240, 241, 248, 250, 1e-9, -1e-9,
              2**-9, 2**-10, 1.5 * 2**-10, 2**-16, 2**-17, 2**-18, 3e-5, 1e-40, 2**-127,
              2**-128, 0.75 * 2**-126, 1.7e38, 3e38, 0.3, 0.7, 1.5, 2.5, 3.5, 5, 6, 7, 9, 11, 13]),
    _RNG.standard_normal(2000) * 10.0 ** _RNG.integers(-8, 6, 2000),
])  # fmt: skip


def _bits(t: lucid.Tensor) -> np.ndarray:
    return np.asarray(t.view(lucid.uint8).numpy())


# -- without torch ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_dtype_object(name: str) -> None:
    d = getattr(lucid, name)
    assert d is getattr(lucid.dtypes, name) and str(d) == repr(d) == f"lucid.{name}"
    assert d.itemsize == 1 and d.is_floating_point and not d.is_complex
    assert d.is_signed == (name != "float8_e8m0fnu")
    assert lucid.dtypes.to_dtype(name) is d
    assert __import__("pickle").loads(__import__("pickle").dumps(d)) is d


@pytest.mark.parametrize("name", NAMES)
def test_creation_and_data_movement(name: str) -> None:
    d = getattr(lucid, name)
    x = lucid.tensor([[1.0, 2.0, 4.0], [0.5, 0.25, 8.0]], dtype=d)
    assert x.dtype is d and x.is_floating_point() and x.element_size() == 1
    assert lucid.zeros(2, 3, dtype=d).dtype is d and lucid.empty(3, dtype=d).shape == (3,)
    assert lucid.ones_like(x).dtype is d and lucid.full((2,), 2.0, dtype=d).dtype is d
    back = x.float()
    for moved, expected in [
        (x.t().contiguous(), back.t()), (x.reshape(3, 2), back.reshape(3, 2)),
        (x[1], back[1]), (x[:, 1:], back[:, 1:]), (x.flip(0), back.flip(0)),
        (lucid.cat([x, x]), lucid.cat([back, back])),
        (lucid.stack([x, x]), lucid.stack([back, back])),
        (x.clone(), back), (x.diagonal(), back.diagonal()), (x.roll(1), back.roll(1)),
        (x[lucid.tensor([1, 0])], back[lucid.tensor([1, 0])]),
        (x.permute(1, 0), back.permute(1, 0)),
    ]:  # fmt: skip
        assert moved.dtype is d
        np.testing.assert_allclose(moved.float().numpy(), expected.numpy(), rtol=0, atol=0)
    y = x.clone()
    y[0] = lucid.tensor([8.0, 4.0, 2.0])
    y.copy_(y.flip(0))
    assert y.dtype is d
    expected = [[0.5, 0.25, 8.0], [8.0, 4.0, 2.0]]
    np.testing.assert_allclose(y.float().numpy(), expected, rtol=0, atol=0)
    assert (x == x).all().item() and not x.isnan().any().item()


@pytest.mark.parametrize("name", NAMES)
def test_view_as_bytes_round_trips(name: str) -> None:
    d = getattr(lucid, name)
    bits = lucid.arange(256).to(lucid.uint8)
    f8 = bits.view(d)
    assert f8.dtype is d
    np.testing.assert_array_equal(_bits(f8), np.arange(256))
    np.testing.assert_array_equal(f8.view(lucid.int8).numpy(), np.arange(256).astype(np.int8))
    with pytest.raises(RuntimeError, match="divisible by 2"):
        lucid.ones(3, dtype=d).view(lucid.int16)


@pytest.mark.parametrize("name", NAMES)
def test_promotion_is_refused(name: str) -> None:
    d = getattr(lucid, name)
    torch_name = name.capitalize()
    assert lucid.promote_types(d, d) is d
    with pytest.raises(RuntimeError, match=f"promote {torch_name} and Float$"):
        lucid.promote_types(d, lucid.float32)
    with pytest.raises(RuntimeError, match=f"promote Int and {torch_name}$"):
        lucid.promote_types(lucid.int32, d)
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types is not supported"):
        lucid.ones(2, dtype=d) + lucid.ones(2)


def test_arithmetic_raises_as_torch_cpu() -> None:
    x = lucid.ones(2, 3, dtype=lucid.float8_e4m3fn)
    for fn, kernel in [
        (lambda: x + 1, "add_stub"), (lambda: x + x, "add_stub"), (lambda: x - x, "add_stub"),
        (lambda: x * 2.0, "mul_cpu_reduced_float"), (lambda: x.sum(), "sum_cpu"),
        (lambda: x.mean(), "sum_cpu"), (lambda: x.exp(), "exp_vml_cpu"),
        (lambda: x.max(), "max_all"), (lambda: x.softmax(0), "softmax_kernel_impl"),
        (lambda: lucid.bmm(x[None], x.t()[None]), "bmm"), (lambda: -x, "neg_cpu"),
        (lambda: lucid.rand(2, dtype=lucid.float8_e4m3fn), "check_uniform_bounds"),
        (lambda: lucid.arange(3, dtype=lucid.float8_e4m3fn), "arange_cpu"),
    ]:  # fmt: skip
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for "
                                                      "'Float8_e4m3fn'"):  # fmt: skip
            fn()
    e8 = lucid.ones(2, 2, dtype=lucid.float8_e8m0fnu)
    with pytest.raises(NotImplementedError, match="addmm_impl_cpu_"):
        e8 @ e8


def test_mul_and_matmul_compute_through_float32() -> None:
    a = lucid.tensor([[1.0, 2.0], [300.0, -0.5]], dtype=lucid.float8_e4m3fn)  # 300 -> 288
    prod = a * a
    assert prod.dtype is lucid.float8_e4m3fn
    np.testing.assert_allclose(prod.float().numpy(), [[1, 4], [448, 0.25]], rtol=0, atol=0)
    mm = a @ a
    assert mm.dtype is lucid.float8_e4m3fn
    np.testing.assert_allclose(mm.float().numpy(), [[448, 1], [144, 448]], rtol=0, atol=0)


def test_repr_names_the_dtype() -> None:
    x = lucid.tensor([1.0, 2.5, 0.001], dtype=lucid.float8_e4m3fn)
    assert repr(x) == "tensor([1.0000e+00, 2.5000e+00, 1.9531e-03], dtype=lucid.float8_e4m3fn)"
    assert repr(lucid.tensor(1.5, dtype=lucid.float8_e5m2)) == (
        "tensor(1.5000, dtype=lucid.float8_e5m2)"
    )


def test_safetensors_round_trip(tmp_path: Any) -> None:
    path = str(tmp_path / "f8.safetensors")
    state = {n: lucid.tensor([1.0, -2.0, 0.25, 448.0]).to(getattr(lucid, n))
             for n in ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu")}  # fmt: skip
    lucid.save(state, path)
    got = lucid.load(path)
    for n, t in state.items():
        assert got[n].dtype is t.dtype
        np.testing.assert_array_equal(_bits(got[n]), _bits(t))
    with pytest.raises(lucid.serialization.SerializationError, match="no dtype tag"):
        lucid.save({"x": lucid.ones(2, dtype=lucid.float8_e4m3fnuz)}, path)


def test_mlx_refuses_float8() -> None:
    pytest.importorskip("lucid.backends.mlx")
    with pytest.raises(TypeError, match=r"lucid\.float8_e4m3fn is not supported on device"):
        lucid.ones(2, dtype=lucid.float8_e4m3fn).to("mlx")


# -- against torch ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> Any:
    return pytest.importorskip("torch")


@pytest.mark.parity
@pytest.mark.parametrize("src", ["float32", "float64", "float16", "int64", "uint8", "bool"])
@pytest.mark.parametrize("name", NAMES)
def test_conversion_bits_match_torch(torch: Any, name: str, src: str) -> None:
    grid = GRID if src.startswith("float") else np.clip(np.nan_to_num(GRID), -1e6, 1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.from_numpy(grid).to(getattr(torch, src)).to(getattr(torch, name))
        got = lucid.tensor(grid).to(getattr(lucid, src)).to(getattr(lucid, name))
    np.testing.assert_array_equal(_bits(got), expected.view(torch.uint8).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_bfloat16_to_float8_matches_torch(torch: Any, name: str) -> None:
    finite = GRID[np.isfinite(GRID)]  # (NaN bits of bfloat16 itself differ from torch's)
    expected = torch.from_numpy(finite).to(torch.bfloat16).to(getattr(torch, name))
    got = lucid.tensor(finite).to(lucid.bfloat16).to(getattr(lucid, name))
    np.testing.assert_array_equal(_bits(got), expected.view(torch.uint8).numpy())


@pytest.mark.parity
@pytest.mark.parametrize("dst", ["float32", "float64", "float16", "int8", "uint8", "int32",
                                 "bool", *NAMES])  # fmt: skip
@pytest.mark.parametrize("name", NAMES)
def test_every_float8_value_converts_as_torch(torch: Any, name: str, dst: str) -> None:
    bits = np.arange(256, dtype=np.uint8)
    src_t = torch.from_numpy(bits).view(getattr(torch, name))
    src_l = lucid.tensor(bits).view(getattr(lucid, name))
    expected, got = src_t.to(getattr(torch, dst)), src_l.to(getattr(lucid, dst))
    if dst.startswith("float8"):
        np.testing.assert_array_equal(_bits(got), expected.view(torch.uint8).numpy())
        return
    e, g = expected.numpy(), np.asarray(got.numpy())
    keep = ~np.isnan(src_t.float().numpy()) if dst[0] in "iu" else slice(None)  # NaN -> int: UB
    if dst.startswith("float"):
        np.testing.assert_allclose(g, e, rtol=0, atol=0, equal_nan=True)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(e))
    else:
        np.testing.assert_array_equal(g[keep], e[keep])


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_creation_values_match_torch(torch: Any, name: str) -> None:
    values = [1.0, -2.5, 1e-3, 300.0, 1e9, -math.inf, math.nan, 0.0]
    t = torch.tensor(values, dtype=getattr(torch, name))
    lt = lucid.tensor(values, dtype=getattr(lucid, name))
    np.testing.assert_array_equal(_bits(lt), t.view(torch.uint8).numpy())
    filled = torch.zeros(3, dtype=getattr(torch, name))
    filled[1] = 300.0
    lfilled = lucid.zeros(3, dtype=getattr(lucid, name))
    lfilled[1] = 300.0
    np.testing.assert_array_equal(_bits(lfilled), filled.view(torch.uint8).numpy())
    np.testing.assert_array_equal(
        _bits(lucid.full((2,), 3.0, dtype=getattr(lucid, name))),
        torch.full((2,), 3.0, dtype=getattr(torch, name)).view(torch.uint8).numpy(),
    )


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_finfo_matches_torch(torch: Any, name: str) -> None:
    t, lf = torch.finfo(getattr(torch, name)), lucid.finfo(getattr(lucid, name))
    assert lf.bits == t.bits and lf.dtype == t.dtype
    for field in ("eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        np.testing.assert_allclose(getattr(lf, field), getattr(t, field), rtol=0, atol=0)
    assert repr(lf) == repr(t)


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_repr_matches_torch(torch: Any, name: str) -> None:
    values = [[1.0, -2.5, 3e-3], [57344.0, 0.0, 1.0]]
    t = torch.tensor(values).to(getattr(torch, name))
    lt = lucid.tensor(values).to(getattr(lucid, name))
    assert repr(lt).replace("lucid.", "torch.") == repr(t)


@pytest.mark.parity
def test_mul_and_matmul_match_torch(torch: Any) -> None:
    a = _RNG.standard_normal((5, 7)) * 40
    b = _RNG.standard_normal((7, 3)) * 40
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        ta, tb = (torch.from_numpy(x).to(getattr(torch, name)) for x in (a, b))
        la, lb = (lucid.tensor(x).to(getattr(lucid, name)) for x in (a, b))
        np.testing.assert_array_equal(_bits(la @ lb), (ta @ tb).view(torch.uint8).numpy())
        np.testing.assert_array_equal(_bits(la * la), (ta * ta).view(torch.uint8).numpy())


@pytest.mark.parity
def test_refused_ops_match_torch(torch: Any) -> None:
    def outcome(mod: Any, fn: Any) -> Any:
        x = mod.tensor([[1.0, 2.0], [3.0, 0.5]]).to(mod.float8_e4m3fn)
        try:
            out = fn(mod, x)
        except NotImplementedError as exc:
            return "NotImplementedError", str(exc)
        return str(out.dtype).split(".")[-1]

    for fn in [
        lambda m, x: x + 1, lambda m, x: x + x, lambda m, x: x * 2.0, lambda m, x: x * x,
        lambda m, x: x @ x, lambda m, x: x.sum(), lambda m, x: x.exp(), lambda m, x: x / x,
        lambda m, x: x.abs(), lambda m, x: x == x, lambda m, x: x.isnan(), lambda m, x: x.any(),
        lambda m, x: x.sqrt(), lambda m, x: x.max(), lambda m, x: m.where(x == x, x, x),
        lambda m, x: x.float(), lambda m, x: x.t().contiguous(), lambda m, x: x.softmax(0),
    ]:  # fmt: skip
        assert outcome(lucid, fn) == outcome(torch, fn)


@pytest.mark.parity
def test_safetensors_interchange_with_torch(torch: Any, tmp_path: Any) -> None:
    st = pytest.importorskip("safetensors.torch")
    ts = {"a": torch.tensor([1.0, -2.0, 448.0, 0.01]).to(torch.float8_e4m3fn),
          "b": torch.tensor([[1.0, 3e-5], [57344.0, -1.0]]).to(torch.float8_e5m2),
          "c": torch.tensor([1.0, 4.0, 0.25]).to(torch.float8_e8m0fnu)}  # fmt: skip
    st.save_file(ts, str(tmp_path / "t.safetensors"))
    got = lucid.load(str(tmp_path / "t.safetensors"))
    for k, t in ts.items():
        assert str(got[k].dtype) == str(t.dtype).replace("torch.", "lucid.")
        np.testing.assert_array_equal(_bits(got[k]), t.view(torch.uint8).numpy())
    lucid.save(got, str(tmp_path / "l.safetensors"))
    back = st.load_file(str(tmp_path / "l.safetensors"))
    for k, t in ts.items():
        assert back[k].dtype == t.dtype
        assert torch.equal(back[k].view(torch.uint8), t.view(torch.uint8))


@pytest.mark.parity
def test_torch_checkpoint_loads(torch: Any) -> None:
    buf = io.BytesIO()
    ts = {n: torch.tensor([1.0, -2.0, 0.25, 3.0]).to(getattr(torch, n)) for n in NAMES}
    torch.save(ts, buf)
    got = lucid.load(io.BytesIO(buf.getvalue()))
    for n, t in ts.items():
        assert got[n].dtype is getattr(lucid, n)
        np.testing.assert_array_equal(_bits(got[n]), t.view(torch.uint8).numpy())
