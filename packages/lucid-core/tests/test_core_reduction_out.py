"""``out=`` on the reductions with torch's rules: the sum family runs in ``out``'s dtype, the
floating ones refuse an integer ``out``, amax/amin/argmax/all/max-with-dim check dtypes with
torch's wording, a wrong-shaped ``out`` is resized (with torch's warning where it had
elements), and autograd is refused. The parity gauge runs every case on torch and lucid."""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lucid

_X = np.arange(12.0).reshape(3, 4) / 7.0 - 0.5


def _case_list(L: ModuleType) -> dict[str, Any]:
    f32, f64, i64 = L.float32, L.float64, L.int64
    x = L.tensor(_X, dtype=f32)
    xi = L.tensor((_X * 7).round(), dtype=i64)

    def e(*shape: int, dtype: Any = f32) -> Any:
        return L.empty(*shape, dtype=dtype)

    return {
        "sum": lambda: L.sum(x, 1, out=e(3)),
        "sum_resize_warns": lambda: L.sum(x, 1, out=e(2)),
        "sum_resize_empty": lambda: L.sum(x, 0, keepdim=True, out=e(0)),
        "sum_f64_out": lambda: L.sum(x, 1, out=e(3, dtype=f64)),
        "sum_int_in_float_out": lambda: L.sum(xi, 1, out=e(3)),
        "sum_float_in_int_out": lambda: L.sum(x * 3, 1, out=e(3, dtype=i64)),
        "sum_dtype_mismatch": lambda: L.sum(x, 1, dtype=f64, out=e(3)),
        "sum_out_not_tensor": lambda: L.sum(x, 1, out=[e(3)]),
        "mean": lambda: L.mean(x, 1, out=e(3)),
        "mean_f64_out": lambda: L.mean(x, 1, out=e(3, dtype=f64)),
        "mean_int_out": lambda: L.mean(x, 1, out=e(3, dtype=i64)),
        "mean_dtype_mismatch": lambda: L.mean(x, 1, dtype=f64, out=e(3)),
        "prod": lambda: L.prod(x, 1, out=e(3)),
        "prod_f64_out": lambda: L.prod(x, 1, out=e(3, dtype=f64)),
        "std": lambda: L.std(x, 1, out=e(3)),
        "std_keepdim": lambda: L.std(x, 1, correction=0, keepdim=True, out=e(3, 1)),
        "std_int_out": lambda: L.std(x, 1, out=e(3, dtype=i64)),
        "var": lambda: L.var(x, 0, out=e(4, dtype=f64)),
        "logsumexp": lambda: L.logsumexp(x, 1, out=e(3)),
        "logsumexp_int_out": lambda: L.logsumexp(x, 1, out=e(3, dtype=i64)),
        "nansum": lambda: L.nansum(x, 1, out=e(3, dtype=f64)),
        "nanmean": lambda: L.nanmean(x, 1, out=e(3)),
        "amax": lambda: L.amax(x, 1, out=e(3)),
        "amax_f64_out": lambda: L.amax(x, 1, out=e(3, dtype=f64)),
        "amin_resize": lambda: L.amin(x, 0, out=e(2)),
        "argmax": lambda: L.argmax(x, 1, out=e(3, dtype=i64)),
        "argmin_float_out": lambda: L.argmin(x, 1, out=e(3)),
        "all": lambda: L.all(x, 1, out=e(3, dtype=L.bool)),
        "all_uint8_out": lambda: L.all(x, 1, out=e(3, dtype=L.uint8)),
        "any_float_out": lambda: L.any(x, 1, out=e(3)),
        "max_all": lambda: L.max(x, out=e(0)),
        "max_dim": lambda: L.max(x, 1, out=(e(3), e(3, dtype=i64)))[0],
        "max_dim_indices": lambda: L.max(x, 1, out=(e(3), e(3, dtype=i64)))[1],
        "max_dim_bad_indices": lambda: L.max(x, 1, out=(e(3), e(3))),
        "min_dim_three": lambda: L.min(x, 1, out=(e(3), e(3, dtype=i64), e(3))),
        "cumsum": lambda: L.cumsum(x, 1, out=e(3, 4, dtype=f64)),
        "cumprod": lambda: L.cumprod(x, 0, out=e(3, 4)),
        "median_dim": lambda: L.median(x, 1, out=(e(3), e(3, dtype=i64)))[0],
        "nanmedian_dim": lambda: L.nanmedian(x, 0, out=(e(4), e(4, dtype=i64)))[1],
        "mode": lambda: L.mode(x, 1, out=(e(3), e(3, dtype=i64)))[0],
        "kthvalue": lambda: L.kthvalue(x, 2, 1, out=(e(3), e(3, dtype=i64)))[1],
        "cummax": lambda: L.cummax(x, 1, out=(e(3, 4), e(3, 4, dtype=i64)))[1],
        "cummin": lambda: L.cummin(x, 0, out=(e(3, 4), e(3, 4, dtype=i64)))[0],
        "logcumsumexp": lambda: L.logcumsumexp(x, 1, out=e(0)),
        "aminmax": lambda: L.aminmax(x, dim=1, out=(e(3), e(3)))[1],
        "aminmax_f64_out": lambda: L.aminmax(x, dim=1, out=(e(3, dtype=f64), e(3))),
        "quantile": lambda: L.quantile(x, 0.25, 1, out=e(3)),
        "nanquantile": lambda: L.nanquantile(x, 0.75, 0, out=e(4)),
        "sort": lambda: L.sort(x, 1, descending=True, out=(e(3, 4), e(3, 4, dtype=i64)))[1],
        "topk": lambda: L.topk(x, 2, 1, out=(e(3, 2), e(3, 2, dtype=i64)))[0],
        "norm_f64_out": lambda: L.norm(x, dim=1, out=e(3, dtype=f64)),
        "sum_autograd": lambda: L.sum(x.clone().requires_grad_(), 1, out=e(3)),
        "sum_out_requires_grad": lambda: L.sum(x, 1, out=e(3).requires_grad_()),
    }


def _run(L: ModuleType, name: str) -> tuple[str, Any, Any, bool]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = _case_list(L)[name]()
        except (RuntimeError, TypeError) as exc:
            return type(exc).__name__, str(exc).split("\n")[0], None, False
    resized = any("was resized since it had shape" in str(w.message) for w in caught)
    return "ok", str(r.dtype).split(".")[-1], r.numpy(), resized


def test_sum_runs_in_the_dtype_of_out_and_returns_it() -> None:
    x = lucid.tensor([[1.5, 1.5, 2.7]])
    out = lucid.empty(1, dtype=lucid.int64)
    assert lucid.sum(x, 1, out=out) is out
    assert out.tolist() == [4]  # each value cast first, as torch: 1 + 1 + 2
    with pytest.warns(UserWarning, match="was resized since it had shape"):
        lucid.amax(x, 1, out=lucid.empty(3))


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(_case_list(lucid)))
def test_reduction_out_parity(name: str) -> None:
    torch = pytest.importorskip("torch")
    want, got = _run(torch, name), _run(lucid, name)
    assert got[0] == want[0], (got, want)
    assert got[1] == want[1]
    if want[0] == "ok":
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-7)
        assert got[3] == want[3]


@pytest.mark.parametrize("op", ["kthvalue", "sort", "topk", "median", "mode", "cummax"])
def test_values_indices_out_sharing_the_input_raises(op: str) -> None:
    # torch refuses an out= tensor that shares memory with the input (the errors gauge's case)
    x = lucid.tensor([3.0, 1.0, 2.0, 5.0, 4.0])
    call = {"kthvalue": lambda o: lucid.kthvalue(x, 2, out=o),
            "sort": lambda o: lucid.sort(x, out=o),
            "topk": lambda o: lucid.topk(x, 2, out=o),
            "median": lambda o: lucid.median(x, 0, out=o),
            "mode": lambda o: lucid.mode(x, 0, out=o),
            "cummax": lambda o: lucid.cummax(x, 0, out=o)}[op]  # fmt: skip
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        call((x, lucid.empty(0, dtype=lucid.int64)))
    values, indices = lucid.empty(0), lucid.empty(0, dtype=lucid.int64)
    call((values, indices))  # fresh tensors: written
    assert values.numel() > 0 and indices.dtype is lucid.int64
