"""Ops run through the Backend protocol only.

"testdev" is a Backend whose arrays are opaque boxes around numpy arrays and whose ``xp`` is a
proxy that unboxes, calls numpy, boxes and records the call. Any op that called numpy directly
(or relied on numpy-only array methods) would fail on it, so running the whole op table forward
and backward on "testdev" and matching the CPU results proves the ops are backend-neutral.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from core_op_cases import CASES, forward_backward

import lucid
from lucid import dtypes
from lucid.backends import Backend, get_backend, register_backend


class Box:
    """An array numpy does not know: only what MLX arrays also offer (shape, dtype, ndim,
    operators, indexing, astype)."""

    __slots__ = ("a",)

    def __init__(self, a: Any) -> None:
        assert not isinstance(a, Box)
        self.a = np.asarray(a)

    shape = property(lambda self: self.a.shape)
    ndim = property(lambda self: self.a.ndim)
    dtype = property(lambda self: self.a.dtype)
    size = property(lambda self: self.a.size)

    def astype(self, dtype: Any, copy: bool = True) -> Box:
        return Box(self.a.astype(dtype))

    def __getitem__(self, index: Any) -> Box:
        return Box(self.a[_unbox(index)])

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("numpy was called directly on a testdev array")

    def __repr__(self) -> str:
        return f"Box({self.a!r})"


def _binary(name: str) -> Any:
    def op(self: Box, other: Any) -> Box:
        CALLS.append(name)
        return Box(getattr(self.a, name)(_unbox(other)))

    return op


for _name in ("add", "sub", "mul", "truediv", "pow", "neg", "lt", "le", "gt", "ge", "eq", "ne",
              "and", "or", "xor", "radd", "rsub", "rmul", "rtruediv", "rpow"):  # fmt: skip
    setattr(Box, f"__{_name}__", _binary(f"__{_name}__") if _name != "neg" else
            (lambda self: Box(-self.a)))  # fmt: skip

CALLS: list[str] = []


def _unbox(x: Any) -> Any:
    if isinstance(x, Box):
        return x.a
    if isinstance(x, (list, tuple)):
        return type(x)(_unbox(v) for v in x)
    return x


def _box(x: Any) -> Any:
    if isinstance(x, np.ndarray) or isinstance(x, np.generic):
        return Box(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_box(v) for v in x)
    return x


class RecordingNamespace:
    """``xp`` for testdev: every function call is recorded and goes through box/unbox."""

    def __getattr__(self, name: str) -> Any:
        target = getattr(np, name)
        if not callable(target) or isinstance(target, type):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            CALLS.append(name)
            kwargs = {k: _unbox(v) for k, v in kwargs.items()}
            return _box(target(*_unbox(args), **kwargs))

        return call


_NATIVE = {d: np.dtype(d.name) for d in dtypes.ALL_DTYPES if d is not dtypes.bfloat16}
_FROM = {v: k for k, v in _NATIVE.items()}


class RecordingBackend(Backend):
    name = "testdev"
    views_share_memory = False  # like MLX: setitem and views make new arrays

    def __init__(self, device: str) -> None:
        self.device = "testdev"
        self.xp = RecordingNamespace()
        self.kernels = {}

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        data = _unbox(data)
        return Box(np.asarray(data) if dtype is None else np.asarray(data, _NATIVE[dtype]))

    def to_numpy(self, arr: Any) -> Any:
        return arr.a.copy()

    def native_dtype(self, dtype: Any) -> Any:
        return _NATIVE[dtype]

    def dtype_of(self, arr: Any) -> Any:
        return _FROM[np.dtype(arr.dtype)]

    def dtype_from_native(self, native: Any) -> Any:
        return _FROM[np.dtype(native)]

    def copy(self, arr: Any) -> Any:
        return Box(arr.a.copy())

    def astype(self, arr: Any, dtype: Any) -> Any:
        return Box(arr.a.astype(_NATIVE[dtype]))

    def index_add(self, arr: Any, index: Any, values: Any) -> Any:
        out = arr.a.copy()
        np.add.at(out, _unbox(index), _unbox(values))
        return Box(out)

    def setitem(self, arr: Any, index: Any, values: Any) -> Any:
        out = arr.a.copy()
        out[_unbox(index)] = _unbox(values)
        return Box(out)

    def scatter(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return Box(get_backend("cpu").scatter(arr.a, dim, _unbox(index), _unbox(values)))

    def scatter_add(self, arr: Any, dim: int, index: Any, values: Any) -> Any:
        return Box(get_backend("cpu").scatter_add(arr.a, dim, _unbox(index), _unbox(values)))

    def scatter_reduce(self, arr: Any, dim: int, index: Any, values: Any, reduce: str) -> Any:
        cpu = get_backend("cpu")
        return Box(cpu.scatter_reduce(arr.a, dim, _unbox(index), _unbox(values), reduce))


register_backend("testdev", RecordingBackend)


class OnDevice:
    """``lucid`` with ``tensor`` creating on one device (so the table's index tensors follow)."""

    def __init__(self, device: str) -> None:
        self._device = device

    def __getattr__(self, name: str) -> Any:
        return getattr(lucid, name)

    def tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> lucid.Tensor:
        return lucid.tensor(data, dtype=dtype, device=self._device, requires_grad=requires_grad)


def _forward_backward(device: str, case: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    outs, xs, grads = forward_backward(OnDevice(device), case)
    for t in outs + [x.grad for x in xs if x.grad is not None]:
        assert t.device == device
    return [o.detach().numpy() for o in outs], grads


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_op_runs_on_a_foreign_backend(case: Any) -> None:
    outs, grads = _forward_backward("testdev", case)
    ref_outs, ref_grads = _forward_backward("cpu", case)
    for out, ref in zip(outs, ref_outs, strict=True):
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_calls_go_through_the_namespace() -> None:
    CALLS.clear()
    x = lucid.tensor([1.0, 2.0], device="testdev", requires_grad=True)
    y = (x * 3).exp().sum()
    y.backward()
    assert isinstance(y.array, Box) and isinstance(x.grad.array, Box)
    assert {"multiply", "exp", "sum"} <= set(CALLS)
    np.testing.assert_allclose(
        x.grad.backend.to_numpy(x.grad.array), 3 * np.exp([3.0, 6.0]), rtol=1e-7, atol=1e-7
    )


def test_backend_is_found_by_name_and_repr_shows_device() -> None:
    t = lucid.ones(2, device="testdev")
    assert isinstance(t.backend, RecordingBackend) and t.device == "testdev"
    assert repr(t) == "tensor([1., 1.], device='testdev')"
    assert "testdev" in lucid.backends.available_backends()


def test_mixing_devices_is_a_clear_error() -> None:
    a = lucid.ones(2, device="testdev")
    with pytest.raises(RuntimeError, match="same device"):
        a + lucid.ones(2)


def test_moving_between_devices_keeps_gradient() -> None:
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("testdev") * 2
    z = y.to("cpu").sum()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0], rtol=1e-7, atol=1e-7)
