"""Every differentiable op: float64 finite-difference gradcheck (and gradgradcheck for a
representative set), driven by the shared table in core_op_cases.py; forward values vs NumPy;
every public op has a case."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from core_op_cases import CASES, outputs, tensors

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def _inputs(case: Any) -> list[lucid.Tensor]:
    return tensors(lucid, case, case.arrays())


def _call(case: Any, xs: Any) -> Any:
    return case.fn(lucid, *xs)


def test_case_names_are_unique() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))


GRAD_CASES = [c for c in CASES if c.grad]


def test_every_public_op_has_a_case() -> None:
    """A row needs a sample, a handwritten case naming it, an alias target or a reason."""
    covered = {op for c in CASES for op in c.ops()}
    missing = [row.name for _, row in lucid.ops.rows()
               if not (row.alias or row.untested) and row.name not in covered]  # fmt: skip
    assert not missing, f"ops with no case: {missing}: add a sample to their OPS table row"
    said = {row.name for _, row in lucid.ops.rows() if "core_op_cases" in row.untested}
    assert said <= covered, f"rows that name core_op_cases but have no case: {said - covered}"


def test_aliases_are_the_same_function() -> None:
    for _, row in lucid.ops.rows():
        if row.alias:
            assert getattr(lucid, row.name) is getattr(lucid, row.alias), row.name


@pytest.mark.parametrize("case", GRAD_CASES, ids=lambda c: c.name)
def test_gradcheck(case: Any) -> None:
    xs = _inputs(case)
    assert gradcheck(lambda *a: _call(case, a), xs)


@pytest.mark.parametrize("case", [c for c in GRAD_CASES if c.gg], ids=lambda c: c.name)
def test_gradgradcheck(case: Any) -> None:
    xs = _inputs(case)
    assert gradgradcheck(lambda *a: _call(case, a), xs)


# Ops whose result is float64 whatever the input's float dtype (torch's semantics).
DOUBLE_RESULT = {"float_power"}


@pytest.mark.parametrize(
    "case", [c for c in GRAD_CASES if not set(c.ops()) & DOUBLE_RESULT], ids=lambda c: c.name
)
def test_float32_stays_float32(case: Any) -> None:
    xs = [lucid.tensor(a, dtype=lucid.float32) if a.dtype.kind == "f" else lucid.tensor(a)
          for a in case.arrays()]  # fmt: skip
    for out in outputs(_call(case, xs)):
        if out.is_floating_point():
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
    "pow_scalar": lambda a: a**3,
    "rpow": lambda a: 2.0**a,
    "where": lambda a, b: np.where(a > 0, a, b),
    "lerp": lambda a, b: a + 0.3 * (b - a),
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "relu": lambda a: np.maximum(a, 0),
    "frac": lambda a: a - np.trunc(a),
    "sum_dims_keep": lambda a: a.sum(axis=(0, 2), keepdims=True),
    "mean": lambda a: a.mean(-1),
    "var": lambda a: a.var(1, ddof=1),
    "var_correction0": lambda a: a.var(0, keepdims=True),
    "std": lambda a: a.std(axis=(0, 1), ddof=1),
    "std_correction2": lambda a: a.std(1, ddof=2),
    "prod_dim": lambda a: a.prod(1, keepdims=True),
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
    "gather": lambda a: np.take_along_axis(a, np.array([[0, 0], [2, 1], [1, 1]]), 1),
    "getitem_dup_index": lambda a: a[[0, 0, 2]],
    "getitem_mask": lambda a: a[a > 0],
    "einsum_batch": lambda a, b: np.einsum("bij,bjk->bik", a, b),
    "einsum_outer_sum": lambda a, b: np.einsum("i,jk->ij", a, b),
}


def _numpy_ref(case: Any) -> Any:
    if case.name in NUMPY:
        return NUMPY[case.name]
    s = case.sample
    return lambda *arrays: getattr(np, case.ref)(*arrays, *s.args, **s.kwargs)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.ref or c.name in NUMPY], ids=lambda c: c.name
)
def test_forward_matches_numpy(case: Any) -> None:
    arrays = case.arrays()
    out = _call(case, [lucid.tensor(a) for a in arrays])
    want = _numpy_ref(case)(*arrays)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12, atol=1e-12)
