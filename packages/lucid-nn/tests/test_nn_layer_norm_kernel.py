"""Layer norm's compiled kernel (``kernels.LAYER_NORM`` on NumPy, ``lucid-core[numba]``) against
lucid-nn's reference code (the kernel unregistered): outputs and the three gradients, float64
to 1e-12 and float32 to 2e-6 (atol and rtol), with and without affine parameters, over one
and two normalised dims, non-contiguous input; a backward after an in-place change of the
input is refused, as torch's; without numba the kernel declines."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid import kernels
from lucid.backends import cpu
from lucid.nn import functional as F

pytest.importorskip("numba")
_CPU = lucid.backends.get_backend("cpu")
_TOL = {lucid.float64: 1e-12, lucid.float32: 2e-6}


def _run(x: np.ndarray, shape: tuple[int, ...], affine: bool, dtype: Any, fused: bool,
         transpose: bool = False) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(1)
    saved = _CPU.kernels.pop(kernels.LAYER_NORM) if not fused else None
    try:
        t = lucid.from_numpy(x).to(dtype)
        if transpose:
            t = t.transpose(0, 1)
        t.requires_grad_()
        w = b = None
        if affine:
            w = lucid.from_numpy(rng.standard_normal(shape)).to(dtype).requires_grad_()
            b = lucid.from_numpy(rng.standard_normal(shape)).to(dtype).requires_grad_()
        y = F.layer_norm(t, shape, w, b, 1e-5)
        g = lucid.from_numpy(rng.standard_normal(tuple(y.shape))).to(dtype)
        y.backward(g)
        out = [y.detach().numpy().copy(), t.grad.numpy().copy()]  # type: ignore[union-attr]
        if affine:
            out += [w.grad.numpy().copy(), b.grad.numpy().copy()]  # type: ignore[union-attr]
        return out
    finally:
        if saved is not None:
            _CPU.kernels[kernels.LAYER_NORM] = saved


@pytest.mark.parametrize("dtype", [lucid.float64, lucid.float32])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize(("xshape", "shape", "transpose"),
                         [((4, 6, 32), (32,), False), ((3, 5, 4, 6), (4, 6), False),
                          ((6, 4, 16), (16,), True)])  # fmt: skip
def test_kernel_equals_the_reference(dtype: Any, affine: bool, xshape: tuple[int, ...],
                                     shape: tuple[int, ...], transpose: bool) -> None:  # fmt: skip
    x = np.random.default_rng(0).standard_normal(xshape) * 3 + 1
    got = _run(x, shape, affine, dtype, True, transpose)
    want = _run(x, shape, affine, dtype, False, transpose)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=_TOL[dtype], atol=_TOL[dtype])


@pytest.mark.skipif(not cpu.numba_enabled, reason="the compiled kernels are off (LUCID_NUMBA=0)")
def test_the_kernel_runs_and_declines_without_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.ones((2, 8), np.float32)
    k = kernels.LAYER_NORM.find(_CPU)
    assert k is not None and k.forward(_CPU, x, None, None, 1, 1e-5) is not None
    monkeypatch.setattr(cpu, "numba_enabled", False)
    assert k.forward(_CPU, x, None, None, 1, 1e-5) is None


def test_inplace_change_of_the_input_after_forward() -> None:
    """The kernel keeps the input itself (no copy): a backward after the input changed in place
    is refused, as torch refuses it (the saved input's version check)."""
    x = lucid.randn(4, 8, requires_grad=True)
    h = x * 1.0
    y = F.layer_norm(h, (8,))
    assert y.grad_fn is not None and y.grad_fn.name() == "NativeLayerNormBackward0"
    with lucid.no_grad():
        h.add_(5.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(lucid.randn(4, 8))
