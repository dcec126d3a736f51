"""Convolution: forward vs a per-tap NumPy reference, float64 gradchecks, errors, layers."""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import threading

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def _t(shape: tuple[int, ...], grad: bool = True) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=grad)


def ref_conv(x, w, b, stride, pad, dil, groups):
    """Direct definition, one einsum per kernel tap and group (float64)."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    cout, cg = w.shape[:2]
    coutg = cout // groups
    k = w.shape[2:]
    out_size = [(x.shape[2 + a] - dil[a] * (k[a] - 1) - 1) // stride[a] + 1 for a in range(nd)]
    out = np.zeros((x.shape[0], cout, *out_size))
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        ws = w[g * coutg : (g + 1) * coutg]
        for tap in itertools.product(*(range(kk) for kk in k)):
            sl = tuple(
                slice(tap[a] * dil[a], tap[a] * dil[a] + stride[a] * (out_size[a] - 1) + 1,
                      stride[a])
                for a in range(nd)
            )  # fmt: skip
            patch = xs[(slice(None), slice(None), *sl)]
            out[:, g * coutg : (g + 1) * coutg] += np.einsum(
                "nc...,oc->no...", patch, ws[(slice(None), slice(None), *tap)]
            )
    if b is not None:
        out += b.reshape((-1,) + (1,) * nd)
    return out


def ref_conv_transpose(x, w, b, stride, pad, opad, groups, dil):
    """Scatter definition of the transposed convolution (float64)."""
    nd = x.ndim - 2
    cin, coutg = w.shape[:2]
    cing = cin // groups
    k = w.shape[2:]
    full = [(x.shape[2 + a] - 1) * stride[a] + dil[a] * (k[a] - 1) + 1 + opad[a] for a in range(nd)]
    out = np.zeros((x.shape[0], coutg * groups, *full))
    for g in range(groups):
        xs = x[:, g * cing : (g + 1) * cing]
        ws = w[g * cing : (g + 1) * cing]
        for tap in itertools.product(*(range(kk) for kk in k)):
            sl = tuple(
                slice(tap[a] * dil[a], tap[a] * dil[a] + stride[a] * (x.shape[2 + a] - 1) + 1,
                      stride[a])
                for a in range(nd)
            )  # fmt: skip
            out[(slice(None), slice(g * coutg, (g + 1) * coutg), *sl)] += np.einsum(
                "nc...,co->no...", xs, ws[(slice(None), slice(None), *tap)]
            )
    crop = tuple(slice(pad[a], full[a] - pad[a]) for a in range(nd))
    out = out[(slice(None), slice(None), *crop)]
    if b is not None:
        out = out + b.reshape((-1,) + (1,) * nd)
    return out


# (nd, N, C_in, C_out, size, kernel, stride, padding, dilation, groups)
CONV_CASES = [
    (1, 2, 3, 4, 9, 3, 1, 0, 1, 1),
    (1, 2, 4, 4, 10, 3, 2, 1, 2, 2),
    (2, 2, 3, 4, 6, 3, 1, 1, 1, 1),
    (2, 1, 4, 6, 7, 3, 2, 1, 1, 2),
    (2, 2, 2, 4, 7, 2, 1, 0, 2, 1),
    (2, 1, 4, 4, 6, 3, 1, 1, 1, 4),  # depthwise
    (2, 1, 2, 6, 6, 3, 1, 1, 1, 2),  # depthwise with multiplier 3
    (2, 2, 3, 2, 5, 5, 1, 2, 1, 1),
    (3, 1, 2, 3, 4, 2, 1, 1, 1, 1),
    (3, 1, 2, 2, 5, 3, 2, 1, 1, 2),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_forward_matches_reference(case):
    nd, n, cin, cout, size, k, s, p, d, g = case
    x = RNG.standard_normal((n, cin) + (size,) * nd)
    w = RNG.standard_normal((cout, cin // g) + (k,) * nd)
    b = RNG.standard_normal(cout)
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    out = conv(lucid.tensor(x), lucid.tensor(w), lucid.tensor(b), s, p, d, g)
    expected = ref_conv(x, w, b, (s,) * nd, (p,) * nd, (d,) * nd, g)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_gradcheck(case):
    nd, n, cin, cout, size, k, s, p, d, g = case
    size = min(size, 5) if nd == 3 else size
    x = _t((1, cin) + (size,) * nd)
    w = _t((cout, cin // g) + (k,) * nd)
    b = _t((cout,))
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    assert gradcheck(lambda x, w, b: conv(x, w, b, s, p, d, g), (x, w, b))


# (nd, N, C_in, C_out, size, kernel, stride, padding, output_padding, groups, dilation)
TRANSPOSE_CASES = [
    (1, 2, 3, 4, 5, 3, 2, 1, 1, 1, 1),
    (1, 1, 4, 2, 4, 2, 3, 0, 2, 2, 2),
    (2, 2, 3, 4, 4, 3, 1, 1, 0, 1, 1),
    (2, 1, 4, 6, 3, 3, 2, 1, 1, 2, 1),
    (2, 1, 2, 2, 3, 2, 2, 0, 0, 1, 2),
    (3, 1, 2, 2, 3, 2, 2, 1, 1, 1, 1),
]


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_conv_transpose_forward_matches_reference(case):
    nd, n, cin, cout, size, k, s, p, op, g, d = case
    x = RNG.standard_normal((n, cin) + (size,) * nd)
    w = RNG.standard_normal((cin, cout // g) + (k,) * nd)
    b = RNG.standard_normal(cout)
    convt = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    out = convt(lucid.tensor(x), lucid.tensor(w), lucid.tensor(b), s, p, op, g, d)
    expected = ref_conv_transpose(x, w, b, (s,) * nd, (p,) * nd, (op,) * nd, g, (d,) * nd)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_conv_transpose_gradcheck(case):
    nd, n, cin, cout, size, k, s, p, op, g, d = case
    x = _t((1, cin) + (size,) * nd)
    w = _t((cin, cout // g) + (k,) * nd)
    b = _t((cout,))
    convt = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    assert gradcheck(lambda x, w, b: convt(x, w, b, s, p, op, g, d), (x, w, b))


@pytest.mark.parametrize("stride,groups", [(1, 1), (2, 2)])
def test_conv2d_double_backward(stride, groups):
    x = _t((1, 2, 5, 5))
    w = _t((2, 2 // groups, 3, 3))
    b = _t((2,))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, 1, 1, groups), (x, w, b))


def test_conv_transpose2d_double_backward():
    x = _t((1, 2, 3, 3))
    w = _t((2, 2, 3, 3))
    assert gradgradcheck(lambda x, w: F.conv_transpose2d(x, w, None, 2, 1, 1), (x, w))


def test_conv_same_padding_even_kernel_pads_more_on_the_right():
    x = RNG.standard_normal((1, 2, 6, 7))
    w = RNG.standard_normal((3, 2, 2, 4))
    out = F.conv2d(lucid.tensor(x), lucid.tensor(w), padding="same", dilation=(2, 1))
    # totals: dil*(k-1) = 2 and 3 -> (1, 1) rows, (1, 2) cols
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 2)])
    expected = ref_conv(xp, w, None, (1, 1), (0, 0), (2, 1), 1)
    assert out.shape == (1, 3, 6, 7)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_conv_valid_padding_and_unbatched_input():
    x = RNG.standard_normal((2, 6, 6))
    w = RNG.standard_normal((3, 2, 3, 3))
    out = F.conv2d(lucid.tensor(x), lucid.tensor(w), padding="valid")
    assert out.shape == (3, 4, 4)
    np.testing.assert_allclose(
        out.numpy(),
        ref_conv(x[None], w, None, (1, 1), (0, 0), (1, 1), 1)[0],
        rtol=1e-10,
        atol=1e-12,
    )


def test_conv_float32_stays_float32_and_output_is_nchw():
    x = lucid.randn(2, 3, 8, 8)
    w = lucid.randn(4, 3, 3, 3)
    y = F.conv2d(x, w, padding=1)
    assert y.dtype is lucid.float32 and y.shape == (2, 4, 8, 8)


def _threaded(monkeypatch):
    """Force the chunked, two-worker path whatever the machine's BLAS thread setting."""
    from lucid.backends import blas_threads

    monkeypatch.setattr(blas_threads, "budget", lambda: 2)


def test_conv_threaded_chunks_are_adjoint_consistent(monkeypatch):
    """Big enough for several chunks on two workers: <conv(x), g> = <x, dx> = <w, dw>."""
    _threaded(monkeypatch)
    x = lucid.tensor(RNG.standard_normal((16, 32, 20, 20)), requires_grad=True)
    w = lucid.tensor(RNG.standard_normal((32, 32, 3, 3)), requires_grad=True)
    g = RNG.standard_normal((16, 32, 20, 20))
    y = F.conv2d(x, w, padding=1)
    np.testing.assert_allclose(
        y.detach().numpy(),
        ref_conv(x.array, w.array, None, (1, 1), (1, 1), (1, 1), 1),
        rtol=1e-9,
        atol=1e-12,
    )
    (y * lucid.tensor(g)).sum().backward()
    inner = float((y.detach().numpy() * g).sum())
    assert math.isclose(float((x.array * x.grad.numpy()).sum()), inner, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(float((w.array * w.grad.numpy()).sum()), inner, rel_tol=1e-9, abs_tol=1e-12)


def test_depthwise_threaded_chunks_match_reference(monkeypatch):
    _threaded(monkeypatch)
    x = lucid.tensor(RNG.standard_normal((16, 192, 32, 32)), requires_grad=True)
    w = lucid.tensor(RNG.standard_normal((192, 1, 3, 3)), requires_grad=True)
    g = RNG.standard_normal((16, 192, 32, 32))
    y = F.conv2d(x, w, padding=1, groups=192)  # > 50 MFLOP: chunks run on the two workers
    expected = ref_conv(x.array, w.array, None, (1, 1), (1, 1), (1, 1), 192)
    np.testing.assert_allclose(y.detach().numpy(), expected, rtol=1e-9, atol=1e-12)
    (y * lucid.tensor(g)).sum().backward()
    inner = float((y.detach().numpy() * g).sum())
    assert math.isclose(float((x.array * x.grad.numpy()).sum()), inner, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(float((w.array * w.grad.numpy()).sum()), inner, rel_tol=1e-9, abs_tol=1e-12)


def test_conv_restores_blas_threads_after_concurrent_calls(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    _threaded(monkeypatch)

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]  # fmt: skip

    before = blas_threads()
    x, w = lucid.randn(16, 32, 20, 20), lucid.randn(32, 32, 3, 3)
    runs = [threading.Thread(target=F.conv2d, args=(x, w), kwargs={"padding": 1})
            for _ in range(3)]  # fmt: skip
    for t in runs:
        t.start()
    for t in runs:
        t.join()
    F.conv2d(lucid.randn(1, 1, 5, 5), lucid.randn(1, 1, 3, 3))  # small: inline, one thread
    assert blas_threads() == before


def _conv_in_child() -> None:
    x, w = lucid.randn(16, 32, 20, 20), lucid.randn(32, 32, 3, 3)
    F.conv2d(x, w, padding=1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_conv_worker_pool_survives_fork(monkeypatch):
    _threaded(monkeypatch)
    _conv_in_child()  # the parent now has a worker pool
    proc = multiprocessing.get_context("fork").Process(target=_conv_in_child)
    proc.start()
    proc.join(120)
    if proc.exitcode is None:
        proc.kill()
    assert proc.exitcode == 0


def test_conv_zero_batch():
    y = F.conv2d(lucid.zeros(0, 3, 5, 5), lucid.randn(2, 3, 3, 3))
    assert y.shape == (0, 2, 3, 3)


@pytest.mark.parametrize(
    "x_shape,w_shape,kwargs,message",
    [
        ((8, 1, 28, 28), (6, 3, 5, 5), {}, "expected input[8, 1, 28, 28] to have 3 channels"),
        ((8, 28, 28), (6, 1, 5, 5), {}, "to have 1 channels, but got 8"),
        ((4, 5), (6, 4, 3, 3), {}, "Expected 3D (unbatched) or 4D (batched) input to conv2d"),
        ((1, 4, 5, 5), (6, 2, 3, 3), {"groups": 4}, "divisible by 4 at dimension 0"),
        ((1, 1, 3, 3), (1, 1, 5, 5), {}, "Kernel size can't be greater than actual input size"),
        ((1, 1, 5, 5), (1, 1, 3, 3), {"stride": 2, "padding": "same"}, "strided convolutions"),
        ((1, 1, 5, 5), (1, 1, 3, 3), {"padding": -1}, "negative padding"),
        ((1, 1, 5, 5), (1, 1, 3, 3), {"stride": 0}, "non-positive stride"),
    ],
)
def test_conv2d_errors(x_shape, w_shape, kwargs, message):
    with pytest.raises((RuntimeError, ValueError)) as err:
        F.conv2d(lucid.randn(*x_shape), lucid.randn(*w_shape), **kwargs)
    assert message in str(err.value)


def test_conv_dtype_mismatch_names_both():  # torch's CPU words (its slow backend's)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.conv2d(lucid.randn(1, 1, 4, 4, dtype=lucid.float64), lucid.randn(1, 1, 3, 3))


def test_conv_transpose_output_padding_must_be_small():
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(lucid.randn(1, 2, 3, 3), lucid.randn(2, 2, 3, 3), stride=2,
                           output_padding=2)  # fmt: skip


# -- layers ---------------------------------------------------------------------------------------
def test_conv2d_layer_bad_channels_names_layer_and_shapes():
    conv = nn.Conv2d(3, 6, 5)
    with pytest.raises(
        ValueError, match=r"Conv2d expected input with 3 channels, got \(8, 1, 28, 28\)"
    ):
        conv(lucid.randn(8, 1, 28, 28))
    with pytest.raises(ValueError, match=r"Conv2d expected 3D \(unbatched\) or 4D"):
        conv(lucid.randn(28, 28))


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, (2, 1), "same"])
def test_conv2d_padding_modes_match_numpy_pad(mode, padding):
    conv = nn.Conv2d(2, 3, 3, padding=padding, padding_mode=mode).double()
    x = RNG.standard_normal((2, 2, 5, 6))
    ph, pw = (
        (1, 1) if padding == "same" else ((padding,) * 2 if isinstance(padding, int) else padding)
    )
    np_mode = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
    xp = np.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)], mode=np_mode[mode])
    expected = ref_conv(xp, conv.weight.array, conv.bias.array, (1, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(
        conv(lucid.tensor(x)).detach().numpy(), expected, rtol=1e-10, atol=1e-12
    )


def test_conv_layer_default_init_statistics():
    """kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)); same bound for bias."""
    conv = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    convt = nn.ConvTranspose2d(16, 8, 3)  # fan_in from weight dim 1: 8 * 9
    assert np.abs(convt.weight.detach().numpy()).max() <= 1 / math.sqrt(8 * 9)


def test_conv_layers_shapes_repr_and_state_dict():
    assert nn.Conv1d(4, 8, 3, padding=1)(lucid.randn(2, 4, 10)).shape == (2, 8, 10)
    assert nn.Conv3d(2, 4, 3)(lucid.randn(1, 2, 5, 5, 5)).shape == (1, 4, 3, 3, 3)
    conv = nn.Conv2d(4, 8, 3, stride=2, groups=2, bias=False)
    assert repr(conv) == "Conv2d(4, 8, kernel_size=(3, 3), stride=(2, 2), groups=2, bias=False)"
    assert list(conv.state_dict()) == ["weight"]
    assert conv.weight.shape == (8, 2, 3, 3)
    t = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
    assert t.weight.shape == (8, 4, 3, 3)
    assert t(lucid.randn(1, 8, 5, 5)).shape == (1, 4, 10, 10)
    assert t(lucid.randn(1, 8, 5, 5), output_size=(9, 9)).shape == (1, 4, 9, 9)
    with pytest.raises(ValueError, match="valid sizes range from 9 to 10"):
        t(lucid.randn(1, 8, 5, 5), output_size=(12, 12))


def test_conv_layer_constructor_errors():
    with pytest.raises(ValueError, match="in_channels \\(3\\) must be divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 6, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 6, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(3, 6, 3, padding_mode="reflect")


def test_conv_layer_trains_its_parameters():
    conv = nn.Conv2d(2, 3, 3, padding=1)
    conv(lucid.randn(4, 2, 6, 6)).sum().backward()
    assert conv.weight.grad is not None and conv.weight.grad.shape == (3, 2, 3, 3)
    # d(sum)/d(bias) = number of output positions per channel
    np.testing.assert_allclose(conv.bias.grad.numpy(), np.full(3, 4 * 36.0), rtol=1e-6, atol=1e-6)
