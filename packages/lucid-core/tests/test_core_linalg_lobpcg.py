"""lucid.lobpcg: torch's signature and checks, solved by a dense eigh; checked against NumPy's
float64 eigh, for B-orthonormal vectors, by finite differences and against torch (parity)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _spd(n: int, seed: int, shift: float) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + shift * np.eye(n)


def test_standard_problem_matches_numpy_eigh() -> None:
    a = _spd(12, 0, 1.0)
    w, v = np.linalg.eigh(a)
    e, x = lucid.lobpcg(lucid.tensor(a), k=3)
    np.testing.assert_allclose(e.numpy(), w[::-1][:3], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.abs(x.numpy()), np.abs(v[:, ::-1][:, :3]), rtol=1e-9, atol=1e-9)
    e, x = lucid.lobpcg(lucid.tensor(a), k=2, largest=False)
    np.testing.assert_allclose(e.numpy(), w[:2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a @ x.numpy(), x.numpy() * e.numpy(), rtol=1e-9, atol=1e-9)


def test_generalized_problem_gives_b_orthonormal_vectors() -> None:
    a, b = _spd(12, 1, 1.0), _spd(12, 2, 12.0)
    e, x = lucid.lobpcg(lucid.tensor(a), k=2, B=lucid.tensor(b))
    xn, en = x.numpy(), e.numpy()
    np.testing.assert_allclose(a @ xn, b @ xn * en, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(xn.T @ b @ xn, np.eye(2), rtol=1e-9, atol=1e-9)
    w = np.linalg.eigvals(np.linalg.solve(b, a)).real
    np.testing.assert_allclose(en, np.sort(w)[::-1][:2], rtol=1e-9, atol=1e-9)


def test_checks_follow_torch() -> None:
    a = lucid.tensor(_spd(12, 3, 1.0))
    with pytest.raises(ValueError, match=r"smaller than 3 x the number of requested eigenpairs"):
        lucid.lobpcg(a, k=5)
    with pytest.raises(AssertionError, match="A must be square"):
        lucid.lobpcg(lucid.ones(4, 5), k=1)
    with pytest.raises(AssertionError, match="A and B must have the same shapes"):
        lucid.lobpcg(a, k=1, B=lucid.eye(11, dtype=lucid.float64))


def test_eigenvalue_gradient_by_finite_differences() -> None:
    a = lucid.tensor(_spd(9, 4, 1.0), requires_grad=True)

    def top2(m: lucid.Tensor) -> lucid.Tensor:
        return lucid.lobpcg((m + m.mT) / 2, k=2)[0]

    assert lucid.autograd.gradcheck(top2, (a,), eps=1e-6, atol=1e-6, rtol=1e-5)


@pytest.mark.parity
def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    a, b = _spd(15, 5, 1.0), _spd(15, 6, 15.0)
    for kw in ({"k": 3}, {"k": 2, "largest": False}, {"k": 2, "B": b}):
        t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        l_kw = {k: lucid.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        te, tx = torch.lobpcg(torch.tensor(a), **t_kw)
        le, lx = lucid.lobpcg(lucid.tensor(a), **l_kw)
        # torch iterates to its tolerance; lucid's dense solve is exact
        np.testing.assert_allclose(le.numpy(), te.numpy(), rtol=1e-7, atol=1e-7)
        np.testing.assert_allclose(np.abs(lx.numpy()), np.abs(tx.numpy()), rtol=1e-4, atol=1e-5)
