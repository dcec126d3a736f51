"""The NumPy backend's batch-norm kernel against lucid.nn's reference Function.

Both implement ``lucid.kernels.BATCH_NORM``; the reference (the backend with the kernel taken
out) is the oracle. Every case runs inline and with the blocks forced onto two threads, over
the memory orders the kernel reads in place (channels-last, contiguous) and one it hands to the
reference (strided).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid import kernels
from lucid.autograd import gradcheck, gradgradcheck
from lucid.backends import blas_threads, get_backend
from lucid.backends._numpy import _parallel
from lucid.backends._numpy.kernels import batchnorm

SHAPES = {
    "1d-flat": (9, 5),
    "1d": (4, 3, 7),
    "2d": (3, 6, 5, 4),
    "3d": (2, 4, 3, 2, 5),
}
TOL = {np.float32: (1e-4, 1e-5), np.float64: (1e-10, 1e-12)}  # (rtol, atol)


@pytest.fixture(autouse=True)
def kernel_at_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel takes the small inputs of these tests too (it leaves them to the reference)."""
    monkeypatch.setattr(batchnorm, "SMALL_ELEMENTS", 1)
    monkeypatch.setattr(batchnorm, "SMALL_PLANES_ELEMENTS", 1)


@pytest.fixture(params=[False, True], ids=["inline", "threaded"])
def threaded(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """``threaded`` forces two workers, tiny blocks and no size threshold."""
    if request.param:
        monkeypatch.setattr(blas_threads, "budget", lambda: 2)
        monkeypatch.setattr(batchnorm, "_BLOCK_ELEMENTS", 16)
        monkeypatch.setattr(_parallel, "PARALLEL_ELEMENTS", 0)
    return bool(request.param)


def _array(shape: tuple[int, ...], layout: str, dtype: type, seed: int, loc: float = 0.5) -> Any:
    """A random array of ``shape`` stored ``layout``: channels-last, contiguous or strided."""
    rng = np.random.default_rng(seed)
    if layout == "channels-last":
        stored = (shape[0], *shape[2:], shape[1])
        a = rng.standard_normal(stored) * 2.0 + loc
        return a.astype(dtype).transpose(0, len(shape) - 1, *range(1, len(shape) - 1))
    if layout == "strided":
        a = rng.standard_normal((*shape[:-1], 2 * shape[-1])) * 2.0 + loc
        return a.astype(dtype)[..., ::2]
    return (rng.standard_normal(shape) * 2.0 + loc).astype(dtype)


@contextlib.contextmanager
def reference() -> Iterator[None]:
    """lucid.nn's reference batch norm on the NumPy backend, inside the block."""
    table = get_backend("cpu").kernels
    impl = table.pop(kernels.BATCH_NORM)
    try:
        yield
    finally:
        table[kernels.BATCH_NORM] = impl


def _train_step(x: Any, dy: Any, affine: bool) -> dict[str, Any]:
    """Output, running statistics and gradients of one training-mode batch_norm call."""
    c = x.shape[1]
    xt = lucid.from_numpy(x).requires_grad_(True)
    w = lucid.from_numpy(np.linspace(0.5, 1.5, c).astype(x.dtype)).requires_grad_(True)
    b = lucid.from_numpy(np.linspace(-1.0, 1.0, c).astype(x.dtype)).requires_grad_(True)
    rm, rv = lucid.zeros(c, dtype=xt.dtype), lucid.ones(c, dtype=xt.dtype)
    args = (w, b) if affine else (None, None)
    y = F.batch_norm(xt, rm, rv, *args, training=True, momentum=0.1, eps=1e-5)
    wrt = [xt, w, b] if affine else [xt]
    grads = lucid.autograd.grad(y, wrt, lucid.from_numpy(dy))
    out = {"y": y.detach().numpy(), "running_mean": rm.numpy(), "running_var": rv.numpy()}
    out.update({k: g.numpy() for k, g in zip(("dx", "dw", "db"), grads)})
    out["y_strides"] = y.detach().numpy().strides
    return out


def test_the_numpy_backend_registers_its_batch_norm_kernel_under_the_contract() -> None:
    impl = get_backend("cpu").kernels[kernels.BATCH_NORM]
    assert impl is batchnorm.CpuBatchNorm
    kernels.BATCH_NORM.check(impl)


@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("layout", ["channels-last", "contiguous", "strided"])
@pytest.mark.parametrize("name", list(SHAPES))
def test_kernel_matches_the_reference(
    threaded: bool, name: str, layout: str, dtype: type,
    affine: bool
) -> None:  # fmt: skip
    shape = SHAPES[name]
    x = _array(shape, layout, dtype, seed=len(name))
    dy = _array(shape, layout, dtype, seed=7, loc=0.0)
    got = _train_step(x, dy, affine)
    with reference():
        want = _train_step(x, dy, affine)
    rtol, atol = TOL[dtype]
    for key, value in want.items():
        if key != "y_strides":
            assert got[key].dtype == dtype, key
            np.testing.assert_allclose(got[key], value, rtol=rtol, atol=atol, err_msg=key)


@pytest.mark.parametrize("name", ["1d", "2d", "3d"])
def test_outputs_keep_the_memory_order_of_the_input(threaded: bool, name: str) -> None:
    """A convolution's channels-last output stays channels-last through batch norm."""
    shape = SHAPES[name]
    x = _array(shape, "channels-last", np.float32, seed=1)
    got = _train_step(x, _array(shape, "contiguous", np.float32, seed=2), affine=True)
    assert np.argsort(got["y_strides"]).tolist() == np.argsort(x.strides).tolist()
    assert np.argsort(got["dx"].strides).tolist() == np.argsort(x.strides).tolist()


def _stored_as(x: lucid.Tensor, layout: str) -> lucid.Tensor:
    """``x`` (differentiably) copied into ``layout``'s memory order."""
    if layout == "contiguous":
        return x
    last = (0, *range(2, x.ndim), 1)
    first = (0, x.ndim - 1, *range(1, x.ndim - 1))
    return x.permute(*last).contiguous().permute(*first)


@pytest.mark.parametrize("layout", ["channels-last", "contiguous"])
def test_float64_gradcheck(threaded: bool, layout: str) -> None:
    x = lucid.from_numpy(_array((3, 4, 3, 2), "contiguous", np.float64, seed=3))
    w = lucid.from_numpy(np.array([0.5, 1.0, 1.5, -2.0]))
    b = lucid.from_numpy(np.array([0.1, -0.2, 0.3, 0.0]))
    for t in (x, w, b):
        t.requires_grad_(True)

    def affine(x: lucid.Tensor, w: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
        return F.batch_norm(_stored_as(x, layout), None, None, w, b, True)

    def plain(x: lucid.Tensor) -> lucid.Tensor:
        return F.batch_norm(_stored_as(x, layout), None, None, None, None, True)

    assert gradcheck(affine, (x, w, b))
    assert gradcheck(plain, (x,))


def test_float32_statistics_far_from_zero_lose_nothing_to_cancellation() -> None:
    """A large mean over a small spread: the blocked centred sums keep the variance."""
    rng = np.random.default_rng(0)
    x64 = 1000.0 + 0.01 * rng.standard_normal((64, 3, 8, 8))
    x = x64.astype(np.float32)
    rm, rv = lucid.zeros(3), lucid.zeros(3)
    F.batch_norm(lucid.from_numpy(x), rm, rv, training=True, momentum=1.0)
    truth = x.astype(np.float64).reshape(64, 3, -1).transpose(1, 0, 2).reshape(3, -1)
    np.testing.assert_allclose(rm.numpy(), truth.mean(axis=1), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), truth.var(axis=1, ddof=1), rtol=1e-3, atol=1e-9)


def test_a_double_backward_through_the_kernel_matches_finite_differences() -> None:
    x = lucid.from_numpy(_array((4, 3, 2, 2), "channels-last", np.float64, seed=4))
    x.requires_grad_(True)
    assert gradgradcheck(lambda v: F.batch_norm(v, None, None, None, None, True), (x,))


def test_small_inputs_run_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batchnorm, "SMALL_ELEMENTS", 64)
    monkeypatch.setattr(batchnorm, "SMALL_PLANES_ELEMENTS", 128)
    for layout, shape in (("channels-last", (4, 3, 5)), ("contiguous", (4, 3, 8))):
        x = _array(shape, layout, np.float32, seed=5)
        assert batchnorm._layout(x) is None
        assert batchnorm._layout(np.concatenate([x, x])) is not None  # twice the size
        dy = _array(shape, layout, np.float32, seed=6, loc=0.0)
        got = _train_step(x, dy, affine=True)
        with reference():
            want = _train_step(x, dy, affine=True)
        for key in ("y", "dx", "dw", "db", "running_var"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def test_a_half_precision_input_runs_the_reference() -> None:
    x = _array((4, 3, 5), "contiguous", np.float16, seed=5)
    dy = _array((4, 3, 5), "contiguous", np.float16, seed=6, loc=0.0)
    got = _train_step(x, dy, affine=True)
    with reference():
        want = _train_step(x, dy, affine=True)
    for key in ("y", "dx", "dw", "db"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


MODULES = {
    "BatchNorm1d": (nn.BatchNorm1d, (6, 3, 5)),
    "BatchNorm2d": (nn.BatchNorm2d, (4, 3, 4, 5)),
    "BatchNorm3d": (nn.BatchNorm3d, (2, 3, 3, 2, 4)),
}

MODULE_OPTIONS = {
    "default": {},
    "momentum-None": {"momentum": None},
    "affine-False": {"affine": False},
    "no-running-stats": {"track_running_stats": False},
}


def _module_run(cls: Any, shape: tuple[int, ...], options: dict[str, Any]) -> dict[str, Any]:
    """Two training steps, then one in eval mode: outputs, gradients and buffers."""
    lucid.manual_seed(0)
    bn = cls(shape[1], **options)
    out: dict[str, Any] = {}
    for step in range(2):
        x = lucid.from_numpy(_array(shape, "channels-last", np.float32, seed=step))
        x.requires_grad_(True)
        y = bn(x)
        (y * y).sum().backward()
        out[f"y{step}"], out[f"dx{step}"] = y.detach().numpy(), x.grad.numpy()
    bn.eval()
    with lucid.no_grad():
        out["eval"] = bn(lucid.from_numpy(_array(shape, "contiguous", np.float32, seed=9))).numpy()
    for name, t in bn.state_dict().items():
        out[name] = t.numpy()
    for name, p in bn.named_parameters():
        out[f"grad {name}"] = p.grad.numpy()
    return out


@pytest.mark.parametrize("option", list(MODULE_OPTIONS))
@pytest.mark.parametrize("module", list(MODULES))
def test_batch_norm_modules_train_and_eval_as_with_the_reference(
    threaded: bool, module: str, option: str
) -> None:
    cls, shape = MODULES[module]
    got = _module_run(cls, shape, MODULE_OPTIONS[option])
    with reference():
        want = _module_run(cls, shape, MODULE_OPTIONS[option])
    assert got.keys() == want.keys()
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-4, atol=1e-5, err_msg=key)
