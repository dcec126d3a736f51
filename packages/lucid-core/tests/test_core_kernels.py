"""Fused-op contracts (lucid.kernels): checked registration, dispatch, and the NumPy backend's
first-use setup (its kernels, and glibc's allocator tuned then, not on ``import lucid``)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import lucid
from lucid import kernels
from lucid.backends import get_backend


class _SpySoftmax:
    calls: list[int] = []

    @staticmethod
    def forward(ctx: Any, x: Any, dim: int) -> Any:
        _SpySoftmax.calls.append(dim)
        ctx.dim = dim
        out = np.exp(x - x.max(axis=dim, keepdims=True))
        out /= out.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return type(ctx).backward(ctx, g)


class _NoBackward:
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x


class _WrongArity:
    @staticmethod
    def forward(ctx: Any, x: Any, dim: int, extra: int) -> Any:
        return x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return g


def test_a_registered_kernel_replaces_the_op_and_keeps_its_backward(
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
    assert _SpySoftmax.calls == [1]
    e = np.exp(a - a.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y.detach().numpy(), s, rtol=1e-12, atol=1e-12)
    want = s * ((np.arange(4) == 0) - s[:, :1])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-12)


def test_registration_refuses_a_kernel_that_breaks_its_contract() -> None:
    backend = get_backend("cpu")
    with pytest.raises(TypeError, match="needs a backward"):
        kernels.ERF.register(backend, _NoBackward)
    with pytest.raises(TypeError, match="must take the 3 positional arguments"):
        kernels.SOFTMAX.register(backend, _WrongArity)
    assert kernels.SOFTMAX not in backend.kernels and kernels.ERF not in backend.kernels


def test_every_kernel_the_numpy_backend_registers_matches_a_known_contract() -> None:
    backend = get_backend("cpu")
    expected = {kernels.CONV_ARRAYS, kernels.BATCH_NORM, kernels.MAX_POOL_ARRAYS, kernels.RELU_GRAD}
    assert set(backend.kernels) == expected
    for contract, impl in backend.kernels.items():
        assert contract in kernels.CONTRACTS
        contract.check(impl)


def test_every_contract_has_a_distinct_name_and_a_protocol_with_methods() -> None:
    names = [c.name for c in kernels.CONTRACTS]
    assert len(set(names)) == len(names)
    for c in kernels.CONTRACTS:
        assert "forward" in vars(c.protocol), c


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
