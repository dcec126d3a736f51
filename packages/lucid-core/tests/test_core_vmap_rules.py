"""vmap's batching rules, checked against a loop over the batch on every op-table sample.

Each sample of every op table row is drawn three times (seeds 0, 1, 2); ``vmap`` of the op over
the stacked draws must equal the op on each draw, stacked — values for every sample, and
per-sample gradients (``vmap(grad(...))``) for the differentiable ones. The ops that read a
batched tensor's values outside a Function are listed: they raise a clear error under vmap.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from core_op_cases import Case, outputs, row_cases

import lucid
from lucid.func import grad, jacrev, vmap

N = 3
# Ops computed on arrays outside lucid's Functions with no batching rule that can see them, or
# whose result's shape depends on the values (torch.vmap refuses those too): they raise.
READS_VALUES = {
    "histc", "bincount", "histogram_bins", "histogram_range", "isin", "isin_invert",
    "unique_consecutive", "unique_consecutive_all", "unique_consecutive_dim",
}  # fmt: skip
# Ops with a dynamic output shape: refused with torch.vmap's wording.
DYNAMIC_SHAPE = {"unique", "nonzero", "argwhere"}


def _tensor(a: np.ndarray) -> lucid.Tensor:
    return lucid.tensor(a, dtype=lucid.float64) if a.dtype.kind == "f" else lucid.tensor(a)


def _draws(case: Case) -> list[list[lucid.Tensor]]:
    return [[_tensor(a) for a in case.arrays(seed=k)] for k in range(N)]


def _stacked(draws: list[list[lucid.Tensor]]) -> list[lucid.Tensor]:
    return [lucid.stack([d[j] for d in draws]) for j in range(len(draws[0]))]


CASES = [c for c in row_cases() if c.shapes]


def _close(got: lucid.Tensor, want: lucid.Tensor) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-8, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_vmap_equals_the_loop_on_every_op_sample(case: Case) -> None:
    draws = _draws(case)
    try:
        want = [outputs(case.fn(lucid, *d)) for d in draws]
    except Exception:  # the sample is invalid for some draw (a singular matrix...): no claim
        pytest.skip("the op refuses one of the draws")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.name in DYNAMIC_SHAPE:
            with pytest.raises(RuntimeError, match="operators that can output dynamic shape"):
                vmap(lambda *xs: case.fn(lucid, *xs))(*_stacked(draws))
            return
        if case.name in READS_VALUES:
            with pytest.raises(RuntimeError, match="values of a batched Tensor were read"):
                vmap(lambda *xs: case.fn(lucid, *xs))(*_stacked(draws))
            return
        got = outputs(vmap(lambda *xs: case.fn(lucid, *xs))(*_stacked(draws)))
    for j, g in enumerate(got):
        _close(g, lucid.stack([w[j] for w in want]))


GRAD_CASES = [
    c
    for c in CASES
    if c.grad
    and c.name not in READS_VALUES | DYNAMIC_SHAPE
    and any(a.dtype.kind == "f" for a in c.arrays())
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.name for c in GRAD_CASES])
def test_per_sample_gradients_equal_the_loop_on_every_op_sample(case: Case) -> None:
    draws = _draws(case)
    argnums = tuple(j for j, a in enumerate(case.arrays()) if a.dtype.kind == "f")

    def f(*xs: lucid.Tensor) -> lucid.Tensor:
        outs = [o for o in outputs(case.fn(lucid, *xs)) if o.dtype.is_floating_point]
        return sum((o * o).sum() for o in outs)  # type: ignore[return-value]

    try:
        want = [grad(f, argnums=argnums)(*d) for d in draws]
    except Exception:
        pytest.skip("the op refuses one of the draws")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vmap(grad(f, argnums=argnums))(*_stacked(draws))
    for j in range(len(argnums)):
        _close(got[j], lucid.stack([w[j] for w in want]))


def test_an_op_without_a_rule_loops_and_warns_once_naming_it() -> None:
    class Twice(lucid.autograd.Function):  # a custom Function: no batching rule
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: lucid.Tensor) -> Any:
            return g * 2

    a = lucid.randn(4, 3, dtype=lucid.float64)
    with pytest.warns(UserWarning, match=r"batching rule for .*Twice\. Please file"):
        got = vmap(lambda r: Twice.apply(r).sum(0))(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time: no warning
        again = vmap(grad(lambda r: Twice.apply(r).sum()))(a)
    _close(got, (a * 2).sum(1))
    _close(again, lucid.full((4, 3), 2.0, dtype=lucid.float64))


def test_the_function_runs_once_on_the_whole_batch() -> None:
    calls: list[tuple[int, ...]] = []

    def f(x: lucid.Tensor) -> lucid.Tensor:
        calls.append(tuple(x.shape))
        return (x @ x.mT).softmax(-1).sum(0)

    x = lucid.randn(7, 3, 4, dtype=lucid.float64)
    got = vmap(f)(x)
    assert calls == [(3, 4)]  # one call, with the logical (per-element) shape
    _close(got, lucid.stack([(r @ r.mT).softmax(-1).sum(0) for r in x]))


def test_chunk_size_nested_vmap_and_out_dims() -> None:
    x = lucid.randn(5, 4, 3, dtype=lucid.float64)
    w = lucid.randn(3, 2, dtype=lucid.float64)
    inner = vmap(lambda r: (r @ w).tanh(), in_dims=0, out_dims=1)
    got = vmap(inner, chunk_size=2)(x)
    assert got.shape == (5, 2, 4)
    _close(got, (x @ w).tanh().transpose(1, 2))
    got2 = vmap(vmap(lambda a, b: a * b, in_dims=(None, 0)), in_dims=(0, None))(x[:, 0], x[0])
    _close(got2, x[:, 0][:, None, :] * x[0][None, :, :])


def test_vmap_of_jacrev_and_hessian_and_jvp_per_element() -> None:
    x = lucid.randn(4, 3, dtype=lucid.float64)
    t = lucid.randn(4, 3, dtype=lucid.float64)

    def f(v: lucid.Tensor) -> lucid.Tensor:
        return (v.sin() * v).sum()

    h = vmap(lucid.func.hessian(f))(x)
    _close(h, lucid.stack([lucid.func.hessian(f)(r) for r in x]))
    j = vmap(jacrev(lambda v: v.exp() * v.sum()))(x)
    _close(j, lucid.stack([jacrev(lambda v: v.exp() * v.sum())(r) for r in x]))
    _, jt = vmap(lambda a, b: lucid.func.jvp(f, (a,), (b,)))(x, t)
    _close(jt, lucid.stack([lucid.func.jvp(f, (a,), (b,))[1] for a, b in zip(x, t)]))


def test_reading_values_inside_vmap_raises_a_clear_error() -> None:
    x = lucid.randn(3, 2)
    with pytest.raises(RuntimeError, match="values of a batched Tensor were read"):
        vmap(lambda r: r * 2 if r.sum() > 0 else r)(x)
    with pytest.raises(RuntimeError, match="values of a batched Tensor were read"):
        vmap(lambda r: lucid.tensor(r.tolist()))(x)


def test_batched_tensor_shows_its_logical_shape() -> None:
    seen: dict[str, Any] = {}

    def f(r: lucid.Tensor) -> lucid.Tensor:
        seen.update(shape=r.shape, ndim=r.ndim, dtype=r.dtype, numel=r.numel(), len=len(r))
        return r

    vmap(f, in_dims=1)(lucid.zeros(2, 5, 3))
    assert seen == {"shape": (2, 3), "ndim": 2, "dtype": lucid.float32, "numel": 6, "len": 2}


def test_composite_ops_without_a_rule_loop_warning_once_naming_the_op() -> None:
    x = lucid.randn(3, 2, 4, dtype=lucid.float64)

    def f(r: lucid.Tensor) -> lucid.Tensor:
        return lucid.as_strided_scatter(r, r[0, :2].reshape(2, 1) * 3, (2, 1), (2, 1), 1)

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = vmap(f)(x)
        vmap(f)(x)
    named = [w for w in seen if "as_strided_scatter" in str(w.message)]
    assert len(named) <= 1  # once per process (an earlier test may have had it)
    _close(got, lucid.stack([f(r) for r in x]))


def test_sort_family_under_nested_vmap_and_per_sample_gradients() -> None:
    x = lucid.randn(2, 3, 5, dtype=lucid.float64)

    def f(r: lucid.Tensor) -> lucid.Tensor:
        v = r.sort(descending=True).values[:3] + r.topk(2).values.sum()
        return v + lucid.quantile(r, 0.25) + r.median() + lucid.msort(r)[:3]

    _close(vmap(vmap(f))(x), lucid.stack([lucid.stack([f(r) for r in m]) for m in x]))
    g = vmap(vmap(grad(lambda r: (f(r) ** 2).sum())))(x)
    want = lucid.stack([lucid.stack([grad(lambda r: (f(r) ** 2).sum())(r) for r in m]) for m in x])
    _close(g, want)


def test_dynamic_shape_ops_are_refused_in_torchs_words() -> None:
    x = lucid.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"dynamic shape\. Attempted to vmap over aten::nonzero"):
        vmap(lambda r: r.nonzero())(x)
    with pytest.raises(RuntimeError, match=r"Attempted to vmap over aten::unique"):
        vmap(lambda r: r.unique())(x)
