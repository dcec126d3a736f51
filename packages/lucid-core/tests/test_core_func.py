"""lucid.func: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call,
stack_module_state — against finite differences in float64, hand values and loops."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)

D = lucid.float64
RTOL, ATOL = 1e-7, 1e-9


def _rand(*shape: int, seed: int = 0) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=D)


def _f(x: lucid.Tensor) -> lucid.Tensor:
    return (x.sin() * x.exp()).sum() + (x * x).prod()


def _fd_grad(f: Any, x: lucid.Tensor, eps: float = 1e-6) -> np.ndarray:
    base = x.numpy().astype(np.float64)
    out = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        hi, lo = base.copy(), base.copy()
        hi[idx] += eps
        lo[idx] -= eps
        fh = f(lucid.tensor(hi, dtype=D)).numpy()
        fl = f(lucid.tensor(lo, dtype=D)).numpy()
        out[idx] = (fh - fl) / (2 * eps)
    return out


def _fd_jac(f: Any, x: lucid.Tensor, eps: float = 1e-6) -> np.ndarray:
    base = x.numpy()
    cols = []
    for idx in np.ndindex(base.shape):
        hi, lo = base.copy(), base.copy()
        hi[idx] += eps
        lo[idx] -= eps
        cols.append((f(lucid.tensor(hi, dtype=D)).numpy() - f(lucid.tensor(lo, dtype=D)).numpy())
                    / (2 * eps))  # fmt: skip
    out_shape = cols[0].shape
    return np.stack(cols, axis=-1).reshape(out_shape + base.shape)


# -- grad ----------------------------------------------------------------------------------------
def test_grad_matches_finite_differences() -> None:
    x = _rand(2, 3)
    g = grad(_f)(x)
    np.testing.assert_allclose(g.numpy(), _fd_grad(_f, x), rtol=1e-6, atol=1e-8)
    assert not g.requires_grad and not x.requires_grad


def test_grad_argnums_pytrees_and_aux() -> None:
    a, b = _rand(3, seed=1), _rand(3, seed=2)

    def f(p: dict[str, lucid.Tensor], c: lucid.Tensor) -> tuple[lucid.Tensor, str]:
        return (p["w"] * c).sum() + (p["v"] ** 2).sum(), "aux"

    p = {"w": a, "v": b}
    (gp, gc), aux = grad(f, argnums=(0, 1), has_aux=True)(p, a)
    assert aux == "aux"
    np.testing.assert_allclose(gp["w"].numpy(), a.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(gp["v"].numpy(), 2 * b.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(gc.numpy(), a.numpy(), rtol=RTOL, atol=ATOL)
    g, (value, aux2) = grad_and_value(f, has_aux=True)(p, a)
    np.testing.assert_allclose(value.numpy(), f(p, a)[0].numpy(), rtol=RTOL, atol=ATOL)
    assert set(g) == {"w", "v"} and aux2 == "aux"
    assert grad(f, argnums=-1, has_aux=True)(p, a)[0].shape == (3,)


def test_grad_of_unused_input_is_zero() -> None:
    g = grad(lambda x, y: (x * 2.0).sum(), argnums=1)(_rand(2), _rand(3))
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))


def test_grad_errors() -> None:
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        grad(lambda x: x * 2)(_rand(3))
    with pytest.raises(RuntimeError, match="argnums"):
        grad(_f, argnums=(0, 0))(_rand(2))
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        grad(_f, argnums=1)(_rand(2))
    with pytest.raises(RuntimeError, match="floating point"):
        grad(lambda x: x.sum())(lucid.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="should be a tuple"):
        grad(_f, has_aux=True)(_rand(2))


def test_nested_grad_is_the_second_derivative() -> None:
    x = _rand(4)
    g2 = grad(lambda t: grad(lambda u: (u**3).sum())(t).sum())(x)
    np.testing.assert_allclose(g2.numpy(), 6 * x.numpy(), rtol=RTOL, atol=ATOL)


def test_no_perturbation_confusion() -> None:
    # d/dx [x * d/dy (x*y)] = d/dx [x * x] = 2x, not x (the inner grad must not see the outer x)
    x = lucid.tensor(3.0, dtype=D)
    out = grad(lambda x: grad(lambda y: (x * y).sum())(lucid.tensor(1.0, dtype=D)) * x)(x)
    assert float(out) == pytest.approx(6.0, rel=1e-12, abs=1e-12)


def test_grad_keeps_the_outer_graph() -> None:
    x = _rand(3).requires_grad_(True)
    g = grad(lambda t: (t**3).sum())(x)  # 3 x^2, still a function of x
    assert g.requires_grad
    (gx,) = lucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gx.numpy(), 6 * x.detach().numpy(), rtol=RTOL, atol=ATOL)


# -- vjp, jvp ------------------------------------------------------------------------------------
def test_vjp_against_the_jacobian() -> None:
    x, w = _rand(3), _rand(2, 3, seed=3)
    f = lambda t: (w @ t).tanh()  # noqa: E731
    out, vjp_fn = vjp(f, x)
    u = _rand(2, seed=4)
    (gx,) = vjp_fn(u)
    np.testing.assert_allclose(gx.numpy(), u.numpy() @ _fd_jac(f, x), rtol=1e-6, atol=1e-8)
    (again,) = vjp_fn(u)  # may be called more than once
    np.testing.assert_allclose(again.numpy(), gx.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(out.numpy(), f(x).numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn(_rand(3))
    with pytest.raises(RuntimeError, match="same as pytree structure"):
        vjp_fn((u, u))


def test_vjp_with_pytree_output_and_aux() -> None:
    x = _rand(3)
    (o1, o2), fn, aux = vjp(lambda t: ((t * 2.0, t.sum()), 7), x, has_aux=True)
    assert aux == 7
    (g,) = fn((lucid.ones(3, dtype=D), lucid.tensor(1.0, dtype=D)))
    np.testing.assert_allclose(g.numpy(), np.full(3, 3.0), rtol=RTOL, atol=ATOL)


def test_jvp_against_finite_differences() -> None:
    x, t = _rand(3), _rand(3, seed=5)
    w = _rand(4, 3, seed=6)
    f = lambda a: (w @ a).sin() * a.sum()  # noqa: E731
    out, tangent = jvp(f, (x,), (t,))
    np.testing.assert_allclose(tangent.numpy(), _fd_jac(f, x) @ t.numpy(), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(out.numpy(), f(x).numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(RuntimeError, match="Expected primals and tangents to be tuples"):
        jvp(f, x, t)
    with pytest.raises(RuntimeError, match="same shapes"):
        jvp(f, (x,), (_rand(2),))


def test_hessian_vector_product_through_jvp_of_grad() -> None:
    x, v = _rand(4), _rand(4, seed=7)
    _, hvp = jvp(grad(_f), (x,), (v,))
    h = _fd_jac(grad(_f), x)
    np.testing.assert_allclose(hvp.numpy(), h @ v.numpy(), rtol=1e-6, atol=1e-7)


# -- Jacobians and Hessians ----------------------------------------------------------------------
def test_jacrev_and_jacfwd_match_finite_differences() -> None:
    x = _rand(2, 3)
    f = lambda a: (a @ a.T).exp()  # noqa: E731
    expected = _fd_jac(f, x)
    np.testing.assert_allclose(jacrev(f)(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jacfwd(f)(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    assert jacrev(f)(x).shape == (2, 2, 2, 3)


def test_jacrev_structure_with_argnums_tuple() -> None:
    a, b = _rand(2), _rand(3, seed=1)
    jac = jacrev(lambda x, y: {"o": x.sum() * y}, argnums=(0, 1))(a, b)
    assert set(jac) == {"o"} and isinstance(jac["o"], tuple)
    assert jac["o"][0].shape == (3, 2) and jac["o"][1].shape == (3, 3)
    np.testing.assert_allclose(
        jac["o"][1].numpy(), np.eye(3) * a.numpy().sum(), rtol=RTOL, atol=ATOL
    )


def test_hessian_and_jacrev_of_jacrev() -> None:
    x = _rand(3)
    h = hessian(_f)(x)
    np.testing.assert_allclose(h.numpy(), _fd_jac(grad(_f), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(jacrev(jacrev(_f))(x).numpy(), h.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(h.numpy(), h.numpy().T, rtol=RTOL, atol=ATOL)


# -- vmap ----------------------------------------------------------------------------------------
def test_vmap_matches_a_loop_with_in_and_out_dims() -> None:
    x, y = _rand(3, 4), _rand(5, 4, seed=1)
    prod, total = vmap(lambda a, b: (a * b[:3], a.sum()), in_dims=(1, 1), out_dims=(1, 0))(x, y)
    assert prod.shape == (3, 4) and total.shape == (4,)
    for i in range(4):
        np.testing.assert_allclose(
            prod.numpy()[:, i], x.numpy()[:, i] * y.numpy()[:3, i], rtol=RTOL, atol=ATOL
        )
        assert float(total[i]) == pytest.approx(x.numpy()[:, i].sum(), rel=1e-12, abs=1e-12)
    x2, m = _rand(4, 3, seed=2), _rand(3, 2, seed=3)
    out2 = vmap(lambda a, b: a @ b, in_dims=(0, None))(x2, m)
    np.testing.assert_allclose(out2.numpy(), x2.numpy() @ m.numpy(), rtol=RTOL, atol=ATOL)
    kept = vmap(lambda a: (a * 2.0, m), out_dims=(0, None))(x2)
    assert kept[1] is m


def test_vmap_pytree_in_dims_and_negative_dims() -> None:
    w = _rand(5, 3)
    p = {"w": w, "s": lucid.tensor(2.0, dtype=D)}
    out = vmap(lambda d, x: d["w"] * d["s"] + x, in_dims=({"w": -1, "s": None}, 0))(
        p, _rand(3, 5, seed=1)
    )
    np.testing.assert_allclose(
        out.numpy(), (w.numpy() * 2).T + _rand(3, 5, seed=1).numpy(), rtol=RTOL, atol=ATOL
    )


def test_vmap_nested_and_chunk_size() -> None:
    x = _rand(2, 3, 4)
    out = vmap(vmap(lambda r: r.sum()), chunk_size=1)(x)
    np.testing.assert_allclose(out.numpy(), x.numpy().sum(-1), rtol=RTOL, atol=ATOL)


def test_vmap_errors() -> None:
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(_rand(2), _rand(3))
    with pytest.raises(ValueError, match="at least one"):
        vmap(lambda a: a, in_dims=None)(_rand(2))
    with pytest.raises(ValueError, match="expected `in_dims` to be int"):
        vmap(lambda a: a, in_dims=[0])(_rand(2))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        vmap(lambda a: a, in_dims=(0, 0))(_rand(2))
    with pytest.raises(ValueError, match="dimensionality 1"):
        vmap(lambda a: a, in_dims=1)(_rand(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3)(_rand(2))
    with pytest.raises(RuntimeError, match="randomness"):
        vmap(lambda a: a, randomness="sometimes")
    with pytest.raises(ValueError, match="chunk_size"):
        vmap(lambda a: a, chunk_size=0)


def test_vmap_randomness_modes() -> None:
    x = lucid.zeros(4, 3, dtype=D)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + lucid.randn(3, dtype=D))(x)
    same = vmap(lambda a: a + lucid.randn(3, dtype=D), randomness="same")(x).numpy()
    np.testing.assert_array_equal(same, np.broadcast_to(same[0], same.shape))
    diff = vmap(lambda a: a + lucid.randn(3, dtype=D), randomness="different")(x).numpy()
    assert not np.allclose(diff[0], diff[1], rtol=1e-5, atol=1e-8)


def test_per_sample_gradients_equal_a_loop() -> None:
    w, x, y = _rand(3, 2), _rand(5, 3, seed=1), _rand(5, 2, seed=2)

    def loss(w: lucid.Tensor, xi: lucid.Tensor, yi: lucid.Tensor) -> lucid.Tensor:
        return ((xi @ w).tanh() - yi).pow(2).sum()

    per = vmap(grad(loss), in_dims=(None, 0, 0))(w, x, y)
    for i in range(5):
        wi = w.detach().requires_grad_(True)
        loss(wi, x[i], y[i]).backward()
        np.testing.assert_allclose(per[i].numpy(), wi.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_vmap_of_jacrev_and_grad_of_vmap() -> None:
    x = _rand(3, 2)
    jac = vmap(jacrev(lambda a: a.sin()))(x)
    for i in range(3):
        np.testing.assert_allclose(
            jac[i].numpy(), np.diag(np.cos(x.numpy()[i])), rtol=RTOL, atol=ATOL
        )
    g = grad(lambda a: vmap(lambda r: (r**2).sum())(a).sum())(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy(), rtol=RTOL, atol=ATOL)


# -- functional_call -----------------------------------------------------------------------------
class _Module:
    """The layout of an nn.Module (lucid-core's tests do not import lucid-nn)."""

    def __init__(self) -> None:
        self._parameters: OrderedDict[str, Any] = OrderedDict()
        self._buffers: OrderedDict[str, Any] = OrderedDict()
        self._modules: OrderedDict[str, Any] = OrderedDict()

    def __getattr__(self, name: str) -> Any:
        for reg in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(reg, {})
            if name in d:
                return d[name]
        raise AttributeError(name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)


class _Linear(_Module):
    def __init__(self, w: lucid.Tensor) -> None:
        super().__init__()
        self._parameters["weight"] = w.requires_grad_(True)
        self._buffers["scale"] = lucid.tensor(1.0, dtype=D)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        return (x @ self.weight.T) * self.scale


class _Tied(_Module):
    def __init__(self) -> None:
        super().__init__()
        self._modules["a"] = _Linear(_rand(2, 2))
        self._modules["b"] = _Linear(_rand(2, 2, seed=1))
        self._modules["b"]._parameters["weight"] = self.a.weight  # tied

    def forward(self, x: lucid.Tensor, *, shift: float = 0.0) -> lucid.Tensor:
        return self.b(self.a(x)) + shift


def test_functional_call_swaps_and_restores() -> None:
    m = _Tied()
    w_old = m.a.weight
    w_new = _rand(2, 2, seed=9)
    x = _rand(3, 2, seed=2)
    out = functional_call(m, {"a.weight": w_new}, (x,), {"shift": 1.0})
    expected = x.numpy() @ w_new.numpy().T @ w_new.numpy().T + 1.0  # tied: both replaced
    np.testing.assert_allclose(out.numpy(), expected, rtol=RTOL, atol=ATOL)
    assert m.a.weight is w_old and m.b.weight is w_old
    untied = functional_call(m, {"a.weight": w_new}, x, tie_weights=False)
    np.testing.assert_allclose(
        untied.detach().numpy(),
        x.numpy() @ w_new.numpy().T @ w_old.detach().numpy().T,
        rtol=RTOL,
        atol=ATOL,
    )


def test_functional_call_several_dicts_buffers_and_gradients() -> None:
    m = _Linear(_rand(2, 3))
    w = _rand(2, 3, seed=4)
    x = _rand(4, 3, seed=5)
    out = functional_call(m, ({"weight": w}, {"scale": lucid.tensor(3.0, dtype=D)}), (x,))
    np.testing.assert_allclose(out.numpy(), 3 * x.numpy() @ w.numpy().T, rtol=RTOL, atol=ATOL)
    g = grad(lambda p: functional_call(m, p, (x,)).sum())({"weight": w})
    np.testing.assert_allclose(
        g["weight"].numpy(), np.tile(x.numpy().sum(0), (2, 1)), rtol=RTOL, atol=ATOL
    )
    assert m.weight.grad is None


def test_functional_call_errors_and_restore_on_error() -> None:
    m = _Tied()
    w_old = m.a.weight
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(m, ({"a.weight": _rand(2, 2)}, {"a.weight": _rand(2, 2)}), (_rand(1, 2),))
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(m, {"a.weight": _rand(2, 2), "b.weight": _rand(2, 2, seed=3)},
                        (_rand(1, 2),))  # fmt: skip
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        functional_call(m, {"nope": _rand(1)}, (_rand(1, 2),), strict=True)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\)"):
        functional_call(m, {"a.weight": _rand(2, 2)}, (_rand(1, 2),), strict=True)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        functional_call(m, {"a.weight": _rand(3, 3)}, (_rand(1, 2),))
    assert m.a.weight is w_old and m.b.weight is w_old
    with pytest.raises(TypeError, match="expected an nn.Module"):
        functional_call(object(), {}, ())


def test_stack_module_state_and_ensembling() -> None:
    models = [_Linear(_rand(2, 3, seed=s)) for s in range(4)]
    params, buffers = stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf
    assert params["weight"].requires_grad and buffers["scale"].shape == (4,)
    x = _rand(5, 3, seed=8)
    out = vmap(lambda p, b: functional_call(models[0], (p, b), (x,)))(params, buffers)
    for i, m in enumerate(models):
        np.testing.assert_allclose(
            out[i].detach().numpy(), m(x).detach().numpy(), rtol=RTOL, atol=ATOL
        )
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])


def test_linearize_gives_jvps_at_the_point() -> None:
    from lucid.func import linearize

    x, w = _rand(3), _rand(4, 3, seed=1)
    f = lambda a: (w @ a).sin()  # noqa: E731
    out, jvp_fn = linearize(f, x)
    np.testing.assert_allclose(out.numpy(), f(x).numpy(), rtol=RTOL, atol=ATOL)
    jac = _fd_jac(f, x)
    for seed in (2, 3):  # one forward, many products
        t = _rand(3, seed=seed)
        np.testing.assert_allclose(jvp_fn(t).numpy(), jac @ t.numpy(), rtol=1e-6, atol=1e-8)
    with pytest.raises(RuntimeError, match="does not match its primal's shape"):
        jvp_fn(_rand(2))


def test_vmap_of_a_vjp_fn_made_outside_that_vmap() -> None:
    # pytorch/tutorials' neural_tangent_kernels: vjp once, then vmap(vjp_fn) over the rows of
    # an identity (and jvp of the result), nested in two more vmaps. The graph was recorded
    # before the vmap began, so each row's vector-Jacobian product is taken on its own.
    from lucid.func import linearize

    w, x = _rand(3, 4), _rand(4, seed=1)
    f = lambda p: (p @ x).tanh()  # noqa: E731
    out, vjp_fn = vjp(f, w)
    jac = _fd_jac(lambda p: f(p.reshape(3, 4)), w.reshape(-1))  # (3, 12)
    rows = vmap(lambda v: vjp_fn(v)[0])(lucid.eye(3, dtype=D))
    np.testing.assert_allclose(rows.reshape(3, -1).numpy(), jac, rtol=1e-6, atol=1e-8)

    # the NTK J(x1) J(x2)^T of one pair, through vmap(jvp(vjp_fn)), and for batches of inputs
    def ntk(a: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
        _, fn = vjp(lambda p: (p @ a).tanh(), w)
        one = lambda v: jvp(lambda p: (p @ b).tanh(), (w,), fn(v))[1]  # noqa: E731
        return vmap(one)(lucid.eye(3, dtype=D))

    def jac_at(a: lucid.Tensor) -> np.ndarray:
        return _fd_jac(lambda p: (p.reshape(3, 4) @ a).tanh(), w.reshape(-1))

    xs, ys = _rand(2, 4, seed=2), _rand(3, 4, seed=3)
    want = np.stack([np.stack([jac_at(a) @ jac_at(b).T for b in ys]) for a in xs])
    got = vmap(vmap(ntk, (None, 0)), (0, None))(xs, ys)
    assert got.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-7)

    # linearize's jvp_fn likewise
    _, jvp_fn = linearize(f, w)
    tangents = _rand(5, 3, 4, seed=4)
    got_t = vmap(jvp_fn)(tangents)
    want_t = np.stack([jac @ t.numpy().reshape(-1) for t in tangents])
    np.testing.assert_allclose(got_t.numpy(), want_t, rtol=1e-6, atol=1e-8)
