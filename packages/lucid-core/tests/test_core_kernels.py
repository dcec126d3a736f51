"""Fused-kernel contracts (lucid.kernels): checked registration, array-only kernels, and the
NumPy backend's first-use setup (its kernels, and glibc's allocator tuned then, not on
``import lucid``)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import kernels
from lucid.autograd.function import Function
from lucid.backends import Backend, get_backend


class _SpySoftmax:
    calls: list[tuple[type, type, int]] = []

    @staticmethod
    def forward(backend: Any, x: Any, dim: int) -> Any:
        _SpySoftmax.calls.append((type(backend), type(x), dim))
        out = np.exp(x - x.max(axis=dim, keepdims=True))
        out /= out.sum(axis=dim, keepdims=True)
        return out


class _NoForward:
    @staticmethod
    def backward(backend: Any, x: Any) -> Any:
        return x


class _WrongArity:
    @staticmethod
    def forward(backend: Any, x: Any, dim: int, extra: int) -> Any:
        return x


def test_a_registered_kernel_computes_the_values_and_the_function_keeps_its_backward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = get_backend("cpu")
    monkeypatch.setattr(backend, "kernels", dict(backend.kernels))
    kernels.SOFTMAX.register(backend, _SpySoftmax)
    _SpySoftmax.calls.clear()
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = lucid.tensor(a, requires_grad=True)
    y = lucid.softmax(x, dim=1)
    y[:, 0].sum().backward()
    assert _SpySoftmax.calls == [(type(backend), np.ndarray, 1)]  # arrays, not Tensors
    e = np.exp(a - a.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y.detach().numpy(), s, rtol=1e-12, atol=1e-12)
    want = s * ((np.arange(4) == 0) - s[:, :1])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)
    # The Function's backward is written in lucid ops: differentiable again.
    x2 = lucid.tensor(a, requires_grad=True)
    (g,) = lucid.autograd.grad((lucid.softmax(x2, dim=1) ** 2).sum(), [x2], create_graph=True)
    (gg,) = lucid.autograd.grad(g.sum(), [x2])
    assert gg.shape == (3, 4) and bool(lucid.isfinite(gg).all())


def test_registration_refuses_a_kernel_that_breaks_its_contract() -> None:
    backend = get_backend("cpu")
    before = dict(backend.kernels)
    with pytest.raises(TypeError, match="needs a forward"):
        kernels.ERF.register(backend, _NoForward)
    with pytest.raises(TypeError, match="must take the 3 positional arguments"):
        kernels.SOFTMAX.register(backend, _WrongArity)
    assert backend.kernels == before


# -- every kernel sees arrays and plain values, never a Tensor or a Function context ------------
def _plain(value: Any) -> bool:
    """No Tensor and no autograd node anywhere in ``value`` (tuples, lists, dicts walked)."""
    if isinstance(value, (lucid.Tensor, Function)):
        return False
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    return True


def _spied(impl: Any, seen: list[str]) -> Any:
    """``impl`` with every method checking that it gets and gives arrays and plain values."""

    def wrap(name: str, fn: Any) -> Any:
        def method(*args: Any) -> Any:
            assert isinstance(args[0], Backend), name
            assert all(_plain(a) for a in args[1:]), f"{name} got {args[1:]!r}"
            out = fn(*args)
            assert _plain(out), f"{name} returned {out!r}"
            seen.append(name)
            return out

        return staticmethod(method)

    names = [n for n in dir(impl) if not n.startswith("_") and callable(getattr(impl, n))]
    return type("Spied" + impl.__name__, (), {n: wrap(n, getattr(impl, n)) for n in names})


def test_the_numpy_kernels_receive_and_return_arrays_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = get_backend("cpu")
    monkeypatch.setattr(backend, "kernels", dict(backend.kernels))
    seen: list[str] = []
    for contract, impl in list(backend.kernels.items()):
        contract.register(backend, _spied(impl, seen))
    rng = np.random.default_rng(3)
    # ReLU's gradient (and its double backward, the same op), through autograd.
    x = lucid.tensor(rng.standard_normal((64, 512)), requires_grad=True)
    (g,) = lucid.autograd.grad((lucid.relu(x) ** 2).sum(), [x], create_graph=True)
    (gg,) = lucid.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), 2.0 * (x.detach().numpy() > 0), rtol=0, atol=0)
    assert seen.count("forward") >= 2
    # The array-level kernels, called as lucid.nn calls them.
    cpu = backend.kernels
    a = rng.standard_normal((4, 8, 32, 32))
    g2 = kernels.conv_geometry((32, 32), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    w = rng.standard_normal((8, 8, 3, 3))
    conv = cpu[kernels.CONV_ARRAYS]
    y = conv.forward(backend, a, w, None, g2, {})
    conv.input_grad(backend, y, w, g2)
    conv.weight_grad(backend, a, y, g2, None)
    conv.channel_sum(backend, y)
    pool = kernels.MAX_POOL_ARRAYS.find(backend)
    assert pool is not None and pool is cpu[kernels.MAX_POOL_ARRAYS]
    pg = kernels.pool_geometry((32, 32), (2, 2), (2, 2), (0, 0), (1, 1), False)
    out, idx = pool.forward(backend, a, pg, True)
    pool.scatter(backend, out, idx, a.shape, pg)
    bn = cpu[kernels.BATCH_NORM]
    cl = np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 1, -1)), -1, 1)  # a conv's layout
    done = bn.forward(backend, cl, None, None, 1e-5)
    assert done is not None  # 32K channels-last elements: the blocked kernel takes it
    bn.backward(backend, cl, done[0], done[3], (True, False, False))
    assert {"forward", "input_grad", "weight_grad", "channel_sum", "scatter", "backward"} <= set(
        seen
    )


def test_the_batch_norm_kernel_declines_what_it_does_not_take() -> None:
    bn = get_backend("cpu").kernels[kernels.BATCH_NORM]
    small = np.random.default_rng(4).standard_normal((2, 3, 4))
    assert bn.forward(get_backend("cpu"), small, None, None, 1e-5) is None


def test_every_kernel_the_numpy_backend_registers_matches_a_known_contract() -> None:
    backend = get_backend("cpu")
    expected = {
        kernels.CONV_ARRAYS, kernels.BATCH_NORM, kernels.MAX_POOL_ARRAYS, kernels.RELU_GRAD,
        kernels.ERF, kernels.ERFC, kernels.GELU, kernels.GELU_GRAD, kernels.LSTM, kernels.GRU,
        kernels.RNN,
        kernels.LAYER_NORM, kernels.SOFTMAX, kernels.LOG_SOFTMAX, kernels.SOFTMAX_GRAD,
        kernels.LOG_SOFTMAX_GRAD, kernels.ADAM_STEP, kernels.ONE_HOT_ROWS, kernels.SCALED_ADD,
        kernels.ATTENTION_SHIFT, kernels.ACTIVATION, kernels.ACTIVATION_GRAD, kernels.ATTENTION,
    }  # fmt: skip
    assert set(backend.kernels) == expected
    for contract, impl in backend.kernels.items():
        assert contract in kernels.CONTRACTS
        contract.check(impl)


def test_every_contract_has_a_distinct_name_and_a_protocol_with_methods() -> None:
    names = [c.name for c in kernels.CONTRACTS]
    assert len(set(names)) == len(names)
    for c in kernels.CONTRACTS:
        assert "forward" in vars(c.protocol), c


def test_the_package_keeps_every_name_of_its_modules() -> None:
    from lucid.kernels import contracts, geometry, reference

    for module in (contracts, geometry, reference):
        for name in module.__all__:
            assert getattr(kernels, name) is getattr(module, name), name


def test_pool_geometry_follows_torch_ceil_mode() -> None:
    # torch: a ceil_mode window that would start in the right padding is dropped
    g = kernels.pool_geometry((5,), (2,), (2,), (1,), (1,), True)
    assert g.out_size == (3,) and g.pad_hi == (1,)
    g = kernels.pool_geometry((6,), (3,), (2,), (0,), (1,), True)
    assert g.out_size == (3,) and g.pad_hi == (1,)


_PROBE = (
    "import lucid\n"
    "from lucid.backends._numpy import _alloc\n"
    "before = _alloc.tuned\n"
    "lucid.ones(2)\n"
    "print(before, _alloc.tuned)\n"
)


def _probe(**env: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's")
def test_mallopt_runs_on_first_numpy_backend_use_not_on_import() -> None:
    assert _probe() == "None True"


def test_lucid_mallopt_0_turns_it_off() -> None:
    assert _probe(LUCID_MALLOPT="0") == "None False"
