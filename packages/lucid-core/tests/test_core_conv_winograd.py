"""The NumPy backend's Winograd 3x3 convolution against the direct method.

The oracle is the direct cross-correlation, summed tap by tap in float64. Tolerances are
relative to the scale of the result (its largest magnitude): F(2x2, 3x3) in float32 is within
1e-5 of it (its transforms are adds and halvings, so its error, about 3e-7 of the scale, is
that of a float32 GEMM; im2col's is the same), and float64 within 1e-10. F(4x4, 3x3) is
checked too, at the 1e-4 its larger coefficients need in float32.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from lucid import kernels
from lucid.backends import blas_threads, get_backend
from lucid.backends import cpu as cpu_settings
from lucid.backends._numpy import _gemm
from lucid.backends._numpy.kernels import ConvStep, CpuConv, conv_kernel, im2col, winograd

# (batch, C_in, C_out, (H, W), padding pairs): odd sizes, padding 0/1/2 and uneven, batch 1,
# channel counts that are multiples of nothing.
CASES = {
    "odd-pad1": (2, 3, 5, (7, 9), ((1, 1), (1, 1))),
    "pad0-batch1": (1, 4, 6, (8, 8), ((0, 0), (0, 0))),
    "pad2": (3, 5, 2, (5, 6), ((2, 2), (2, 2))),
    "uneven-pad": (2, 3, 4, (4, 3), ((0, 1), (1, 0))),
    "tiny": (1, 1, 1, (3, 3), ((0, 0), (0, 0))),
    "wide": (2, 37, 13, (6, 5), ((1, 1), (1, 1))),
}
SCALE_TOL = {  # (tiling, dtype) -> (rtol, atol relative to the result's scale)
    ("F2", np.float32): (1e-4, 1e-5),
    ("F2", np.float64): (1e-10, 1e-10),
    ("F4", np.float32): (1e-4, 1e-4),
    ("F4", np.float64): (1e-10, 1e-10),
}


def _direct(x: np.ndarray, w: np.ndarray, pads: Any) -> np.ndarray:
    """Cross-correlation tap by tap (float64)."""
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    ho, wo = xp.shape[2] - 2, xp.shape[3] - 2
    out = np.zeros((x.shape[0], w.shape[0], ho, wo))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i : i + ho, j : j + wo], w[:, :, i, j])
    return out


def _direct_grads(x: np.ndarray, w: np.ndarray, dy: np.ndarray, pads: Any) -> tuple[Any, Any]:
    """The input and weight gradients of ``_direct`` (float64), tap by tap."""
    xp = np.pad(x, ((0, 0), (0, 0), *pads))
    ho, wo = dy.shape[2:]
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    for i in range(3):
        for j in range(3):
            dxp[:, :, i : i + ho, j : j + wo] += np.einsum("nkhw,kc->nchw", dy, w[:, :, i, j])
            dw[:, :, i, j] = np.einsum("nkhw,nchw->kc", dy, xp[:, :, i : i + ho, j : j + wo])
    (hl, _), (wl, _) = pads
    return dxp[:, :, hl : hl + x.shape[2], wl : wl + x.shape[3]], dw


def _case(name: str) -> tuple[Any, ...]:
    n, c, k, size, pads = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    g = kernels.conv_geometry(size, (3, 3), (1, 1), pads, (1, 1), 1)
    x = rng.standard_normal((n, c, *size))
    w = rng.standard_normal((k, c, 3, 3)) / np.sqrt(9 * c)
    b = rng.standard_normal(k)
    dy = rng.standard_normal((n, k, *g.out_size))
    return g, x, w, b, dy, pads


def _close(got: Any, want: np.ndarray, dtype: type, tiling: str) -> None:
    rtol, atol = SCALE_TOL[tiling, dtype]
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * np.abs(want).max())


@pytest.fixture(params=["inline", "threaded"])
def cpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The NumPy backend; ``threaded`` forces two workers and one-sample chunks."""
    if request.param == "threaded":
        monkeypatch.setattr(blas_threads, "budget", lambda: 2)
        monkeypatch.setattr(winograd, "_CHUNK_BYTES", 1)
        monkeypatch.setattr(winograd, "_CHUNK_TILES", 1)
        monkeypatch.setattr("lucid.backends._numpy._parallel.PARALLEL_FLOPS", 0.0)
    return get_backend("cpu")


@pytest.mark.parametrize("tiling", ["F2", "F4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(CASES))
def test_winograd_matches_the_direct_method(
    cpu: Any, monkeypatch: pytest.MonkeyPatch, name: str, dtype: type, tiling: str
) -> None:
    monkeypatch.setattr(winograd, "tiling", lambda g: getattr(winograd, tiling))
    g, x, w, b, dy, pads = _case(name)
    assert winograd.applies(x, g)
    want_dx, want_dw = _direct_grads(x, w, dy, pads)
    x, w, b, dy = (a.astype(dtype) for a in (x, w, b, dy))
    keep: dict[Any, Any] = {}
    for bias in (None, b):
        want = _direct(x.astype(np.float64), w.astype(np.float64), pads)
        want = want if bias is None else want + b.astype(np.float64)[:, None, None]
        _close(winograd.conv_forward(cpu, x, w, bias, g, keep), want, dtype, tiling)
    _close(winograd.conv_input_grad(cpu, dy, w, g), want_dx, dtype, tiling)
    assert keep, "the forward keeps small transformed inputs"
    for kept in (None, keep):  # recomputed, and the forward's kept transformed inputs
        _close(winograd.conv_weight_grad(cpu, x, dy, g, kept), want_dw, dtype, tiling)


def test_strided_and_broadcast_arrays_give_the_same_results() -> None:
    """``x`` read through a reversed view, ``dy`` a broadcast scalar (``y.sum().backward()``)."""
    cpu = get_backend("cpu")
    g, x, w, _, dy, pads = _case("odd-pad1")
    x = np.ascontiguousarray(x[:, :, ::-1])[:, :, ::-1]
    dy = np.broadcast_to(np.float64(1.0), dy.shape)
    want_dx, want_dw = _direct_grads(x, w, dy, pads)
    got_dx = winograd.conv_input_grad(cpu, dy, w, g)
    np.testing.assert_allclose(got_dx, want_dx, rtol=1e-10, atol=1e-10)
    got_dw = winograd.conv_weight_grad(cpu, x, dy, g, None)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-10, atol=1e-10)
    got_y = winograd.conv_forward(cpu, x, w, None, g, None)
    np.testing.assert_allclose(got_y, _direct(x, w, pads), rtol=1e-10, atol=1e-10)


def test_kept_inputs_do_not_mix_with_im2col_columns() -> None:
    """A forward on one path and a weight gradient on the other recompute what they need."""
    cpu = get_backend("cpu")
    g, x, w, _, dy, pads = _case("odd-pad1")
    _, want_dw = _direct_grads(x, w, dy, pads)
    for first, second in ((winograd, im2col), (im2col, winograd)):
        keep: dict[Any, Any] = {}
        first.conv_forward(cpu, x, w, None, g, keep)
        got = second.conv_weight_grad(cpu, x, dy, g, keep)
        np.testing.assert_allclose(got, want_dw, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "geometry",
    [
        ((8, 8), (3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), 1),  # stride 2
        ((8, 8), (3, 3), (1, 1), ((2, 2), (2, 2)), (2, 2), 1),  # dilation 2
        ((8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2),  # groups
        ((8, 8), (5, 5), (1, 1), ((2, 2), (2, 2)), (1, 1), 1),  # 5x5
        ((8, 8), (3, 3), (1, 1), ((3, 3), (3, 3)), (1, 1), 1),  # padding 3
        ((8,), (3,), (1,), ((1, 1),), (1,), 1),  # 1-D
    ],
)
def test_other_geometries_are_not_winograd(geometry: Any) -> None:
    g = kernels.conv_geometry(*geometry)
    x = np.zeros((2, 4, *geometry[0]), dtype=np.float32)
    assert not winograd.applies(x, g)


def test_only_float32_and_float64_and_nonempty_batches_apply() -> None:
    g = kernels.conv_geometry((8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    assert winograd.applies(np.zeros((2, 4, 8, 8), np.float32), g)
    assert not winograd.applies(np.zeros((2, 4, 8, 8), np.float16), g)
    assert not winograd.applies(np.zeros((0, 4, 8, 8), np.float32), g)


def _resnet_layer(n: int, c: int, size: int) -> tuple[Any, Any, Any]:
    g = kernels.conv_geometry((size, size), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    return np.zeros((n, c, size, size), np.float32), np.zeros((c, c, 3, 3), np.float32), g


def _path(step: ConvStep, x: Any, c_out: int, g: Any) -> str:
    return conv_kernel(step, x, x.shape[1], c_out, g)


def test_it_is_chosen_for_resnet_layers_and_not_for_small_ones() -> None:
    x, w, g = _resnet_layer(128, 64, 32)
    assert _path("forward", x, 64, g) == _path("input_grad", x, 64, g) == "winograd"
    assert _path("weight_grad", x, 64, g) == "winograd"
    x, w, g = _resnet_layer(128, 512, 4)
    assert _path("forward", x, 512, g) == "winograd"
    x, w, g = _resnet_layer(2, 512, 4)  # 8 tiles: the weight transform would dominate
    assert _path("forward", x, 512, g) == "im2col"
    x, w, g = _resnet_layer(128, 3, 32)  # few input channels: im2col's GEMM is fine
    assert _path("forward", x, 64, g) == "im2col"
    x, w, g = _resnet_layer(128, 64, 5)  # 3x3 tiles of 2x2 for 5x5: 31% wasted
    assert _path("forward", x, 64, g) == "im2col"
    x, w, g = _resnet_layer(128, 32, 32)  # the input gradient pays from fewer channels
    assert _path("forward", x, 32, g) == "im2col" and _path("input_grad", x, 32, g) == "winograd"


def test_depthwise_convolutions_take_the_tap_loops_at_every_step() -> None:
    g = kernels.conv_geometry((8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 16)
    x = np.zeros((2, 16, 8, 8), np.float32)
    steps: tuple[ConvStep, ...] = ("forward", "input_grad", "weight_grad")
    assert [_path(step, x, 16, g) for step in steps] == ["depthwise"] * 3
    assert _path("forward", x[:0], 16, g) == "im2col"  # an empty batch
    assert _path("forward", x, 32, g) == "im2col"  # two filters a channel: grouped im2col


def test_the_cpu_kernel_runs_winograd_where_it_pays_and_im2col_when_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu = get_backend("cpu")
    x, w, g = _resnet_layer(64, 64, 4)
    calls: list[str] = []
    monkeypatch.setattr(winograd, "conv_forward", lambda *a: calls.append("winograd"))
    monkeypatch.setattr(im2col, "conv_forward", lambda *a: calls.append("im2col"))
    CpuConv.forward(cpu, x, w, None, g, None)
    with cpu_settings.flags(winograd_enabled=False):  # read at each call
        CpuConv.forward(cpu, x, w, None, g, None)
    CpuConv.forward(cpu, x, w, None, g, None)
    assert calls == ["winograd", "im2col", "winograd"]


@pytest.mark.parametrize("value, enabled", [("im2col", False), ("auto", True)])
def test_lucid_conv_in_the_environment_switches_winograd(value: str, enabled: bool) -> None:
    code = "import lucid; print(lucid.backends.cpu.winograd_enabled)"
    env = {"LUCID_CONV": value, "PATH": "", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(enabled), out.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_products_in_row_blocks_equal_one_batched_gemm(monkeypatch, dtype) -> None:  # type: ignore[no-untyped-def]
    # On the pool, products with small right matrices run in row blocks (a remainder included).
    monkeypatch.setattr(winograd, "_SMALL_ROWS", 7)
    rng = np.random.default_rng(5)
    v = rng.standard_normal((16, 30, 12)).astype(dtype)
    u = rng.standard_normal((16, 12, 9)).astype(dtype)
    calls: list[tuple[int, ...]] = []
    matmul = _gemm.matmul

    def counting(a: Any, b: Any, **kw: Any) -> Any:
        calls.append(a.shape)
        return matmul(a, b, **kw)

    monkeypatch.setattr(_gemm, "matmul", counting)
    inline = winograd._products(v, u)  # not on the pool: one batched GEMM
    assert calls == [(16, 30, 12)]
    on_pool = blas_threads.pool(2).submit(winograd._products, v, u).result()
    assert calls[1:] == [(16, 7, 12)] * 4 + [(16, 2, 12)]
    ref = np.einsum("prc,pck->prk", v.astype(np.float64), u.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got in (inline, on_pool):
        assert got.shape == ref.shape and got.dtype == dtype
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
    big = rng.standard_normal((4, 30, 128)).astype(dtype), rng.standard_normal((4, 128, 128))
    got = blas_threads.pool(2).submit(winograd._products, big[0], big[1].astype(dtype)).result()
    np.testing.assert_allclose(got, big[0] @ big[1].astype(dtype), rtol=tol, atol=tol)
