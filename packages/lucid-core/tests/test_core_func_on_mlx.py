"""lucid.func, checkpointing and the graph hooks on the MLX backend give NumPy's results (vmap
runs its batching rules there as on NumPy: they are written in lucid ops)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd.graph import save_on_cpu
from lucid.func import grad, hessian, jvp, vmap
from lucid.utils.checkpoint import checkpoint

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")
pytest.importorskip("lucid.backends.mlx")

RTOL, ATOL = 1e-5, 1e-5


def _f(a: lucid.Tensor) -> lucid.Tensor:
    return (a.sin() * a).sum()


def test_transforms_match_numpy() -> None:
    lucid.manual_seed(0)
    x = lucid.randn(4, 3)
    xm = x.to("mlx")
    per = vmap(grad(_f))(xm)
    assert per.device == "mlx"
    np.testing.assert_allclose(per.cpu().numpy(), vmap(grad(_f))(x).numpy(), rtol=RTOL, atol=ATOL)
    h = hessian(_f)(xm[0])
    np.testing.assert_allclose(h.cpu().numpy(), hessian(_f)(x[0]).numpy(), rtol=RTOL, atol=ATOL)
    v = lucid.randn(3)
    _, hv = jvp(grad(_f), (xm[0],), (v.to("mlx"),))
    np.testing.assert_allclose(
        hv.cpu().numpy(), (hessian(_f)(x[0]) @ v).numpy(), rtol=RTOL, atol=ATOL
    )


def test_checkpoint_and_save_on_cpu_match_numpy() -> None:
    lucid.manual_seed(1)
    w = lucid.randn(3, 3)
    x = lucid.randn(4, 3)
    wm = w.to("mlx").requires_grad_(True)
    y = checkpoint(lambda h: (h @ wm).tanh(), x.to("mlx"), use_reentrant=False).sum()
    (g,) = lucid.autograd.grad(y, wm)
    with save_on_cpu():
        y2 = (x.to("mlx") @ wm).tanh().sum()
    (g2,) = lucid.autograd.grad(y2, wm)
    wc = w.requires_grad_(True)
    (g0,) = lucid.autograd.grad((x @ wc).tanh().sum(), wc)
    assert g.device == "mlx" and g2.device == "mlx"
    np.testing.assert_allclose(g.cpu().numpy(), g0.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(g2.cpu().numpy(), g0.numpy(), rtol=RTOL, atol=ATOL)
