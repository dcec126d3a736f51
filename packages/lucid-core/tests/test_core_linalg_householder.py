"""geqrf, householder_product (orgqr), ormqr and triangular_solve: LAPACK's compact QR."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck


def _a(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_geqrf_is_lapacks(shape: tuple[int, int]) -> None:
    a = _a(*shape)
    h, tau = np.linalg.qr(a, mode="raw")  # LAPACK's geqrf, stored transposed
    got = lucid.geqrf(lucid.tensor(a))
    np.testing.assert_allclose(got.a.numpy(), h.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.tau.numpy(), tau, rtol=1e-10, atol=1e-12)


def test_the_reflectors_rebuild_q_and_apply_it() -> None:
    a = lucid.tensor(_a(2, 5, 3))
    h, tau = lucid.geqrf(a)
    q = lucid.linalg.householder_product(h, tau)
    r = lucid.triu(h)[..., :3, :]
    np.testing.assert_allclose((q @ r).numpy(), a.numpy(), rtol=1e-10, atol=1e-12)
    c = lucid.tensor(_a(2, 5, 2, seed=1))
    full_q = lucid.linalg.householder_product(
        lucid.cat([h, lucid.zeros(2, 5, 2, dtype=h.dtype)], -1), tau
    )
    np.testing.assert_allclose(
        lucid.ormqr(h, tau, c, transpose=True).numpy(),
        (full_q.mT @ c).numpy(),
        rtol=1e-10,
        atol=1e-12,
    )
    with pytest.raises(RuntimeError, match="greater than or equal to input.shape\\[-1\\]"):
        lucid.linalg.householder_product(lucid.tensor(_a(3, 5)), tau[0])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_gradients(left: bool, transpose: bool) -> None:
    a = lucid.tensor(_a(4, 3), requires_grad=True)
    tau = lucid.tensor(np.tanh(_a(3, seed=2)), requires_grad=True)
    c = lucid.tensor(_a(4, 2, seed=3) if left else _a(2, 4, seed=3), requires_grad=True)
    assert gradcheck(lambda x, t, y: lucid.ormqr(x, t, y, left, transpose), (a, tau, c))


def test_householder_product_gradients() -> None:
    a = lucid.tensor(_a(2, 5, 4), requires_grad=True)
    tau = lucid.tensor(np.tanh(_a(2, 3, seed=1)), requires_grad=True)
    assert gradcheck(lucid.linalg.householder_product, (a, tau))


def test_triangular_solve_solves_the_transposed_system() -> None:
    a = np.triu(_a(4, 4)) + 4 * np.eye(4)
    b = _a(4, 2, seed=1)
    x, coeff = lucid.triangular_solve(lucid.tensor(b), lucid.tensor(a), transpose=True)
    np.testing.assert_allclose(a.T @ x.numpy(), b, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(coeff.numpy(), a)


def test_lowrank_svd_and_pca_are_exact_on_low_rank_input() -> None:
    lucid.manual_seed(0)
    a = _a(2, 6, 2) @ _a(2, 2, 5, seed=1)  # rank 2
    u, s, v = lucid.svd_lowrank(lucid.tensor(a), q=2)
    np.testing.assert_allclose((u * s.unsqueeze(-2) @ v.mT).numpy(), a, rtol=1e-9, atol=1e-10)
    want = np.linalg.svd(a, compute_uv=False)[..., :2]
    np.testing.assert_allclose(s.numpy(), want, rtol=1e-9, atol=1e-10)
    centred = a - a.mean(-2, keepdims=True)
    _, s_pca, _ = lucid.pca_lowrank(lucid.tensor(a), q=2)
    want = np.linalg.svd(centred, compute_uv=False)[..., :2]
    np.testing.assert_allclose(s_pca.numpy(), want, rtol=1e-9, atol=1e-10)
    with pytest.raises(ValueError, match="not greater than min"):
        lucid.pca_lowrank(lucid.tensor(a), q=7)


def test_svd_lowrank_gradients() -> None:
    b = lucid.tensor(_a(4, 2, seed=2), requires_grad=True)
    c = lucid.tensor(_a(3, 2, seed=3), requires_grad=True)

    def rebuilt(x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
        u, s, v = lucid.svd_lowrank(x @ y.mT, q=2)
        return u @ v.mT * s.sum()  # sign-free, as torch's OpInfo compares it

    assert gradcheck(rebuilt, (b, c))
