"""lucid.nn's Functions and the array-level fused-kernel contracts (``lucid.kernels``).

A kernel maps arrays to arrays; the Function owns the graph: it keeps the residuals a whole-op
kernel returns, runs its reference where none is registered or the kernel declines (None), and
wraps the kernel's gradients. Shown here on "cpu" with kernels written in the test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import kernels
from lucid.autograd import DoubleBackwardError
from lucid.backends import get_backend
from lucid.nn.functional._im2col import ReferenceConv

RNG = np.random.default_rng(0)


@pytest.fixture
def cpu(monkeypatch: pytest.MonkeyPatch) -> Any:
    backend = get_backend("cpu")
    monkeypatch.setattr(backend, "kernels", dict(backend.kernels))
    return backend


def _leaf(*shape: int) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), requires_grad=True)


class _WholeConv:
    """``kernels.CONV`` from the reference pieces: forward keeps (x, w, geometry)."""

    calls: list[str] = []

    @staticmethod
    def forward(backend: Any, x: Any, w: Any, bias: Any, stride: Any, padding: Any,
                dilation: Any, groups: int) -> tuple[Any, Any]:  # fmt: skip
        assert type(x) is np.ndarray and type(w) is np.ndarray
        g = kernels.conv_geometry(x.shape[2:], w.shape[2:], stride, padding, dilation, groups)
        _WholeConv.calls.append("forward")
        return ReferenceConv.forward(backend, x, w, bias, g, None), (x, w, g)

    @staticmethod
    def backward(backend: Any, res: Any, g: Any, needs: tuple[bool, ...]) -> tuple[Any, ...]:
        assert type(g) is np.ndarray and needs[:3] == (True, True, True)
        x, w, geom = res
        _WholeConv.calls.append("backward")
        return (
            ReferenceConv.input_grad(backend, g, w, geom),
            ReferenceConv.weight_grad(backend, x, g, geom, None),
            ReferenceConv.channel_sum(backend, g),
        )


def test_a_whole_op_conv_kernel_gets_arrays_and_its_residuals_back(cpu: Any) -> None:
    x, w, b = _leaf(2, 3, 9, 9), _leaf(4, 3, 3, 3), _leaf(4)
    y0 = F.conv2d(x, w, b, stride=2, padding=1)
    want = lucid.autograd.grad((y0 * y0).sum(), [x, w, b])
    kernels.CONV.register(cpu, _WholeConv)
    _WholeConv.calls.clear()
    y = F.conv2d(x, w, b, stride=2, padding=1)
    got = lucid.autograd.grad((y * y).sum(), [x, w, b])
    assert _WholeConv.calls == ["forward", "backward"]
    np.testing.assert_allclose(y.detach().numpy(), y0.detach().numpy(), rtol=1e-12, atol=1e-12)
    for a, e in zip(got, want):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-11, atol=1e-12)
    y = F.conv2d(x, w, b, stride=2, padding=1)
    with pytest.raises(DoubleBackwardError):  # a whole-op kernel has no double backward
        lucid.autograd.grad((y * y).sum(), [x], create_graph=True)


class _Declines:
    calls = 0

    @staticmethod
    def forward(backend: Any, *args: Any) -> None:
        _Declines.calls += 1
        return None

    @staticmethod
    def backward(backend: Any, *args: Any) -> Any:
        raise AssertionError("a kernel that declined is never asked for gradients")


def test_a_kernel_that_declines_leaves_the_reference_bit_for_bit(cpu: Any) -> None:
    x, w, b = _leaf(4, 7, 16), _leaf(16), _leaf(16)
    cpu.kernels.pop(kernels.LAYER_NORM, None)  # the reference: the Function's own code
    ref = F.layer_norm(x, (16,), w, b)
    ref_grads = lucid.autograd.grad(ref.sum(), [x, w, b])
    kernels.LAYER_NORM.register(cpu, _Declines)
    kernels.MAX_POOL.register(cpu, _Declines)
    _Declines.calls = 0
    y = F.layer_norm(x, (16,), w, b)
    grads = lucid.autograd.grad(y.sum(), [x, w, b])
    assert np.array_equal(y.detach().numpy(), ref.detach().numpy())
    for a, e in zip(grads, ref_grads):
        assert np.array_equal(a.numpy(), e.numpy())
    p = _leaf(2, 3, 8, 8)
    pooled = F.max_pool2d(p, 2)
    (gp,) = lucid.autograd.grad(pooled.sum(), [p])
    assert _Declines.calls == 2 and gp.shape == (2, 3, 8, 8)


def test_the_batch_norm_kernel_is_handed_arrays_and_x_is_kept_by_the_function(cpu: Any) -> None:
    numpy_bn = cpu.kernels[kernels.BATCH_NORM]
    seen: list[type] = []

    class Spy:
        @staticmethod
        def forward(backend: Any, x: Any, weight: Any, bias: Any, eps: float) -> Any:
            seen.append(type(x))
            return numpy_bn.forward(backend, x, weight, bias, eps)

        @staticmethod
        def backward(backend: Any, x: Any, g: Any, stats: Any, needs: Any) -> Any:
            seen.extend([type(x), type(g)])
            return numpy_bn.backward(backend, x, g, stats, needs)

    x, w, b = _leaf(512, 128), _leaf(128), _leaf(128)  # (N, C): the blocked kernel takes it
    ref = F.batch_norm(x, None, None, w, b, training=True)
    ref_grads = lucid.autograd.grad((ref * ref).sum(), [x, w, b])
    kernels.BATCH_NORM.register(cpu, Spy)
    y = F.batch_norm(x, None, None, w, b, training=True)
    grads = lucid.autograd.grad((y * y).sum(), [x, w, b])
    assert seen == [np.ndarray] * 3
    assert np.array_equal(y.detach().numpy(), ref.detach().numpy())
    for a, e in zip(grads, ref_grads):
        assert np.array_equal(a.numpy(), e.numpy())
    # x is saved through the Function: changing it in place before backward is caught.
    x2 = _leaf(512, 128)
    h = x2 * 1.0
    y = F.batch_norm(h, None, None, None, None, training=True)
    with lucid.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
