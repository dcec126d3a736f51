"""lucid.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp against hand values."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import functional as F

D = lucid.float64


def test_jacobian_of_a_linear_map_is_the_matrix() -> None:
    a = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=D)
    x = lucid.tensor([0.5, -1.0, 2.0], dtype=D)
    jac = F.jacobian(lambda v: a @ v, x)
    assert jac.shape == (2, 3)
    np.testing.assert_array_equal(jac.numpy(), a.numpy())
    assert not jac.requires_grad


def test_jacobian_structure_for_tuples() -> None:
    x = lucid.tensor([1.0, 2.0], dtype=D)
    y = lucid.tensor(3.0, dtype=D)
    jac = F.jacobian(lambda a, b: (a * b, a.sum() + b * b), (x, y))
    assert isinstance(jac, tuple) and len(jac) == 2 and len(jac[0]) == 2
    np.testing.assert_array_equal(jac[0][0].numpy(), [[3.0, 0.0], [0.0, 3.0]])  # d(a*b)/da
    np.testing.assert_array_equal(jac[0][1].numpy(), [1.0, 2.0])  # d(a*b)/db, shape (2,)
    np.testing.assert_array_equal(jac[1][0].numpy(), [1.0, 1.0])
    assert jac[1][1].item() == 6.0
    unused = F.jacobian(lambda a, b: a * 2, (x, y))
    np.testing.assert_array_equal(unused[1].numpy(), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda a, b: a * 2, (x, y), strict=True)


def test_hessian_of_a_quadratic_form() -> None:
    a = lucid.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=D)
    x = lucid.tensor([1.0, -1.0], dtype=D)
    hess = F.hessian(lambda v: 0.5 * (v @ a @ v), x)
    np.testing.assert_allclose(hess.numpy(), a.numpy(), rtol=1e-10, atol=1e-12)
    # x^3 + x*y^2: H = [[6x, 2y], [2y, 2x]]
    h = F.hessian(lambda p, q: p**3 + p * q * q, (lucid.tensor(2.0, dtype=D),
                                                  lucid.tensor(3.0, dtype=D)))  # fmt: skip
    got = [[h[i][j].item() for j in range(2)] for i in range(2)]
    assert got == [[12.0, 6.0], [6.0, 4.0]]
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda v: v * 2, x)


def test_vjp_jvp_hvp_vhp_hand_values() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=D)
    v = lucid.tensor([1.0, 0.0, -1.0], dtype=D)

    def square(t: lucid.Tensor) -> lucid.Tensor:
        return t * t

    out, g = F.vjp(square, x, v)
    np.testing.assert_array_equal(out.numpy(), [1.0, 4.0, 9.0])
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, -6.0])
    out, g = F.jvp(square, x, v)
    np.testing.assert_array_equal(g.numpy(), [2.0, 0.0, -6.0])  # diagonal Jacobian
    # f(t) = sum(t) t: J v = sum(v) t + sum(t) v = 0 * t + 6 v
    out, g = F.jvp(lambda t: t.sum() * t, x, v)
    np.testing.assert_allclose(g.numpy(), [6.0, 0.0, -6.0], rtol=1e-10, atol=1e-12)
    cube = lambda t: (t**3).sum() / 3  # noqa: E731  H = diag(2 t)
    out, h = F.hvp(cube, x, v)
    assert out.item() == pytest.approx(12.0, rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(h.numpy(), [2.0, 0.0, -6.0], rtol=1e-10, atol=1e-12)
    _, h2 = F.vhp(cube, x, v)
    np.testing.assert_allclose(h2.numpy(), h.numpy(), rtol=1e-10, atol=1e-12)
    _, g = F.vjp(lambda t: t.sum(), x)  # v may be omitted for a scalar output
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(square, x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        F.jvp(square, x, lucid.ones(2, dtype=D))


def test_jvp_of_a_non_square_map() -> None:
    a = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=D)
    _, g = F.jvp(lambda t: a @ t, lucid.zeros(2, dtype=D), lucid.tensor([1.0, -1.0], dtype=D))
    np.testing.assert_allclose(g.numpy(), [-1.0, -1.0, -1.0], rtol=1e-10, atol=1e-12)


def test_create_graph_keeps_results_differentiable() -> None:
    x = lucid.tensor([1.0, 2.0], dtype=D, requires_grad=True)
    _, g = F.vjp(lambda t: (t**3).sum(), x, create_graph=True)  # 3 x^2
    assert g.requires_grad
    g.sum().backward()  # d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0], rtol=1e-10, atol=1e-12)
    jac = F.jacobian(lambda t: t**2, x, create_graph=True)
    assert jac.requires_grad
    _, g = F.vjp(lambda t: (t**3).sum(), x)
    assert not g.requires_grad and x.grad is not None


def test_forward_mode_jacobian_equals_reverse_mode() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=D)
    y = lucid.tensor([[0.5, -1.0]], dtype=D)

    def f(a: lucid.Tensor, b: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
        return (a.unsqueeze(0) * b.mT).exp(), (a * a).sum()

    rev = F.jacobian(f, (x, y))
    fwd = F.jacobian(f, (x, y), strategy="forward-mode")
    for r_row, f_row in zip(rev, fwd):
        for r, q in zip(r_row, f_row):
            assert r.shape == q.shape
            np.testing.assert_allclose(q.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
    single = F.jacobian(lambda a: a.exp(), x, strategy="forward-mode")
    np.testing.assert_allclose(
        single.numpy(), np.diag(np.exp([1.0, 2.0, 3.0])), rtol=1e-12, atol=1e-12
    )
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(lambda a: a, x, strategy="sideways")


@pytest.mark.parametrize(
    "options",
    [{}, {"vectorize": True}, {"vectorize": True, "outer_jacobian_strategy": "forward-mode"}],
)
def test_hessian_takes_torchs_outer_jacobian_options(options: dict[str, object]) -> None:
    """``vectorize`` and ``outer_jacobian_strategy`` (torch's) pick how the outer Jacobian is
    taken; the Hessian is the same."""
    h = F.hessian(lambda x: (x**3).sum(), lucid.tensor([1.0, 2.0], dtype=lucid.float64), **options)
    np.testing.assert_allclose(h.numpy(), [[6.0, 0.0], [0.0, 12.0]], rtol=1e-12, atol=1e-12)
