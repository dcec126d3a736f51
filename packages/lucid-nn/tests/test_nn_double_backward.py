"""Double backward (and so ``jvp``, ``jacfwd``, ``hessian``) through the fused cross entropy and
normalisation Functions: under ``create_graph=True`` their backward is computed from the same
formulas in differentiable lucid ops. Checked by finite differences (gradgradcheck, float64)
and, for a small classifier's Hessian and Hessian-vector products, against torch.func."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck
from lucid.func import grad, hessian, jvp

D = lucid.float64


def _t(*shape: int, seed: int = 0, requires_grad: bool = True) -> lucid.Tensor:
    a = np.random.default_rng(seed).standard_normal(shape)
    return lucid.tensor(a, dtype=D, requires_grad=requires_grad)


_Y = lucid.tensor([0, 2, 1, -100])
_W = lucid.tensor([0.5, 1.0, 2.0], dtype=D)
CASES: dict[str, tuple[Callable[..., lucid.Tensor], tuple[lucid.Tensor, ...]]] = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (3,), w, b), (_t(4, 3), _t(3, seed=1),
                                                                 _t(3, seed=2))),
    "layer_norm_2d": (lambda x, w, b: F.layer_norm(x, (2, 3), w, b),
                      (_t(2, 2, 3), _t(2, 3, seed=1), _t(2, 3, seed=2))),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   (_t(4, 3, 2), _t(3, seed=1), _t(3, seed=2))),
    "batch_norm_2d": (lambda x: F.batch_norm(x, None, None, training=True), (_t(2, 3, 2, 2),)),
    "group_norm": (lambda x, w, b: F.group_norm(x, 1, w, b), (_t(4, 3, 2), _t(3, seed=1),
                                                              _t(3, seed=2))),
    "instance_norm": (lambda x: F.instance_norm(x), (_t(2, 2, 3),)),
    "cross_entropy": (lambda x: F.cross_entropy(x, _Y), (_t(4, 3),)),
    "cross_entropy_weight_smoothing": (
        lambda x: F.cross_entropy(x, _Y, weight=_W, label_smoothing=0.3), (_t(4, 3),)),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, _Y, weight=_W, reduction="none"),
                           (_t(4, 3),)),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, _Y, reduction="sum", label_smoothing=0.1),
                          (_t(4, 3),)),
    "cross_entropy_4d": (lambda x: F.cross_entropy(x, lucid.tensor([[0, 1], [2, 0]])),
                         (_t(2, 3, 2),)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_matches_finite_differences(name: str) -> None:
    fn, inputs = CASES[name]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def _classifier_loss(p: dict[str, lucid.Tensor], x: lucid.Tensor, y: lucid.Tensor) -> Any:
    h = F.layer_norm(F.linear(x, p["w1"], p["b1"]), (5,), p["g"], p["beta"])
    return F.cross_entropy(F.linear(h.tanh(), p["w2"]), y, label_smoothing=0.1)


def _params(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"w1": rng.standard_normal((5, 4)), "b1": rng.standard_normal(5),
            "g": rng.standard_normal(5), "beta": rng.standard_normal(5),
            "w2": rng.standard_normal((3, 5))}  # fmt: skip


def test_hessian_of_a_classifier_loss_wrt_its_parameters_is_the_jacobian_of_its_gradient() -> None:
    p = {k: lucid.tensor(v, dtype=D) for k, v in _params().items()}
    x, y = _t(6, 4, seed=3, requires_grad=False), lucid.tensor([0, 1, 2, 1, 0, 2])
    h = hessian(_classifier_loss)(p, x, y)
    eps = 1e-6
    for j in p:  # column block j by central differences of the gradient
        flat = p[j].numpy().reshape(-1)
        for k in range(flat.size):
            plus, minus = dict(p), dict(p)
            for sign, d in ((1, plus), (-1, minus)):
                v = flat.copy()
                v[k] += sign * eps
                d[j] = lucid.tensor(v.reshape(p[j].shape), dtype=D)
            gp, gm = grad(_classifier_loss)(plus, x, y), grad(_classifier_loss)(minus, x, y)
            for i in p:
                col = h[i][j].numpy().reshape(*p[i].shape, -1)[..., k]
                fd = (gp[i].numpy() - gm[i].numpy()) / (2 * eps)
                np.testing.assert_allclose(col, fd, rtol=1e-5, atol=1e-6)
    for i in p:  # and it is symmetric
        for j in p:
            a = h[i][j].numpy().reshape(p[i].numel(), p[j].numel())
            b = h[j][i].numpy().reshape(p[j].numel(), p[i].numel())
            np.testing.assert_allclose(a, b.T, rtol=1e-9, atol=1e-10)


def test_jvp_through_cross_entropy_and_norms_is_the_directional_derivative() -> None:
    x, t = _t(4, 3, requires_grad=False), _t(4, 3, seed=5, requires_grad=False)

    def f(v: lucid.Tensor) -> lucid.Tensor:
        h = F.batch_norm(F.layer_norm(v, (3,)), None, None, training=True)
        return F.cross_entropy(h * 2.0, _Y, label_smoothing=0.2)

    _, tangent = jvp(f, (x,), (t,))
    eps = 1e-6
    fd = (f(x + eps * t).item() - f(x - eps * t).item()) / (2 * eps)
    assert tangent.item() == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parity
def test_classifier_hessian_and_hvp_match_torch_func() -> None:
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    raw = _params(1)
    rng = np.random.default_rng(2)
    xs, ys = rng.standard_normal((6, 4)), np.array([0, 1, 2, 1, 0, 2])

    def make(nnf: Any) -> Callable[..., Any]:  # no affine norm: see docs/differences.md
        def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
            h = nnf.linear(x, p["w1"], p["b1"])
            h = nnf.batch_norm(nnf.layer_norm(h, (5,)), None, None, training=True)
            return nnf.cross_entropy(nnf.linear(h.tanh(), p["w2"]), y, label_smoothing=0.1)

        return loss

    lp = {k: lucid.tensor(v, dtype=D) for k, v in raw.items() if k not in ("g", "beta")}
    tp = {k: torch.from_numpy(v) for k, v in raw.items() if k not in ("g", "beta")}
    lx, ly, tx, ty = lucid.tensor(xs), lucid.tensor(ys), torch.from_numpy(xs), torch.from_numpy(ys)
    h = hessian(make(F))(lp, lx, ly)
    th = tf.hessian(make(torch.nn.functional))(tp, tx, ty)
    for i in lp:
        for j in lp:
            np.testing.assert_allclose(h[i][j].numpy(), th[i][j].numpy(), rtol=1e-8, atol=1e-10)
    v = {k: lucid.tensor(rng.standard_normal(a.shape), dtype=D) for k, a in lp.items()}
    tv = {k: torch.from_numpy(a.numpy()) for k, a in v.items()}
    _, hvp = jvp(lambda p: grad(make(F))(p, lx, ly), (lp,), (v,))
    _, thvp = tf.jvp(lambda p: tf.grad(make(torch.nn.functional))(p, tx, ty), (tp,), (tv,))
    for k in lp:
        np.testing.assert_allclose(hvp[k].numpy(), thvp[k].numpy(), rtol=1e-8, atol=1e-10)
