"""The NumPy backend's ResNet-step splits give the bits of the unsplit code.

Winograd's weight transforms in column blocks on every core (``SPLIT_WEIGHT_TRANSFORMS``) and
im2col's single-chunk convolutions as one chunk per worker (``SPLIT_SINGLE_CHUNK``) are
reorganisations of the same products: the results must equal the one-thread code bit for bit
(``np.array_equal``), and the one-thread code must match a float64 oracle.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from lucid import kernels
from lucid.backends import get_backend
from lucid.backends._numpy import _parallel
from lucid.backends._numpy.kernels import batchnorm, im2col, winograd


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two workers even on a one-core machine (the split paths need a second worker)."""
    monkeypatch.setattr(_parallel, "_CPUS", 2)
    saved = _parallel.blas_threads._requested
    _parallel.set_num_threads(2)
    yield
    _parallel.blas_threads.set_budget(saved if saved is not None else 1)
    _parallel.blas_threads._requested = saved


def _transforms(f: Any, w: np.ndarray, du: np.ndarray) -> list[np.ndarray]:
    return [
        winograd.weight_transform(f, w),
        winograd.weight_transform(f, w, flipped=True),
        winograd._weight_from_transformed(f, du),
    ]


@pytest.mark.parametrize("tiling", ["F2", "F4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_weight_transforms_same_bits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch, tiling: str, dtype: Any
) -> None:
    f = winograd.F2 if tiling == "F2" else winograd.F4
    rng = np.random.default_rng(0)
    k, c = 160, 112  # t*t*C*K past _SPLIT_TRANSFORM_ELEMENTS for both tilings
    assert f.t * f.t * k * c >= winograd._SPLIT_TRANSFORM_ELEMENTS
    w = rng.standard_normal((k, c, 3, 3)).astype(dtype)
    du = rng.standard_normal((f.t * f.t, k, c)).astype(dtype)
    monkeypatch.setattr(winograd, "SPLIT_WEIGHT_TRANSFORMS", False)
    one = _transforms(f, w, du)
    monkeypatch.setattr(winograd, "SPLIT_WEIGHT_TRANSFORMS", True)
    assert winograd._transform_blocks(c, f.t * f.t * k * c) is not None  # it does split
    split = _transforms(f, w, du)
    for a, b in zip(one, split):
        assert a.shape == b.shape and a.dtype == b.dtype and b.flags.c_contiguous
        assert np.array_equal(a, b)
    # The oracle: G g G^T per filter in float64.
    g = np.array(f.g, dtype=np.float64)
    ref = np.einsum("ai,kcij,bj->abck", g, w.astype(np.float64), g)
    ref = ref.reshape(f.t * f.t, c, k)
    np.testing.assert_allclose(one[0], ref, rtol=1e-5, atol=1e-5)
    back = np.einsum("ai,abkc,bj->kcij", g, du.astype(np.float64).reshape(f.t, f.t, k, c), g)
    np.testing.assert_allclose(split[2], back, rtol=1e-4, atol=1e-4)


def _conv1x1_stride2(n: int, c: int, k: int, size: int) -> Any:
    g = kernels.conv_geometry((size, size), (1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c, size, size)).astype(np.float32)
    w = rng.standard_normal((k, c, 1, 1)).astype(np.float32) / np.sqrt(c)
    dy = rng.standard_normal((n, k, *g.out_size)).astype(np.float32)
    return g, x, w, dy


def _im2col_all(x: np.ndarray, w: np.ndarray, dy: np.ndarray, g: Any) -> list[np.ndarray]:
    backend = get_backend("cpu")
    keep: dict[Any, Any] = {}
    y = im2col.conv_forward(backend, x, w, None, g, keep)
    dx = im2col.conv_input_grad(backend, dy, w, g)
    dw = im2col.conv_weight_grad(backend, x, dy, g, keep)
    dw_fresh = im2col.conv_weight_grad(backend, x, dy, g, None)
    return [np.asarray(a) for a in (y, dx, dw, dw_fresh)]


def test_single_chunk_conv_split_same_bits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    g, x, w, dy = _conv1x1_stride2(16, 128, 256, 16)  # one chunk, 67 MFLOP
    n = x.shape[0]
    sample = int(np.prod(g.out_size)) * x.shape[1] * g.taps * x.itemsize
    assert len(im2col.chunks(n, sample)) == 1
    assert len(im2col._spread(im2col.chunks(n, sample), n, 2.0 * n * 64 * 128 * 256)) == 2
    monkeypatch.setattr(im2col, "SPLIT_SINGLE_CHUNK", False)
    one = _im2col_all(x, w, dy, g)
    monkeypatch.setattr(im2col, "SPLIT_SINGLE_CHUNK", True)
    split = _im2col_all(x, w, dy, g)
    for a, b in zip(one, split):
        assert a.shape == b.shape and np.array_equal(a, b)
    # The oracle (float64): a 1x1 stride-2 convolution is a product over the channels.
    xs = x[:, :, ::2, ::2].astype(np.float64)
    w2 = w[:, :, 0, 0].astype(np.float64)
    np.testing.assert_allclose(one[0], np.einsum("nchw,kc->nkhw", xs, w2), rtol=1e-4, atol=1e-4)
    dx = np.zeros(x.shape)
    dx[:, :, ::2, ::2] = np.einsum("nkhw,kc->nchw", dy.astype(np.float64), w2)
    np.testing.assert_allclose(one[1], dx, rtol=1e-4, atol=1e-4)
    dw = np.einsum("nkhw,nchw->kc", dy.astype(np.float64), xs)[:, :, None, None]
    np.testing.assert_allclose(one[2], dw, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("on_caller", [True, False])
def test_run_chunks_with_the_caller_keeps_order_and_errors(
    two_threads: None, monkeypatch: pytest.MonkeyPatch, on_caller: bool
) -> None:
    monkeypatch.setattr(_parallel, "CHUNKS_ON_CALLER", on_caller)
    seen: list[tuple[str, bool]] = []

    def work(i: int) -> int:
        seen.append((threading.current_thread().name, _parallel.in_worker()))
        return i * i

    items = list(range(9))
    assert _parallel.run_chunks(work, items, 2 * _parallel.PARALLEL_FLOPS) == [i * i for i in items]
    assert all(inside for _, inside in seen)  # every chunk runs as a worker (no nesting)
    assert not _parallel.in_worker()  # the caller's flag is back
    callers = {name for name, _ in seen if not name.startswith("lucid-conv")}
    assert callers <= {threading.current_thread().name}

    def fails(i: int) -> int:
        if i == 4:
            raise ValueError("chunk 4")
        return i

    with pytest.raises(ValueError, match="chunk 4"):
        _parallel.run_chunks(fails, items, 2 * _parallel.PARALLEL_FLOPS)
    assert not _parallel.in_worker()


def test_weight_gradient_shares_summed_in_blocks_same_bits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(2)
    parts = [rng.standard_normal((36, 128, 96)).astype(np.float32) for _ in range(3)]
    want = (parts[0] + parts[1]) + parts[2]
    monkeypatch.setattr(winograd, "SPLIT_WEIGHT_TRANSFORMS", False)
    one = winograd._sum_shares([p.copy() for p in parts])
    monkeypatch.setattr(winograd, "SPLIT_WEIGHT_TRANSFORMS", True)
    assert winograd._transform_blocks(36 * 128, parts[0].size) is not None
    split = winograd._sum_shares([p.copy() for p in parts])
    assert np.array_equal(one, want) and np.array_equal(split, want)
    np.testing.assert_allclose(
        split, sum(p.astype(np.float64) for p in parts), rtol=1e-5, atol=1e-5
    )


def test_batchnorm_elementwise_passes_in_big_blocks_same_bits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(4)
    shape = (16, 64, 16, 16)  # channels-last, 256K elements: several blocks either way
    x = rng.standard_normal((shape[0], *shape[2:], shape[1])).astype(np.float32)
    x = x.transpose(0, 3, 1, 2)
    g = rng.standard_normal(x.shape).astype(np.float32)
    g = np.ascontiguousarray(g.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    w = rng.standard_normal(shape[1]).astype(np.float32)
    b = rng.standard_normal(shape[1]).astype(np.float32)
    monkeypatch.setattr(batchnorm, "_BLOCK_ELEMENTS", 1 << 14)
    monkeypatch.setattr(batchnorm, "_ELEMENTWISE_BLOCK", 1 << 16)
    got = {}
    for big in (False, True):
        monkeypatch.setattr(batchnorm, "BIG_ELEMENTWISE_BLOCKS", big)
        fwd = batchnorm.CpuBatchNorm.forward(None, x, w, b, 1e-5)
        assert fwd is not None
        bwd = batchnorm.CpuBatchNorm.backward(None, x, g, fwd[3], (True, True, True))
        got[big] = [np.asarray(a) for a in (*fwd[:3], *bwd)]
    lay = batchnorm._layout(x)
    assert lay is not None
    if batchnorm._jit(lay) is not None:  # the compiled passes: longer blocks
        assert len(lay.elementwise_ranges()) < len(lay.ranges)
    for a, c in zip(got[False], got[True]):
        assert np.array_equal(a, c)
    mean = x.astype(np.float64).mean(axis=(0, 2, 3), keepdims=True)
    var = x.astype(np.float64).var(axis=(0, 2, 3), keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * w[:, None, None] + b[:, None, None]
    np.testing.assert_allclose(got[True][0], ref, rtol=1e-4, atol=1e-4)
