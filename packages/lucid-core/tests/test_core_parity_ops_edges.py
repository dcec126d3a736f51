"""PyTorch parity at op edges: the exception TYPE of bad calls, 0-d tensors with a dim, pow at
a zero base, copysign's second input, shifts and view(dtype) bit patterns, sum_to_size's and
index_put's dtypes, arange's integer steps and ``out=``, and torch's own OpInfo samples of the
ops its gauge flagged (logcumsumexp's gradient, matrix_exp's float32 values)."""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

import numpy as np
import pytest
from test_core_ops_edges import BAD_CALLS, SCALAR_DIM_OPS

import lucid

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

MORE_BAD_CALLS: dict[str, Any] = {
    "matmul_shapes": lambda L: L.ones(2, 3) @ L.ones(4, 5),
    "cat_shapes": lambda L: L.cat([L.ones(2, 3), L.ones(4, 5)]),
    "cat_empty": lambda L: L.cat([]),
    "stack_shapes": lambda L: L.stack([L.ones(2, 3), L.ones(4, 5)]),
    "reshape_numel": lambda L: L.ones(2, 3).reshape(4, 2),
    "view_numel": lambda L: L.ones(2, 3).view(5),
    "expand_size": lambda L: L.ones(2, 3).expand(4, 4),
    "gather_ndim": lambda L: L.ones(2, 3).gather(1, L.tensor([0])),
    "index_select_range": lambda L: L.ones(2, 3).index_select(0, L.tensor([5])),
    "dim_range": lambda L: L.ones(2, 3).sum(5),
    "transpose_dim": lambda L: L.ones(2, 3).transpose(0, 4),
    "broadcast": lambda L: L.ones(2, 3) + L.ones(4, 5),
    "scatter_reduce_name": lambda L: L.ones(3).scatter_reduce(0, L.tensor([0]), L.ones(1), "x"),
    "scatter_reduce_arg": lambda L: L.ones(3).scatter(0, L.tensor([0]), L.ones(1), reduce="x"),
    "unfold_size": lambda L: L.arange(5.0).unfold(0, 6, 1),
    "view_dtype_0d": lambda L: L.tensor(1.0).view(L.int16),
    "view_dtype_size": lambda L: L.ones(3, dtype=L.int16).view(L.int32),
    "shift_float": lambda L: L.ones(2) << 1,
}


def _error_type(call: Any, L: Any) -> type:
    try:
        call(L)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return type(None)


@pytest.mark.parametrize("name", sorted({**BAD_CALLS, **MORE_BAD_CALLS}))
def test_bad_calls_raise_torchs_exception_type(name: str) -> None:
    call = {**BAD_CALLS, **MORE_BAD_CALLS}[name]
    assert _error_type(call, lucid) is _error_type(call, torch)


@pytest.mark.parametrize("name", SCALAR_DIM_OPS + ["cummax", "cummin"])
def test_0d_tensor_with_a_dim_matches_torch(name: str) -> None:
    for L in (lucid, torch):
        out = getattr(L, name)(L.tensor(2.0, dtype=L.float64), -1)
        out = out[0] if isinstance(out, tuple) else out
        assert tuple(out.shape) == ()
    mine = getattr(lucid, name)(lucid.tensor(2.0, dtype=lucid.float64), 0)
    theirs = getattr(torch, name)(torch.tensor(2.0, dtype=torch.float64), 0)
    for m, t in zip(mine if isinstance(mine, tuple) else [mine],
                    theirs if isinstance(theirs, tuple) else [theirs]):  # fmt: skip
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def _pow_grads(L: Any) -> list[np.ndarray]:
    base = L.tensor([0.0, 0.0, 0.0, 0.0, 2.0, 0.0], dtype=L.float64, requires_grad=True)
    exp = L.tensor([-1.0, 0.0, 0.5, 2.0, -1.0, -2.5], dtype=L.float64, requires_grad=True)
    (base**exp * L.tensor([1.0, 2.0, -1.0, 1.0, 3.0, -2.0], dtype=L.float64)).sum().backward()
    rpow = L.tensor([-1.0, 0.0, 0.5, 2.0], dtype=L.float64, requires_grad=True)
    (0.0**rpow).sum().backward()
    return [base.grad.numpy(), exp.grad.numpy(), rpow.grad.numpy()]


def test_pow_gradients_at_a_zero_base_match_torch() -> None:
    for mine, theirs in zip(_pow_grads(lucid), _pow_grads(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_copysign_gradients_match_torch() -> None:
    grads = []
    for L in (lucid, torch):
        a = L.tensor([1.0, -2.0, 0.0], dtype=L.float64, requires_grad=True)
        b = L.tensor([-1.0, 3.0, -0.0], dtype=L.float64, requires_grad=True)
        L.copysign(a, b).sum().backward()
        grads.append([a.grad.numpy(), b.grad.numpy()])
    for mine, theirs in zip(*grads):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_shifts_match_torch(dtype: str) -> None:
    a = np.array([1, 3, 100, 7, 0, 5])
    b = np.array([0, 1, 7, 8, 9, 70])
    if dtype != "uint8":
        a, b = np.append(a, [-8, -1]), np.append(b, [2, -1])
    outs = []
    for L in (lucid, torch):
        x, y = L.tensor(a, dtype=getattr(L, dtype)), L.tensor(b, dtype=getattr(L, dtype))
        outs.append([(x << y).numpy(), (x >> y).numpy(), (x << 3).numpy(), (x >> 2).numpy()])
    for mine, theirs in zip(*outs):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize(("src", "dst"), [("float32", "int32"), ("float32", "int16"),
                                          ("int16", "int64"), ("float64", "uint8")])  # fmt: skip
def test_view_dtype_matches_torch(src: str, dst: str) -> None:
    data = np.arange(16).reshape(2, 8) * 1.5
    mine = lucid.tensor(data, dtype=getattr(lucid, src)).view(getattr(lucid, dst))
    theirs = torch.tensor(data, dtype=getattr(torch, src)).view(getattr(torch, dst))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_cummax_nan_and_ties_match_torch() -> None:
    data = [1.0, float("nan"), 3.0, float("nan"), 0.0, 2.0, 2.0]
    for name in ("cummax", "cummin"):
        mine = getattr(lucid, name)(lucid.tensor(data), 0)
        theirs = getattr(torch, name)(torch.tensor(data), 0)
        np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())
        ties = [2.0, 1.0, 2.0, 1.0, 1.0, 3.0]
        mine = getattr(lucid, name)(lucid.tensor(ties), 0)
        theirs = getattr(torch, name)(torch.tensor(ties), 0)
        np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "float32"])
@pytest.mark.parametrize("size", [(), (1, 3), (3,), (2, 3)])
def test_sum_to_size_matches_torch(dtype: str, size: tuple[int, ...]) -> None:
    data = np.array([[1, 0, 1], [1, 1, 0]])
    for x_shape in ((2, 3), ()):
        if x_shape == () and size != ():
            continue
        d = data if x_shape else data[0, 0]
        mine = lucid.tensor(d, dtype=getattr(lucid, dtype)).sum_to_size(size)
        theirs = torch.tensor(d, dtype=getattr(torch, dtype)).sum_to_size(size)
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
def test_index_put_accumulate_matches_torch(dtype: str) -> None:
    rng = np.random.default_rng(11)
    base = rng.integers(0, 2, (5, 5))
    values = rng.integers(0, 120, (4, 5)) % (2 if dtype == "bool" else 120)
    index = np.array([0, 3, 0, 0])
    outs = []
    for L in (lucid, torch):
        dt = getattr(L, dtype)
        x, v = L.tensor(base, dtype=dt), L.tensor(values, dtype=dt)
        outs.append(L.index_put(x, (L.tensor(index),), v, accumulate=True).numpy())
    assert outs[0].dtype == outs[1].dtype
    np.testing.assert_array_equal(outs[0], outs[1])


ARANGE_CASES = [
    ((0, 3, 0), {}), ((0.0, 3.0, 0.4), {"dtype": "int64"}), ((0.5, 0.2, 0.1), {"dtype": "int32"}),
    ((0.5, 0.2, -0.1), {"dtype": "int64"}), ((0.5, 0.2, -0.1), {"dtype": "int32"}),
    ((0.5, -2.5, -1.5), {"dtype": "int32"}), ((-0.5, 2.5, 1.5), {"dtype": "int64"}),
    ((0, float("nan"), 1), {}), ((0, 5, float("nan")), {}), ((0, 300, 100), {"dtype": "uint8"}),
    ((0, 300, 100), {"dtype": "int8"}), ((0.9, 0.95, 0.01), {"dtype": "int32"}),
    ((-3, 3, 0.7), {"dtype": "int32"}), ((0, 5, 1.5), {"dtype": "int16"}), ((0, 3, True), {}),
    ((3,), {"dtype": "bool"}), ((1549556900, 1549556828, 1989724), {}),
    ((0, 64, 0.5), {"out": ((0,), "int64")}), ((0, 64, 0.5), {"out": ((0,), "int32")}),
    ((5,), {"out": ((5, 1), "float32")}), ((0, 5, 0.5), {"out": ((0,), "float32")}),
    ((0, 5, 0.5), {"out": ((4,), "float32")}), ((0, 5), {"out": ((0,), "float64")}),
    ((0, 5), {"out": ((0,), "float64"), "dtype": "float32"}), ((0.0, 1.0, 0.1), {}),
]  # fmt: skip


@pytest.mark.parametrize(("args", "kwargs"), ARANGE_CASES)
def test_arange_matches_torch(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Values, dtype, shape, and the exception's class and message (int64 counts the
    truncated range, the other integer dtypes the unrounded one; ``out=`` sets the dtype)."""

    def run(L: Any) -> tuple[Any, ...]:
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(L, kw["dtype"])
        if "out" in kw:
            kw["out"] = L.zeros(*kw["out"][0], dtype=getattr(L, kw["out"][1]))
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = L.arange(*args, **kw)
        except Exception as exc:  # noqa: BLE001 - the class and message are what is compared
            return type(exc).__name__, str(exc)
        warned = [str(w.message).split(" (Triggered")[0] for w in caught]
        return str(r.dtype).split(".")[-1], tuple(r.shape), r.tolist(), warned

    assert run(lucid) == run(torch)


if "expecttest" not in sys.modules:  # common_methods_invocations imports it; only its TestCase
    try:
        import expecttest  # noqa: F401
    except ImportError:
        _stub = types.ModuleType("expecttest")
        _stub.TestCase = type("TestCase", (), {})  # type: ignore[attr-defined]
        sys.modules["expecttest"] = _stub


def _to_lucid(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        out = lucid.tensor(obj.detach().numpy().copy())
        return out.requires_grad_(True) if obj.requires_grad else out
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_lucid(o) for o in obj)
    return obj


@pytest.mark.parametrize(
    ("name", "dtype", "call"),
    [
        ("logcumsumexp", "float32", lambda L, x, *a, **k: L.logcumsumexp(x, *a, **k)),
        ("matrix_exp", "float32", lambda L, x, *a, **k: L.linalg.matrix_exp(x)),
        ("sum_to_size", "bool", lambda L, x, *a, **k: x.sum_to_size(*a, **k)),
        ("index_put", "bool", lambda L, x, *a, **k: L.index_put(x, *a, **k)),
    ],
)
def test_torch_opinfo_samples_match(name: str, dtype: str, call: Any) -> None:
    """The first samples of torch's own OpInfo entry (as the gauge draws them): the same
    dtype, values and input gradient, at the gauge's tolerance. logcumsumexp's gradient
    cancels two large parts, so it needs torch's double accumulation of the forward scan;
    matrix_exp's float32 values carry torch's Taylor truncation and rounding."""
    methods = pytest.importorskip("torch.testing._internal.common_methods_invocations")
    op = next(o for o in methods.op_db if o.name == name and not o.variant_test_name)
    tdtype = getattr(torch, dtype)
    torch.manual_seed(0)
    samples = list(op.sample_inputs("cpu", tdtype, requires_grad=tdtype.is_floating_point))
    rng = np.random.default_rng(0)
    for sample in samples[:3]:
        args, kwargs = sample.args, sample.kwargs
        want = call(torch, sample.input, *args, **kwargs)
        x = _to_lucid(sample.input)
        got = call(lucid, x, *_to_lucid(args), **kwargs)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_allclose(
            got.detach().numpy(), want.detach().numpy(), rtol=1e-3, atol=1e-4
        )
        if want.requires_grad and want.numel():
            cot = rng.standard_normal(tuple(want.shape)).astype(np.float32)
            (tg,) = torch.autograd.grad(want, sample.input, torch.tensor(cot))
            (lg,) = lucid.autograd.grad(got, x, lucid.tensor(cot))
            np.testing.assert_allclose(lg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-5)
