"""lucid.func and lucid.utils.checkpoint against torch.func and torch.utils.checkpoint, from the
same inputs: values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.func as lf
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
tf = pytest.importorskip("torch.func")
tck = pytest.importorskip("torch.utils.checkpoint")

RTOL, ATOL = 1e-10, 1e-12


def _pair(*shape: int, seed: int = 0) -> tuple[lucid.Tensor, Any]:
    a = np.random.default_rng(seed).standard_normal(shape)
    return lucid.tensor(a, dtype=lucid.float64), torch.tensor(a, dtype=torch.float64)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _f(lib: Any, x: Any, w: Any) -> Any:
    return (lib.tanh(x @ w) * x.sum()).sum() + (x**3).mean()


def test_grad_argnums_and_value() -> None:
    x, tx = _pair(3, 4)
    w, tw = _pair(4, 2, seed=1)
    (gx, gw), v = lf.grad_and_value(lambda a, b: _f(lucid, a, b), argnums=(0, 1))(x, w)
    (tgx, tgw), tv = tf.grad_and_value(lambda a, b: _f(torch, a, b), argnums=(0, 1))(tx, tw)
    for a, b in ((gx, tgx), (gw, tgw), (v, tv)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=RTOL, atol=ATOL)


def test_jacrev_jacfwd_hessian() -> None:
    x, tx = _pair(4)
    w, tw = _pair(4, 3, seed=2)

    def g(lib: Any) -> Any:
        return lambda a: lib.sin(a @ w if lib is lucid else a @ tw) * a[:3]

    np.testing.assert_allclose(
        _np(lf.jacrev(g(lucid))(x)), _np(tf.jacrev(g(torch))(tx)), rtol=RTOL, atol=ATOL
    )
    np.testing.assert_allclose(
        _np(lf.jacfwd(g(lucid))(x)), _np(tf.jacfwd(g(torch))(tx)), rtol=RTOL, atol=ATOL
    )
    h = lf.hessian(lambda a: _f(lucid, a.reshape(1, 4), w))(x)
    th = tf.hessian(lambda a: _f(torch, a.reshape(1, 4), tw))(tx)
    np.testing.assert_allclose(_np(h), _np(th), rtol=RTOL, atol=ATOL)


def test_vjp_and_jvp_and_hvp() -> None:
    x, tx = _pair(5)
    v, tv = _pair(5, seed=3)
    out, fn = lf.vjp(lambda a: a.exp() * a.sin(), x)
    tout, tfn = tf.vjp(lambda a: a.exp() * a.sin(), tx)
    np.testing.assert_allclose(_np(fn(v)[0]), _np(tfn(tv)[0]), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_np(out), _np(tout), rtol=RTOL, atol=ATOL)
    _, jv = lf.jvp(lambda a: a.exp() * a.sin(), (x,), (v,))
    _, tjv = tf.jvp(lambda a: a.exp() * a.sin(), (tx,), (tv,))
    np.testing.assert_allclose(_np(jv), _np(tjv), rtol=RTOL, atol=ATOL)

    def scalar(lib: Any) -> Any:
        return lambda a: (lib.cos(a) * a.pow(2)).sum()

    _, hvp = lf.jvp(lf.grad(scalar(lucid)), (x,), (v,))
    _, thvp = tf.jvp(tf.grad(scalar(torch)), (tx,), (tv,))
    np.testing.assert_allclose(_np(hvp), _np(thvp), rtol=RTOL, atol=ATOL)


def test_vmap_of_grad_and_of_jacrev_with_pytrees() -> None:
    x, tx = _pair(6, 3)
    w, tw = _pair(3, 2, seed=4)
    y, ty = _pair(6, 2, seed=5)

    def loss(lib: Any) -> Any:
        return lambda p, a, b: ((lib.tanh(a @ p["w"]) - b) ** 2).sum()

    per = lf.vmap(lf.grad(loss(lucid)), in_dims=(None, 0, 0))({"w": w}, x, y)
    tper = tf.vmap(tf.grad(loss(torch)), in_dims=(None, 0, 0))({"w": tw}, tx, ty)
    np.testing.assert_allclose(_np(per["w"]), _np(tper["w"]), rtol=RTOL, atol=ATOL)
    jac = lf.vmap(lf.jacrev(lambda a: a.sin() * a.sum()), in_dims=1, out_dims=-1)(x)
    tjac = tf.vmap(tf.jacrev(lambda a: a.sin() * a.sum()), in_dims=1, out_dims=-1)(tx)
    np.testing.assert_allclose(_np(jac), _np(tjac), rtol=RTOL, atol=ATOL)


def test_checkpoint_gradients_match_torch() -> None:
    ws = [_pair(6, 6, seed=s) for s in range(4)]
    x, tx = _pair(3, 6, seed=9)

    def run(lib: Any, inp: Any, weights: list[Any], ck: Any) -> Any:
        layers = [(lambda h, w=w: lib.tanh(h @ w) * 1.3) for w in weights]
        return (ck(layers, 2, inp, use_reentrant=False) ** 2).sum()

    lw = [a.requires_grad_(True) for a, _ in ws]
    tw = [b.requires_grad_(True) for _, b in ws]
    xg = x.requires_grad_(True)
    txg = tx.requires_grad_(True)
    grads = lucid.autograd.grad(run(lucid, xg, lw, checkpoint_sequential), [xg, *lw])
    tgrads = torch.autograd.grad(run(torch, txg, tw, tck.checkpoint_sequential), [txg, *tw])
    for a, b in zip(grads, tgrads):
        np.testing.assert_allclose(_np(a), _np(b), rtol=RTOL, atol=ATOL)
    y = checkpoint(lambda h, *, s: (h * s).sin(), xg, s=2.0, use_reentrant=False)
    ty = tck.checkpoint(lambda h, *, s: (h * s).sin(), txg, s=2.0, use_reentrant=False)
    np.testing.assert_allclose(
        _np(lucid.autograd.grad(y.sum(), xg)[0]),
        _np(torch.autograd.grad(ty.sum(), txg)[0]),
        rtol=RTOL,
        atol=ATOL,
    )


def test_linearize_matches_torch() -> None:
    x, tx = _pair(4, seed=11)
    v, tv = _pair(4, seed=12)
    _, fn = lf.linearize(lambda a: a.exp() * a.cos(), x)
    _, tfn = tf.linearize(lambda a: a.exp() * a.cos(), tx)
    np.testing.assert_allclose(_np(fn(v)), _np(tfn(tv)), rtol=RTOL, atol=ATOL)


def test_vmap_of_the_sort_family_and_scatters_matches_torch_func() -> None:
    x, tx = _pair(4, 3, 6, seed=7)

    def f(lib: Any, a: Any) -> Any:
        s = lib.sort(a, dim=1, descending=True).values[:, :2]
        k = lib.topk(a, 2, dim=0).values.sum(0) + lib.kthvalue(a, 3, dim=1).values.sum()
        m = lib.median(a, dim=1).values.sum() + lib.quantile(a, 0.3, dim=0).sum()
        sel = lib.select_scatter(a, a[:, 0] * 2, 1, 0)
        sl = lib.slice_scatter(a, a[:, 1:3] ** 2, 1, 1, 3)
        dg = lib.diagonal_scatter(a, a.diagonal(1, 0, 1) * 3, 1, 0, 1)
        return s.sum(1) + k[:3] + m + (sel * sl * dg).sum(1)

    got = lf.vmap(lambda a: f(lucid, a))(x)
    want = tf.vmap(lambda a: f(torch, a))(tx)
    np.testing.assert_allclose(_np(got), _np(want), rtol=RTOL, atol=ATOL)
    g = lf.vmap(lf.grad(lambda a: (f(lucid, a) ** 2).sum()))(x)
    tg = tf.vmap(tf.grad(lambda a: (f(torch, a) ** 2).sum()))(tx)
    np.testing.assert_allclose(_np(g), _np(tg), rtol=RTOL, atol=ATOL)
    i = np.random.default_rng(3).integers(-20, 20, (5, 4))
    li, ti = lucid.tensor(i), torch.tensor(i)
    np.testing.assert_array_equal(
        _np(lf.vmap(lucid.lcm)(li, li.flip(0))), _np(tf.vmap(torch.lcm)(ti, ti.flip(0)))
    )
