"""PyTorch parity at op edges: the exception TYPE of bad calls, 0-d tensors with a dim, pow at
a zero base, copysign's second input, shifts and view(dtype) bit patterns."""

from __future__ import annotations

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
