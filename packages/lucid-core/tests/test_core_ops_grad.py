"""Every differentiable op: float64 finite-difference gradcheck (and gradgradcheck for a
representative set), driven by the shared table in core_op_cases.py; forward values vs NumPy."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def _load_cases() -> Any:
    path = Path(__file__).with_name("core_op_cases.py")
    spec = importlib.util.spec_from_file_location("lucid_core_op_cases", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


CASES = _load_cases().CASES


def _inputs(case: Any) -> list[lucid.Tensor]:
    return [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in case.arrays()]


def _call(case: Any, xs: Any) -> Any:
    return case.fn(lucid, *xs)


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradcheck(case: Any) -> None:
    xs = _inputs(case)
    assert gradcheck(lambda *a: _call(case, a), xs)


@pytest.mark.parametrize("case", [c for c in CASES if c.gg], ids=lambda c: c.name)
def test_gradgradcheck(case: Any) -> None:
    xs = _inputs(case)
    assert gradgradcheck(lambda *a: _call(case, a), xs)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_float32_stays_float32(case: Any) -> None:
    xs = [lucid.tensor(a, dtype=lucid.float32) for a in case.arrays()]
    out = _call(case, xs)
    assert out.dtype is lucid.float32, f"{case.name} gave {out.dtype}"


# -- forward values against NumPy ------------------------------------------------------------------
def _np_pad_reflect(a: np.ndarray) -> np.ndarray:
    return np.pad(a, ((0, 0), (2, 1)), mode="reflect")


NUMPY = {
    "add": lambda a, b: a + b,
    "add_alpha": lambda a, b: a + 2.5 * b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow_tensor": np.power,
    "pow_scalar": lambda a: a**3,
    "rpow": lambda a: 2.0**a,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "where": lambda a, b: np.where(a > 0, a, b),
    "clamp": lambda a: np.clip(a, -0.5, 0.5),
    "lerp": lambda a, b: a + 0.3 * (b - a),
    "remainder": np.remainder,
    "fmod": np.fmod,
    "atan2": np.arctan2,
    "exp": np.exp,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "relu": lambda a: np.maximum(a, 0),
    "frac": lambda a: a - np.trunc(a),
    "reciprocal": lambda a: 1 / a,
    "square": np.square,
    "sum_dims_keep": lambda a: a.sum(axis=(0, 2), keepdims=True),
    "mean": lambda a: a.mean(-1),
    "var": lambda a: a.var(1, ddof=1),
    "var_correction0": lambda a: a.var(0, keepdims=True),
    "std": lambda a: a.std(axis=(0, 1), ddof=1),
    "std_correction2": lambda a: a.std(1, ddof=2),
    "prod_dim": lambda a: a.prod(1, keepdims=True),
    "max_all": np.max,
    "max_dim": lambda a: a.max(1),
    "amin": lambda a: a.min(-1, keepdims=True),
    "logsumexp": lambda a: np.log(np.exp(a).sum(1)),
    "norm": np.linalg.norm,
    "norm_p1": lambda a: np.abs(a).sum(0),
    "norm_p3": lambda a: (np.abs(a) ** 3).sum() ** (1 / 3),
    "cumsum": lambda a: np.cumsum(a, 1),
    "cumprod": lambda a: np.cumprod(a, 1),
    "repeat": lambda a: np.tile(a, (2, 1, 3)),
    "tile": lambda a: np.tile(a, (2,)),
    "cat": lambda a, b: np.concatenate([a, b], 1),
    "stack": lambda a, b: np.stack([a, b], 1),
    "pad_reflect": _np_pad_reflect,
    "pad_replicate": lambda a: np.pad(a, ((0, 0), (2, 1), (1, 2)), mode="edge"),
    "flip_list": lambda a: a[::-1, ::-1],
    "roll": lambda a: np.roll(a, 1, 1),
    "triu": lambda a: np.triu(a, 1),
    "diagonal_offset": lambda a: np.diagonal(a, -1, 1, 2),
    "diag_vec": lambda a: np.diag(a, 1),
    "gather": lambda a: np.take_along_axis(a, np.array([[0, 0], [2, 1], [1, 1]]), 1),
    "getitem_dup_index": lambda a: a[[0, 0, 2]],
    "getitem_mask": lambda a: a[a > 0],
    "matmul_bcast": np.matmul,
    "matmul_vec_mat": np.matmul,
    "inner": np.inner,
    "outer": np.outer,
    "einsum_batch": lambda a, b: np.einsum("bij,bjk->bik", a, b),
    "einsum_outer_sum": lambda a, b: np.einsum("i,jk->ij", a, b),
}


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_forward_matches_numpy(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    arrays = case.arrays()
    out = _call(case, [lucid.tensor(a) for a in arrays])
    np.testing.assert_allclose(out.numpy(), NUMPY[name](*arrays), rtol=1e-12, atol=1e-12)
