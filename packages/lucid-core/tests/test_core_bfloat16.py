"""bfloat16 on the NumPy backend (ml_dtypes): the dtype maps both ways, half-precision products
accumulate in float32, ops keep bfloat16, and gradients flow in it."""

from __future__ import annotations

import importlib
import pkgutil
import warnings
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.ops

ml_dtypes = pytest.importorskip("ml_dtypes")
# NumPy < 2 widens bfloat16 where it meets a Python scalar (no NEP 50): ops keep it only on 2+.
needs_nep50 = pytest.mark.skipif(
    int(np.__version__.split(".")[0]) < 2, reason="NumPy < 2 widens bfloat16 with Python scalars"
)

# Samples that still return float32 for bfloat16 input (NumPy widens bfloat16 in np.clip, which
# logit's eps uses, and in xlogy's where() with a Python scalar); every other sample keeps it.
WIDENS = {("xlogy", ""), ("logit", "eps")}
# torch's semantics: float_power computes in float64; quantile takes float32/float64 only.
DOUBLE_RESULT = {"float_power"}
REJECTS_HALF = {"quantile", "nanquantile"}


def _rows() -> list[Any]:
    """Every op-table sample with a floating input."""
    names = [m.name for m in pkgutil.iter_modules(lucid.ops.__path__) if m.name[0] != "_"]
    mods = [importlib.import_module(f"lucid.ops.{name}") for name in names]
    samples = [(row, s) for mod in mods for row in getattr(mod, "OPS", []) for s in row.samples]
    return [(row, s) for row, s in samples if any(a.dtype.kind == "f" for a in s.arrays())]


ROWS = _rows()


def test_the_dtype_maps_both_ways() -> None:
    t = lucid.tensor([1.0, -2.5, 3.140625]).bfloat16()
    assert t.dtype is lucid.bfloat16 and t.numpy().dtype == np.dtype(ml_dtypes.bfloat16)
    back = lucid.from_numpy(np.array([0.5, 2.0], dtype=ml_dtypes.bfloat16))
    assert back.dtype is lucid.bfloat16
    assert t.float().tolist() == [1.0, -2.5, 3.140625]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_half_precision_products_accumulate_in_float32(low: str) -> None:
    rng = np.random.default_rng(0)
    native = np.dtype(ml_dtypes.bfloat16) if low == "bfloat16" else np.dtype(np.float16)
    a, b = (rng.standard_normal(s).astype(native) for s in ((8, 300), (300, 5)))
    got = (lucid.from_numpy(a) @ lucid.from_numpy(b)).numpy()
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(native)
    assert got.dtype == native
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


@needs_nep50
@pytest.mark.parametrize(("row", "sample"), ROWS, ids=[f"{r.name}-{s.tag}" for r, s in ROWS])
def test_ops_keep_bfloat16(row: Any, sample: Any) -> None:
    arrays = sample.arrays()
    inputs = [lucid.tensor(a).bfloat16() if a.dtype.kind == "f" else lucid.tensor(a)
              for a in arrays]  # fmt: skip
    if row.name in REJECTS_HALF:
        with pytest.raises(RuntimeError, match="float or double"):
            getattr(lucid, row.name)(*inputs, *sample.args, **sample.kwargs)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # domain warnings of the sample values
        out = getattr(lucid, row.name)(*inputs, *sample.args, **sample.kwargs)
    outs = out if isinstance(out, (tuple, list)) else [out]
    dtypes = {o.dtype for o in outs if isinstance(o, lucid.Tensor) and o.dtype.is_floating_point}
    if row.name in DOUBLE_RESULT:
        assert dtypes == {lucid.float64}
    elif (row.name, sample.tag) in WIDENS:
        assert dtypes == {lucid.float32}, "widens no more: drop it from WIDENS"
    else:
        assert dtypes <= {lucid.bfloat16}


def test_gradients_flow_in_bfloat16() -> None:
    x = lucid.randn(4, 3).bfloat16().requires_grad_()
    w = lucid.randn(3, 2).bfloat16().requires_grad_()
    loss = lucid.special.gelu(x @ w).softmax(-1).sum()
    loss.backward()
    assert x.grad.dtype is lucid.bfloat16 and w.grad.dtype is lucid.bfloat16
